//! The behavioural findings: what released kernels do that their comments
//! or their users do not expect, each with fix candidates.

use crate::explore::BackendName::{Loom, ShuttleDfs};
use crate::observe::property::Property;

mod c12;

use super::configs::*;

use super::{releases, Candidate, Claim, Class, Expected, Finding, Shown, Witness};

const TREE_MB_V6_8: &str = "Revert d8ef4b38cb69 (re-apply 9a9e97b2f1f2), ported to v6.8-v6.14, \
     and mark updated_next: in cgroup_rstat_updated() (kernel/cgroup/rstat.c) add \
     `smp_mb();` before the speculative test and make it \
     `if (READ_ONCE(cgroup_rstat_cpu(cgrp, cpu)->updated_next)) return;` (it is \
     data_race(), a plain read to LKMM); in cgroup_rstat_updated_list() add `smp_mb();` \
     after the subtree is unlinked, before the per-CPU lock is released (9a9e97b2f1f2 had \
     it after each unlink in cgroup_rstat_cpu_pop_updated(), which v6.8 replaced), and \
     make the unlinks there and in cgroup_rstat_push_children() `WRITE_ONCE(..., NULL)`. \
     The pair alone, on the plain accesses, does not close the race in LKMM (docs/\
     findings.md section 15); the model runs updated_next as an atomic, so its \
     v6.8-tree-mb is this candidate. Checked on 1 and 2 CPUs \
     (loom, preemption bound 2); 3 CPUs, and 2 CPUs with a child memcg, are inconclusive \
     within 120 s at that bound. One full barrier per update on the hot path, none \
     added to the per-level walk. Upstream's measured cost: d8ef4b38cb69 reverted the pair \
     because \"Mel Gorman noticed it as 1% regression in netperf UDP_STREAM test\" (Tejun \
     Heo, 2020-04-09: \"every scheduling event now had to go through an additional full \
     barrier\")";

const TREE_MB_V6_17: &str = "The same pair where v6.17 on would take it: in css_rstat_updated() \
     (kernel/cgroup/rstat.c) add `smp_mb();` before `if (llist_on_list(&rstatc->lnode)) \
     return;`, and in css_process_update_tree() add `smp_mb();` after \
     `init_llist_node(lnode);`, the places the July 2025 comments name (\"This check is \
     racy and smp_mb() is needed to pair it with the smp_mb() in \
     css_process_update_tree()\"). Checked as v6.8-tree-mb is; upstream's cost is the \
     same 1% (d8ef4b38cb69)";

const DEATH_FIX: &str = "Stable-only, for v5.13-v6.15: in kernel/cgroup/rstat.c add \
     cgroup_rstat_css_free_flush(css): under spin_lock_irq(&cgroup_rstat_lock), \
     css->ss->css_rstat_flush(css, cpu) for_each_possible_cpu(), then \
     cgroup_rstat_updated(cgroup_parent(css->cgroup), smp_processor_id()); call it in \
     css_free_rwork_fn() before ss->css_free(css) when ss->css_rstat_flush is set. The release \
     and its list_del_rcu(&css->rstat_css_node) under cgroup_mutex are unchanged, so the list's \
     two writers (init_and_link_css() and css_release_work_fn()) still exclude each other. The \
     free runs a grace period after the release: every charge that found the memcg under RCU \
     has landed, and the callback folds it into the memcg and the parent's pending counts, \
     which the next flush covering the parent folds. Off the hot path. Checked exhaustively \
     (DFS) on the three lifetime entries: the charge racing the release, the parent dying \
     too, and a new memory css linked into the cgroup while the memcg waits to be freed.";

const DEATH_UNLINK_AT_FREE: &str = "WITHDRAWN: keep the css on rstat_css_list until its free \
     and there, before ss->css_free(css), cgroup_rstat_flush(cgrp) and \
     list_del_rcu(&css->rstat_css_node) under cgroup_rstat_lock. The lock covers the list's \
     readers but not its other writer: init_and_link_css() adds a new css under cgroup_mutex \
     only. With the memory controller enabled again in the parent's cgroup.subtree_control \
     while the old memcg waits to be freed, the add and the unlink race and the list keeps the \
     freed css (no_use_after_free on life-relink: the new css's list_add_rcu() writes the \
     freed node, and the next flush of the cgroup folds its poisoned counters)";

