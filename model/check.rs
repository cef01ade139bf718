//! Running (variant, property, backend) cells and the whole matrix.

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::Command;

use crate::config::Config;
use crate::platform::ghost::{Arc, Mutex};
use crate::platform::{explore, explore_shard, Backend, Exploration, Outcome, Shard};
use crate::property::{self, Property};
use crate::scenario::{FlushScenario, Observation};
use crate::variant::{Kind, SkipPolicy, Variant};

/// The verdict of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    pub coverage_event: String,
    /// How many times it occurred over the search.
    pub coverage: u64,
    /// What the matrix expected.
    pub expect: Expect,
    /// Whether the verdict meets the expectation.
    pub ok: bool,
    /// Which part of a split shuttle search this is (0/1 when not split).
    #[serde(default)]
    pub shard: Shard,
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
    /// The part of every shuttle search to run (see [`Shard`]).
    pub shard: Shard,
}

impl Plan {
    /// The default backends: loom with 2 preemptions (loom's documentation:
    /// "setting the thread pre-emption bound to 2 or 3 is enough to catch
    /// most bugs"), shuttle random and PCT, std.
    pub fn default_backends(seed: u64) -> Vec<Backend> {
        vec![
            Backend::Loom {
                preemption_bound: Some(2),
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
            shard: Shard::default(),
        }
    }

    /// The configuration cells of property `p` run on.
    pub fn cfg_for(&self, p: Property) -> Config {
        p.config_for(&self.cfg)
    }

    /// Whether the matrix leaves out the cell of `p` on `b`: staleness is
    /// not measured under loom ([`Property::decided_by`]); abstract time
    /// runs under shuttle only, so a property whose default configuration
    /// has ticks is not run on std; and `flush_time_bound` needs ticks.
    pub fn skips(&self, p: Property, b: &Backend) -> bool {
        let loom = matches!(b, Backend::Loom { .. });
        let timed_default = self.cfg_for(p).ticks > 0 && self.cfg.ticks == 0;
        let untimed = p == Property::FlushTimeBound && self.cfg_for(p).ticks == 0;
        (p.quantitative() && loom) || (timed_default && matches!(b, Backend::Std { .. })) || untimed
    }

    /// Check the configuration against every backend of the plan.
    pub fn validate(&self) -> Result<(), String> {
        for b in &self.backends {
            for p in &self.properties {
                let cfg = self.cfg_for(*p);
                if self.skips(*p, b) {
                    continue;
                }
                if cfg.ticks > 0 && matches!(b, Backend::Loom { .. } | Backend::Std { .. }) {
                    return Err(format!(
                        "--ticks {}: abstract time runs under shuttle only; add --backend shuttle-random,shuttle-pct",
                        cfg.ticks
                    ));
                }
                cfg.validate(b.max_threads(), b.name())?;
            }
            let shuttle = matches!(
                b,
                Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
            );
            if self.shard.count > 1 && !shuttle {
                return Err(format!(
                    "--shard {}/{}: only shuttle searches can be split; add --backend shuttle-random,shuttle-pct",
                    self.shard.index, self.shard.count
                ));
            }
        }
        Ok(())
    }
}

/// The loom baseline for the differential `no_lost_flush`: the reader
/// observations v5.19 produces within a preemption bound.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// The exploration that produced it.
    pub exploration: Exploration,
    /// Distinct observations.
    pub observations: BTreeSet<Observation>,
}

impl Baseline {
    /// Whether the search finished, or why its observations cannot be used.
    pub fn usable(&self) -> Result<(), String> {
        match &self.exploration.outcome {
            Outcome::Finished => Ok(()),
            Outcome::CutShort(why) => Err(format!("the v5.19 search was cut short: {why}")),
            Outcome::Failed(msg) => Err(format!("the v5.19 search failed: {msg}")),
        }
    }
}

