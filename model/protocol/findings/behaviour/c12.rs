//! The early break of `memcg_rstat_updated()` (60cada258dfe): one finding
//! with two forms, the racy one at 1-page charges and the race-free one
//! with mixed folio sizes, and the alternatives a maintainer would weigh.
//! The text is a mail to linux-mm: kernel terms only.

use crate::explore::BackendName::ShuttleDfs;
use crate::observe::property::Property;
use crate::protocol::per_memcg::fold_skew;

use super::super::configs::{
    c12_larger, c12_root_two_cpus, c12_six, c12_witness, fold_skew_2, fold_skew_3,
};
use super::super::{releases, Candidate, Claim, Class, Expected, Finding, Shown, Witness};

const CLAIM: Claim = Claim {
    quote: "If @memcg is already flushable then all its ancestors are flushable as well \
            and also there is no need to increase stats_updates.",
    source: "mm/memcontrol.c, memcg_rstat_updated(); Shakeel Butt, \"memcg: optimize \
             memcg_rstat_updated\" (60cada258dfe), lore 20250410025752.92159-1-shakeel.butt@linux.dev",
};

const NO_BREAK: &str = "In memcg_rstat_updated(), drop \"if \
     (memcg_vmstats_needs_flush(statc->vmstats)) break;\" and test flushability only where a \
     level folds: \"stats_updates = this_cpu_xchg(statc_pcpu->stats_updates, 0); if \
     (!memcg_vmstats_needs_flush(statc->vmstats)) atomic_add(stats_updates, \
     &statc->vmstats->stats_updates);\", the skip of the add v6.8 to v6.15 had. Every level \
     counts every update again (one this_cpu_add_return() per level, what 60cada258dfe \
     saved), one atomic_read() per fold, no new RMW on a shared line.";

const BREAK_IF_ANCESTORS: &str = "Refuted. Keep the break, but take it only when every \
     ancestor is flushable too: \"if (memcg_vmstats_needs_flush(statc->vmstats) && \
     ancestors_need_flush(statc)) break;\", where ancestors_need_flush() follows \
     statc->parent_pcpu to the root and returns false at the first level whose \
     memcg_vmstats_needs_flush() is false (one atomic_read() per ancestor, no RMW). It closes \
     both forms above, but at the root, which has no ancestor, it is the break as it is, and \
     a flush that resets the root's stats_updates after visiting a CPU loses that CPU's \
     charges which took the break in between: css_rstat_flush() takes the lock per CPU \
     (__css_rstat_lock(css, cpu)), visits CPU 0, and in CPU 1's callback resets the atomic \
     that CPU 1's fold had made flushable. Two CPUs charging the root 5 and 2 pages in turn at MEMCG_CHARGE_BATCH 3 end \
     with 21 pages pending and stats_updates at 5, below the trigger 6.";

const FOLD_ANCESTORS: &str = "Refuted. Keep the break; where a level folds, fold every \
     ancestor at once and end the walk: after \"atomic_add(stats_updates, \
     &statc->vmstats->stats_updates);\", for each ancestor \"atomic_add(this_cpu_xchg(\
     statc_pcpu->stats_updates, 0) + abs(val), &statc->vmstats->stats_updates);\", then \
     \"break;\". Without a race no ancestor's atomic is then behind a descendant's on any \
     CPU's account, and the race-free form is gone; the racy form stays, since the flush \
     still resets the levels at different instants, and every fold costs one more RMW on \
     each ancestor's shared vmstats->stats_updates.";

const COMMENT_ONLY: &str = "Refuted (no code change). Correct the comment only: a flushable \
     memcg's ancestors need not be flushable, and their readers then wait for the periodic \
     flush. Both forms stay: an ancestor's gated readers miss a flushable child's charges \
     until flush_memcg_stats_dwork() runs, 2 s at most when the worker is on time, with no \
     bound in pages.";

