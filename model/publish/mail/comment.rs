//! `c1-bound` as a one-hunk comment patch: the "memcg and lruvec stats
//! flushing" comment of mm/memcontrol.c states the bound the per-memcg
//! gate really keeps (which also corrects the margin of 8d59d2214c23's
//! message, `c10-bound`). It assumes the fix of memcg_rstat_updated()'s
//! break ([`super::c12`]), without which an ancestor is behind by more.

use crate::protocol::findings::{maintainers, Finding};
use crate::publish::kdiff::{Edit, Tree};

use super::c12::{RELEASE, SERIES};
use super::{diff_from, people, prose, signed_off_by, Ctx, Kind, Mail};

/// The comment's new item 2), this crate's own words.
const ITEM_2: &[&str] = &[
    "2) Flush the stats synchronously on reader side only when the memcg has",
    "   counted more than (MEMCG_CHARGE_BATCH * nr_cpus) update events since",
    "   its last flush. Each cpu also holds up to MEMCG_CHARGE_BATCH events it",
    "   has not counted yet, so a reader that does not flush can miss up to",
    "   2 * MEMCG_CHARGE_BATCH * nr_cpus pages of single-page updates, more",
    "   with large folios, and a flush racing the updates can reset counts of",
    "   events it did not fold. Only (1) bounds that, in time: 2 seconds when",
    "   the deferrable work is on time.",
];

/// The edit of `mm/memcontrol.c`: item 2) of the comment replaced.
pub fn edit_memcontrol(e: &mut Edit) -> Result<(), String> {
    let head = e.find_anywhere(
        "memcg and lruvec stats flushing",
        "(the comment above flush_memcg_stats_dwork())",
    )?;
    let (_, end) = e.comment_around(head)?;
    let item = e.find(
        (head, end),
        "2) Flush the stats synchronously",
        "in that comment",
    )?;
    e.find(
        (item, end),
        "(MEMCG_CHARGE_BATCH * nr_cpus) but",
        "in item 2) of that comment: is the bound already corrected?",
    )?;
    let lines = ITEM_2.iter().map(|l| format!(" * {l}")).collect();
    e.replace(item, end - 1, lines)
}

/// The patch's edits in `tree`.
pub fn edits(tree: &Tree) -> Result<Vec<Edit>, String> {
    let mut e = tree.edit("mm/memcontrol.c")?;
    edit_memcontrol(&mut e)?;
    Ok(vec![e])
}

/// The mail.
pub fn mail(f: &Finding, ctx: &Ctx) -> Result<Mail, String> {
    let paras = vec![
        "The comment above flush_memcg_stats_dwork() says that flushing on read only \
         above the threshold \"will let stats be out of sync by atmost \
         (MEMCG_CHARGE_BATCH * nr_cpus) but only for 2 seconds\". Since 8d59d2214c23 the \
         count is per memcg, and it counts what each cpu has folded: a cpu also holds up \
         to MEMCG_CHARGE_BATCH update events below its fold (the update whose per-cpu add \
         is done and whose fold is not included), so a reader that does not flush can \
         miss twice the figure with single pages, and more with large folios. A flush \
         racing the updates resets the per-cpu and per-memcg counts of events it did not \
         fold, which no figure in pages bounds; the periodic flush bounds it in time, 2 s \
         when the deferrable work is on time."
            .to_string(),
        "This also corrects the margin of 8d59d2214c23's message (NR_CPUS * \
         MEMCG_CHARGE_BATCH * NR_MEMCGS), which has the same two gaps. It assumes \"memcg: \
         do not stop memcg_rstat_updated() at a flushable memcg\", sent separately: with \
         the early break an ancestor's readers can miss more."
            .to_string(),
    ];
    let (to, mut cc, _) = maintainers::recipients(f.files);
    for p in [people::YOSRY, people::KOUTNY] {
        if !cc.iter().any(|c| c == p) {
            cc.insert(0, p.to_string());
        }
    }
    let diff = diff_from(ctx, &SERIES, edits)?;
    Ok(Mail {
        id: f.id,
        kind: Kind::Patch,
        subject: "[PATCH] memcg: state the error bound the stats flushing keeps".to_string(),
        to,
        cc,
        in_reply_to: None,
        references: Vec::new(),
        release: RELEASE,
        body: prose(&paras),
        trailers: vec![signed_off_by(ctx)],
        diff: Some(diff),
        notes: prose(&[
            "The bound is T + nr_cpus * MEMCG_CHARGE_BATCH at a decision not to flush, T \
             the threshold; memcg-flush-model's exhaustive search reaches it and no more \
             (`flushcheck bounds --exhaustive --variant v6.8,v6.17`)."
                .to_string(),
        ]),
        limit: 30,
    })
}
