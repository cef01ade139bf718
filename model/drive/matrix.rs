//! The matrix: every variant on every suite entry under every backend of
//! that entry, then one cell per (variant, property, backend) summing up the
//! suite.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::check::run::{judged, run, PropertyVerdict, RunResult, RunSpec, Verdict};
use crate::check::suite::Suite;
use crate::explore::{Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::vocab::BackendName;
use std::sync::Mutex;

use super::cells::{cells, Cell};
use super::differential::differential;
pub use super::differential::undominated;

/// Everything a matrix run needs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The configurations and their searches.
    pub suite: Suite,
    /// Variants to check.
    pub variants: Vec<Variant>,
    /// Every variant known (twins are looked up here).
    pub registry: Vec<Variant>,
    /// Properties to report.
    pub properties: Vec<Property>,
    /// Backends to run; empty for all.
    pub backends: Vec<BackendName>,
    /// Time budget per exploration.
    pub budget: Duration,
    /// Worker processes.
    pub jobs: usize,
    /// The part of every shuttle search to run.
    pub shard: Shard,
}

impl Plan {
    /// The default plan: the standard suite, every variant of `registry`
    /// but benchmark bounds, every property and backend.
    pub fn new(suite: Suite, registry: Vec<Variant>) -> Self {
        Plan {
            suite,
            variants: registry
                .iter()
                .filter(|v| v.kind != Kind::Bound)
                .cloned()
                .collect(),
            registry,
            properties: Property::all().collect(),
            backends: Vec::new(),
            budget: Duration::from_secs(60),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            shard: Shard::default(),
        }
    }

    /// Whether the plan runs searches of backend `b`.
    pub fn runs_backend(&self, b: &Backend) -> bool {
        self.backends.is_empty() || self.backends.contains(&b.id())
    }

