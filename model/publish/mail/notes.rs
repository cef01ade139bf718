//! The findings that get a short reply in the thread where the behaviour
//! was accepted or the claim was made (`In-Reply-To:`, the claim quoted,
//! ten lines or so), and those that get no mail, with why.

use crate::protocol::findings::{maintainers, Finding};

use super::{people, prose, scaled, Ctx, Kind, Mail};

/// A thread a reply goes into.
struct Thread {
    /// Its subject, as the messages have it.
    subject: &'static str,
    /// The message replied to.
    in_reply_to: &'static str,
    /// `References:` of the reply.
    references: &'static [&'static str],
    /// The author of the message replied to (`To:`).
    to: &'static str,
    /// Others in the thread.
    cc: &'static [&'static str],
}

/// "[PATCH 2/2] cgroup: explain the race between updater and flusher"
/// (Shakeel Butt, 2025-07-03), which comments the updater/flusher race as
/// benign and the barrier pair as unneeded.
const EXPLAIN_RACE: Thread = Thread {
    subject: "Re: [PATCH 2/2] cgroup: explain the race between updater and flusher",
    in_reply_to: "<20250703200012.3734798-2-shakeel.butt@linux.dev>",
    references: &[
        "<20250703200012.3734798-1-shakeel.butt@linux.dev>",
        "<20250703200012.3734798-2-shakeel.butt@linux.dev>",
    ],
    to: people::SHAKEEL,
    cc: &[people::TEJUN, people::KOUTNY, people::JP],
};

/// "[PATCH mm-new v3] mm/memcontrol: Add memory.stat_refresh for
/// on-demand stats flushing" (Leon Huang Fu, 2025-11-10): the reply to
/// Michal Koutný's review asking for "more backing data".
const STAT_REFRESH: Thread = Thread {
    subject: "Re: [PATCH mm-new v3] mm/memcontrol: Add memory.stat_refresh for on-demand \
              stats flushing",
    in_reply_to: "<ewcsz3553cd6ooslgzwbubnbaxwmpd23d2k7pw5s4ckfvbb7sp@dffffjvohz5b>",
    references: &[
        "<20251110101948.19277-1-leon.huangfu@shopee.com>",
        "<ewcsz3553cd6ooslgzwbubnbaxwmpd23d2k7pw5s4ckfvbb7sp@dffffjvohz5b>",
    ],
    to: people::KOUTNY,
    cc: &[people::LEON, people::RIDONG],
};

/// A reply of `f` in `t`: the thread's people, the MAINTAINERS entries of
/// `f`'s files (linux-mm with them), `quote` and `text`.
fn reply(f: &Finding, t: &Thread, release: &'static str, quote: &str, text: &str) -> Mail {
    let (to, cc, _) = maintainers::recipients(f.files);
    let (mm_to, mm_cc, _) = maintainers::recipients(&["mm/memcontrol.c"]);
    let mut all: Vec<String> = Vec::new();
    for p in
        t.cc.iter()
            .map(|s| s.to_string())
            .chain(to)
            .chain(mm_to)
            .chain(cc)
            .chain(mm_cc)
    {
        if p != t.to && p != maintainers::MM_TREE && !all.contains(&p) {
            all.push(p);
        }
    }
    let quoted: String = quote.lines().map(|l| format!("> {l}\n")).collect();
    Mail {
        id: f.id,
        kind: Kind::Reply,
        subject: t.subject.to_string(),
        to: vec![t.to.to_string()],
        cc: all,
        in_reply_to: Some(t.in_reply_to.to_string()),
        references: t.references.iter().map(|s| s.to_string()).collect(),
        release,
        body: prose(&[quoted, text.to_string()]),
        trailers: Vec::new(),
        diff: None,
        notes: prose(&[format!(
            "(found with memcg-flush-model: flushcheck report --finding {} --model-report)",
            f.id
        )]),
        limit: 10,
    }
}

/// A note of `f`: nothing is sent, and why.
fn none(f: &Finding, why: &str) -> Mail {
    Mail {
        id: f.id,
        kind: Kind::NoMail,
        subject: f.subject.to_string(),
        to: Vec::new(),
        cc: Vec::new(),
        in_reply_to: None,
        references: Vec::new(),
        release: "v7.3.4",
        body: prose(&[why.to_string()]),
        trailers: Vec::new(),
        diff: None,
        notes: prose(&[format!(
            "The model's report: flushcheck report --finding {} --model-report",
            f.id
        )]),
        limit: 10,
    }
}

