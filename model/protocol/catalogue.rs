//! Variants: a name, what is expected of it, and the model that runs it.
//!
//! [`Variant::all`] is the catalogue the default run checks: the kernel
//! versions, the mutants (each with the properties that must kill it and
//! on which backends), and the benign rewrites (which must hold everything,
//! like the kernel). A reviewer's variant is a [`Kind::Candidate`], built
//! with [`Variant::new`] outside the crate and passed to
//! [`crate::cli::main_with`].

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::observe::property::Property;
use crate::observe::twin::{GateFactory, GlobalGate, PerMemcgGate};
use crate::protocol::{
    benign, mutants, mutants_later, mutants_v6_4, proposal_2026, rstat_llist, rstat_tree, v5_19,
    v6_0, v6_17, v6_4, v6_8, DynModel,
};

/// What a variant is, and so what the matrix expects of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Kernel code: must hold every property (but the refuted claims).
    Kernel,
    /// A deliberately broken variant: its designated killers must fire.
    Mutant,
    /// A rewrite that must hold every property, like the kernel.
    Benign,
    /// A variant the project has not seen (a reviewer's patch): it is
    /// expected to hold every property; a violation makes the run fail.
    Candidate,
    /// A performance bound for benchmarks; not in the checking matrix.
    Bound,
    /// A reference protocol that is not a kernel version (a version with
    /// its optimisation removed): run only as another variant's twin.
    Twin,
}

impl Kind {
    /// Whether the matrix expects every property to hold.
    pub fn must_hold(self) -> bool {
        matches!(self, Kind::Kernel | Kind::Benign | Kind::Candidate)
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Kernel => "kernel",
            Kind::Mutant => "mutant",
            Kind::Benign => "benign",
            Kind::Candidate => "candidate",
            Kind::Bound => "bound",
            Kind::Twin => "twin",
        }
    }
}

/// The protocol family a variant belongs to: what its threshold counts, and
/// so which scenarios of the suite apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// One global threshold in batches (v5.16-v6.7).
    Global,
    /// One threshold per memcg in pages, subtree flushes (v6.8 on).
    PerMemcg,
}

impl Family {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Global => "global",
            Family::PerMemcg => "per-memcg",
        }
    }
}

/// A kernel version, a mutant, a benign rewrite or a reviewer's candidate.
#[derive(Clone)]
pub struct Variant {
    /// Name used on the command line and in reports.
    pub name: String,
    /// What is expected of it.
    pub kind: Kind,
    /// The commit (kernel), what is broken (mutant) or what changed.
    pub summary: String,
    /// The code.
    pub model: Arc<dyn DynModel>,
    /// The no-skip twin `no_lost_flush` compares it with (a variant name).
    pub twin: Option<String>,
    /// Its own gate as a ghost, if other variants can name it as their
    /// twin.
    pub gate: Option<GateFactory>,
    /// For mutants: each property that must kill it, with the backends on
    /// which it must (other cells may go either way).
    pub killed_by: Vec<(Property, Vec<String>)>,
    /// The protocol family.
    pub family: Family,
    /// The reader's trigger on a configuration (per-memcg family): the
    /// value a memcg's `vmstats->stats_updates` must exceed.
    pub trigger: Option<fn(&Config) -> i64>,
    /// For kernel versions: the properties a finding says it violates, with
    /// the backends on which the matrix must see the violation.
    pub findings: Vec<(Property, Vec<String>)>,
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("twin", &self.twin)
            .field("killed_by", &self.killed_by)
            .field("family", &self.family)
            .field("findings", &self.findings)
            .finish()
    }
}

/// `MEMCG_CHARGE_BATCH * num_online_cpus()`, the trigger from v6.8 on.
pub fn batch_times_cpus(cfg: &Config) -> i64 {
    cfg.batch * cfg.cpus as i64
}

const SAMPLED: &[&str] = &["shuttle-random", "shuttle-pct"];
const SC: &[&str] = &["shuttle-random", "shuttle-pct", "shuttle-dfs"];
const LOOM: &[&str] = &["loom"];
const ALL_CHECKERS: &[&str] = &["loom", "shuttle-random", "shuttle-pct", "shuttle-dfs"];

