//! The matrix: every variant on every suite entry under every backend of
//! that entry, then one cell per (variant, property, backend) summing up the
//! suite.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::explore::ghost::Mutex;
use crate::explore::{Backend, Shard};
use crate::observe::coverage::Event;
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};

use super::differential::differential;
pub use super::differential::undominated;
use super::run::{judged, run, PropertyVerdict, RunResult, RunSpec, Verdict};
use super::suite::Suite;

/// What the matrix expects of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Kernel, benign or candidate: must hold.
    Holds,
    /// A mutant's designated killer: must be violated.
    Killed,
    /// A kernel version's pinned finding: must be violated.
    Finding,
    /// Anything goes (a mutant's other cells, refuted claims).
    Any,
}

/// One configuration's part of a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigVerdict {
    /// Suite entry name.
    pub entry: String,
    /// Verdict on this entry.
    pub verdict: Verdict,
    /// Its note.
    pub note: Option<String>,
    /// Executions of this entry's search.
    pub executions: u64,
    /// Whether this entry's search was exhaustive.
    pub exhaustive: bool,
    /// How often the property's race happened here.
    pub coverage: u64,
}

/// The result of one (variant, property, backend) cell over the suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// Variant name.
    pub variant: String,
    /// What the variant is.
    pub kind: Kind,
    /// Property.
    pub property: Property,
    /// Backend name.
    pub backend: String,
    /// holds / violated / inconclusive, over the suite.
    pub verdict: Verdict,
    /// Executions (loom), schedules (shuttle) or runs (std), summed.
    pub executions: u64,
    /// Seconds, summed.
    pub seconds: f64,
    /// The planned search of each entry.
    pub search: String,
    /// Whether every entry's search was exhaustive and finished.
    pub exhaustive: bool,
    /// The violation (naming the entry), or why the verdict is not holds,
    /// or a flag on a weak holds.
    pub note: Option<String>,
    /// The coverage event paired with the property.
    pub coverage_event: String,
    /// How often it occurred over the suite.
    pub coverage: u64,
    /// How often a CPU accounted a batch again after a skip and a reset
    /// (`recross_after_reset`) over the suite: the later epoch.
    pub later_epoch: u64,
    /// Each entry's verdict.
    pub configs: Vec<ConfigVerdict>,
    /// What the matrix expected.
    pub expect: Expect,
    /// Whether the verdict meets the expectation.
    pub ok: bool,
    /// Which part of a split shuttle search this is (0/1 when not split).
    #[serde(default)]
    pub shard: Shard,
}

impl Cell {
    /// Whether this holds although the property's race never happened.
    pub fn race_not_seen(&self) -> bool {
        self.note
            .as_deref()
            .is_some_and(|n| n.starts_with("race not seen"))
    }