/// Explore v5.19 under loom (`bound` preemptions, `None` for exhaustive) and
/// collect its reader observations.
pub fn loom_baseline(cfg: &Config, bound: Option<usize>, budget: Duration) -> Baseline {
    let scenario = Arc::new(FlushScenario::new(cfg.clone(), Variant::V5_19, None, true));
    let exploration = on_fresh_thread({
        let s = scenario.clone();
        move || {
            explore(
                &Backend::Loom {
                    preemption_bound: bound,
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
    let killer = variant
        .killed_by
        .iter()
        .any(|(p, backends)| *p == property && backends.contains(&backend.name()));
    match variant.kind {
        Kind::Kernel if property.refutable_claim() => Expect::Any,
        Kind::Kernel => Expect::Holds,
        Kind::Mutant if killer => Expect::Killed,
        Kind::Mutant | Kind::Bound => Expect::Any,
    }
}

/// Check one cell.
pub fn check_cell(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    backend: &Backend,
    budget: Duration,
) -> Cell {
    check_cell_shard(cfg, variant, property, backend, budget, Shard::default())
}

/// Check one shard of a cell (shuttle searches only; see [`Shard`]).
pub fn check_cell_shard(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    backend: &Backend,
    budget: Duration,
    shard: Shard,
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
        move || explore_shard(&b, shard, budget, s)
    });
    let mut executions = exploration.executions;
    let mut seconds = exploration.elapsed.as_secs_f64();
    let (mut verdict, mut note) = judge(property, &exploration.outcome);
    let mut search = backend.search();
    if shard.count > 1 {
        search = format!("{search}, shard {}/{}", shard.index, shard.count);
    }
    if differential && verdict == Verdict::Holds && !variant.same_policies(&Variant::V5_19) {
        let d = differential_verdict(cfg, variant, backend, budget, &scenario.observed());
        executions += d.executions;
        seconds += d.seconds;
        search = format!("{search}; {}", d.search);
        verdict = d.verdict;
        note = d.note;
    } else if differential && verdict == Verdict::Holds {
        search =
            format!("{search}; differential: this variant's outcomes are v5.19's by construction");
    }
    if property == Property::MonotonicReads && !cfg.non_negative() && verdict == Verdict::Holds {
        verdict = Verdict::Inconclusive;
        note = Some("monotonic_reads: not checked, some updates are negative".into());
    }
    if property == Property::NoWorseThanBaseline
        && scenario.baseline_since_reset.is_none()
        && verdict == Verdict::Holds
    {
        verdict = Verdict::Inconclusive;
        note = Some(
            "no_worse_than_baseline: not checked, v5.19's worst case is derived for non-negative updates only"
                .into(),
        );
    }
    if property == Property::FlushTimeBound && cfg.ticks == 0 && verdict == Verdict::Holds {
        verdict = Verdict::Inconclusive;
        note = Some("flush_time_bound: not checked, time is not modelled (--ticks 0)".into());
    }
    if property.quantitative() && matches!(backend, Backend::Loom { .. }) {
        verdict = Verdict::Inconclusive;
        note = Some(format!(
            "{property}: not decided by loom ({})",
            property.decided_by()
        ));
    }
    let expect = expectation(variant, property, backend);
    let ok = match expect {
        Expect::Holds => verdict == Verdict::Holds,
        Expect::Killed => verdict == Verdict::Violated,
        Expect::Any => true,
    };
    let event = property.coverage_event();
    let coverage = scenario.coverage.count(event);
    // v5.19 never skips, so the skip races cannot occur.
    let race_possible = !(matches!(
        property,
        Property::NoLostFlush | Property::NoWorseThanBaseline
    ) && variant.skip == SkipPolicy::Never);
    if verdict == Verdict::Holds && coverage == 0 && race_possible {
        note = Some(format!(
            "race not seen: {} never happened in this search, so this holds says little",
            event.name()
        ));
    }
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
        coverage_event: event.name().to_string(),
        coverage,
        expect,
        ok,
        shard,
    }
}

fn judge(property: Property, outcome: &Outcome) -> (Verdict, Option<String>) {
    match outcome {
        Outcome::Finished => (Verdict::Holds, None),
        Outcome::CutShort(why) => (Verdict::Inconclusive, Some(why.clone())),
        Outcome::Failed(msg) => match property::attribute(msg) {
            Some(p) if p == property => (Verdict::Violated, Some(property::explain(p, msg))),
            Some(p) => (
                Verdict::Inconclusive,
                Some(format!("search stopped by {}", property::explain(p, msg))),
            ),
            None => (
                Verdict::Inconclusive,
                Some(format!(
                    "search stopped by an unattributed panic: {}",
                    first_line(msg)
                )),
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

struct Differential {
    verdict: Verdict,
    note: Option<String>,
    executions: u64,
    seconds: f64,
    search: String,
}

/// Compare a variant's reader observations, from a search at the planned
/// loom bound, with v5.19's.
///
/// v5.19 is first explored at the same bound. Its observations there are a
/// subset of all its observations, so an empty difference proves the
/// variant's observations (within the bound) are v5.19 observations. A
/// non-empty difference is confirmed only against an unbounded (exhaustive)
/// v5.19 search; if that search is cut short the verdict is inconclusive.
fn differential_verdict(
    cfg: &Config,
    variant: &Variant,
    backend: &Backend,
    budget: Duration,
    observed: &BTreeSet<Observation>,
) -> Differential {
    let bound = match backend {
        Backend::Loom { preemption_bound } => *preemption_bound,
        _ => None,
    };
    let mut d = Differential {
        verdict: Verdict::Holds,
        note: None,
        executions: 0,
        seconds: 0.0,
        search: String::new(),
    };
    let mut base = loom_baseline(cfg, bound, budget);
    d.executions += base.exploration.executions;
    d.seconds += base.exploration.elapsed.as_secs_f64();
    d.search = format!(
        "differential against v5.19, {}",
        Backend::Loom {
            preemption_bound: bound
        }
        .search()
    );
    if let Err(why) = base.usable() {
        d.verdict = Verdict::Inconclusive;
        d.note = Some(why);
        return d;
    }
    if observed.is_subset(&base.observations) {
        return d;
    }
    if bound.is_some() {
        let rest = budget
            .saturating_sub(Duration::from_secs_f64(d.seconds))
            .max(Duration::from_secs(1));
        base = loom_baseline(cfg, None, rest);
        d.executions += base.exploration.executions;
        d.seconds += base.exploration.elapsed.as_secs_f64();
        d.search = format!("{}, confirmed by loom unbounded", d.search);
        if let Err(why) = base.usable() {
            let o = observed.difference(&base.observations).next();
            d.verdict = Verdict::Inconclusive;
            d.note = Some(format!(
                "readers observed {} which v5.19 did not produce within the bound; {why}",
                o.map(fmt_observation).unwrap_or_default()
            ));
            return d;
        }
    }
    if let Some(o) = observed.difference(&base.observations).next() {
        d.verdict = Verdict::Violated;
        d.note = Some(format!(
            "no_lost_flush: readers observed {} under {}, which no execution of v5.19 produces ({} v5.19 outcomes, exhaustive)",
            fmt_observation(o),
            variant.name,
            base.observations.len()
        ));
    }
    d
}

/// One cell, as handed to a worker process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellSpec {
    /// Configuration.
    pub cfg: Config,
    /// Variant name.
    pub variant: String,
    /// Property.
    pub property: Property,
    /// Backend and search parameters.
    pub backend: Backend,
    /// Time budget in seconds.
    pub budget_secs: f64,
    /// The part of a split shuttle search.
    #[serde(default)]
    pub shard: Shard,
}

impl CellSpec {
    /// Run the cell in this process.
    pub fn run(&self) -> Result<Cell, String> {
        let variant = Variant::by_name(&self.variant)?;
        Ok(check_cell_shard(
            &self.cfg,
            &variant,
            self.property,
            &self.backend,
            Duration::from_secs_f64(self.budget_secs),
            self.shard,
        ))
    }
}

/// Where matrix cells run.
#[derive(Clone, Debug)]
pub enum Executor {
    /// On threads of this process.
    InProcess,
    /// Each cell in a child process: `<exe> __cell <CellSpec as JSON>`,
    /// which prints the [`Cell`] as JSON.
    ///
    /// loom maps and unmaps a stack for every model thread of every
    /// execution; two explorations in one process contend on the address
    /// space lock (measured: 2 cells on 2 cores took 4.9 s in one process,
    /// 2.7 s as two processes), so separate processes scale with cores.
    Subprocess(PathBuf),
}

impl Executor {
    fn run(&self, spec: &CellSpec) -> Cell {
        let result = match self {
            Executor::InProcess => spec.run(),
            Executor::Subprocess(exe) => run_child(exe, spec),
        };
        result.unwrap_or_else(|why| failed_cell(spec, why))
    }
}

fn run_child(exe: &PathBuf, spec: &CellSpec) -> Result<Cell, String> {
    let arg = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("__cell")
        .arg(arg)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "worker process failed ({}): {}",
            out.status,
            first_line(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("worker output unreadable: {e}"))
}

fn failed_cell(spec: &CellSpec, why: String) -> Cell {
    let kind = Variant::by_name(&spec.variant).map_or(Kind::Kernel, |v| v.kind);
    Cell {
        variant: spec.variant.clone(),
        kind,
        property: spec.property,
        backend: spec.backend.name().to_string(),
        verdict: Verdict::Inconclusive,
        executions: 0,
        seconds: 0.0,
        search: spec.backend.search(),
        exhaustive: false,
        note: Some(why),
        coverage_event: spec.property.coverage_event().name().to_string(),
        coverage: 0,
        expect: Expect::Any,
        ok: false,
        shard: spec.shard,
    }
}

/// Run every cell of `plan` on `plan.jobs` workers. `progress` is called
/// after each cell with (done, total, cell).
pub fn run_matrix(
    plan: &Plan,
    executor: &Executor,
    progress: &(dyn Fn(usize, usize, &Cell) + Sync),
) -> Vec<Cell> {
    let mut work = Vec::new();
    for (vi, v) in plan.variants.iter().enumerate() {
        for (pi, p) in plan.properties.iter().enumerate() {
            for (bi, b) in plan.backends.iter().enumerate() {
                if !plan.skips(*p, b) {
                    work.push((vi, pi, bi, v, *p, b.clone()));
                }
            }
        }
    }
    // Slow cells first, so the pool drains evenly.
    work.sort_by_key(|(_, _, _, _, p, b)| {
        (
            !matches!(b, Backend::Loom { .. }),
            *p != Property::NoLostFlush,
        )
    });
    let total = work.len();
    let queue = Mutex::new(work.into_iter());
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..plan.jobs.max(1) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((vi, pi, bi, v, p, b)) = next else {
                    break;
                };
                let spec = CellSpec {
                    cfg: plan.cfg_for(p),
                    variant: v.name.to_string(),
                    property: p,
                    backend: b,
                    budget_secs: plan.budget.as_secs_f64(),
                    shard: plan.shard,
                };
                let cell = executor.run(&spec);
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

/// Combine the cells of shard runs (`flushcheck --shard I/N --json`, one
/// file per shard) into one cell per (variant, property, backend).
///
/// A combined cell is violated if any shard found a violation; it holds only
/// if every shard `0..N` is present and held; otherwise it is inconclusive
/// and says which shards are missing or cut short. Executions and seconds
/// are summed (seconds are total machine time, not wall time).
pub fn merge_shards(cells: &[Cell]) -> Vec<Cell> {
    let mut groups: Vec<(String, Property, String, Vec<&Cell>)> = Vec::new();
    for c in cells {
        match groups
            .iter_mut()
            .find(|g| g.0 == c.variant && g.1 == c.property && g.2 == c.backend)
        {
            Some(g) => g.3.push(c),
            None => groups.push((c.variant.clone(), c.property, c.backend.clone(), vec![c])),
        }
    }
    groups
        .into_iter()
        .map(|(_, _, _, parts)| {
            let first = parts[0];
            let count = first.shard.count;
            let mut merged = first.clone();
            merged.executions = parts.iter().map(|c| c.executions).sum();
            merged.seconds = parts.iter().map(|c| c.seconds).sum();
            merged.coverage = parts.iter().map(|c| c.coverage).sum();
            merged.shard = Shard::default();
            merged.search = first
                .search
                .split(", shard ")
                .next()
                .unwrap_or("")
                .to_string()
                + &format!(" (merged from {} of {count} shards)", parts.len());
            let present: BTreeSet<u64> = parts.iter().map(|c| c.shard.index).collect();
            let missing: Vec<u64> = (0..count).filter(|i| !present.contains(i)).collect();
            if let Some(v) = parts.iter().find(|c| c.verdict == Verdict::Violated) {
                merged.verdict = Verdict::Violated;
                merged.note = v.note.clone();
            } else if !missing.is_empty() || parts.iter().any(|c| c.shard.count != count) {
                merged.verdict = Verdict::Inconclusive;
                merged.note = Some(format!("shards missing: {missing:?} of {count}"));
            } else if let Some(c) = parts.iter().find(|c| c.verdict == Verdict::Inconclusive) {
                merged.verdict = Verdict::Inconclusive;
                merged.note = c.note.clone();
            } else {
                merged.verdict = Verdict::Holds;
                merged.note = None;
            }
            merged.ok = match merged.expect {
                Expect::Holds => merged.verdict == Verdict::Holds,
                Expect::Killed => merged.verdict == Verdict::Violated,
                Expect::Any => true,
            };
            merged
        })
        .collect()
}
