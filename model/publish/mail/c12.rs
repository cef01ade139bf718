//! `c12-lost-flush` as a patch: memcg_rstat_updated() counts at every
//! level again, and a level already flushable still skips its fold's
//! atomic add. The prose gives the real-kernel evidence read from the
//! recorded consoles ([`super::evidence`]), the racy form's two windows,
//! the periodic flush's lateness and the cost in the kernel's own
//! operations; the diff is made from a linux 7.3 tree at run time.

use crate::protocol::findings::{maintainers, Finding};
use crate::publish::kdiff::{Edit, Series, Tree};

use super::evidence::{self, Boot};
use super::{diff_from, people, prose, signed_off_by, Ctx, Kind, Mail};

/// The tree the patch is written against: Debian's linux-source-7.3
/// (7.3.4, the newest the project has read).
pub const SERIES: Series = Series {
    series: "7.3",
    package: "linux-source-7.3",
    suite: "trixie-backports",
};

/// The release whose names the mail uses.
pub const RELEASE: &str = "v7.3.4";

/// The reproducer, as the project's repository names it.
pub const REPRODUCER: &str = "docs/reproducers/test_c12_skew.c";

/// The patch's edits to `mm/memcontrol.c` of `tree`: in
/// memcg_rstat_updated(), the comment claiming the ancestors are
/// flushable and the `break` below it removed; at the fold, the atomic
/// add kept only for a level that is not flushable yet.
pub fn edits(tree: &Tree) -> Result<Vec<Edit>, String> {
    let mut e = tree.edit("mm/memcontrol.c")?;
    edit_memcontrol(&mut e)?;
    Ok(vec![e])
}

/// [`edits`] on one file's text (also used on a synthetic file by the
/// tests).
pub fn edit_memcontrol(e: &mut Edit) -> Result<(), String> {
    let f = e.function("memcg_rstat_updated")?;
    let gate = "memcg_vmstats_needs_flush(statc->vmstats)";
    let test = e.find(
        f,
        gate,
        "in memcg_rstat_updated(): a tree without the early break (it came in v6.16)",
    )?;
    if !e.lines()[test + 1].trim().starts_with("break;") {
        return Err(format!(
            "mm/memcontrol.c:{}: the test is not followed by `break;`",
            test + 2
        ));
    }
    let claim = e.find(f, "already flushable", "in memcg_rstat_updated()")?;
    let (c0, c1) = e.comment_around(claim)?;
    if c1 + 1 != test {
        return Err(format!(
            "mm/memcontrol.c:{}: the comment does not end right above the test",
            c1 + 1
        ));
    }
    // The comment, the test, its break and the blank line after them.
    let mut end = test + 1;
    if e.lines()[end + 1].trim().is_empty() {
        end += 1;
    }
    let indent: String = e.lines()[test]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let not_flushable = e.lines()[test].replacen("if (", "if (!", 1);
    e.delete(c0, end)?;
    let xchg = e.find(
        (end, f.1),
        "this_cpu_xchg(",
        "after the test in memcg_rstat_updated()",
    )?;
    let add = xchg + 1;
    if !(e.lines()[add].contains("atomic") && e.lines()[add].contains("_add(stats_updates")) {
        return Err(format!(
            "mm/memcontrol.c:{}: no atomic add of stats_updates after this_cpu_xchg()",
            add + 1
        ));
    }
    let added = e.lines()[add].trim_start().to_string();
    e.replace(
        add,
        add,
        vec![
            format!("{indent}/*"),
            format!("{indent} * A level already over the threshold need not add to its"),
            format!("{indent} * atomic, but its ancestors may still be below theirs."),
            format!("{indent} */"),
            not_flushable,
            format!("{indent}\t{added}"),
        ],
    )
}

/// The table of losses, and the kernels that showed one, from the
/// consoles.
fn evidence_paragraphs(ctx: &Ctx) -> Vec<String> {
    let dir = ctx.consoles();
    let boots = match evidence::boots(&dir) {
        Ok(b) => b,
        Err(e) => {
            return vec![format!(
                "(No real-kernel evidence here: {e}. docs/real-kernels.md of \
                 memcg-flush-model gives the kernels it was seen on; `flushcheck kernels \
                 --scenario c12-decisive --save DIR` records it.)"
            )]
        }
    };
    let with_break: Vec<&Boot> = boots.iter().filter(|b| b.loss.is_some()).collect();
    if with_break.is_empty() {
        return vec![format!(
            "(No recorded console in {} shows the loss: docs/real-kernels.md of \
             memcg-flush-model gives the kernels it was seen on, and `flushcheck kernels \
             --scenario c12-decisive --save DIR` records one to print here.)",
            dir.display()
        )];
    }
    let mut kernels: Vec<String> = with_break.iter().map(|b| b.version()).collect();
    kernels.dedup();
    let clean: Vec<String> = {
        let mut v: Vec<String> = boots
            .iter()
            .filter(|b| b.loss.is_none())
            .map(Boot::version)
            .collect();
        v.dedup();
        v
    };
    let late = with_break
        .iter()
        .any(|b| b.loss.as_ref().is_some_and(|l| l.lasted_ms.is_none()));
    let mut out = vec![
        format!(
            "Seen on Debian's kernels {} under qemu (TCG), from one CPU: a child and its \
             sibling charged until only the child is flushable, the periodic flush waited \
             for, then the child charged 256 more pages per CPU. The parent's memory.stat \
             anon against the child's, and how long until the parent caught up (the \
             periodic flush):",
            kernels.join(", ")
        ),
        evidence::table(&boots),
    ];
    let mut tail = String::new();
    if late {
        tail.push_str("(*: not caught up when the test ended.) ");
    }
    if !clean.is_empty() {
        tail.push_str(&format!(
            "{} {} no break and no loss. ",
            clean.join(" and "),
            if clean.len() == 1 { "has" } else { "have" }
        ));
    }
    tail.push_str(&format!(
        "The test, in the style of the cgroup selftests, is {REPRODUCER} of \
         memcg-flush-model{}.",
        repo_suffix()
    ));
    out.push(tail);
    out
}