    /// Whether this holds although no entry reached a later epoch.
    pub fn epoch_not_reached(&self) -> bool {
        self.note
            .as_deref()
            .is_some_and(|n| n.starts_with("later epoch not reached"))
    }
}

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
    /// Backends to run (by name); empty for all.
    pub backends: Vec<String>,
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
            properties: Property::ALL.to_vec(),
            backends: Vec::new(),
            budget: Duration::from_secs(60),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            shard: Shard::default(),
        }
    }

    /// Whether the plan runs searches of backend `b`.
    pub fn runs_backend(&self, b: &Backend) -> bool {
        self.backends.is_empty() || self.backends.iter().any(|n| n == b.name())
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
    fn run(&self, spec: &RunSpec, registry: &[Variant]) -> RunResult {
        let result = match self {
            Executor::InProcess => run(spec, registry),
            Executor::Subprocess(exe) => run_child(exe, spec),
        };
        result.unwrap_or_else(|why| failed_run(spec, why))
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
                if line.starts_with(super::run::PROGRESS) {
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

fn failed_run(spec: &RunSpec, why: String) -> RunResult {
    RunResult {
        spec: spec.clone(),
        search: spec.backend.search(),
        exhaustive: false,
        finished: false,
        stopped: Some(why.clone()),
        executions: 0,
        seconds: 0.0,
        verdicts: Property::ALL
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
/// differential needs (`hidden`).
fn work(plan: &Plan) -> Vec<(RunSpec, bool)> {
    let mut specs = Vec::new();
    let mut add = |v: &str, hidden: bool| {
        let family = plan
            .registry
            .iter()
            .chain(&plan.variants)
            .find(|x| x.name == v)
            .map_or(crate::protocol::Family::Global, |x| x.family);
        for e in plan.suite.entries.iter().filter(|e| e.applies_to(family)) {
            for b in e.backends.iter().filter(|b| plan.runs_backend(b)) {
                let loom = matches!(b, Backend::Loom { .. });
                if hidden && !loom {
                    continue;
                }
                specs.push((
                    RunSpec {
                        variant: v.to_string(),
                        entry: e.name.clone(),
                        cfg: e.cfg.clone(),
                        backend: b.clone(),
                        budget_secs: plan.budget.as_secs_f64(),
                        shard: plan.shard,
                        collect: loom,
                    },
                    hidden,
                ));
            }
        }
    };
    let names: BTreeSet<&str> = plan.variants.iter().map(|v| v.name.as_str()).collect();
    for v in &plan.variants {
        add(&v.name, false);
    }
    let twins: BTreeSet<&str> = plan
        .variants
        .iter()
        .filter_map(|v| v.twin.as_deref())
        .filter(|t| !names.contains(t))
        .collect();
    for t in twins {
        add(t, true);
    }
    // Slow searches first, so the pool drains evenly.
    specs.sort_by_key(|(s, _)| match s.backend {
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
                let Some((i, (spec, hidden))) = next else {
                    break;
                };
                let r = executor.run(&spec, &plan.registry);
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
    differential(plan, &mut results);
    let runs: Vec<RunResult> = results
        .into_iter()
        .filter(|(_, _, hidden)| !hidden)
        .map(|(_, r, _)| r)
        .collect();
    let cells = cells(plan, &runs);
    Matrix { cells, runs }
}

fn expectation(variant: &Variant, property: Property, backend: &str) -> Expect {
    let killer = variant
        .killed_by
        .iter()
        .any(|(p, backends)| *p == property && backends.iter().any(|b| b == backend));
    let finding = variant.findings.iter().find(|(p, _)| *p == property);
    if let Some((_, backends)) = finding {
        return if backends.iter().any(|b| b == backend) {
            Expect::Finding
        } else {
            Expect::Any
        };
    }
    match variant.kind {
        k if k.must_hold() && property.refutable_claim() => Expect::Any,
        k if k.must_hold() => Expect::Holds,
        Kind::Mutant if killer => Expect::Killed,
        _ => Expect::Any,
    }
}

/// One cell per (variant, property, backend) over the suite's runs.
pub fn cells(plan: &Plan, runs: &[RunResult]) -> Vec<Cell> {
    let mut out = Vec::new();
    for v in &plan.variants {
        for p in &plan.properties {
            for b in Backend::NAMES {
                let mine: Vec<&RunResult> = runs
                    .iter()
                    .filter(|r| r.spec.variant == v.name && r.spec.backend.name() == b)
                    .filter(|r| judged(*p, v, &r.spec.cfg, &r.spec.backend))
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                out.push(cell(v, *p, b, &mine));
            }
        }
    }
    out
}

fn cell(v: &Variant, p: Property, backend: &str, runs: &[&RunResult]) -> Cell {
    let event = p.coverage_event();
    let configs: Vec<ConfigVerdict> = runs
        .iter()
        .map(|r| {
            let pv = r.verdict(p);
            ConfigVerdict {
                entry: r.spec.entry.clone(),
                verdict: pv.map_or(Verdict::Inconclusive, |x| x.verdict),
                note: pv.and_then(|x| x.note.clone()),
                executions: r.executions,
                exhaustive: r.exhaustive,
                coverage: r.count(event),
            }
        })
        .collect();
    let violated = configs.iter().find(|c| c.verdict == Verdict::Violated);
    let inconclusive = configs.iter().find(|c| c.verdict == Verdict::Inconclusive);
    let (verdict, mut note) = match (violated, inconclusive) {
        (Some(c), _) => (
            Verdict::Violated,
            c.note.as_ref().map(|n| format!("{} [{}]", n, c.entry)),
        ),
        (None, Some(c)) => (
            Verdict::Inconclusive,
            Some(format!(
                "{}: {}",
                c.entry,
                c.note.clone().unwrap_or_default()
            )),
        ),
        (None, None) => (Verdict::Holds, None),
    };
    let coverage: u64 = configs.iter().map(|c| c.coverage).sum();
    let later_epoch: u64 = runs.iter().map(|r| r.count(Event::RecrossAfterReset)).sum();
    let skips: u64 = runs.iter().map(|r| r.count(Event::Skip)).sum();
    if verdict == Verdict::Holds {
        let race_possible = !(matches!(
            p,
            Property::NoLostFlush
                | Property::NoWorseThanBaseline
                | Property::NoLostFlushSameSchedule
        ) && skips == 0);
        if coverage == 0 && race_possible {
            note = Some(format!(
                "race not seen: {} never happened in this suite, so this holds says little",
                event.name()
            ));
        } else if later_epoch == 0 && skips > 0 {
            note = Some(
                "later epoch not reached: no CPU accounted a batch again after a skip and a reset"
                    .into(),
            );
        }
    }
    let expect = expectation(v, p, backend);
    let ok = match expect {
        Expect::Holds => verdict == Verdict::Holds,
        Expect::Killed | Expect::Finding => verdict == Verdict::Violated,
        Expect::Any => true,
    };
    let mut searches: Vec<String> = runs.iter().map(|r| r.search.clone()).collect();
    searches.dedup();
    Cell {
        variant: v.name.clone(),
        kind: v.kind,
        property: p,
        backend: backend.to_string(),
        verdict,
        executions: runs.iter().map(|r| r.executions).sum(),
        seconds: runs.iter().map(|r| r.seconds).sum(),
        search: searches.join("; "),
        exhaustive: runs.iter().all(|r| r.exhaustive),
        note,
        coverage_event: event.name().to_string(),
        coverage,
        later_epoch,
        configs,
        expect,
        ok,
        shard: runs.first().map_or_else(Shard::default, |r| r.spec.shard),
    }
}

/// Whether a finished matrix passes: every must-hold cell holds, every
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
            merged.later_epoch = parts.iter().map(|c| c.later_epoch).sum();
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
                Expect::Killed | Expect::Finding => merged.verdict == Verdict::Violated,
                Expect::Any => true,
            };
            merged
        })
        .collect()
}