/// The mail of a finding that is not a patch.
pub fn mail(f: &Finding, _ctx: &Ctx) -> Result<Mail, String> {
    Ok(match f.id {
        "tree-sb-lost-update" => reply(
            f,
            &EXPLAIN_RACE,
            "v6.17.0",
            "This is benign race and the subsequent flusher will flush those\nstats",
            "Only when the css is updated again on that CPU. The updater found its css \
             on the lockless list and returned; the flusher took it off and read the \
             per-cpu stats without the update. No later flush visits the css on that CPU \
             until its next update there puts it back, so an idle cgroup keeps the error \
             through any number of flushes, memory.stat reads included: one update per \
             such race, a page, or a huge page for the THP statistics. x86 allows it too: \
             the memcg per-cpu add has no lock prefix, so the store can sit in the store \
             buffer across the flusher's llist_del_first_init() and read.",
        ),
        "weak-triggered-read" => reply(
            f,
            &EXPLAIN_RACE,
            "v6.17.0",
            "For now, there aren't any such user, so not adding the barrier here",
            "memcg has a related one the smp_mb() pair would not cover. \
             mem_cgroup_flush_stats() reads vmstats->stats_updates with atomic_read() and \
             decides to flush; nothing orders that read before css_process_update_tree()'s \
             smp_load_acquire() of the list head. On arm64 or POWER the flush can find the \
             list empty although the count it read was added after the css was put on it, \
             and the reader sees none of the pages that made it flush. Nothing is lost, the \
             next flush folds them, and x86 keeps loads in order.",
        ),
        "quiescent-read-zero" => reply(
            f,
            &STAT_REFRESH,
            "v6.18",
            "All in all, I'd like to have more backing data on insufficiency of (all\n\
             the) rstat optimizations before opening explicit flushes like this",
            "One data point on the read side. Since the per-memcg threshold \
             (8d59d2214c23) a memcg is flushed on read only when its own count is over \
             MEMCG_CHARGE_BATCH * num_online_cpus(), however stale the rest of the tree \
             is. Two CPUs, a child charged 65 pages after its sibling's 200: a memory.stat \
             read of the child once both charges have completed shows 0 until the periodic \
             flush, although the root's count is 265. That is the LTP failure above, and it \
             grows with the CPU count: up to 64 * nr_cpus pages per memcg, 32 MiB at 128 \
             CPUs, more with 64K pages.",
        ),
        "c18-bound" => {
            let t = Thread {
                subject: scaled::THREAD_SUBJECT,
                in_reply_to: scaled::IN_REPLY_TO,
                references: scaled::REFERENCES,
                to: scaled::THREAD_PEOPLE[0],
                cc: &scaled::THREAD_PEOPLE[1..],
            };
            reply(
                f,
                &t,
                "v7.1.5",
                "If so, wouldn't the actual worst-case out-of-sync error be\n\
                 N * (MEMCG_CHARGE_BATCH - 1) + vmstats_flush_threshold, which remains\n\
                 linear with the number of CPUs rather than scaling logarithmically?",
                "It is N pages more: T + N * MEMCG_CHARGE_BATCH for single-page updates, \
                 because each CPU can also hold the page whose per-cpu add is done and \
                 whose fold is not. On one CPU with MEMCG_CHARGE_BATCH of 1 a reader \
                 already skips with 2 pages missing, against 1 from the formula. Folios of \
                 V pages add N * (V - 1). A test_memcontrol.c case could check it from \
                 user space: after more than T + N * MEMCG_CHARGE_BATCH single-page charges \
                 memory.stat must be current, and with the memcg_flush_stats tracepoint \
                 no read may flush with T or fewer pending.",
            )
        }
        "b7-skipped-flusher" => none(
            f,
            "Upstream ended it in v6.8 with 7d7ef0a4686a (\"mm: memcg: restore subtree \
             stats flushing\"), whose message describes the same staleness: a flusher \
             that skips because another flush is running returns stats up to 2 s old. \
             What the model adds is its size (every update since the running flush passed \
             that CPU), which changes nothing in the fix. 6.6.9, the newest 6.6 read here, \
             still has the skip; whether later 6.6.y took the v6.8 series is not checked.",
        ),
        "c10-bound" => none(
            f,
            "The claim is in a commit message (8d59d2214c23), which cannot be corrected; \
             its corrected bound, 2 * MEMCG_CHARGE_BATCH * nr_cpus per memcg for \
             single-page updates and no bound in pages when a flush races the updates, is \
             in the comment patch \"memcg: state the error bound the stats flushing \
             keeps\".",
        ),
        other => return Err(format!("{other}: no mail is written for this finding")),
    })
}
