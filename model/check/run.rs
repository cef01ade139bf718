//! One run: a variant on one suite entry under one backend, every property
//! judged from the same exploration.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::explore::ghost::Arc;
use crate::explore::{explore_shard, Backend, Exploration, Outcome, Progress, Shard};
use crate::measure::derived;
use crate::observe::coverage::Event;
use crate::observe::monitor::{MonitorPlan, ReaderOutcome, Shared};
use crate::observe::property::{self, Property};
use crate::protocol::{Family, Variant};

use super::scenario::FlushScenario;

/// The verdict on one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The planned search finished without a counterexample.
    Holds,
    /// A counterexample was found.
    Violated,
    /// The planned search was cut short; see the note.
    Inconclusive,
}

impl Verdict {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// One exploration to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSpec {
    /// Variant name (resolved in the registry of the process that runs it).
    pub variant: String,
    /// Suite entry name.
    pub entry: String,
    /// The entry's configuration.
    pub cfg: Config,
    /// Backend and search parameters.
    pub backend: Backend,
    /// Time budget in seconds.
    pub budget_secs: f64,
    /// The part of a split shuttle search.
    #[serde(default)]
    pub shard: Shard,
    /// Collect every reader outcome (loom runs, for the differential form
    /// of `no_lost_flush`).
    #[serde(default)]
    pub collect: bool,
}

/// The verdict on one property in one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyVerdict {
    /// The property.
    pub property: Property,
    /// Its verdict.
    pub verdict: Verdict,
    /// The violation, or why the verdict is not `holds`.
    pub note: Option<String>,
}

/// What one run found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// The spec it ran.
    pub spec: RunSpec,
    /// The planned search, in words.
    pub search: String,
    /// Whether the planned search covers every execution and finished.
    pub exhaustive: bool,
    /// Whether the planned search finished.
    pub finished: bool,
    /// Why the search stopped early, if it did.
    pub stopped: Option<String>,
    /// Executions explored.
    pub executions: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// One verdict per property judged on this backend.
    pub verdicts: Vec<PropertyVerdict>,
    /// Coverage counts by event name.
    pub coverage: Vec<(String, u64)>,
    /// Every distinct reader outcome, when collected.
    pub outcomes: Option<Vec<ReaderOutcome>>,
}

impl RunResult {
    /// The count of `e`.
    pub fn count(&self, e: Event) -> u64 {
        self.coverage
            .iter()
            .find(|(n, _)| n == e.name())
            .map_or(0, |(_, c)| *c)
    }

    /// The verdict on `p`, if judged.
    pub fn verdict(&self, p: Property) -> Option<&PropertyVerdict> {
        self.verdicts.iter().find(|v| v.property == p)
    }
}

/// Whether `p` is judged for `variant` on `cfg` under `backend`.
pub fn judged(p: Property, variant: &Variant, cfg: &Config, backend: &Backend) -> bool {
    let loom = matches!(backend, Backend::Loom { .. });
    if p.needs_twin() && variant.twin.is_none() {
        return false;
    }
    if loom && !p.decided_by_loom() {
        return false;
    }
    if p == Property::FlushTimeBound && cfg.ticks == 0 {
        return false;
    }
    // C9 is about v6.4's flush_next_time, read by ratelimited readers, which
    // need abstract time. (v6.8's flush_last_time is stamped before the
    // flusher takes the rstat lock, where the monitor sees its flush begin.)
    if p == Property::RatelimitedSkipJustified
        && !(cfg.ratelimited > 0 && cfg.ticks > 0 && variant.family == Family::Global)
    {
        return false;
    }
    if p == Property::EventualConservation && cfg.settle == 0 {
        return false;
    }
    if p.per_memcg_only() && variant.family != Family::PerMemcg {
        return false;
    }
    // The baseline is v5.19's derived worst case, a global-threshold bound.
    if p == Property::NoWorseThanBaseline && variant.family != Family::Global {
        return false;
    }
    // Claims about a tree (C12) and B9's sibling setting need one.
    if matches!(
        p,
        Property::AncestorsFlushable | Property::QuiescentReadExact
    ) && cfg.memcgs() < 2
    {
        return false;
    }
    true
}

/// The monitor plan of a run of `variant` on `cfg` under `backend`.
pub fn monitor_plan(
    variant: &Variant,
    registry: &[Variant],
    cfg: &Config,
    backend: &Backend,
) -> Result<MonitorPlan, String> {
    let mut plan = MonitorPlan::new(cfg, !matches!(backend, Backend::Loom { .. }));
    if let Some(twin) = &variant.twin {
        let t = Variant::find(registry, twin)?;
        plan.twin = Some(t.gate.ok_or_else(|| {
            format!(
                "variant {:?} names {twin:?} as its twin, which has no gate (Variant::gate)",
                variant.name
            )
        })?);
        plan.twin_name = twin.clone();
    }
    plan.family = variant.family;
    plan.trigger = variant.trigger_on(cfg);
    if variant.family == Family::Global {
        plan.baseline_since_reset = derived::derive(cfg).ok().map(|d| d.since_reset);
    }
    Ok(plan)
}

