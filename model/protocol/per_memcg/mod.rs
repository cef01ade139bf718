//! The per-memcg lineage (v6.8 on): one `vmstats->stats_updates` threshold
//! per memcg, counted in pages and folded up the ancestors, and subtree
//! flushes gated on the target.
//!
//! [`v6_8`] holds the lineage's kernel functions as the default methods of
//! its `Memcontrol` trait and its globals (`State`), and v6.8's no-skip
//! twin; [`v6_17`] overrides the updater (the early `break`) and the rstat
//! flush, [`proposal_2026`] the trigger. [`rstat`] is the per-CPU updated
//! tree's data, [`rstat_tree`] (v5.7-v6.14) and [`rstat_llist`] (v6.17 on)
//! its two forms of code; [`mutants`] one small difference each, and
//! [`fixes`] the fix candidates of the lineage's findings. [`catalogue`]
//! lists them.

pub mod fixes;
pub mod mutants;
pub mod proposal_2026;
pub mod rstat;
pub mod rstat_llist;
pub mod rstat_tree;
pub mod v6_17;
pub mod v6_8;

use crate::config::Config;
use crate::explore::BackendName;
use crate::kernel::marking;
use crate::observe::twin::Gate;
use crate::observe::Property;
use crate::protocol::variant::ALL_CHECKERS;
use crate::protocol::variant::{batch_times_cpus, Derivation, Kind, Variant, LOOM, SAMPLED};

/// The lineage's variants, in report order: the kernel versions, their
/// mutants, their no-skip twins, and the updated-tree forms.
pub fn catalogue() -> Vec<Variant> {
    let mut all =
        vec![
        Variant::new(
            "v6.8",
            Kind::Kernel,
            "8d59d2214c23, 7d7ef0a4686a: per-memcg thresholds, skip the add at a flushable level",
            v6_8::model(v6_8::V6_8),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.8-no-skip")
        .derivable(Derivation::PerMemcg),
        Variant::new(
            "v6.17",
            Kind::Kernel,
            "early break out of the ancestor walk at the first flushable memcg (C12)",
            v6_8::model(v6_17::V6_17),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        .derivable(Derivation::PerMemcg)
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED)
        // c12-lost-flush's race-free form, on one interleaving.
        .finding_on(Property::NoLostFlush, BackendName::ShuttleDfs, FOLD_SKEW)
        .finding_on(Property::AncestorsFlushable, BackendName::ShuttleDfs, FOLD_SKEW)
        // The same form by the reader's contract, no walk compared.
        .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
        Variant::new(
            "scaled-2026",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * (ilog2(nr_cpus) + 1)",
            v6_8::model(proposal_2026::ScaledIlog2),
        )
        .per_memcg(proposal_2026::trigger_ilog2)
        .release(&marking::V6_17)
        .twin("scaled-2026-no-break")
        .derivable(Derivation::PerMemcg)
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED)
        .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
        Variant::new(
            "scaled-2026-sqrt",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * int_sqrt(nr_cpus + 2)",
            v6_8::model(proposal_2026::ScaledSqrt),
        )
        .per_memcg(proposal_2026::trigger_sqrt)
        .release(&marking::V6_17)
        .derivable(Derivation::PerMemcg)
        .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
        Variant::new(
            "scaled-2026-ln",
            Kind::Kernel,
            "reviewer's form, not posted: trigger MEMCG_CHARGE_BATCH * nr_cpus / (ln nr_cpus + 1)",
            v6_8::model(proposal_2026::ScaledLn),
        )
        .per_memcg(proposal_2026::trigger_ln)
        .release(&marking::V6_17)
        .derivable(Derivation::PerMemcg)
        .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
    ];
    all.extend(mutants::variants());
    all.extend(twins());
    all.extend(updated_tree());
    all.extend(fix_candidates());
    all
}

/// The suite entry of the race-free counterexample of C12
/// (`c12-lost-flush`'s race-free form).
pub const FOLD_SKEW: &str = "memcg-fold-skew";

/// The race-free counterexample of C12 (`c12-lost-flush`'s second form): `n = 1`,
/// `MEMCG_CHARGE_BATCH` 64, the root with two children; CPU 0 charges
/// child 1 +30, child 2 +34 (the root's counter reaches 64 and folds),
/// child 1 +40 (child 1's reaches 70 and folds: 70 > 64, flushable, while
/// the root's atomic holds 64, not), then child 1 +30, which breaks at
/// child 1 and never reaches the root. Main reads the root after joining.
pub fn fold_skew() -> Config {
    Config {
        cpus: 1,
        batch: 64,
        updates: 4,
        vals: vec![30, 34, 40, 30],
        readers: 0,
        periodic: false,
        tree: vec![0, 0],
        charges: vec![vec![1, 2, 1]],
        ..Config::default()
    }
}

