//! The matrix: a plan's searches ([`Plan::tasks`]) on a pool of workers
//! (threads, or child processes), then one cell per (variant, property,
//! backend) summing up the suite.

use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;

use serde::{Deserialize, Serialize};

use crate::check::run::{judged, run, PropertyVerdict, RunResult, RunSpec, Verdict};
use crate::explore::Backend;
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use std::sync::Mutex;

use super::cells::{cells, Cell};
use super::differential::differential;
pub use super::differential::undominated;
pub use super::plan::{NotRun, Plan, Step, Task, Then};

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
    /// The searches a focused plan left out, and why.
    pub not_run: Vec<NotRun>,
}

/// Run the tasks of `plan` ([`Plan::tasks`]) on `plan.jobs` workers;
/// `progress` is called after each search with (done, total, run), where
/// the total counts the searches a task may still skip. Then the loom form
/// of `no_lost_flush` and the cells.
pub fn run_matrix(
    plan: &Plan,
    executor: &Executor,
    progress: &(dyn Fn(usize, usize, &RunResult) + Sync),
) -> Matrix {
    let tasks = plan.tasks();
    let total: usize = tasks.iter().map(|t| t.steps.len()).sum();
    // Real-thread searches mostly wait (spawns, joins), so they run on a
    // worker of their own beside the `jobs` workers of the model checkers.
    let (threads, models): (Vec<_>, Vec<_>) = tasks
        .into_iter()
        .enumerate()
        .partition(|(_, t)| matches!(t.steps[0].spec.backend, Backend::Std { .. }));
    let extra = usize::from(!threads.is_empty() && !models.is_empty());
    let (threads, models) = (
        Mutex::new(threads.into_iter()),
        Mutex::new(models.into_iter()),
    );
    let (tx, rx) = mpsc::channel();
    let (mut results, not_run) = std::thread::scope(|s| {
        for w in 0..plan.jobs.max(1) + extra {
            let tx = tx.clone();
            // The extra worker takes real-thread searches first; every
            // worker then helps with whatever is left.
            let queues = if w == plan.jobs.max(1) {
                [&threads, &models]
            } else {
                [&models, &threads]
            };
            s.spawn(move || loop {
                let next = queues
                    .iter()
                    .find_map(|q| q.lock().unwrap_or_else(|e| e.into_inner()).next());
                let Some((i, task)) = next else {
                    break;
                };
                run_task(i, &task, executor, &plan.registry, &tx);
            });
        }
        drop(tx);
        let mut done = Vec::with_capacity(total);
        let mut not_run = plan.left_out();
        let mut finished = 0;
        for event in rx {
            match event {
                Done::Ran(key, r, hidden, last) => {
                    // A search an armed property stopped and the one that
                    // goes on after it are one step of the plan.
                    finished += usize::from(last);
                    progress(finished, total, &r);
                    done.push((key, *r, hidden));
                }
                Done::Skipped(n) => {
                    finished += 1;
                    not_run.push(n);
                }
            }
        }
        (done, not_run)
    });
    results.sort_by_key(|(key, _, _)| *key);
    let mut flat: Vec<(usize, RunResult, bool)> = results
        .into_iter()
        .enumerate()
        .map(|(i, (_, r, hidden))| (i, r, hidden))
        .collect();
    differential(&plan.registry, plan.budget, &mut flat);
    let runs: Vec<RunResult> = flat
        .into_iter()
        .filter(|(_, _, hidden)| !hidden)
        .map(|(_, r, _)| r)
        .collect();
    let mut cells = cells(&plan.variants, &plan.properties, &runs);
    if plan.focused {
        // A mutant is reported by its designated killers only.
        cells.retain(|c| {
            plan.variants
                .iter()
                .find(|v| v.name == c.variant)
                .is_none_or(|v| v.kind != Kind::Mutant || v.killer(c.property, c.backend, None))
        });
    }
    Matrix {
        cells,
        runs,
        not_run,
    }
}

/// What a worker reports.
enum Done {
    /// A search ran: (task, step, attempt), its result, whether it is
    /// hidden, whether it is the step's last search.
    Ran((usize, usize, usize), Box<RunResult>, bool, bool),
    /// A search was left out.
    Skipped(NotRun),
}

/// Run one task's steps in order, as its dependencies allow.
fn run_task(
    i: usize,
    task: &Task,
    executor: &Executor,
    registry: &[Variant],
    tx: &mpsc::Sender<Done>,
) {
    let mut fired: Vec<Property> = Vec::new();
    let mut settled: Option<String> = None;
    for (k, step) in task.steps.iter().enumerate() {
        let skip = match &task.then {
            Then::All => None,
            Then::UnlessDfsSettles if k > 0 => settled.clone(),
            Then::UnlessDfsSettles => None,
            Then::UntilKilled(designated) => designated
                .iter()
                .all(|p| fired.contains(p))
                .then(|| format!("its designated killers fired: {}", names(&fired))),
        };
        if let Some(why) = skip {
            let n = NotRun {
                variant: step.spec.variant.clone(),
                entry: step.spec.entry.clone(),
                backend: step.spec.backend.id(),
                why,
            };
            if tx.send(Done::Skipped(n)).is_err() {
                return;
            }
            continue;
        }
        let mut spec = step.spec.clone();
        let mut attempt = 0;
        let r = loop {
            if let Then::UntilKilled(_) = task.then {
                spec.arm.retain(|p| !fired.contains(p));
            }
            let r = executor.run(&spec, &step.variant, registry);
            let Then::UntilKilled(designated) = &task.then else {
                break r;
            };
            let newly: Vec<Property> = designated
                .iter()
                .copied()
                .filter(|p| !fired.contains(p))
                .filter(|p| {
                    r.verdict(*p)
                        .is_some_and(|v| v.verdict == Verdict::Violated)
                })
                .collect();
            fired.extend(newly.iter().copied());
            // A search stopped by one armed property says nothing of the
            // others armed with it: search this entry again for those (the
            // fired one is still checked, no longer armed). Both searches
            // are reported.
            let stopped = !newly.is_empty() && !r.finished;
            if !stopped || spec.arm.iter().all(|p| fired.contains(p)) {
                break r;
            }
            attempt += 1;
            if tx
                .send(Done::Ran((i, k, attempt), Box::new(r), step.hidden, false))
                .is_err()
            {
                return;
            }
        };
        if let (Then::UnlessDfsSettles, 0, true) = (&task.then, k, r.exhaustive) {
            settled = Some(format!(
                "settled by the exhaustive DFS of this entry ({} schedules)",
                r.executions
            ));
        }
        if tx
            .send(Done::Ran(
                (i, k, attempt + 1),
                Box::new(r),
                step.hidden,
                true,
            ))
            .is_err()
        {
            return;
        }
    }
}

fn names(ps: &[Property]) -> String {
    ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}
