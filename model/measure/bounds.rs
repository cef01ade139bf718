//! Staleness and threshold maxima over explored executions, beside the bound
//! the kernel's comment documents (claim C1: stats "will be out of sync by
//! atmost (MEMCG_CHARGE_BATCH * nr_cpus)"; mm/memcontrol.c since
//! 11192d9c124d).
//!
//! Every figure is a maximum over the executions a search ran, with the
//! trace of one execution that reached it. Sampled shuttle searches give
//! lower bounds of the true maxima; the depth-first search
//! ([`Backend::ShuttleDfs`]) covers every sequentially consistent
//! interleaving, so its maxima are exact and are compared with the derived
//! worst case ([`crate::check::derived`]). Under loom staleness is taken
//! in loom's execution order, which a relaxed load may not agree with.

use std::time::Duration;

use serde::Serialize;

use crate::check::run::{explore_variant, judged, monitor_plan};
use crate::config::Config;
use crate::explore::{Backend, Outcome, Progress, Shard};
use crate::observe::plan::MonitorPlan;
use crate::observe::record::Step;
use crate::protocol::{Derivation, Family, Variant};

/// The maxima of one (configuration, variant, backend) search.
#[derive(Clone, Debug, Serialize)]
pub struct Bound {
    /// Configuration.
    pub cfg: Config,
    /// Variant name.
    pub variant: String,
    /// Whether the variant is the baseline the others are compared with.
    #[serde(skip)]
    pub baseline: bool,
    /// The search.
    pub search: String,
    /// Executions explored.
    pub executions: u64,
    /// Distinct states the stateful exhaustive search stored (0 for other
    /// searches).
    pub states: u64,
    /// Whether the planned search finished.
    pub finished: bool,
    /// Whether the search finished and covered every sequentially
    /// consistent execution (the only searches compared with the derived
    /// worst case).
    pub exhaustive: bool,
    /// `MEMCG_CHARGE_BATCH * nr_cpus`, the documented bound (C1).
    pub documented: i64,
    /// The reader's trigger: `num_online_cpus()` units for the global
    /// family, pages of a memcg's atomic for the per-memcg family.
    pub trigger: i64,
    /// The protocol family.
    pub family: Family,
    /// Largest staleness at a reader's decision not to flush.
    pub stale_at_no_flush: i64,
    /// Its split: residue, counted, skipped, lost to a racing reset (see
    /// [`crate::observe::coverage::Split`]).
    pub split: crate::observe::coverage::Split,
    /// Largest residue + counted + skipped at a no-flush decision (the
    /// staleness without pages lost to a racing reset).
    pub since_reset: i64,
    /// The worst case derived from the arithmetic
    /// ([`crate::check::derived`]), for v5.19 and v6.0; `None` where the
    /// derivation does not apply.
    pub derived: Option<crate::check::derived::Derived>,
    /// Largest staleness a reader read after deciding to flush.
    pub stale_after_flush_call: i64,
    /// A trace reaching `stale_after_flush_call`.
    #[serde(skip)]
    pub after_witness: Vec<Step>,
    /// B7: largest staleness a reader read after its gate decided to flush
    /// and its flush was skipped because another was in progress (it lost
    /// the trylock, or found `stats_flush_ongoing` set, and returned at
    /// once).
    pub stale_after_skip: i64,
    /// A trace reaching `stale_after_skip`.
    #[serde(skip)]
    pub skip_witness: Vec<Step>,
    /// B7 in time: largest age, in ticks, of an update missing from the
    /// aggregate at such a read (abstract time only; 0 otherwise).
    pub skip_age: i64,
    /// Largest value of `stats_flush_threshold`.
    pub max_threshold: i64,
    /// Largest age, in ticks, of an update missing from the aggregate at a
    /// read (abstract time only; 0 otherwise).
    pub stale_ticks: i64,
    /// A trace reaching `stale_ticks`.
    #[serde(skip)]
    pub ticks_witness: Vec<Step>,
    /// Threshold RMWs per `__mod_memcg_state()` call, over all executions.
    pub rmws_per_update: f64,
    /// `no_worse_than_baseline`: whether `stale_at_no_flush` is at most
    /// v5.19's on the same configuration, derived where the derivation
    /// applies, measured otherwise (`None` when neither is known; see
    /// [`compare_with_baseline`]).
    pub no_worse_than_baseline: Option<bool>,
    /// A trace reaching `stale_at_no_flush`.
    #[serde(skip)]
    pub witness: Vec<Step>,
}

impl Bound {
    /// Whether C1 held in this search.
    pub fn documented_bound_holds(&self) -> bool {
        self.stale_at_no_flush <= self.documented
    }
}

/// The configurations `flushcheck bounds` reports by default: 2 and 3 CPUs,
/// with and without the periodic flusher, small and huge-page updates.
pub fn standard_configs() -> Vec<Config> {
    let base = Config {
        batch: 2,
        updates: 6,
        ..Config::bounds()
    };
    vec![
        base.clone(),
        Config {
            periodic: true,
            ..base.clone()
        },
        Config {
            cpus: 3,
            ..base.clone()
        },
        Config {
            updates: 3,
            vals: vec![1, 5],
            periodic: true,
            ..base.clone()
        },
        Config {
            cpus: 3,
            updates: 2,
            vals: vec![5],
            ..base.clone()
        },
        Config { updates: 9, ..base },
    ]
}