const DEATH_CALLBACK_ONLY: &str = "WITHDRAWN: the callback for every CPU at the free, \
     without marking the parent updated. A flush that ran between the late charge and the \
     free took the parent off every tree, and the delta the callback passes up stays in the \
     parent's state_pending (stats_survive_death on life-child)";

const GATE_OR_ROOT: &str = "In mem_cgroup_flush_stats() (mm/memcontrol.c, v6.8: `if \
     (memcg_vmstats_needs_flush(memcg->vmstats))`): flush the subtree also when \
     `memcg_vmstats_needs_flush(root_mem_cgroup->vmstats)`, reading the root's atomic \
     first and the memcg's last (one more atomic_read() on the read path; the hot path is \
     v6.8's). Checked exhaustively (DFS) on 2 and 3 CPUs, with one and two updates per \
     CPU. It does not cover a flush in flight: with the periodic flush walking CPU 1 \
     before its charge and resetting the counts at the end, the read still returns 0 \
     (explain finds it on the witness with --periodic; the reset of counts a flush did \
     not fold, as in the per-memcg margin's report)";

const FLUSHERS_WAIT: &str = "In do_flush_stats() (mm/memcontrol.c, v6.4-v6.7) replace `if \
     (atomic_read(&stats_flush_ongoing) || atomic_xchg(&stats_flush_ongoing, 1)) return;` \
     with a lock all flushers take in turn around the walk and the threshold's reset, as \
     7d7ef0a4686a did in v6.8 with cgroup_rstat_lock. Off the hot path. Checked \
     exhaustively (DFS) on 1, 2 and 3 CPUs, and 2 CPUs with three updates each";

const MB_RMB: &str = "The smp_mb() pair of v6.17-tree-mb, and in __mem_cgroup_flush_stats() \
     (mm/memcontrol.c) `smp_rmb();` after `needs = memcg_vmstats_needs_flush(memcg->vmstats)` \
     and before css_rstat_flush(). Checked with loom unbounded on 1 and 2 CPUs and a \
     deeper tree on 2 CPUs; 3 CPUs is inconclusive within 120 s.";

const MB_ACQUIRE: &str = "The smp_mb() pair of v6.17-tree-mb, and in memcg_vmstats_needs_flush() \
     (mm/memcontrol.c) the count read as `atomic_read_acquire(&vmstats->stats_updates)` \
     (`atomic_long_read_acquire()` from v7.1) instead of atomic_read(). Checked as \
     v6.17-tree-mb-rmb is.";