impl Variant {
    /// A variant named `name` running `model` (see [`v5_19::model`]).
    pub fn new(
        name: impl Into<String>,
        kind: Kind,
        summary: impl Into<String>,
        model: Arc<dyn DynModel>,
    ) -> Self {
        Variant {
            name: name.into(),
            kind,
            summary: summary.into(),
            model,
            twin: None,
            gate: None,
            killed_by: Vec::new(),
            family: Family::Global,
            trigger: None,
            findings: Vec::new(),
        }
    }

    /// A per-memcg protocol (v6.8 on) whose readers flush above
    /// `trigger(cfg)`.
    pub fn per_memcg(mut self, trigger: fn(&Config) -> i64) -> Self {
        self.family = Family::PerMemcg;
        self.trigger = Some(trigger);
        self
    }

    /// A kernel version violates `property` (a finding), and the matrix
    /// must show it on each of `backends`.
    pub fn finding(mut self, property: Property, backends: &[&str]) -> Self {
        self.findings
            .push((property, backends.iter().map(|b| b.to_string()).collect()));
        self
    }

    /// The reader's trigger on `cfg`: `num_online_cpus()` batches for the
    /// global family.
    pub fn trigger_on(&self, cfg: &Config) -> i64 {
        self.trigger.map_or(cfg.cpus as i64, |t| t(cfg))
    }

    /// Compare it with the no-skip twin `twin` (`no_lost_flush`).
    pub fn twin(mut self, twin: impl Into<String>) -> Self {
        self.twin = Some(twin.into());
        self
    }

    /// Let other variants name this one as their twin, through `gate`.
    pub fn gate(mut self, gate: GateFactory) -> Self {
        self.gate = Some(gate);
        self
    }

    /// A mutant must be killed by `property` on each of `backends`.
    pub fn killed_by(mut self, property: Property, backends: &[&str]) -> Self {
        self.killed_by
            .push((property, backends.iter().map(|b| b.to_string()).collect()));
        self
    }

    /// v5.19: the code before 873f64b791a2 (and its own twin, which checks
    /// the twin gate against the real one).
    pub fn v5_19() -> Variant {
        Variant::new(
            "v5.19",
            Kind::Kernel,
            "before 873f64b791a2: every batch is added to stats_flush_threshold",
            v5_19::model(v5_19::V5_19),
        )
        .twin("v5.19")
        .gate(GlobalGate::factory)
    }

    /// v6.0: 873f64b791a2 skips the add once the threshold is above the
    /// trigger.
    pub fn v6_0() -> Variant {
        Variant::new(
            "v6.0",
            Kind::Kernel,
            "873f64b791a2: skip atomic_add when stats_flush_threshold > num_online_cpus()",
            v5_19::model(v6_0::V6_0),
        )
        .twin("v5.19")
    }

    /// v6.4 (v6.4-v6.7): `stats_flush_ongoing` for `stats_flush_lock`,
    /// `flush_next_time` with `READ_ONCE`/`WRITE_ONCE`.
    pub fn v6_4() -> Variant {
        Variant::new(
            "v6.4",
            Kind::Kernel,
            "3cd9992b9302: stats_flush_ongoing (atomic_read || atomic_xchg) replaces stats_flush_lock",
            v5_19::model(v6_4::V6_4),
        )
        .twin("v6.4-no-skip")
    }