    /// Check the plan: every entry's configuration fits its backends, and
    /// every twin named exists.
    pub fn validate(&self) -> Result<(), String> {
        for e in &self.suite.entries {
            for b in e.backends.iter().filter(|b| self.runs_backend(b)) {
                if e.cfg.ticks > 0
                    && !matches!(
                        b,
                        Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
                    )
                {
                    return Err(format!(
                        "--ticks {}: abstract time runs under shuttle-random and shuttle-pct only; add --backend shuttle-random,shuttle-pct",
                        e.cfg.ticks
                    ));
                }
                e.cfg.validate(b.max_threads(), b.name())?;
                let shuttle = matches!(
                    b,
                    Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
                );
                if self.shard.count > 1 && !shuttle {
                    return Err(format!(
                        "--shard {}/{}: only shuttle random and PCT searches can be split; add --backend shuttle-random,shuttle-pct",
                        self.shard.index, self.shard.count
                    ));
                }
            }
        }
        for v in &self.variants {
            if let Some(t) = &v.twin {
                let twin = Variant::find(&self.registry, t)?;
                if twin.gate.is_none() {
                    return Err(format!(
                        "variant {:?} names {t:?} as its twin, which has no gate",
                        v.name
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Where runs execute.
#[derive(Clone, Debug)]
pub enum Executor {
    /// On threads of this process.
    InProcess,
    /// Each run in a child process: `<exe> __run <RunSpec as JSON>`, which
    /// prints the [`RunResult`] as JSON.
    ///
    /// loom maps and unmaps a stack for every model thread of every
    /// execution; two explorations in one process contend on the address
    /// space lock (measured: 2 cells on 2 cores took 4.9 s in one process,
    /// 2.7 s as two processes), so separate processes scale with cores.
    Subprocess(PathBuf),
}

impl Executor {
    fn run(&self, spec: &RunSpec, variant: &Variant, registry: &[Variant]) -> RunResult {
        let result = match self {
            Executor::InProcess => run(spec, registry),
            Executor::Subprocess(exe) => run_child(exe, spec),
        };
        result.unwrap_or_else(|why| failed_run(spec, variant, why))
    }
}

fn run_child(exe: &PathBuf, spec: &RunSpec) -> Result<RunResult, String> {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    let arg = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("__run")
        .arg(arg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    // A long search reports progress on stderr: pass those lines on, keep
    // the rest for the error message.
    let stderr = child.stderr.take();
    let forward = std::thread::spawn(move || {
        let mut first = None;
        if let Some(err) = stderr {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if line.starts_with(crate::check::run::PROGRESS) {
                    eprintln!("{line}");
                } else if first.is_none() {
                    first = Some(line);
                }
            }
        }
        first
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout)
            .map_err(|e| format!("worker output unreadable: {e}"))?;
    }
    let status = child
        .wait()
        .map_err(|e| format!("worker process lost: {e}"))?;
    let first = forward.join().ok().flatten();
    if !status.success() {
        return Err(format!(
            "worker process failed ({status}): {}",
            first.unwrap_or_default()
        ));
    }
    serde_json::from_slice(&stdout).map_err(|e| format!("worker output unreadable: {e}"))
}

fn failed_run(spec: &RunSpec, variant: &Variant, why: String) -> RunResult {
    RunResult {
        spec: spec.clone(),
        search: spec.backend.search(),
        exhaustive: false,
        finished: false,
        stopped: Some(why.clone()),
        executions: 0,
        seconds: 0.0,
        verdicts: judged(variant, &spec.cfg, &spec.backend)
            .into_iter()
            .map(|p| PropertyVerdict {
                property: p,
                verdict: Verdict::Inconclusive,
                note: Some(why.clone()),
            })
            .collect(),
        coverage: Vec::new(),
        outcomes: None,
    }
}

/// What a matrix run produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Matrix {
    /// One cell per (variant, property, backend).
    pub cells: Vec<Cell>,
    /// Every run, for `--runs` output and tests.
    pub runs: Vec<RunResult>,
}

/// The runs of `plan`: the variants' own, and the twins' loom runs the
/// differential needs (`hidden`), each with its variant resolved.
fn work(plan: &Plan) -> Vec<(RunSpec, Variant, bool)> {
    let mut specs = Vec::new();
    let mut add = |v: &Variant, hidden: bool| {
        for e in plan.suite.entries.iter().filter(|e| e.applies_to(v.family)) {
            for b in e.backends.iter().filter(|b| plan.runs_backend(b)) {
                let loom = matches!(b, Backend::Loom { .. });
                if hidden && !loom {
                    continue;
                }
                let backend = match (b, v.loom_cap) {
                    (Backend::Loom { preemption_bound }, Some(cap)) => Backend::Loom {
                        preemption_bound: Some(preemption_bound.map_or(cap, |p| p.min(cap))),
                    },
                    _ => b.clone(),
                };
                let mut spec =
                    RunSpec::new(&v.name, &e.name, &e.cfg, backend, plan.budget.as_secs_f64());
                spec.shard = plan.shard;
                spec.collect = loom && v.twin.is_some();
                specs.push((spec, v.clone(), hidden));
            }
        }
    };
    let names: BTreeSet<&str> = plan.variants.iter().map(|v| v.name.as_str()).collect();
    for v in &plan.variants {
        add(v, false);
    }
    let twins: BTreeSet<&str> = plan
        .variants
        .iter()
        .filter_map(|v| v.twin.as_deref())
        .filter(|t| !names.contains(t))
        .collect();
    for t in twins {
        if let Ok(twin) = Variant::find(&plan.registry, t) {
            add(&twin, true);
        }
    }
    // Slow searches first, so the pool drains evenly.
    specs.sort_by_key(|(s, _, _)| match s.backend {
        Backend::Loom { .. } => 0,
        Backend::ShuttleDfs { .. } => 1,
        _ => 2,
    });
    specs
}

/// Run every run of `plan` on `plan.jobs` workers; `progress` is called
/// after each with (done, total, run). Then the differential form of
/// `no_lost_flush` and the cells.
pub fn run_matrix(
    plan: &Plan,
    executor: &Executor,
    progress: &(dyn Fn(usize, usize, &RunResult) + Sync),
) -> Matrix {
    let work = work(plan);
    let total = work.len();
    let queue = Mutex::new(work.into_iter().enumerate());
    let (tx, rx) = mpsc::channel();
    let mut results: Vec<(usize, RunResult, bool)> = std::thread::scope(|s| {
        for _ in 0..plan.jobs.max(1) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((i, (spec, variant, hidden))) = next else {
                    break;
                };
                let r = executor.run(&spec, &variant, &plan.registry);
                if tx.send((i, r, hidden)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = Vec::with_capacity(total);
        for (i, r, hidden) in rx {
            progress(done.len() + 1, total, &r);
            done.push((i, r, hidden));
        }
        done
    });
    results.sort_by_key(|(i, _, _)| *i);
    differential(&plan.registry, plan.budget, &mut results);
    let runs: Vec<RunResult> = results
        .into_iter()
        .filter(|(_, _, hidden)| !hidden)
        .map(|(_, r, _)| r)
        .collect();
    let cells = cells(&plan.variants, &plan.properties, &runs);
    Matrix { cells, runs }
}