/// The behavioural findings.
pub(super) fn findings() -> Vec<Finding> {
    vec![
        c12::finding(),
        Finding {
            id: "tree-sb-lost-update",
            subject:
                "cgroup/rstat: an update can be missed by every later flush",
            class: Class::KnownAccepted,
            claim: Claim {
                quote: "This is benign race and the subsequent flusher will flush those stats",
                source: "Shakeel Butt, \"cgroup: explain the race between updater and \
                         flusher\", lore 20250703200012.3734798-2-shakeel.butt@linux.dev \
                         (and d8ef4b38cb69, Tejun Heo, v5.7: \"This may race leading to \
                         temporary inaccuracies, which is fine\")",
            },
            affected: releases::TREE_SB.affected,
            introduced: releases::TREE_SB.introduced_text,
            first: releases::TREE_SB.first,
            last: releases::TREE_SB.last,
            closed_by: releases::TREE_SB.closed_by,
            witness: Witness {
                variant: "v6.8-tree",
                cfg: tree_sb,
                command: "flushcheck explain --variant v6.8-tree --property \
                          eventual_conservation --backend loom --cpus 1 --batch 1 --updates 2 \
                          --val 1 --readers 0 --periodic --settle 2 --settle-update",
                shown: Shown::Property {
                    property: Property::EventualConservation,
                    backend: Loom,
                },
                loom_bound: Some(2),
            },
            larger: Some(tree_sb_larger),
            scale: &[tree_sb_cpus2],
            also: &[],
            fixes_tag: None,
            files: &["kernel/cgroup/rstat.c"],
            weak_memory: true,
            mechanism: "Store buffering: the updater writes its per-CPU counter, then reads \
                 updated_next (lnode.next from v6.17) and finds the memcg on the tree; the \
                 flusher unlinks the memcg, then reads the counter without the new value. \
                 Each read misses the other's write, so the memcg is off the tree with an \
                 update nobody folded. No later flush visits it; the next update of that \
                 memcg on that CPU re-links it and the flush after folds both.",
            impact: "A memcg's statistics stay short by one update for as long as that memcg \
                 is not charged again on that CPU: an idle cgroup keeps the error \
                 indefinitely, through any number of flushes, memory.stat reads included.",
            magnitude: "One update per (memcg, CPU) race: a page, or a huge page (512 pages) \
                 for THP statistics; it does not grow with time but does not decay either.",
            likelihood: "Low per update (it needs the store to sit in the store buffer across \
                 the flusher's unlink and read), but every update on the fast path is exposed.",
            preconditions: "Weak memory only: x86-TSO allows it too, since the kernel's \
                 __this_cpu_add() is a plain add (no lock prefix), as do arm64 and POWER. \
                 No interrupt or lock assumption; the per-CPU lock (v5.7-v6.16) covers only \
                 the slow path, and the llist (v6.17 on) takes none.",
            abstractions: "loom's C11 model stands for LKMM (the litmus test below is the \
                 race alone); the model's update is one fetch_add (a lock-prefixed \
                 instruction on x86, which is why std on x86 cannot show it); one statistic \
                 item; the per-CPU tree has one word per node (updated_children not modelled).",
            fixes: &[
                Candidate {
                    variant: "v6.8-tree-mb",
                    change: TREE_MB_V6_8,
                    expected: Expected::Fixes,
                    refuted_on: None,
                },
                Candidate {
                    variant: "v6.17-tree-mb",
                    change: TREE_MB_V6_17,
                    expected: Expected::Fixes,
                    refuted_on: None,
                },
            ],
            bound: None,
        },
        Finding {
            id: "death-lost-page",
            subject: "memcg: a charge racing memcg death is lost from its ancestors",
            class: Class::FixedUpstream,
            claim: Claim {
                quote: "After this function returns, all cgroups in the subtree have \
                        up-to-date ->stat",
                source: "kernel/cgroup/rstat.c, kerneldoc of cgroup_rstat_flush() \
                         (css_rstat_flush() from v6.16)",
            },
            affected: releases::DEATH.affected,
            introduced: releases::DEATH.introduced_text,
            first: releases::DEATH.first,
            last: releases::DEATH.last,
            closed_by: releases::DEATH.closed_by,
            witness: Witness {
                variant: "v6.8-life",
                cfg: life_child,
                command: "flushcheck lifetime --witness \
                          v6.8-life:stats_survive_death:shuttle-dfs:life-child",
                shown: Shown::Property {
                    property: Property::StatsSurviveDeath,
                    backend: ShuttleDfs,
                },
                loom_bound: None,
            },
            larger: Some(life_parent),
            scale: &[life_child_cpus2, life_relink],
            also: &[],
            fixes_tag: Some("2d146aa3aa84 (\"mm: memcontrol: switch to rstat\")"),
            files: &["kernel/cgroup/cgroup.c", "kernel/cgroup/rstat.c"],
            weak_memory: false,
            mechanism: "CPU 0 counts a page in the child's per-CPU state through the objcg \
                 under rcu_read_lock(), then stalls before cgroup_rstat_updated() links the \
                 child's cgroup on its tree. Meanwhile rmdir takes the child offline, the last \
                 reference goes and css_release_work_fn()'s cgroup_rstat_flush() finds the \
                 child on no tree; list_del_rcu(&css->rstat_css_node) then removes the memcg \
                 callback. CPU 0 links the child after all. After the grace period \
                 css_free_rwork_fn() frees the memcg (mem_cgroup_css_free()) with the page in \
                 its per-CPU counter and puts its cgroup; the cgroup's own release flush, and \
                 cgroup_rstat_exit() at the cgroup's free, unlink the child without a \
                 callback to call.",
            impact: "The parent's and every ancestor's hierarchical statistics (memory.stat, \
                 memory.current is not affected) miss the page for good; when the page is \
                 later uncharged from the parent it reparented to, the ancestors' counters go \
                 below the truth (reads clamp at 0).",
            magnitude: "One update per CPU caught in the window per dying memcg: through the \
                 objcg, the slab statistics the per-CPU objcg stock pushes (NR_SLAB_*_B, up to \
                 about a page of bytes); a charged folio or a large kmalloc holds a reference \
                 on the memcg and cannot race its release. Permanent, but not repeated.",
            likelihood: "Low: the memcg's css released while an update that found it under \
                 RCU is stalled between its per-CPU add and cgroup_rstat_updated(), across \
                 offline, the last css_put(), the release work being run and its flush \
                 (milliseconds).",
            preconditions: "The stall. On !PREEMPT_RT these updates run with interrupts \
                 disabled (mod_objcg_state() holds the objcg stock's local_lock_irqsave()), so \
                 it takes an NMI on that CPU, the host preempting the vCPU, or PREEMPT_RT. In \
                 the model CPU 0 waits on the per-CPU rstat lock while the release flush holds \
                 it, which stands for any of them. Sequential consistency suffices. The \
                 long-term trees 5.15, 6.1, 6.6 and 6.12 have it (the release and free paths \
                 read in 5.15.0, 6.1.0 and 6.1.192, 6.6.9, 6.12.0 and 6.12.117).",
            abstractions: "One CPU, one page; the objcg charge path and the folio path; \
                 cgroup_mutex is modelled where it orders rstat_css_list's writers (the \
                 killed-css work, the release, css_create()), the work queues are not (the \
                 release and free run on the rmdir thread, in the order queued, the grace \
                 period is synchronize_rcu()); of the cgroup's self css only its reference \
                 count, its release flush and cgroup_rstat_exit() (no base stats, no other \
                 controllers, whose updates also link the cgroup); a new memory css is its \
                 node on rstat_css_list and its reference on the cgroup; the v6.8 statistics \
                 path stands for v5.13-v6.15's (the same release and free lines), with the \
                 updater/flusher barrier pair in so that the tree's own store-buffering loss \
                 does not mask this one.",
            fixes: &[
                Candidate {
                    variant: "v6.8-life-fix-callback-at-free",
                    change: DEATH_FIX,
                    expected: Expected::Fixes,
                    refuted_on: None,
                },
                Candidate {
                    variant: "v6.8-life-fix-flush-at-css-free",
                    change: DEATH_UNLINK_AT_FREE,
                    expected: Expected::Refuted,
                    refuted_on: None,
                },
                Candidate {
                    variant: "v6.8-life-fix-callback-only",
                    change: DEATH_CALLBACK_ONLY,
                    expected: Expected::Refuted,
                    refuted_on: None,
                },
                Candidate {
                    variant: "v6.8-life-fix-del-at-free",
                    change: "WITHDRAWN: list_del_rcu(&css->rstat_css_node) moved from the \
                             release to cgroup_rstat_exit(), after its flush. It held only \
                             while the model ran cgroup_rstat_exit() before the memcg's free; \
                             it runs at the cgroup's free, after mem_cgroup_css_free(), so \
                             the freed memcg stays on rstat_css_list: the list_del_rcu() \
                             writes it, and a flush that pops the cgroup before then walks \
                             into it and folds its poisoned counters (a use after free on \
                             every backend and both configurations)",
                    expected: Expected::Refuted,
                    refuted_on: None,
                },
            ],
            bound: None,
        },
        Finding {
            id: "quiescent-read-zero",
            subject: "memcg: a read after quiescence returns 0 with 65 pages charged",
            class: Class::KnownAccepted,
            claim: Claim {
                quote: "TFAIL: rss is 0, 266240 expected",
                source: "LTP memcg_stat_rss on cgroup v1, reported January 2025 (Oracle); \
                         8d59d2214c23's message accepts an error margin \"NR_CPUS * \
                         MEMCG_CHARGE_BATCH * NR_MEMCGS\"",
            },
            affected: releases::QUIESCENT.affected,
            introduced: releases::QUIESCENT.introduced_text,
            first: releases::QUIESCENT.first,
            last: releases::QUIESCENT.last,
            closed_by: releases::QUIESCENT.closed_by,
            witness: Witness {
                variant: "v6.8",
                cfg: b9,
                command: "flushcheck explain --variant v6.8 --property quiescent_read_exact \
                          --backend shuttle-random --cpus 2 --batch 64 --updates 1 --val \
                          200,65 --tree 0,0 --charge 1,2 --read 2 --readers 0 --no-periodic",
                shown: Shown::Property {
                    property: Property::QuiescentReadExact,
                    backend: ShuttleDfs,
                },
                loom_bound: None,
            },
            larger: Some(b9_larger),
            scale: &[b9_cpus3, b9_cpus3_larger],
            also: &[],
            fixes_tag: Some("8d59d2214c23 (\"mm: memcg: make stats flushing threshold per-memcg\")"),
            files: &["mm/memcontrol.c"],
            weak_memory: false,
            mechanism: "Each memcg gates its readers on its own count: memcg 2's atomic holds \
                 65 <= 64 * 2, so reading memcg 2 does not flush, although the root's count, \
                 265, is above the trigger. v5.16-v6.7's global threshold, pushed over by the \
                 sibling, made the same read flush and return 65.",
            impact: "A read of a small cgroup's statistics after its charges completed returns \
                 the value before them (0 here) until the periodic flush: tests and tools that \
                 charge and then read fail.",
            magnitude: "Up to 64 * nr_cpus pages per memcg: 8192 pages (32 MiB) on 128 CPUs, \
                 the size of the test_memcg_sock selftest failures on large machines; for 2 s, \
                 longer when the periodic worker runs late.",
            likelihood: "Certain for a memcg whose unflushed charges stay below the trigger.",
            preconditions: "None: every interleaving shows it (a read after quiescence).",
            abstractions: "One statistic item; memory.stat reads are modelled as \
                 mem_cgroup_flush_stats() then memcg_page_state() of one memcg.",
            fixes: &[Candidate {
                variant: "v6.8-fix-gate-or-root",
                change: GATE_OR_ROOT,
                expected: Expected::Fixes,
                refuted_on: None,
            }],
            bound: None,
        },
        Finding {
            id: "b7-skipped-flusher",
            subject: "memcg: a flusher that skips returns data missing every update",
            class: Class::FixedUpstream,
            claim: Claim {
                quote: "We always flush the entire tree, so concurrent flushers can just skip",
                source: "mm/memcontrol.c, do_flush_stats(); Yosry Ahmed, 3cd9992b9302 \
                         (\"memcg: replace stats_flush_lock with an atomic\"), v6.4",
            },
            affected: releases::B7.affected,
            introduced: releases::B7.introduced_text,
            first: releases::B7.first,
            last: releases::B7.last,
            closed_by: releases::B7.closed_by,
            witness: Witness {
                variant: "v6.4",
                cfg: b7,
                command: "flushcheck bounds --exhaustive --custom --variant v6.4 --cpus 1 \
                          --batch 1 --updates 2 --val 1 --readers 1 --periodic --witness",
                shown: Shown::SkippedFlush,
                loom_bound: None,
            },
            larger: Some(b7_larger),
            scale: &[b7_cpus2, b7_cpus3, b7_cpus2_larger],
            also: &[],
            fixes_tag: Some("aa48e47e3906 (\"memcg: infrastructure to flush memcg stats\")"),
            files: &["mm/memcontrol.c"],
            weak_memory: false,
            mechanism: "A reader's gate reads the threshold above num_online_cpus() and \
                 decides to flush; before its atomic_xchg(&stats_flush_ongoing, 1) the \
                 periodic work takes the flag. The reader returns at once and reads the \
                 aggregate before that flush's walk has folded anything.",
            impact: "A reader that decided the statistics were stale enough to flush (a \
                 memory.stat read, reclaim) reads them unflushed anyway.",
            magnitude: "Every update since the previous flush's walk passed its CPU: up to \
                 2 s of charges on every CPU, more with a late worker; not bounded by \
                 MEMCG_CHARGE_BATCH * nr_cpus.",
            likelihood: "Whenever two flushers overlap: the periodic work and a reader, or \
                 readers under memory pressure.",
            preconditions: "None beyond two flushers at once.",
            abstractions: "Flushes take less than a tick; the walk holds cgroup_rstat_lock \
                 throughout (the kernel may drop it between CPUs).",
            fixes: &[Candidate {
                variant: "v6.4-fix-flushers-wait",
                change: FLUSHERS_WAIT,
                expected: Expected::Fixes,
                refuted_on: None,
            }],
            bound: None,
        },
        Finding {
            id: "weak-triggered-read",
            subject: "cgroup/rstat: a triggered flush can miss what triggered it",
            class: Class::Theoretical,
            claim: Claim {
                quote: "After this function returns, all cgroups in the subtree have \
                        up-to-date ->stat",
                source: "kernel/cgroup/rstat.c, kerneldoc of css_rstat_flush() (v6.17 on)",
            },
            affected: releases::WEAK_READ.affected,
            introduced: releases::WEAK_READ.introduced_text,
            first: releases::WEAK_READ.first,
            last: releases::WEAK_READ.last,
            closed_by: releases::WEAK_READ.closed_by,
            witness: Witness {
                variant: "v6.17-tree",
                cfg: trigger,
                command: "flushcheck findings --replay weak-triggered-read",
                shown: Shown::TriggeredRead,
                loom_bound: None,
            },
            larger: Some(trigger_larger),
            scale: &[trigger_cpus2, trigger_cpus2_larger],
            also: &[],
            fixes_tag: None,
            files: &["kernel/cgroup/rstat.c", "mm/memcontrol.c"],
            weak_memory: true,
            mechanism: "CPU 0 charges memcg 2 twice; the first charge puts it on CPU 0's \
                 llist with llist_add(), then both fold into memcg 1's count (4 > 2). The \
                 reader of memcg 1 reads that count with a relaxed atomic_read(), decides to \
                 flush, and css_process_update_tree() loads the llist head with \
                 smp_load_acquire(): nothing orders the relaxed read before that load, so the \
                 flush can see an empty list although the count it read was added after the \
                 insertion. It runs no callback, resets no count, and the reader reads 0.",
            impact: "The reader whose flush the count triggered (memory.stat, reclaim of the \
                 parent) reads none of the pages that triggered it; nothing is lost: the \
                 counts stay, and the next flush folds them.",
            magnitude: "Up to the whole trigger for that one read: 64 * nr_cpus pages (16 MiB \
                 on 64 CPUs), in every memcg of the subtree.",
            likelihood: "Low: the reader's load of the count must be satisfied before its \
                 load of the list head is, which needs load-load reordering.",
            preconditions: "Weak memory only, and only where loads may be reordered with \
                 loads: arm64 and POWER; x86 keeps loads in order. The smp_mb() pair of \
                 the updater/flusher race (the pair d8ef4b38cb69 reverted) does not remove it: it orders the updater's counter \
                 before its list test, not the reader's count read before the flush.",
            abstractions: "loom's C11 model; smp_rmb() is modelled as an acquire fence, which \
                 also orders the earlier loads before later stores (stronger than LKMM's); \
                 one context per CPU.",
            fixes: &[
                Candidate {
                    variant: "v6.17-tree-mb-rmb",
                    change: MB_RMB,
                    expected: Expected::Fixes,
                    refuted_on: None,
                },
                Candidate {
                    variant: "v6.17-tree-mb-acquire",
                    change: MB_ACQUIRE,
                    expected: Expected::Fixes,
                    refuted_on: None,
                },
            ],
            bound: None,
        },
    ]
}
