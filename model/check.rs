//! Running (variant, property, backend) cells and the whole matrix.

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::Config;
use crate::platform::ghost::{Arc, Mutex};
use crate::platform::{explore, Backend, Exploration, Outcome};
use crate::property::{self, Property};
use crate::scenario::{FlushScenario, Observation};
use crate::variant::{Kind, Variant};

/// The verdict of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The planned search finished without a counterexample.
    Holds,
    /// A counterexample was found.
    Violated,
    /// The planned search was cut short; see the cell's `note`.
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

/// What the matrix expects of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// A kernel variant: must hold.
    Holds,
    /// A mutant's designated killer: must be violated.
    Killed,
    /// Anything goes (a mutant's other cells).
    Any,
}

/// The result of one (variant, property, backend) cell.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Variant name.
    pub variant: String,
    /// Kernel variant or mutant.
    pub kind: Kind,
    /// Property name.
    pub property: Property,
    /// Backend name.
    pub backend: String,
    /// holds / violated / inconclusive.
    pub verdict: Verdict,
    /// Executions (loom), schedules (shuttle) or runs (std) explored.
    pub executions: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The planned search.
    pub search: String,
    /// Whether the planned search covers every execution of the scenario.
    pub exhaustive: bool,
    /// The violation message, or why the search was cut short.
    pub note: Option<String>,
    /// The coverage event paired with the property.
    pub coverage_event: &'static str,
    /// How many times it occurred over the search.
    pub coverage: u64,
    /// What the matrix expected.
    pub expect: Expect,
    /// Whether the verdict meets the expectation.
    pub ok: bool,
}

/// Everything a matrix run needs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Scenario configuration.
    pub cfg: Config,
    /// Variants to check.
    pub variants: Vec<Variant>,
    /// Properties to check.
    pub properties: Vec<Property>,
    /// Backends, with their search parameters.
    pub backends: Vec<Backend>,
    /// Time budget per exploration.
    pub budget: Duration,
    /// Worker threads.
    pub jobs: usize,
}

impl Plan {
    /// The default backends: loom unbounded, shuttle random and PCT, std.
    pub fn default_backends(seed: u64) -> Vec<Backend> {
        vec![
            Backend::Loom {
                preemption_bound: None,
            },
            Backend::ShuttleRandom {
                iterations: 20_000,
                seed,
            },
            Backend::ShuttlePct {
                iterations: 20_000,
                depth: 3,
                seed,
            },
            Backend::Std { iterations: 2_000 },
        ]
    }

    /// The default plan on `cfg`: every variant, property and backend.
    pub fn new(cfg: Config) -> Self {
        Plan {
            cfg,
            variants: Variant::all(),
            properties: Property::ALL.to_vec(),
            backends: Plan::default_backends(1),
            budget: Duration::from_secs(60),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        }
    }

    /// Check the configuration against every backend of the plan.
    pub fn validate(&self) -> Result<(), String> {
        for b in &self.backends {
            self.cfg.validate(b.max_threads(), b.name())?;
        }
        Ok(())
    }
}

/// The loom baseline for the differential `no_lost_flush`: every reader
/// observation v5.19 can produce, from an unbounded (exhaustive) search.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// The exploration that produced it.
    pub exploration: Exploration,
    /// Distinct observations.
    pub observations: BTreeSet<Observation>,
}

/// Explore v5.19 exhaustively under loom and collect its observations.
pub fn loom_baseline(cfg: &Config, budget: Duration) -> Baseline {
    let scenario = Arc::new(FlushScenario::new(cfg.clone(), Variant::V5_19, None, true));
    let exploration = on_fresh_thread({
        let s = scenario.clone();
        move || {
            explore(
                &Backend::Loom {
                    preemption_bound: None,
                },
                budget,
                s,
            )
        }
    });
    Baseline {
        exploration,
        observations: scenario.observed(),
    }
}

/// Run `f` on a new thread, so that loom's and shuttle's thread-local state
/// starts clean, with a stack large enough for loom.
fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("spawn exploration thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn expectation(variant: &Variant, property: Property, backend: &Backend) -> Expect {
    match (variant.kind, variant.killed_by) {
        (Kind::Kernel, _) => Expect::Holds,
        (Kind::Mutant, Some((p, backends))) if p == property && backends.contains(&backend.name()) => {
            Expect::Killed
        }
        _ => Expect::Any,
    }
}

