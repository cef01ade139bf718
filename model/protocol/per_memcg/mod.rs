//! The per-memcg lineage (v6.8 on): one `vmstats->stats_updates` threshold
//! per memcg, counted in pages and folded up the ancestors, and subtree
//! flushes gated on the target.
//!
//! [`v6_8`] holds the lineage's kernel functions as the default methods of
//! its `Memcontrol` trait and its globals (`State`), and v6.8's no-skip
//! twin; [`v6_17`] overrides the updater (the early `break`) and the rstat
//! flush, [`proposal_2026`] the trigger. [`rstat`] is the per-CPU updated
//! tree's data, [`rstat_tree`] (v5.7-v6.14) and [`rstat_llist`] (v6.17 on)
//! its two forms of code; [`mutants`] one small difference each.
//! [`catalogue`] lists them.

pub mod mutants;
pub mod proposal_2026;
pub mod rstat;
pub mod rstat_llist;
pub mod rstat_tree;
pub mod v6_17;
pub mod v6_8;

use crate::explore::BackendName;
use crate::observe::twin::Gate;
use crate::observe::Property;
use crate::protocol::variant::ALL_CHECKERS;
use crate::protocol::variant::{batch_times_cpus, Derivation, Kind, Variant, LOOM, SAMPLED};

/// The lineage's variants, in report order: the kernel versions, their
/// mutants, their no-skip twins, and the updated-tree forms.
pub fn catalogue() -> Vec<Variant> {
    let mut all = vec![
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
        .twin("v6.17-no-break")
        .derivable(Derivation::PerMemcg)
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED),
        Variant::new(
            "scaled-2026",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * (ilog2(nr_cpus) + 1)",
            v6_8::model(proposal_2026::ScaledIlog2),
        )
        .per_memcg(proposal_2026::trigger_ilog2)
        .twin("scaled-2026-no-break")
        .derivable(Derivation::PerMemcg)
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED),
        Variant::new(
            "scaled-2026-sqrt",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * int_sqrt(nr_cpus + 2)",
            v6_8::model(proposal_2026::ScaledSqrt),
        )
        .per_memcg(proposal_2026::trigger_sqrt)
        .derivable(Derivation::PerMemcg),
    ];
    all.extend(mutants::variants());
    all.extend(twins());
    all.extend(updated_tree());
    all
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
        .twin("v6.17-no-break")
        .gate(Gate::PerMemcg { local_sum: false }),
        Variant::new(
            "scaled-2026-no-break",
            Kind::Twin,
            "the 2026 proposal without the early break",
            v6_8::model(proposal_2026::ScaledIlog2NoBreak),
        )
        .per_memcg(proposal_2026::trigger_ilog2)
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
                "v6.8-tree with 9a9e97b2f1f2's smp_mb() pair (reverted in v5.7)",
                v6_8::model(rstat_tree::TreeV6_8 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .updated_tree(true)
            .twin("v6.8-tree-mb-no-skip"),
            Variant::new(
                "mutant-tree-read-before-unlink",
                Kind::Mutant,
                "flusher: reads the counters, then unlinks the subtree (barriers in)",
                v6_8::model(rstat_tree::TreeReadBeforeUnlink),
            )
            .per_memcg(batch_times_cpus)
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
            .twin("v6.8-tree-mb-no-skip")
            .gate(Gate::PerMemcg { local_sum: true }),
            Variant::new(
                "v6.17-tree",
                Kind::Kernel,
                "v6.17 with the lock-free llist of updated nodes drained into the tree (no barriers, C13)",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .updated_tree(false)
            .twin("v6.17-tree-no-break")
            // v6.17's break: C12's lost flush, which real threads show
            // (std, 1 in 3 searches of 4,000 runs) and the suite's SC
            // samples did not.
            .refutes(Property::NoLostFlush)
            .finding(Property::AncestorsFlushable, SAMPLED)
            .finding(Property::Conservation, LOOM)
            .finding(Property::EventualConservation, LOOM),
            Variant::new(
                "v6.17-tree-mb",
                Kind::Kernel,
                "v6.17-tree with the smp_mb() pair the 2025 comments describe",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .updated_tree(true)
            .twin("v6.17-tree-mb-no-break")
            // v6.17's break: C12's lost flush, which real threads show
            // (std, 1 in 3 searches of 4,000 runs) and the suite's SC
            // samples did not.
            .refutes(Property::NoLostFlush)
            .finding(Property::AncestorsFlushable, SAMPLED),
            Variant::new(
                "v6.17-tree-no-break",
                Kind::Twin,
                "v6.17-tree without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-no-break")
            .gate(Gate::PerMemcg { local_sum: false }),
            Variant::new(
                "v6.17-tree-mb-no-break",
                Kind::Twin,
                "v6.17-tree-mb without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-mb-no-break")
            .gate(Gate::PerMemcg { local_sum: false }),
            ]
}
