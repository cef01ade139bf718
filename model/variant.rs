//! Kernel versions and mutants as data.
//!
//! A [`Variant`] is a handful of policies, each naming the line of
//! `memcg_rstat_updated()` or `__mem_cgroup_flush_stats()` where versions
//! differ. Everything else in the model is shared.
//!
//! Adding a variant: add a policy value if no existing one expresses the
//! change (and handle it at the one place in `memcontrol.rs` that matches on
//! that policy), then add an entry to [`Variant::all`]. A mutant also states
//! which property must kill it and on which backends, and the test suite
//! checks that claim.

use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;

use crate::property::Property;

/// When `memcg_rstat_updated()` skips its `atomic_add` to
/// `stats_flush_threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipPolicy {
    /// v5.19: always add.
    Never,
    /// v6.0 (873f64b791a2): skip when `atomic_read() > num_online_cpus()`,
    /// i.e. add only when `atomic_read() <= num_online_cpus()`.
    AboveTrigger,
    /// Mutant: skip when `atomic_read() >= num_online_cpus()`; a reader
    /// (which needs `>`) can then wait forever at exactly the trigger.
    AtOrAboveTrigger,
    /// Benchmark ceiling: never touch the global threshold (not even a
    /// read); only the periodic work flushes.
    Always,
}

impl SkipPolicy {
    /// Whether an update seeing `threshold` skips its add.
    pub fn skips(self, threshold: i64, num_online_cpus: i64) -> bool {
        match self {
            SkipPolicy::Never => false,
            SkipPolicy::AboveTrigger => threshold > num_online_cpus,
            SkipPolicy::AtOrAboveTrigger => threshold >= num_online_cpus,
            SkipPolicy::Always => true,
        }
    }
}

/// How the threshold is bumped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BumpPolicy {
    /// `atomic_add(x / MEMCG_CHARGE_BATCH, &stats_flush_threshold)`.
    AtomicAdd,
    /// Mutant: `atomic_set(&t, atomic_read(&t) + x / MEMCG_CHARGE_BATCH)`,
    /// which loses concurrent increments.
    LoadThenStore,
}

/// How `__mem_cgroup_flush_stats()` excludes other flushers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlushLockPolicy {
    /// `spin_trylock_irqsave(&stats_flush_lock)`, ACQUIRE on success.
    Trylock,
    /// Mutant: no lock at all.
    None,
    /// Mutant: the trylock's successful RMW is `Relaxed`, so the next
    /// flusher does not synchronise with the previous one's unlock.
    RelaxedTrylock,
}

impl FlushLockPolicy {
    /// The success ordering of the trylock, if one is taken.
    pub fn acquire(self) -> Option<Ordering> {
        match self {
            FlushLockPolicy::Trylock => Some(Ordering::Acquire),
            FlushLockPolicy::RelaxedTrylock => Some(Ordering::Relaxed),
            FlushLockPolicy::None => None,
        }
    }
}

/// Whether `cgroup_rstat_flush_irqsafe()` takes `cgroup_rstat_lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RstatLockPolicy {
    /// `spin_lock_irqsave(&cgroup_rstat_lock)` around the flush walk.
    Taken,
    /// Mutant: the walk runs unlocked.
    None,
}

/// Whether a variant is real kernel code or a deliberate bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Kernel code: must hold every property on every backend.
    Kernel,
    /// A deliberately broken variant: must be killed.
    Mutant,
    /// A performance bound for benchmarks; not in the checking matrix.
    Bound,
}

/// A kernel version or a mutant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// Name used on the command line and in reports.
    pub name: &'static str,
    /// Kernel code or mutant.
    pub kind: Kind,
    /// The commit (for kernel variants) or what is broken (for mutants).
    pub summary: &'static str,
    /// Skip rule in `memcg_rstat_updated()`.
    pub skip: SkipPolicy,
    /// How the threshold is bumped.
    pub bump: BumpPolicy,
    /// Flusher exclusion (`stats_flush_lock`).
    pub flush_lock: FlushLockPolicy,
    /// Whether the rstat walk takes `cgroup_rstat_lock`.
    pub rstat_lock: RstatLockPolicy,
    /// For mutants: each property that must kill it, with the backends on
    /// which it must (other cells may go either way).
    #[serde(skip)]
    pub killed_by: &'static [(Property, &'static [&'static str])],
}