    /// v6.4's no-skip twin: v6.4 with v5.19's updater.
    pub fn v6_4_no_skip() -> Variant {
        Variant::new(
            "v6.4-no-skip",
            Kind::Twin,
            "v6.4 without 873f64b791a2's skip: every batch is added",
            v5_19::model(v6_4::NoSkip),
        )
        .twin("v6.4-no-skip")
        .gate(GlobalGate::factory)
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

    /// v6.8 (v6.8-v6.14): per-memcg thresholds, the per-level skip.
    pub fn v6_8() -> Variant {
        Variant::new(
            "v6.8",
            Kind::Kernel,
            "8d59d2214c23, 7d7ef0a4686a: per-memcg thresholds, skip the add at a flushable level",
            v6_8::model(v6_8::V6_8),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.8-no-skip")
    }

    /// v6.17 (v6.17-v7.1.5): the early `break` out of the ancestor walk.
    pub fn v6_17() -> Variant {
        Variant::new(
            "v6.17",
            Kind::Kernel,
            "early break out of the ancestor walk at the first flushable memcg (C12)",
            v6_8::model(v6_17::V6_17),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.17-no-break")
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED)
    }

    /// The 2026 proposal, `ilog2` form, on v7.1.
    pub fn scaled_2026() -> Variant {
        Variant::new(
            "scaled-2026",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * (ilog2(nr_cpus) + 1)",
            v6_8::model(proposal_2026::ScaledIlog2),
        )
        .per_memcg(proposal_2026::trigger_ilog2)
        .twin("scaled-2026-no-break")
        .finding(Property::NoLostFlush, SAMPLED)
        .finding(Property::AncestorsFlushable, SAMPLED)
    }

    /// The 2026 proposal, `int_sqrt` form, on v7.1.
    pub fn scaled_2026_sqrt() -> Variant {
        Variant::new(
            "scaled-2026-sqrt",
            Kind::Kernel,
            "proposed 2026, not merged: trigger MEMCG_CHARGE_BATCH * int_sqrt(nr_cpus + 2)",
            v6_8::model(proposal_2026::ScaledSqrt),
        )
        .per_memcg(proposal_2026::trigger_sqrt)
    }

    /// The twins of the per-memcg versions: each version with its
    /// optimisation removed.
    pub fn per_memcg_twins() -> Vec<Variant> {
        vec![
            Variant::new(
                "v6.8-no-skip",
                Kind::Twin,
                "v6.8 without the per-level skip: every fold is added",
                v6_8::model(mutants_later::V6_8NoSkip),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-no-skip")
            .gate(PerMemcgGate::v6_8),
            Variant::new(
                "v6.17-no-break",
                Kind::Twin,
                "v6.17 without the early break: every level counts every update",
                v6_8::model(v6_17::NoBreak),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-no-break")
            .gate(PerMemcgGate::v6_17),
            Variant::new(
                "scaled-2026-no-break",
                Kind::Twin,
                "the 2026 proposal without the early break",
                v6_8::model(proposal_2026::ScaledIlog2NoBreak),
            )
            .per_memcg(proposal_2026::trigger_ilog2)
            .twin("scaled-2026-no-break")
            .gate(PerMemcgGate::scaled_2026),
        ]
    }

    /// Every variant the default run checks: kernel versions, mutants,
    /// benign rewrites.
    pub fn all() -> Vec<Variant> {
        let mut all = Variant::global_family();
        all.extend(Variant::per_memcg_family());
        all.extend(Variant::per_memcg_twins());
        all.extend(Variant::rstat_tree_family());
        all
    }

    /// Whether `name` is a variant of [`Variant::rstat_tree_family`].
    pub fn is_tree_family(name: &str) -> bool {
        Variant::rstat_tree_family().iter().any(|v| v.name == name)
    }

    /// v6.8 with the per-CPU updated tree (issue 11), with and without the
    /// reverted barrier pair, and a mutant of its flusher.
    ///
    /// Without the pair the store-buffering race loses an update under
    /// loom; `conservation` is a finding there (C4, C15). Under SC
    /// (shuttle, std) it cannot happen.
    pub fn rstat_tree_family() -> Vec<Variant> {
        use Property::*;
        vec![
            Variant::new(
                "v6.8-tree",
                Kind::Kernel,
                "v6.8 flushing only what the per-CPU updated tree holds (d8ef4b38cb69: no barriers)",
                v6_8::model(rstat_tree::TreeV6_8 { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-no-skip")
            .finding(Conservation, LOOM)
            .finding(EventualConservation, LOOM),
            Variant::new(
                "v6.8-tree-mb",
                Kind::Kernel,
                "v6.8-tree with 9a9e97b2f1f2's smp_mb() pair (reverted in v5.7)",
                v6_8::model(rstat_tree::TreeV6_8 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-mb-no-skip"),
            Variant::new(
                "mutant-tree-read-before-unlink",
                Kind::Mutant,
                "flusher: reads the counters, then unlinks the subtree (barriers in)",
                v6_8::model(rstat_tree::TreeReadBeforeUnlink),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-mb-no-skip")
            .killed_by(Conservation, ALL_CHECKERS)
            .killed_by(EventualConservation, &["loom", "shuttle-dfs"]),
            Variant::new(
                "v6.8-tree-no-skip",
                Kind::Twin,
                "v6.8-tree without the per-level skip: every fold is added",
                v6_8::model(rstat_tree::TreeNoSkip { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-no-skip")
            .gate(PerMemcgGate::v6_8),
            Variant::new(
                "v6.8-tree-mb-no-skip",
                Kind::Twin,
                "v6.8-tree-mb without the per-level skip: every fold is added",
                v6_8::model(rstat_tree::TreeNoSkip { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.8-tree-mb-no-skip")
            .gate(PerMemcgGate::v6_8),
            Variant::new(
                "v6.17-tree",
                Kind::Kernel,
                "v6.17 with the lock-free llist of updated nodes drained into the tree (no barriers, C13)",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-no-break")
            .finding(AncestorsFlushable, SAMPLED)
            .finding(Conservation, LOOM)
            .finding(EventualConservation, LOOM),
            Variant::new(
                "v6.17-tree-mb",
                Kind::Kernel,
                "v6.17-tree with the smp_mb() pair the 2025 comments describe",
                v6_8::model(rstat_llist::TreeV6_17 { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-mb-no-break")
            .finding(AncestorsFlushable, SAMPLED),
            Variant::new(
                "v6.17-tree-no-break",
                Kind::Twin,
                "v6.17-tree without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: false }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-no-break")
            .gate(PerMemcgGate::v6_17),
            Variant::new(
                "v6.17-tree-mb-no-break",
                Kind::Twin,
                "v6.17-tree-mb without the early break",
                v6_8::model(rstat_llist::TreeV6_17NoBreak { smp_mb_pair: true }),
            )
            .per_memcg(batch_times_cpus)
            .twin("v6.17-tree-mb-no-break")
            .gate(PerMemcgGate::v6_17),
        ]
    }

    /// The v5.16-v6.7 family: v5.19, v6.0, their mutants and benign
    /// rewrites.
    /// The v5.16-v6.7 family: v5.19, v6.0, v6.4 and its no-skip twin,
    /// their mutants and benign rewrites.
    pub fn global_family() -> Vec<Variant> {
        let mutant = |name: &str, summary: &str, model| {
            Variant::new(name, Kind::Mutant, summary, model).twin("v5.19")
        };
        let benign = |name: &str, summary: &str, model| {
            Variant::new(name, Kind::Benign, summary, model).twin("v5.19")
        };
        let v6_4_mutant = |name: &str, summary: &str, model| {
            Variant::new(name, Kind::Mutant, summary, model).twin("v6.4-no-skip")
        };
        use Property::*;
        vec![
            Variant::v5_19(),
            Variant::v6_0(),
            mutant(
                "mutant-skip-off-by-one",
                "updater: v6.0 skipping when threshold >= num_online_cpus()",
                v5_19::model(mutants::SkipOffByOne),
            )
            .killed_by(NoLostFlush, SC)
            .killed_by(NoWorseThanBaseline, SC),
            mutant(
                "mutant-load-store-bump",
                "updater: v6.0 bumping the threshold with a separate load and store",
                v5_19::model(mutants::LoadStoreBump),
            )
            .killed_by(NoLostFlush, SAMPLED),
            mutant(
                "mutant-cached-flushable",
                "updater, later epochs: a per-CPU 'flushable' hint the reset never clears",
                v5_19::model(mutants::CachedFlushable),
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-keep-residue-on-skip",
                "updater: stats_updates zeroed only when added, so skipped batches pile up",
                v5_19::model(mutants::KeepResidueOnSkip),
            )
            .killed_by(NoLostFlush, &["shuttle-random"]),
            mutant(
                "mutant-reader-gate-off-by-one",
                "reader: mem_cgroup_flush_stats() flushes only above num_online_cpus() + 1",
                v5_19::model(mutants::ReaderGateOffByOne),
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-reader-gate-in-pages",
                "reader: the gate compares batches with MEMCG_CHARGE_BATCH * n pages",
                v5_19::model(mutants::ReaderGateInPages),
            )
            .killed_by(NoLostFlush, SAMPLED),
            mutant(
                "mutant-no-trylock",
                "flusher: no stats_flush_lock (cgroup_rstat_lock still serialises the walk)",
                v5_19::model(mutants::NoTrylock),
            )
            .killed_by(FlushExclusion, ALL_CHECKERS),
            mutant(
                "mutant-no-locks",
                "flusher: neither stats_flush_lock nor cgroup_rstat_lock",
                v5_19::model(mutants::NoLocks),
            )
            .killed_by(FlushExclusion, ALL_CHECKERS)
            .killed_by(Conservation, SC)
            .killed_by(MonotonicReads, SAMPLED),
            mutant(
                "mutant-walk-skips-last-cpu",
                "flusher: the walk stops one CPU short",
                v5_19::model(mutants::WalkSkipsLastCpu),
            )
            .killed_by(Conservation, ALL_CHECKERS),
            mutant(
                "mutant-aggregate-rebuilt",
                "flusher: the walk rebuilds the aggregate from zero instead of adding deltas",
                v5_19::model(mutants::AggregateRebuilt),
            )
            .killed_by(MonotonicReads, &["loom", "shuttle-random", "shuttle-pct"]),
            mutant(
                "mutant-loser-resets",
                "reset: a flusher that loses the trylock resets the threshold",
                v5_19::model(mutants::LoserResets),
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-periodic-gated",
                "periodic work: the dwork goes through the reader's gate (before 5b3be698a872)",
                v5_19::model(mutants::PeriodicGated),
            )
            .killed_by(FlushTimeBound, &["shuttle-random", "shuttle-pct"]),
            mutant(
                "mutant-relaxed-trylock",
                "weak memory: stats_flush_lock acquired Relaxed (only loom can see it)",
                v5_19::model(mutants::RelaxedTrylock),
            )
            .killed_by(FlushExclusion, LOOM),
            mutant(
                "mutant-relaxed-unlock",
                "weak memory: stats_flush_lock released Relaxed (only loom can see it)",
                v5_19::model(mutants::RelaxedUnlock),
            )
            .killed_by(FlushExclusion, LOOM),
            Variant::v6_4(),
            Variant::v6_4_no_skip(),
            v6_4_mutant(
                "mutant-v6.4-no-xchg",
                "v6.4 flusher: the ongoing test is atomic_read() then atomic_set(), no atomic_xchg()",
                v5_19::model(mutants_v6_4::NoXchg),
            )
            .killed_by(FlushExclusion, ALL_CHECKERS),
            v6_4_mutant(
                "mutant-v6.4-ongoing-never-cleared",
                "v6.4 flusher: stats_flush_ongoing is never cleared, so every later flush skips",
                v5_19::model(mutants_v6_4::OngoingNeverCleared),
            )
            .killed_by(Conservation, ALL_CHECKERS),
            v6_4_mutant(
                "mutant-v6.4-clear-before-reset",
                "v6.4 flusher: stats_flush_ongoing cleared before the threshold reset",
                v5_19::model(mutants_v6_4::ClearBeforeReset),
            )
            .killed_by(FlushExclusion, ALL_CHECKERS),
            v6_4_mutant(
                "mutant-v6.4-stamp-at-ratelimit",
                "v6.4 ratelimited reader: stamps flush_next_time itself before the threshold gate",
                v5_19::model(mutants_v6_4::StampAtRatelimit),
            )
            .killed_by(RatelimitedSkipJustified, SAMPLED),
            benign(
                "benign-cas-skip",
                "skip test and add fused into a cmpxchg loop",
                v5_19::model(benign::CasSkip),
            ),
            benign(
                "benign-reset-before-walk",
                "the threshold reset moved before the walk",
                v5_19::model(benign::ResetBeforeWalk),
            ),
            benign(
                "benign-trylock-precheck",
                "spin_is_locked() before the trylock; the reset as atomic_xchg",
                v5_19::model(benign::TrylockPrecheck),
            ),
        ]
    }

    /// The v6.8-on family: v6.8, v6.17, the 2026 proposal and their
    /// mutants (their twins are [`Variant::per_memcg_twins`]).
    pub fn per_memcg_family() -> Vec<Variant> {
        use Property::*;
        let mutant = |name: &str, summary: &str, model, trigger: fn(&Config) -> i64, twin: &str| {
            Variant::new(name, Kind::Mutant, summary, model)
                .per_memcg(trigger)
                .twin(twin)
        };
        vec![
            Variant::v6_8(),
            Variant::v6_17(),
            Variant::scaled_2026(),
            Variant::scaled_2026_sqrt(),
            mutant(
                "mutant-v6.8-skip-at-trigger",
                "v6.8 updater: skip the add once the atomic is >= the trigger (the reader needs >)",
                v6_8::model(mutants_later::V6_8SkipAtTrigger),
                batch_times_cpus,
                "v6.8-no-skip",
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-v6.8-gate-on-root",
                "v6.8 reader: the gate reads the root's atomic instead of the target's",
                v6_8::model(mutants_later::V6_8GateOnRoot),
                batch_times_cpus,
                "v6.8-no-skip",
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-v6.8-flush-target-only",
                "v6.8 flusher: a subtree flush runs the callback of the target only",
                v6_8::model(mutants_later::V6_8FlushTargetOnly),
                batch_times_cpus,
                "v6.8-no-skip",
            )
            .killed_by(Conservation, ALL_CHECKERS),
            mutant(
                "mutant-v6.8-no-rstat-lock",
                "v6.8 flusher: subtree flushes without cgroup_rstat_lock (C11)",
                v6_8::model(mutants_later::V6_8NoRstatLock),
                batch_times_cpus,
                "v6.8-no-skip",
            )
            .killed_by(FlushExclusion, SAMPLED),
            mutant(
                "mutant-v6.17-break-at-trigger",
                "v6.17 updater: break once the atomic is >= the trigger (the reader needs >)",
                v6_8::model(mutants_later::V6_17BreakAtTrigger),
                batch_times_cpus,
                "v6.17-no-break",
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-v6.17-target-only",
                "v6.17 updater: counts at the updated memcg only, never at its ancestors",
                v6_8::model(mutants_later::V6_17TargetOnly),
                batch_times_cpus,
                "v6.17-no-break",
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-v6.17-unlocked-callbacks",
                "v6.17 flusher: the per-CPU callbacks run without the rstat lock",
                v6_8::model(mutants_later::V6_17Unlocked),
                batch_times_cpus,
                "v6.17-no-break",
            )
            .killed_by(FlushExclusion, SAMPLED),
            mutant(
                "mutant-scaled-2026-reader-off-by-one",
                "2026 proposal, reader: flushes above BATCH * (ilog2(n) + 2)",
                v6_8::model(mutants_later::ScaledReaderOffByOne),
                proposal_2026::trigger_ilog2,
                "scaled-2026-no-break",
            )
            .killed_by(NoLostFlush, SC),
            mutant(
                "mutant-scaled-2026-break-at-trigger",
                "2026 proposal, updater: break once the atomic is >= the trigger",
                v6_8::model(mutants_later::ScaledBreakAtTrigger),
                proposal_2026::trigger_ilog2,
                "scaled-2026-no-break",
            )
            .killed_by(NoLostFlush, SC),
        ]
    }

    /// Look a variant up by name in `variants`; the error lists the names
    /// allowed.
    pub fn find(variants: &[Variant], name: &str) -> Result<Variant, String> {
        variants
            .iter()
            .find(|v| v.name == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                format!(
                    "unknown variant {name:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// Look a variant up in the catalogue (and the benchmark bound).
    pub fn by_name(name: &str) -> Result<Variant, String> {
        let mut all = Variant::all();
        all.push(Variant::no_global());
        Variant::find(&all, name)
    }
}