const NO_REMOTE_RESET: &str = "Refuted. In mem_cgroup_css_rstat_flush(), drop \
     \"WRITE_ONCE(statc->stats_updates, 0);\" so that only the owning CPU resets its \
     per-CPU count, at its own this_cpu_xchg(). The race-free form needs no reset and stays; \
     the racy one stays too, because the flush still resets the levels' atomics at different \
     instants of its walk (the child's before the root's), so a fold between them skews the \
     levels.";

/// The candidates, as every configuration checked judges them.
const FIXES: &[Candidate] = &[
    Candidate {
        variant: "v6.17-fix-no-break",
        change: NO_BREAK,
        expected: Expected::Fixes,
        refuted_on: None,
    },
    Candidate {
        variant: "v6.17-fix-break-if-ancestors",
        change: BREAK_IF_ANCESTORS,
        expected: Expected::Refuted,
        refuted_on: Some(c12_root_two_cpus),
    },
    Candidate {
        variant: "v6.17-fix-fold-ancestors",
        change: FOLD_ANCESTORS,
        expected: Expected::Refuted,
        refuted_on: None,
    },
    Candidate {
        variant: "v6.17-fix-comment-only",
        change: COMMENT_ONLY,
        expected: Expected::Refuted,
        refuted_on: None,
    },
    Candidate {
        variant: "v6.17-fix-no-remote-reset",
        change: NO_REMOTE_RESET,
        expected: Expected::Refuted,
        refuted_on: None,
    },
];

const MECHANISM: &str = "memcg_rstat_updated() walks from the charged memcg to the root; at \
     each level it adds the update to the per-CPU statc->stats_updates and, once that \
     reaches MEMCG_CHARGE_BATCH, moves it with this_cpu_xchg() into the level's atomic \
     vmstats->stats_updates, which readers compare with MEMCG_CHARGE_BATCH * \
     num_online_cpus(). Since 60cada258dfe the walk stops at the first level already over \
     that threshold, on the comment's word that every ancestor is over it too. It need not \
     be, in two ways; and once a child is flushable while its parent is not, every later \
     charge of the child's subtree stops at the child and never reaches the parent's count, \
     so the parent's readers do not flush where the walk without the break would have \
     counted enough to make them flush. \
     (1) With a racing flush, at 4 KiB pages. css_rstat_flush() walks CPU 0 while CPU 0 is \
     charging a child. At the child the callback reads the page in statc->state[] (added by \
     this_cpu_add()) and resets statc->stats_updates before memcg_rstat_updated() counts the \
     page there: the child keeps a count for a page the flush has already folded. At the root \
     the reset falls between CPU 0's this_cpu_add_return() and its this_cpu_xchg() and \
     erases the root's count, rightly. Both windows lie between whole per-CPU operations, so \
     they exist on every architecture. The child's atomic is now one fold ahead of the \
     root's. Shortest witness: one \
     CPU, MEMCG_CHARGE_BATCH reduced to 1 (threshold 1), three 1-page charges of a child of \
     the root with the periodic flush racing the first: after the second the child's atomic \
     is 2, flushable, the root's 1; the third stops at the child, and a read of the root \
     finds 1, not over the threshold, with 2 pages unflushed, where without the break the \
     root's count is 2 and the read flushes. At MEMCG_CHARGE_BATCH 64 the same sequence takes \
     129 one-page charges, two folds of the child and one charge more, beyond the \
     exhaustive search; at batches B of 2 to 5 the search's shortest is 2 * B + 1 charges, \
     but there the lost-flush comparison also flags the walk without the break, so the \
     witness stays at a batch of 1. \
     (2) Without any race, with mixed folio sizes. Each level folds when its own per-CPU \
     counter reaches the batch, and a parent's counter also takes its other children's \
     charges, so the levels fold at different points. At MEMCG_CHARGE_BATCH 64 on one CPU: \
     child +30, sibling +34 (the parent's counter reaches 64 and folds: parent 64), child \
     +40 (the child's reaches 70 and folds: child 70 > 64, flushable; parent 64, not). The \
     next charge of the child, +30, stops at the child, and the parent's readers do not \
     flush where v6.15's walk folds 70 more into the parent and flushes. One CPU, one \
     interleaving, no reset. With 1-page charges every fold is exactly one batch at every \
     level and a parent counts at least what its child counts, so this form needs a charge \
     of several pages that crosses the child's batch but not the parent's.";