/// The configurations `flushcheck bounds --exhaustive` searches: the four
/// small ones of [`exhaustive_configs`], then every standard configuration
/// (the stateful search finishes each in under a minute).
pub fn all_exhaustive_configs() -> Vec<Config> {
    let mut all = exhaustive_configs();
    for c in standard_configs() {
        if !all.contains(&c) {
            all.push(c);
        }
    }
    all
}

/// Small configurations on which an exhaustive sequentially consistent
/// search finishes in well under a second: 2 and 3 CPUs, with and without
/// the periodic flusher, 1-page and huge-page updates.
pub fn exhaustive_configs() -> Vec<Config> {
    let base = Config {
        batch: 2,
        updates: 3,
        ..Config::bounds()
    };
    vec![
        base.clone(),
        Config {
            batch: 1,
            updates: 2,
            readers: 0,
            periodic: true,
            ..base.clone()
        },
        Config {
            updates: 2,
            vals: vec![5],
            readers: 0,
            periodic: true,
            ..base.clone()
        },
        Config {
            cpus: 3,
            updates: 1,
            vals: vec![3],
            ..base
        },
    ]
}

/// Small configurations on which an exhaustive search of a per-memcg
/// protocol (v6.8 on) finishes in seconds: its per-(memcg, CPU) callbacks
/// make a flush many more steps than v5.19's, so 2-CPU configurations
/// carry one update per CPU. They cover a CPU paused with a full batch
/// unfolded beside a fold in the atomic (the C18 and C14 witnesses), the
/// racing resets with and without the periodic flusher, and 3 CPUs, where
/// the 2026 proposal's trigger differs from v6.17's.
pub fn exhaustive_configs_per_memcg() -> Vec<Config> {
    let base = Config {
        cpus: 1,
        batch: 1,
        updates: 2,
        vals: vec![1],
        ..Config::bounds()
    };
    vec![
        base.clone(),
        Config {
            batch: 2,
            updates: 4,
            ..base.clone()
        },
        Config {
            cpus: 2,
            batch: 2,
            updates: 1,
            vals: vec![3],
            ..base.clone()
        },
        Config {
            batch: 2,
            updates: 3,
            vals: vec![3],
            ..base.clone()
        },
        Config {
            readers: 0,
            periodic: true,
            ..base.clone()
        },
        Config {
            cpus: 3,
            updates: 1,
            readers: 0,
            ..base
        },
    ]
}

/// Abstract-time configurations: the periodic work re-queued every
/// `FLUSH_TIME` ticks, on time and 1 or 2 ticks late, racing a reader that
/// flushes (claims C2, C16 and the lag of B11).
pub fn timed_configs() -> Vec<Config> {
    (0..=2)
        .map(|late| Config {
            late,
            ..Config::timed()
        })
        .collect()
}

/// Run one search with traces on and collect its maxima. Twins are looked
/// up in `registry`.
pub fn measure(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    backend: &Backend,
    budget: Duration,
) -> Bound {
    // A twin that cannot be resolved only costs the twin properties, which
    // bounds does not report.
    let checks = judged(variant, cfg, backend);
    let mut plan = monitor_plan(variant, registry, cfg, backend, checks).unwrap_or_else(|_| {
        let sc = !matches!(backend, Backend::Loom { .. });
        MonitorPlan::new(std::sync::Arc::new(cfg.clone()), sc, Vec::new())
    });
    plan.trace = true;
    let progress = Progress::new(
        format!("{} {cfg} {}", variant.name, backend.name()),
        Duration::from_secs(10),
    );
    let (e, shared) = explore_variant(
        variant,
        plan,
        backend,
        Shard::default(),
        budget,
        Some(progress),
        None,
    );
    let finished = matches!(e.outcome, Outcome::Finished);
    let m = &shared.measures;
    let (stale, split, witness) = m.stale_at_no_flush.get().unwrap_or((0, [0; 4], Vec::new()));
    let updates = m.updates.load(std::sync::atomic::Ordering::Relaxed).max(1);
    Bound {
        cfg: cfg.clone(),
        variant: variant.name.to_string(),
        baseline: variant.baseline,
        search: backend.search(),
        executions: e.executions,
        states: e.states,
        finished,
        exhaustive: finished && backend.exhaustive() && backend.sequentially_consistent(),
        documented: cfg.batch * cfg.cpus as i64,
        trigger: variant.trigger_on(cfg),
        family: variant.family,
        stale_at_no_flush: stale,
        split,
        since_reset: m.stale_since_reset.value(),
        derived: derived_for(cfg, variant),
        stale_after_flush_call: m.stale_after_flush_call.value(),
        after_witness: m
            .stale_after_flush_call
            .get()
            .map_or(Vec::new(), |(_, _, w)| w),
        stale_after_skip: m.stale_after_skipped_flush.value(),
        skip_witness: m
            .stale_after_skipped_flush
            .get()
            .map_or(Vec::new(), |(_, _, w)| w),
        skip_age: m.ticks_after_skipped_flush.value(),
        max_threshold: m.max_threshold.value(),
        stale_ticks: m.stale_ticks.value(),
        ticks_witness: m.stale_ticks.get().map_or(Vec::new(), |(_, _, w)| w),
        rmws_per_update: m.rmws.load(std::sync::atomic::Ordering::Relaxed) as f64 / updates as f64,
        no_worse_than_baseline: None,
        witness,
    }
}