/// Run `f` on a new thread, so that loom's and shuttle's thread-local state
/// starts clean, with a stack large enough for loom.
pub fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("spawn exploration thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Explore `variant` on `cfg` under `backend` with `plan`, returning the
/// exploration and what its executions reported.
pub fn explore_variant(
    variant: &Variant,
    plan: MonitorPlan,
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    progress: Option<Progress>,
) -> (Exploration, Arc<Shared>) {
    let shared = Shared::new(plan);
    let scenario = Arc::new(FlushScenario::new(
        &shared.plan.cfg,
        variant,
        shared.clone(),
    ));
    let b = backend.clone();
    let e = on_fresh_thread(move || explore_shard(&b, shard, budget, scenario, progress));
    (e, shared)
}

/// How a run's progress lines on stderr begin (every 10 s of a search
/// that takes longer; a matrix forwards its workers' lines that begin so).
pub const PROGRESS: &str = "progress: ";

/// Run one spec, resolving names in `registry`.
pub fn run(spec: &RunSpec, registry: &[Variant]) -> Result<RunResult, String> {
    let variant = Variant::find(registry, &spec.variant)?;
    let mut plan = monitor_plan(&variant, registry, &spec.cfg, &spec.backend)?;
    plan.collect_outcomes = spec.collect;
    let budget = Duration::from_secs_f64(spec.budget_secs);
    // PCT refuses a scenario with no concurrency (one CPU, on main, alone):
    // there is only one schedule, which a random search runs as well.
    let backend = match spec.backend {
        Backend::ShuttlePct {
            iterations, seed, ..
        } if spec.cfg.threads() <= 1 => Backend::ShuttleRandom { iterations, seed },
        ref b => b.clone(),
    };
    let progress = Progress::new(
        format!(
            "{PROGRESS}{} {} {}",
            spec.variant,
            spec.entry,
            backend.name()
        ),
        Duration::from_secs(10),
    );
    let (e, shared) = explore_variant(&variant, plan, &backend, spec.shard, budget, Some(progress));
    let mut search = backend.search();
    if spec.shard.count > 1 {
        search = format!("{search}, shard {}/{}", spec.shard.index, spec.shard.count);
    }
    let finished = e.outcome == Outcome::Finished;
    let stopped = match &e.outcome {
        Outcome::Finished => None,
        Outcome::CutShort(why) => Some(why.clone()),
        Outcome::Failed(msg) => Some(first_line(msg)),
    };
    let verdicts = Property::ALL
        .into_iter()
        .filter(|p| judged(*p, &variant, &spec.cfg, &spec.backend))
        .map(|p| judge(p, &spec.cfg, &e.outcome, &shared))
        .collect();
    Ok(RunResult {
        spec: spec.clone(),
        search,
        exhaustive: spec.backend.exhaustive() && finished,
        finished,
        stopped,
        executions: e.executions,
        seconds: e.elapsed.as_secs_f64(),
        verdicts,
        coverage: shared
            .coverage
            .snapshot()
            .into_iter()
            .map(|(n, c)| (n.to_string(), c))
            .collect(),
        outcomes: spec
            .collect
            .then(|| shared.outcomes().into_iter().collect()),
    })
}

/// The verdict on `p` from an exploration and what it recorded.
pub fn judge(p: Property, cfg: &Config, outcome: &Outcome, shared: &Shared) -> PropertyVerdict {
    let (mut verdict, mut note) = match (shared.violation(p), outcome) {
        (Some(msg), _) => (Verdict::Violated, Some(msg)),
        (None, Outcome::Finished) => (Verdict::Holds, None),
        (None, Outcome::CutShort(why)) => (Verdict::Inconclusive, Some(why.clone())),
        (None, Outcome::Failed(msg)) => match property::attribute(msg) {
            Some(q) if q == p => (Verdict::Violated, Some(property::explain(p, msg))),
            Some(q) => (
                Verdict::Inconclusive,
                Some(format!("search stopped by {}", property::explain(q, msg))),
            ),
            None => (
                Verdict::Inconclusive,
                Some(format!(
                    "search stopped by an unattributed panic: {}",
                    first_line(msg)
                )),
            ),
        },
    };
    if verdict == Verdict::Holds {
        if p == Property::MonotonicReads && !cfg.non_negative() {
            verdict = Verdict::Inconclusive;
            note = Some("monotonic_reads: not checked, some updates are negative".into());
        }
        if p == Property::NoWorseThanBaseline && shared.plan.baseline_since_reset.is_none() {
            verdict = Verdict::Inconclusive;
            note = Some(
                "no_worse_than_baseline: not checked, v5.19's worst case is derived for non-negative updates only"
                    .into(),
            );
        }
    }
    PropertyVerdict {
        property: p,
        verdict,
        note,
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}