const IMPACT: &str = "Stale: every reader that flushes through mem_cgroup_flush_stats(), \
     which flushes only if the target's own count is over the threshold. In v6.18.19 these \
     are memory.stat, through memcg_stat_format() or on cgroup v1 memcg1_stat_format(); \
     memory.numa_stat, through memory_numa_stat_show() or memcg_numa_stat_show(); \
     memory.zswap.current, through zswap_current_read(); the zswap shrinker's count, \
     zswap_shrinker_count(); and the memory cgroup statistics of the OOM report, printed \
     through memory_stat_format(). Read on a parent or on the root, they miss the charges of \
     the flushable child's subtree. Ratelimited, and affected only when the periodic flush \
     is a full cycle late: reclaim in prepare_scan_control(), dirty throttling in \
     mem_cgroup_wb_stats() as domain_dirty_avail() calls it, the workingset refault test in \
     workingset_test_recent(), the shadow-node count in count_shadow_nodes() and cachestat \
     in filemap_cachestat() call mem_cgroup_flush_stats_ratelimited(), which reads \
     statistics up to 2 s old by design and flushes, through the same gate, only 4 s after \
     the last root flush. Not affected: obj_cgroup_may_zswap() forces its flush, and \
     memory.current, the limits and the charge itself use the page counters. The time bound \
     holds: flush_memcg_stats_dwork() flushes from the root with force set, ignoring \
     memcg_vmstats_needs_flush(), every FLUSH_TIME, 2 s; it folds the child's charges into \
     every ancestor and resets the child's count, so an ancestor's statistics are at most \
     one period late when the deferrable worker runs on time. Who would notice: a container \
     manager or a userspace OOM daemon that reads a parent cgroup's memory.stat, anon or \
     file, just after a burst of charges in one child, and tests that charge a child and \
     read the parent: they see the parent up to 2 s behind when the periodic flush is on time, with more unflushed than the \
     threshold allows. Read in v6.18.19: mm/memcontrol.c, mm/vmscan.c, mm/workingset.c, \
     mm/filemap.c, mm/zswap.c, mm/memcontrol-v1.c and mm/page-writeback.c; v7.1.5 has the \
     same callers.";

const MAGNITUDE: &str = "Everything charged below the flushable child until the next flush \
     that resets it: not bounded by MEMCG_CHARGE_BATCH * nr_cpus, 4096 pages or 16 MiB on \
     64 CPUs, which the threshold promises; bounded in time by the periodic flush, 2 s if \
     the worker is on time (Waiman Long has seen it late by \"up to 10s of seconds\"). What \
     starts it is small. In the racy form, one fold's worth of \
     pages counted at the child but not at the root; in the race-free form, up to \
     MEMCG_CHARGE_BATCH - 1 pages per CPU per level of fold skew.";

const LIKELIHOOD: &str = "Racy form (any page size, 4 KiB included): a flush must walk the \
     charging CPU while that CPU charges, the child's reset after the flush read the page \
     and before the child's this_cpu_add_return(), the root's after the root's \
     this_cpu_add_return(): a window of a few instructions, open to the periodic flush and every gated reader's flush; rare per \
     charge, but every charge of every memcg is exposed, and once it happens the skew stays \
     until a flush resets the child. Race-free form (large folios): deterministic once the \
     shape occurs: one CPU charging a child and a sibling under one parent, and the child \
     crossing its batch with a multi-page charge that the parent's counter does not fold on \
     (16 pages for a 64 KiB mTHP); impossible with 4 KiB pages only, and a PMD THP's 512 \
     pages folds the parent too.";