/// [`measure`] under shuttle's random and PCT schedulers (`iterations`
/// schedules each, seed 1), keeping the larger figure of each measure.
pub fn measure_sampled(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    iterations: usize,
) -> Bound {
    let backends = [
        Backend::ShuttleRandom {
            iterations,
            seed: 1,
        },
        Backend::ShuttlePct {
            iterations,
            depth: 3,
            seed: 1,
        },
    ];
    let runs: Vec<Bound> = backends
        .iter()
        .map(|b| measure(cfg, variant, registry, b, Duration::from_secs(120)))
        .collect();
    let mut best = runs[0].clone();
    if runs[1].stale_at_no_flush > best.stale_at_no_flush {
        best.stale_at_no_flush = runs[1].stale_at_no_flush;
        best.split = runs[1].split;
        best.witness = runs[1].witness.clone();
    }
    best.since_reset = runs.iter().map(|r| r.since_reset).max().unwrap_or(0);
    if runs[1].stale_after_flush_call > best.stale_after_flush_call {
        best.stale_after_flush_call = runs[1].stale_after_flush_call;
        best.after_witness = runs[1].after_witness.clone();
    }
    if runs[1].stale_after_skip > best.stale_after_skip {
        best.stale_after_skip = runs[1].stale_after_skip;
        best.skip_witness = runs[1].skip_witness.clone();
    }
    best.skip_age = runs.iter().map(|r| r.skip_age).max().unwrap_or(0);
    best.max_threshold = runs.iter().map(|r| r.max_threshold).max().unwrap_or(0);
    if runs[1].stale_ticks > best.stale_ticks {
        best.stale_ticks = runs[1].stale_ticks;
        best.ticks_witness = runs[1].ticks_witness.clone();
    }
    best.executions = runs.iter().map(|r| r.executions).sum();
    best.finished = runs.iter().all(|r| r.finished);
    best.exhaustive = false;
    best.search =
        format!("shuttle random + PCT depth 3, {iterations} schedules each, seed 1 (sampled)");
    best
}

/// The derived worst case of `cfg`, for the variants it covers: v5.19 and
/// v6.0 (a skip only when the threshold read is above
/// `num_online_cpus()`), and every kernel version of the per-memcg family
/// on a flat tree with its own trigger
/// ([`crate::check::derived::derive_per_memcg`]), but the `-tree`
/// variants.
pub fn derived_for(cfg: &Config, variant: &Variant) -> Option<crate::check::derived::Derived> {
    use crate::check::derived::{derive, derive_per_memcg};
    match variant.derivation? {
        Derivation::Global => derive(cfg).ok(),
        Derivation::PerMemcg => derive_per_memcg(cfg, variant.trigger_on(cfg)).ok(),
    }
}

/// [`measure`] by an exhaustive sequentially consistent search (shuttle,
/// depth first, with sleep sets and state caching), stopped at
/// `max_schedules` or `budget`.
pub fn measure_exhaustive(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    max_schedules: usize,
    budget: Duration,
) -> Bound {
    let dfs = Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: true,
        symmetry: false,
        workers: 1,
    };
    measure(cfg, variant, registry, &dfs, budget)
}

impl Bound {
    /// Whether the search was exhaustive and its maxima equal the derived
    /// ones, the atomic's largest value included for the per-memcg family
    /// (`None` when either is missing).
    pub fn matches_derived(&self) -> Option<bool> {
        let d = self.derived.as_ref()?;
        if !self.exhaustive {
            return None;
        }
        let atomic = d.max_stats_updates.is_none_or(|m| m == self.max_threshold);
        Some(self.since_reset == d.since_reset && Some(self.stale_at_no_flush) == d.worst && atomic)
    }
}

/// Fill in `no_worse_than_baseline` for every row whose configuration has
/// a baseline: v5.19's derived worst case where the derivation applies
/// (sound even when the rows are sampled), otherwise v5.19's measured
/// maximum on the same configuration.
pub fn compare_with_baseline(rows: &mut [Bound]) {
    let base: Vec<(Config, i64)> = rows
        .iter()
        .filter(|r| r.baseline)
        .map(|r| (r.cfg.clone(), r.stale_at_no_flush))
        .collect();
    for r in rows.iter_mut() {
        let derived = crate::check::derived::derive(&r.cfg)
            .ok()
            .and_then(|d| d.worst);
        let measured = base.iter().find(|(c, _)| *c == r.cfg).map(|(_, b)| *b);
        r.no_worse_than_baseline = derived.or(measured).map(|b| r.stale_at_no_flush <= b);
    }
}
