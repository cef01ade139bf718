//! One run: a variant on one suite entry under one backend, every property
//! that applies judged from the same exploration. Which properties those
//! are is decided here, once ([`judged`]), and travels with the result.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
pub use crate::explore::on_fresh_thread;
use crate::explore::{explore_shard, Backend, Exploration, Outcome, Progress, Scenario, Shard};
use crate::kernel::rcu::RcuFlavor;
use crate::observe::coverage::Event;
use crate::observe::plan::{MonitorPlan, ReaderOutcome, Shared, TwinPlan};
use crate::observe::properties;
use crate::observe::property::{self, Property, Subject};
use crate::protocol::{Code, Family, Variant};
use crate::vocab::{BackendName, Platform};

use super::derived;
use super::lifetime::{rcu_flavor, LifeScenario};
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
    /// The RCU implementation of a lifetime run (default: [`rcu_flavor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcu: Option<RcuFlavor>,
    /// Stop the search at the first violation of any of these (a mutant's
    /// designated killers: once one fires, the rest of the search would
    /// only find it again). The other properties of a run stopped so are
    /// inconclusive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arm: Vec<Property>,
    /// Show the monitor unused reads of every atomic at every point
    /// ([`crate::observe::noise`]): no verdict may change with them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unused_reads: bool,
}

impl RunSpec {
    /// A run of `variant` on `cfg` (entry `entry`) under `backend`, with a
    /// budget of `budget_secs`, not sharded, collecting nothing.
    pub fn new(
        variant: &str,
        entry: &str,
        cfg: &Config,
        backend: Backend,
        budget_secs: f64,
    ) -> Self {
        RunSpec {
            variant: variant.into(),
            entry: entry.into(),
            cfg: cfg.clone(),
            backend,
            budget_secs,
            shard: Shard::default(),
            collect: false,
            rcu: None,
            arm: Vec::new(),
            unused_reads: false,
        }
    }
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
    /// One verdict per property this run judges ([`judged`]), in report
    /// order: the run's decision of which properties apply.
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

    /// Whether this run judged `p`.
    pub fn judged(&self, p: Property) -> bool {
        self.verdict(p).is_some()
    }
}

/// What a run of `variant` on `cfg` under `backend` is, for the
/// properties' applicability.
pub fn subject<'a>(variant: &Variant, cfg: &'a Config, backend: &Backend) -> Subject<'a> {
    Subject {
        family: variant.family,
        has_twin: variant.twin.is_some(),
        cfg,
        backend: backend.id(),
    }
}

/// The properties a run of `variant` on `cfg` under `backend` judges, in
/// report order.
pub fn judged(variant: &Variant, cfg: &Config, backend: &Backend) -> Vec<Property> {
    let s = subject(variant, cfg, backend);
    Property::all().filter(|p| p.judged(&s)).collect()
}

/// The monitor plan of a run of `variant` on `cfg` under `backend`,
/// checking `checks`: the twin is resolved in `registry` here, once.
pub fn monitor_plan(
    variant: &Variant,
    registry: &[Variant],
    cfg: &Config,
    backend: &Backend,
    checks: Vec<Property>,
) -> Result<MonitorPlan, String> {
    // Checks made in execution order are exact on every backend but loom.
    let in_order = !matches!(backend, Backend::Loom { .. });
    let mut plan = MonitorPlan::new(Arc::new(cfg.clone()), in_order, checks);
    if let Some(twin) = &variant.twin {
        let t = Variant::find(registry, twin)?;
        let gate = t.gate.ok_or_else(|| {
            format!(
                "variant {:?} names {twin:?} as its twin, which has no gate (Variant::gate)",
                variant.name
            )
        })?;
        plan.twin = Some(TwinPlan {
            gate,
            trigger: t.trigger_on(cfg),
            name: twin.clone(),
        });
    }
    plan.family = variant.family;
    plan.trigger = variant.trigger_on(cfg);
    if variant.family == Family::Global {
        plan.baseline_since_reset = derived::derive(cfg).ok().map(|d| d.since_reset);
    }
    Ok(plan)
}