const PRECONDITIONS: &str = "Racy form: mod_memcg_state() runs memcg_rstat_updated() between \
     get_cpu() and put_cpu(), preemption off, and the flusher runs on another CPU; its remote \
     WRITE_ONCE() of statc->stats_updates races the owner in two windows, a reset after the \
     flush read the page and before the child's this_cpu_add_return(), and a reset between \
     the root's this_cpu_add_return() and this_cpu_xchg(). Both lie between whole per-CPU \
     operations, so they need no store landing inside an x86 add or an arm64 LL/SC or LSE \
     operation, and exist on every architecture. Sequential consistency suffices. Not \
     confirmed on real kernels: no scenario races two tasks. Race-free form: two memcgs \
     charged under one parent on one CPU, large folios in the child; no interrupt, lock or \
     ordering assumption; shown on Debian's 6.16.12 to 7.3.4 under qemu at 1, 2 and 4 vCPUs \
     (`flushcheck kernels --scenario c12-decisive`, and docs/reproducers/test_c12_skew.c, the \
     same sequence as a standalone test in the style of the cgroup selftests; 6.12.117, \
     without the break, shows no loss).";

const ABSTRACTIONS: &str = "One statistic item; every memcg is visited on every CPU (the \
     lockless updated list of v6.17 on is modelled separately and keeps the break); one \
     context per CPU (no IRQ or NMI nesting inside memcg_rstat_updated()); atomic_t \
     (v6.16-v7.0) and atomic_long_t (v7.1) are the same word; memcg_state_val_in_pages() is \
     the identity (values are pages); v6.16's walk is v6.17's. A lost flush is decided by \
     comparing each read with what the walk without the break would have counted on the \
     same history; that comparison counts each level's this_cpu_add_return() as one step, \
     so where the flush's remote reset lands inside one (1-page charges at a batch of 2 or \
     more) it flags the walk without the break too and decides nothing: the racy form's \
     witness is at a batch of 1, where it does not. The racy form on 2 CPUs is beyond the \
     exhaustive search (2 CPUs, batch 1, two charges each: cut short at 3,000,000 \
     schedules); the candidates are checked on 2 and 3 CPUs in the race-free form.";

/// The finding.
pub(in super::super) fn finding() -> Finding {
    Finding {
        id: "c12-lost-flush",
        subject: "memcg: memcg_rstat_updated()'s break defers parents' flushes",
        class: Class::KernelBug,
        claim: CLAIM,
        affected: releases::C12.affected,
        introduced: releases::C12.introduced_text,
        first: releases::C12.first,
        last: releases::C12.last,
        closed_by: releases::C12.closed_by,
        witness: Witness {
            variant: "v6.17",
            cfg: c12_witness,
            command: "flushcheck explain --variant v6.17 --property no_lost_flush \
                      --backend shuttle-random --cpus 1 --batch 1 --updates 3 --val 1 \
                      --tree 0 --charge 1 --read 0 --readers 0 --periodic",
            shown: Shown::Property {
                property: Property::NoLostFlush,
                backend: ShuttleDfs,
            },
            loom_bound: None,
        },
        larger: Some(c12_larger),
        scale: &[c12_six, fold_skew, fold_skew_2, fold_skew_3],
        also: &[Witness {
            variant: "v6.17",
            cfg: fold_skew,
            command: "flushcheck --variant v6.17 --entry memcg-fold-skew --cells",
            shown: Shown::Property {
                property: Property::NoLostFlush,
                backend: ShuttleDfs,
            },
            loom_bound: None,
        }],
        fixes_tag: Some("60cada258dfe (\"memcg: optimize memcg_rstat_updated\")"),
        files: &["mm/memcontrol.c"],
        weak_memory: false,
        mechanism: MECHANISM,
        impact: IMPACT,
        magnitude: MAGNITUDE,
        likelihood: LIKELIHOOD,
        preconditions: PRECONDITIONS,
        abstractions: ABSTRACTIONS,
        fixes: FIXES,
        bound: None,
    }
}
