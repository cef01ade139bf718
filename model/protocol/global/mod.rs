//! The global-threshold lineage (v5.16-v6.7): one `stats_flush_threshold`
//! counting batches of `MEMCG_CHARGE_BATCH` updates per CPU, one
//! `stats_flush_lock` (`stats_flush_ongoing` from v6.4).
//!
//! [`v5_19`] holds the lineage's kernel functions as the default methods
//! of its `Memcontrol` trait and its globals (`State`); every other
//! version, mutant and rewrite here overrides the functions it changes:
//! [`v6_0`] the skip of 873f64b791a2, [`v6_4`] the `stats_flush_ongoing`
//! flusher and its no-skip twin, [`mutants`], [`mutants_v6_4`] and
//! [`benign`] one small difference each, [`fixes`] the fix candidate of
//! `b7-skipped-flusher`. [`catalogue`] lists them.

pub mod benign;
pub mod fixes;
pub mod mutants;
pub mod mutants_v6_4;
pub mod v5_19;
pub mod v6_0;
pub mod v6_4;

use crate::observe::twin::Gate;
use crate::protocol::variant::{Derivation, Kind, Variant};

/// The lineage's variants, in report order: the kernel versions, their
/// mutants, twins and benign rewrites.
pub fn catalogue() -> Vec<Variant> {
    let mut all = vec![
        Variant::new(
            "v5.19",
            Kind::Kernel,
            "before 873f64b791a2: every batch is added to stats_flush_threshold",
            v5_19::model(v5_19::V5_19),
        )
        // Its own twin, which checks the twin gate against the real one.
        .twin("v5.19")
        .gate(Gate::Global)
        .derivable(Derivation::Global)
        .baseline(),
        Variant::new(
            "v6.0",
            Kind::Kernel,
            "873f64b791a2: skip atomic_add when stats_flush_threshold > num_online_cpus()",
            v5_19::model(v6_0::V6_0),
        )
        .twin("v5.19")
        .derivable(Derivation::Global),
    ];
    all.extend(mutants::variants());
    all.extend([
        Variant::new(
            "v6.4",
            Kind::Kernel,
            "3cd9992b9302: stats_flush_ongoing (atomic_read || atomic_xchg) replaces stats_flush_lock",
            v5_19::model(v6_4::V6_4),
        )
        .twin("v6.4-no-skip"),
        Variant::new(
            "v6.4-no-skip",
            Kind::Twin,
            "v6.4 without 873f64b791a2's skip: every batch is added",
            v5_19::model(v6_4::NoSkip),
        )
        .twin("v6.4-no-skip")
        .gate(Gate::Global),
    ]);
    all.extend(mutants_v6_4::variants());
    all.push(
        Variant::new(
            "v6.4-fix-flushers-wait",
            Kind::Fix,
            "b7-skipped-flusher: v6.4 whose flushers wait for an ongoing flush and then flush (7d7ef0a4686a's rule)",
            v5_19::model(fixes::FlushersWait),
        )
        .twin("v6.4-no-skip"),
    );
    all.extend(benign::variants());
    all
}

/// The benchmark ceiling: per-CPU counting only, periodic flush only.
pub fn no_global() -> Variant {
    Variant::new(
        "no-global-accounting",
        Kind::Bound,
        "ceiling: no stats_flush_threshold traffic at all; only the periodic work flushes",
        v5_19::model(v6_0::NoGlobalAccounting),
    )
}