/// ` (URL)` when the package names its repository.
fn repo_suffix() -> String {
    let r = env!("CARGO_PKG_REPOSITORY");
    if r.is_empty() {
        String::new()
    } else {
        format!(" ({r})")
    }
}

/// The mail.
pub fn mail(f: &Finding, ctx: &Ctx) -> Result<Mail, String> {
    let mut paras = vec![
        "memcg_rstat_updated() stops walking up at the first memcg whose \
         vmstats->stats_updates is over MEMCG_CHARGE_BATCH * num_online_cpus(), because \
         \"If @memcg is already flushable then all its ancestors are flushable as well\". \
         They need not be. Each level folds its own per-cpu stats_updates into its atomic \
         when that reaches MEMCG_CHARGE_BATCH, and a parent's per-cpu counter also counts \
         its other children's updates, so the levels fold at different times and a child \
         can be flushable while its parent is not. From then on every update in the \
         child's subtree stops at the child and is never counted at the parent, however \
         much is charged, and mem_cgroup_flush_stats() of the parent does not flush: \
         memory.stat, memory.numa_stat and memory.zswap.current of the parent, the zswap \
         shrinker's count and the OOM report's statistics stay where they were until \
         flush_memcg_stats_dwork() runs."
            .to_string(),
        "With 4 KiB pages alone every fold is one batch at every level and a parent does \
         not fall behind without a race; one large folio that crosses the child's batch \
         but not the parent's (a 64 KiB mTHP is 16 pages) is enough."
            .to_string(),
    ];
    paras.extend(evidence_paragraphs(ctx));
    paras.extend([
        "A flush racing memcg_rstat_updated() skews the levels with 4 KiB pages as well. \
         mem_cgroup_css_rstat_flush() folds a CPU's statc->state[], resets that CPU's \
         statc->stats_updates and then the level's atomic. At the child, if the flush \
         reads the new page in statc->state[] after __mod_memcg_state()'s this_cpu_add() \
         and resets statc->stats_updates before memcg_rstat_updated() counts the page \
         there, the child's count stands for a page already folded. At the root, the \
         reset falls between this_cpu_add_return() and this_cpu_xchg() and erases the \
         root's count of the same page. The child is then a count ahead of the root, and \
         one fold later it can be flushable alone. Both windows lie between whole per-cpu \
         operations, so they are there on every architecture. This form has not been \
         reproduced on a real kernel: no test with two racing tasks was run."
            .to_string(),
        "Only the periodic flush bounds the staleness, in time and not in pages: \
         FLUSH_TIME, 2 s, on a deferrable timer, which Waiman Long has seen run late by \
         \"up to 10s of seconds\" (the thread of \"memcg: Scale up vmstats flush \
         threshold\", lore 20260319173752.1472864-1-longman@redhat.com). \
         mem_cgroup_flush_stats_ratelimited() does not make up for it: once the periodic \
         flush is a full cycle late it calls mem_cgroup_flush_stats() on the same memcg, \
         through the same gate."
            .to_string(),
        "Count at every level again, as before 60cada258dfe, and keep the half of it that \
         saves shared cachelines: a level already flushable still skips the \
         atomic_long_add() of its fold, so the atomics see no more RMWs than now. For an \
         update whose memcg is flushable this adds one this_cpu_add_return() per level \
         above it, on the per-cpu cacheline memcg_rstat_updated() already reads for \
         parent_pcpu, and one atomic_long_read() per fold. For any other update it saves \
         the atomic_long_read() of vmstats->stats_updates that every level now does on \
         every update; that read moves to the fold (one update in MEMCG_CHARGE_BATCH). \
         Which way it goes depends on the depth and on how long memcgs stay flushable. \
         The netperf runs 60cada258dfe was measured with (several netperf instances \
         against a local netserver, in a memcg a few levels deep) would settle it, and \
         will-it-scale page_fault would show the charge path alone."
            .to_string(),
    ]);
    let (to, mut cc, _) = maintainers::recipients(f.files);
    if !to.iter().any(|p| p == people::SHAKEEL) {
        cc.insert(0, people::SHAKEEL.to_string());
    }
    cc.insert(0, people::WAIMAN.to_string());
    let diff = diff_from(ctx, &SERIES, edits)?;
    Ok(Mail {
        id: f.id,
        kind: Kind::Patch,
        subject: "[PATCH] memcg: do not stop memcg_rstat_updated() at a flushable memcg"
            .to_string(),
        to,
        cc,
        in_reply_to: None,
        references: Vec::new(),
        release: RELEASE,
        body: prose(&paras),
        trailers: vec![
            format!("Fixes: {}", f.fixes_tag.unwrap_or_default()),
            signed_off_by(ctx),
        ],
        diff: Some(diff),
        notes: prose(&[
            "Found with memcg-flush-model: `flushcheck report --finding \
                        c12-lost-flush --model-report` prints the model's report, and \
                        `flushcheck kernels --scenario c12-decisive` runs the test on a \
                        kernel."
                .to_string(),
        ]),
        limit: 100,
    })
}