/// Whether runs of `variant` under backends `a` and `b` run the same
/// scenario (a lifetime form may run another RCU under each).
pub fn scenario_matches(variant: &Variant, a: BackendName, b: BackendName) -> bool {
    match variant.code {
        Code::Flush(_) => true,
        Code::Life(_) => rcu_flavor(a, variant) == rcu_flavor(b, variant),
    }
}

/// The scenario of a variant's wing: the flush scenario or the lifetime
/// scenario, reporting into one [`Shared`].
pub enum VariantScenario {
    /// A flush-protocol variant.
    Flush(FlushScenario),
    /// A lifetime form.
    Life(LifeScenario),
}

impl VariantScenario {
    /// The scenario of `variant` reporting into `shared` (its plan's
    /// configuration), under `backend`; a lifetime form runs on `rcu`
    /// (default: [`rcu_flavor`]).
    pub fn new(
        variant: &Variant,
        shared: Arc<Shared>,
        backend: &Backend,
        rcu: Option<RcuFlavor>,
    ) -> Self {
        match variant.code {
            Code::Flush(_) => VariantScenario::Flush(FlushScenario::new(variant, shared)),
            Code::Life(_) => VariantScenario::Life(LifeScenario {
                cfg: shared.plan.cfg.clone(),
                variant: variant.clone(),
                flavor: rcu.unwrap_or_else(|| rcu_flavor(backend.id(), variant)),
                shared,
            }),
        }
    }

    /// What its executions report into.
    pub fn shared(&self) -> &Arc<Shared> {
        match self {
            VariantScenario::Flush(s) => &s.shared,
            VariantScenario::Life(s) => &s.shared,
        }
    }
}

impl Scenario for VariantScenario {
    fn run<P: Platform>(&self) {
        match self {
            VariantScenario::Flush(s) => s.run::<P>(),
            VariantScenario::Life(s) => s.run::<P>(),
        }
    }
}

/// Explore `variant` under `backend` with `plan` (its configuration
/// included), returning the exploration and what its executions reported.
/// A lifetime form runs on `rcu` (default: [`rcu_flavor`]).
pub fn explore_variant(
    variant: &Variant,
    plan: MonitorPlan,
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    progress: Option<Progress>,
    rcu: Option<RcuFlavor>,
) -> (Exploration, Arc<Shared>) {
    let shared = Shared::new(plan);
    let scenario = Arc::new(VariantScenario::new(variant, shared.clone(), backend, rcu));
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
    let judged = judged(&variant, &spec.cfg, &spec.backend);
    let mut plan = monitor_plan(&variant, registry, &spec.cfg, &spec.backend, judged.clone())?;
    plan.collect_outcomes = spec.collect;
    plan.armed = spec.arm.clone();
    if spec.unused_reads && matches!(spec.backend, Backend::Loom { .. }) {
        return Err(format!(
            "unused reads run in execution order only (shuttle, std, the exhaustive search), not under {}",
            spec.backend.name()
        ));
    }
    plan.unused_reads = spec.unused_reads;
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
    let (e, shared) = explore_variant(
        &variant,
        plan,
        &backend,
        spec.shard,
        budget,
        Some(progress),
        spec.rcu,
    );
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
    let subject = subject(&variant, &spec.cfg, &spec.backend);
    let verdicts = judged
        .into_iter()
        .map(|p| judge(p, &subject, &e.outcome, &shared))
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
pub fn judge(
    p: Property,
    subject: &Subject,
    outcome: &Outcome,
    shared: &Shared,
) -> PropertyVerdict {
    let (mut verdict, mut note) = match (shared.violation(p), outcome) {
        (Some(msg), _) => (Verdict::Violated, Some(msg)),
        (None, Outcome::Finished) => (Verdict::Holds, None),
        (None, Outcome::CutShort(why)) => (Verdict::Inconclusive, Some(why.clone())),
        (None, Outcome::Failed(msg)) => match properties::attribute(msg) {
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
        if let Some(why) = (p.def().unchecked)(subject) {
            verdict = Verdict::Inconclusive;
            note = Some(why.into());
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