/// The fix candidates of the lineage's findings ([`fixes`]); the rstat
/// tree's barrier pair (`v6.8-tree-mb`, `v6.17-tree-mb`) is with the tree
/// forms.
fn fix_candidates() -> Vec<Variant> {
    vec![
        Variant::new(
            "v6.17-fix-no-break",
            Kind::Fix,
            "c12: v6.17 without the early break; v6.8's per-level skip of the atomic add kept",
            v6_8::model(fixes::NoBreak),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break"),
        Variant::new(
            "v6.17-fix-break-if-ancestors",
            Kind::Fix,
            "c12, refuted: v6.17 leaving the walk only where the level and every level above are flushable",
            v6_8::model(fixes::BreakIfAncestors),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        // Refuted at the root, which has no ancestor: the break as it is,
        // racing a flush's reset (c12's `refuted_on`, found by fuzz).
        .refutes(Property::NoLostFlush),
        Variant::new(
            "v6.17-fix-no-remote-reset",
            Kind::Fix,
            "c12, refuted: v6.17 whose callback no longer zeroes another CPU's stats_updates",
            v6_8::model(fixes::NoRemoteReset),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        // Refuted: the atomics' resets still skew the levels (the racy
        // witness, exhaustively), and the break stays (the race-free one).
        .refutes(Property::NoLostFlush)
        .finding_on(Property::NoLostFlush, BackendName::ShuttleDfs, FOLD_SKEW),
        Variant::new(
            "v6.17-fix-fold-ancestors",
            Kind::Fix,
            "c12: v6.17 whose fold at one level folds every ancestor too; the break kept",
            v6_8::model(fixes::FoldAncestors),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        .refutes(Property::NoLostFlush),
        Variant::new(
            "v6.17-fix-comment-only",
            Kind::Fix,
            "c12, refuted: v6.17's code unchanged, only the comment corrected",
            v6_8::model(fixes::CommentOnly),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        .refutes(Property::NoLostFlush)
        .finding_on(Property::NoLostFlush, BackendName::ShuttleDfs, FOLD_SKEW),
        Variant::new(
            "v6.8-fix-gate-or-root",
            Kind::Fix,
            "quiescent-read-zero: v6.8 whose reader also flushes its subtree when the root is flushable",
            v6_8::model(fixes::GateOrRoot),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.8-no-skip"),
        Variant::new(
            "v6.17-tree-mb-rmb",
            Kind::Fix,
            "weak-triggered-read: v6.17-tree-mb with smp_rmb() after the reader's gate read",
            v6_8::model(fixes::OrderedGate {
                order: fixes::GateOrder::Rmb,
            }),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .updated_tree(true)
        .twin("v6.17-tree-mb-no-break")
        // v6.17's break: C12 (see v6.17-tree-mb).
        .refutes(Property::NoLostFlush)
        .refutes(Property::QuiescentReaderFlushes)
        .finding(Property::AncestorsFlushable, SAMPLED),
        Variant::new(
            "v6.17-tree-mb-acquire",
            Kind::Fix,
            "weak-triggered-read: v6.17-tree-mb whose reader reads the count with smp_load_acquire()",
            v6_8::model(fixes::OrderedGate {
                order: fixes::GateOrder::Acquire,
            }),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .updated_tree(true)
        .twin("v6.17-tree-mb-no-break")
        .refutes(Property::NoLostFlush)
        .refutes(Property::QuiescentReaderFlushes)
        .finding(Property::AncestorsFlushable, SAMPLED),
    ]
}

/// The twins of the per-memcg versions: each version with its
/// optimisation removed.
fn twins() -> Vec<Variant> {
    vec![
        Variant::new(
            "v6.8-no-skip",
            Kind::Twin,
            "v6.8 without the per-level skip: every fold is added",
            v6_8::model(v6_8::V6_8NoSkip),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.8-no-skip")
        .gate(Gate::PerMemcg { local_sum: true }),
        Variant::new(
            "v6.17-no-break",
            Kind::Twin,
            "v6.17 without the early break: every level counts every update",
            v6_8::model(v6_17::NoBreak),
        )
        .per_memcg(batch_times_cpus)
        .release(&marking::V6_17)
        .twin("v6.17-no-break")
        .gate(Gate::PerMemcg { local_sum: false }),
        Variant::new(
            "scaled-2026-no-break",
            Kind::Twin,
            "the 2026 proposal without the early break",
            v6_8::model(proposal_2026::ScaledIlog2NoBreak),
        )
        .per_memcg(proposal_2026::trigger_ilog2)
        .release(&marking::V6_17)
        .twin("scaled-2026-no-break")
        .gate(Gate::PerMemcg { local_sum: false }),
    ]
}

/// v6.8 and v6.17 with the per-CPU updated tree, with and without the
/// reverted barrier pair, their twins, and a mutant of the flusher.
///
/// Without the pair the store-buffering race loses an update under loom;
/// `conservation` is a finding there (C4, C15). Under SC (shuttle, std) it
/// cannot happen. Their worst case is not derived: the per-CPU lock orders
/// what the derivation lets race, so it would be an upper bound only.
fn updated_tree() -> Vec<Variant> {
    vec![
            Variant::new(
                "v6.8-tree",
                Kind::Kernel,
                "v6.8 flushing only what the per-CPU updated tree holds (d8ef4b38cb69: no barriers)",
                v6_8::model(rstat_tree::TreeV6_8 { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .updated_tree(false)
            .twin("v6.8-tree-no-skip")
            .finding(Property::Conservation, LOOM)
            .finding(Property::EventualConservation, LOOM),
            Variant::new(
                "v6.8-tree-mb",
                Kind::Kernel,
                "tree-sb-lost-update: v6.8-tree with 9a9e97b2f1f2's smp_mb() pair (reverted in v5.7) and updated_next marked",
                v6_8::model(rstat_tree::TreeV6_8 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_8_TREE_CANDIDATE)
            .updated_tree(true)
            .twin("v6.8-tree-mb-no-skip"),
            Variant::new(
                "mutant-tree-read-before-unlink",
                Kind::Mutant,
                "flusher: reads the counters, then unlinks the subtree (barriers in)",
                v6_8::model(rstat_tree::TreeReadBeforeUnlink),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_8_TREE_CANDIDATE)
            .twin("v6.8-tree-mb-no-skip")
            .killed_by(Property::Conservation, ALL_CHECKERS)
            .killed_by(Property::EventualConservation, &[BackendName::Loom, BackendName::ShuttleDfs]),
            Variant::new(
                "v6.8-tree-no-skip",
                Kind::Twin,
                "v6.8-tree without the per-level skip: every fold is added",
                v6_8::model(rstat_tree::TreeNoSkip { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-no-skip")
            .gate(Gate::PerMemcg { local_sum: true }),
            Variant::new(
                "v6.8-tree-mb-no-skip",
                Kind::Twin,
                "v6.8-tree-mb without the per-level skip: every fold is added",
                v6_8::model(rstat_tree::TreeNoSkip { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_8_TREE_CANDIDATE)
            .twin("v6.8-tree-mb-no-skip")
            .gate(Gate::PerMemcg { local_sum: true }),
            Variant::new(
                "v6.17-tree",
                Kind::Kernel,
                "v6.17 with the lock-free llist of updated nodes drained into the tree (no barriers, C13)",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_17)
            .updated_tree(false)
            .twin("v6.17-tree-no-break")
            // v6.17's break: C12's lost flush, which real threads show
            // (std, 1 in 3 searches of 4,000 runs) and the suite's SC
            // samples did not.
            .refutes(Property::NoLostFlush)
            .finding(Property::AncestorsFlushable, SAMPLED)
            .finding(Property::Conservation, LOOM)
            .finding(Property::EventualConservation, LOOM)
            .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
            Variant::new(
                "v6.17-tree-mb",
                Kind::Kernel,
                "tree-sb-lost-update: v6.17-tree with the smp_mb() pair the 2025 comments describe",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_17)
            .updated_tree(true)
            .twin("v6.17-tree-mb-no-break")
            // v6.17's break: C12's lost flush, which real threads show
            // (std, 1 in 3 searches of 4,000 runs) and the suite's SC
            // samples did not.
            .refutes(Property::NoLostFlush)
            .finding(Property::AncestorsFlushable, SAMPLED)
            .finding_on(Property::QuiescentReaderFlushes, BackendName::ShuttleDfs, FOLD_SKEW),
            Variant::new(
                "v6.17-tree-no-break",
                Kind::Twin,
                "v6.17-tree without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_17)
            .twin("v6.17-tree-no-break")
            .gate(Gate::PerMemcg { local_sum: false }),
            Variant::new(
                "v6.17-tree-mb-no-break",
                Kind::Twin,
                "v6.17-tree-mb without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .release(&marking::V6_17)
            .twin("v6.17-tree-mb-no-break")
            .gate(Gate::PerMemcg { local_sum: false }),
            ]
}