const SHUTTLE: &[&str] = &["shuttle-random", "shuttle-pct"];
const LOOM_AND_SHUTTLE: &[&str] = &["loom", "shuttle-random", "shuttle-pct"];

impl Variant {
    /// v5.19: the code before 873f64b791a2.
    pub const V5_19: Variant = Variant {
        name: "v5.19",
        kind: Kind::Kernel,
        summary: "before 873f64b791a2: every batch is added to stats_flush_threshold",
        skip: SkipPolicy::Never,
        bump: BumpPolicy::AtomicAdd,
        flush_lock: FlushLockPolicy::Trylock,
        rstat_lock: RstatLockPolicy::Taken,
        killed_by: &[],
    };

    /// v6.0: 873f64b791a2 skips the add once the threshold is above the trigger.
    pub const V6_0: Variant = Variant {
        name: "v6.0",
        kind: Kind::Kernel,
        summary: "873f64b791a2: skip atomic_add when stats_flush_threshold > num_online_cpus()",
        skip: SkipPolicy::AboveTrigger,
        ..Variant::V5_19
    };

    /// The benchmark ceiling: per-CPU counting only, periodic flush only.
    pub const NO_GLOBAL: Variant = Variant {
        name: "no-global-accounting",
        kind: Kind::Bound,
        summary: "ceiling: no stats_flush_threshold traffic at all; only the periodic work flushes",
        skip: SkipPolicy::Always,
        ..Variant::V5_19
    };

    /// Every variant and mutant, kernel versions first.
    pub fn all() -> Vec<Variant> {
        vec![
            Variant::V5_19,
            Variant::V6_0,
            Variant {
                name: "mutant-skip-off-by-one",
                kind: Kind::Mutant,
                summary: "v6.0 with the skip test off by one: skip when threshold >= num_online_cpus()",
                skip: SkipPolicy::AtOrAboveTrigger,
                killed_by: &[
                    (Property::NoLostFlush, SHUTTLE),
                    (Property::NoWorseThanBaseline, SHUTTLE),
                    (Property::DocumentedErrorBound, SHUTTLE),
                ],
                ..Variant::V6_0
            },
            Variant {
                name: "mutant-load-store-bump",
                kind: Kind::Mutant,
                summary: "v6.0 bumping the threshold with a separate load and store",
                bump: BumpPolicy::LoadThenStore,
                killed_by: &[(Property::NoLostFlush, SHUTTLE)],
                ..Variant::V6_0
            },
            Variant {
                name: "mutant-no-trylock",
                kind: Kind::Mutant,
                summary: "v6.0 with a flusher that does not take stats_flush_lock (cgroup_rstat_lock still serialises the walk)",
                flush_lock: FlushLockPolicy::None,
                killed_by: &[(Property::FlushExclusion, LOOM_AND_SHUTTLE)],
                ..Variant::V6_0
            },
            Variant {
                name: "mutant-relaxed-trylock",
                kind: Kind::Mutant,
                summary: "v6.0 with stats_flush_lock acquired Relaxed (only loom can see this)",
                flush_lock: FlushLockPolicy::RelaxedTrylock,
                killed_by: &[(Property::FlushExclusion, &["loom"])],
                ..Variant::V6_0
            },
            Variant {
                name: "mutant-no-locks",
                kind: Kind::Mutant,
                summary: "v6.0 with a flusher that takes neither stats_flush_lock nor cgroup_rstat_lock",
                flush_lock: FlushLockPolicy::None,
                rstat_lock: RstatLockPolicy::None,
                killed_by: &[
                    (Property::FlushExclusion, LOOM_AND_SHUTTLE),
                    (Property::Conservation, SHUTTLE),
                    (Property::MonotonicReads, SHUTTLE),
                ],
                ..Variant::V6_0
            },
        ]
    }

    /// Whether `self` runs the same code as `other` (same policies).
    pub fn same_policies(&self, other: &Variant) -> bool {
        (self.skip, self.bump, self.flush_lock, self.rstat_lock)
            == (other.skip, other.bump, other.flush_lock, other.rstat_lock)
    }

    /// Look a variant up by name; the error lists the names allowed.
    pub fn by_name(name: &str) -> Result<Variant, String> {
        Variant::all()
            .into_iter()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Variant::all().iter().map(|v| v.name).collect();
                format!(
                    "unknown variant {name:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}
