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

use crate::observe::property::Property;
use crate::observe::twin::{GateFactory, GlobalGate};
use crate::protocol::{benign, mutants, v5_19, v6_0, DynModel};

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
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("twin", &self.twin)
            .field("killed_by", &self.killed_by)
            .finish()
    }
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
        }
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

    /// The benchmark ceiling: per-CPU counting only, periodic flush only.
    pub fn no_global() -> Variant {
        Variant::new(
            "no-global-accounting",
            Kind::Bound,
            "ceiling: no stats_flush_threshold traffic at all; only the periodic work flushes",
            v5_19::model(v6_0::NoGlobalAccounting),
        )
    }

    /// Every variant the default run checks: kernel versions, mutants,
    /// benign rewrites.
    pub fn all() -> Vec<Variant> {
        let mutant = |name: &str, summary: &str, model| {
            Variant::new(name, Kind::Mutant, summary, model).twin("v5.19")
        };
        let benign = |name: &str, summary: &str, model| {
            Variant::new(name, Kind::Benign, summary, model).twin("v5.19")
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