/// Check one cell. `baseline` is needed for `no_lost_flush` under loom.
pub fn check_cell(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    backend: &Backend,
    budget: Duration,
    baseline: Option<&Baseline>,
) -> Cell {
    let differential = matches!(backend, Backend::Loom { .. }) && property == Property::NoLostFlush;
    let scenario = Arc::new(FlushScenario::new(
        cfg.clone(),
        variant.clone(),
        Some(property),
        differential,
    ));
    let exploration = on_fresh_thread({
        let s = scenario.clone();
        let b = backend.clone();
        move || explore(&b, budget, s)
    });
    let mut executions = exploration.executions;
    let mut seconds = exploration.elapsed.as_secs_f64();
    let (mut verdict, mut note) = judge(property, &exploration.outcome);
    let mut search = backend.search();
    if differential && verdict == Verdict::Holds {
        let computed;
        let base = match baseline {
            Some(b) => b,
            None => {
                computed = loom_baseline(cfg, budget);
                &computed
            }
        };
        executions += base.exploration.executions;
        seconds += base.exploration.elapsed.as_secs_f64();
        search = format!("{search}; differential against v5.19, loom unbounded");
        match &base.exploration.outcome {
            Outcome::Finished => {
                let observed = scenario.observed();
                if let Some(o) = observed.difference(&base.observations).next() {
                    verdict = Verdict::Violated;
                    note = Some(format!(
                        "no_lost_flush: readers observed {} under {}, which no execution of v5.19 produces ({} v5.19 outcomes, exhaustive)",
                        fmt_observation(o),
                        variant.name,
                        base.observations.len()
                    ));
                }
            }
            Outcome::CutShort(why) => {
                verdict = Verdict::Inconclusive;
                note = Some(format!("the v5.19 baseline search was cut short: {why}"));
            }
            Outcome::Failed(msg) => {
                verdict = Verdict::Inconclusive;
                note = Some(format!("the v5.19 baseline failed: {msg}"));
            }
        }
    }
    let expect = expectation(variant, property, backend);
    let ok = match expect {
        Expect::Holds => verdict == Verdict::Holds,
        Expect::Killed => verdict == Verdict::Violated,
        Expect::Any => true,
    };
    let event = property.coverage_event();
    Cell {
        variant: variant.name.to_string(),
        kind: variant.kind,
        property,
        backend: backend.name().to_string(),
        verdict,
        executions,
        seconds,
        search,
        exhaustive: backend.exhaustive() && verdict != Verdict::Inconclusive,
        note,
        coverage_event: event.name(),
        coverage: scenario.coverage.count(event),
        expect,
        ok,
    }
}

fn judge(property: Property, outcome: &Outcome) -> (Verdict, Option<String>) {
    match outcome {
        Outcome::Finished => (Verdict::Holds, None),
        Outcome::CutShort(why) => (Verdict::Inconclusive, Some(why.clone())),
        Outcome::Failed(msg) => match property::attribute(msg) {
            Some(p) if p == property => (Verdict::Violated, Some(first_line(msg))),
            Some(p) => (
                Verdict::Inconclusive,
                Some(format!("search stopped by a {} violation: {}", p.name(), first_line(msg))),
            ),
            None => (
                Verdict::Inconclusive,
                Some(format!("search stopped by an unattributed panic: {}", first_line(msg))),
            ),
        },
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// `[(false, 0), (true, 4)]` as `r0:skip=0 r1:flush=4`.
pub fn fmt_observation(o: &Observation) -> String {
    o.iter()
        .enumerate()
        .map(|(i, (f, v))| format!("read{i}:{}={v}", if *f { "flush" } else { "no-flush" }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run every cell of `plan` on `plan.jobs` worker threads. `progress` is
/// called after each cell with (done, total, cell).
pub fn run_matrix(plan: &Plan, progress: &(dyn Fn(usize, usize, &Cell) + Sync)) -> Vec<Cell> {
    let mut work = Vec::new();
    for (vi, v) in plan.variants.iter().enumerate() {
        for (pi, p) in plan.properties.iter().enumerate() {
            for (bi, b) in plan.backends.iter().enumerate() {
                work.push((vi, pi, bi, v.clone(), *p, b.clone()));
            }
        }
    }
    // Slow cells first, so the pool drains evenly.
    work.sort_by_key(|(_, _, _, _, p, b)| (!matches!(b, Backend::Loom { .. }), *p != Property::NoLostFlush));
    let total = work.len();
    let needs_baseline = plan.properties.contains(&Property::NoLostFlush)
        && plan.backends.iter().any(|b| matches!(b, Backend::Loom { .. }));
    let baseline = needs_baseline.then(|| loom_baseline(&plan.cfg, plan.budget));
    let queue = Mutex::new(work.into_iter());
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..plan.jobs.max(1) {
            let tx = tx.clone();
            let queue = &queue;
            let baseline = baseline.as_ref();
            s.spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((vi, pi, bi, v, p, b)) = next else { break };
                let cell = check_cell(&plan.cfg, &v, p, &b, plan.budget, baseline);
                if tx.send(((vi, pi, bi), cell)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = Vec::with_capacity(total);
        for (key, cell) in rx {
            done.push((key, cell));
            progress(done.len(), total, &done.last().expect("just pushed").1);
        }
        let _ = start;
        done.sort_by_key(|(k, _)| *k);
        done.into_iter().map(|(_, c)| c).collect()
    })
}

/// Whether a finished matrix passes: every kernel cell holds, every
/// designated kill happened.
pub fn matrix_ok(cells: &[Cell]) -> bool {
    cells.iter().all(|c| c.ok)
}
