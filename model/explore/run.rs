//! Running a scenario under a backend: the planned search, its budget, how
//! it ended; and finding and replaying single failing executions.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use super::backend::Backend;
use crate::explore::dfs::{self, DfsStats};
use crate::explore::platform::{self, Loom, Shuttle, Std};
use crate::explore::sched::{mix, PerSchedule};
use crate::explore::search::{run_dfs, DfsKnobs};
pub use crate::vocab::BackendName;

/// Something that can run one execution on any platform.
pub trait Scenario: Send + Sync + 'static {
    /// Run one execution. Violations panic.
    fn run<P: crate::vocab::Platform>(&self);
}

/// How an exploration ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The planned search finished without a panic.
    Finished,
    /// An execution panicked; the message is the panic payload.
    Failed(String),
    /// The search was cut short; the string says by what.
    CutShort(String),
}

/// The result of one exploration.
#[derive(Clone, Debug)]
pub struct Exploration {
    /// How it ended.
    pub outcome: Outcome,
    /// Executions (schedules, runs) started.
    pub executions: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Schedules the DFS stopped because every runnable thread was asleep.
    pub pruned: u64,
    /// Distinct states the stateful DFS stored (0 for other searches).
    pub states: u64,
    /// Schedules the stateful DFS stopped at a state already explored.
    pub revisits: u64,
}

const BUDGET_PANIC: &str = "flushcheck: time budget exhausted";

/// One part of a search split over machines: shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u64,
    /// How many shards the search is split into.
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// Parse `I/N`; the error is one line.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The schedules of a `total`-schedule search this shard runs.
    pub fn iterations(&self, total: usize) -> usize {
        let (i, n, t) = (self.index as usize, self.count as usize, total);
        t / n + usize::from(i < t % n)
    }
}

/// The shuttle scheduler for `backend` (a random or PCT backend) and
/// `shard`.
pub(super) fn shuttle_scheduler(
    backend: &Backend,
    shard: Shard,
) -> Box<dyn shuttle::scheduler::Scheduler + Send> {
    match *backend {
        Backend::ShuttleRandom { iterations, seed } => Box::new(PerSchedule {
            seed,
            next: shard.index,
            step: shard.count,
            end: iterations as u64,
            rng: 0,
        }),
        // PCT learns the schedule length from its earlier schedules, so it
        // cannot be re-seeded per schedule: shards are independent PCT
        // searches with seeds of their own.
        Backend::ShuttlePct {
            iterations,
            depth,
            seed,
        } => Box::new(shuttle::scheduler::PctScheduler::new_from_seed(
            if shard.count == 1 {
                seed
            } else {
                mix(seed, shard.index)
            },
            depth,
            shard.iterations(iterations),
        )),
        _ => panic!("not a sampling shuttle backend: {backend}"),
    }
}

/// Periodic progress of a long search, on stderr.
#[derive(Clone)]
pub struct Progress {
    label: String,
    every: Duration,
}

impl Progress {
    /// Report every `every` with `label` in front.
    pub fn new(label: impl Into<String>, every: Duration) -> Self {
        Progress {
            label: label.into(),
            every,
        }
    }
}

/// Executions started, shared with a progress reporter (and between the
/// workers of a split search).
#[derive(Clone)]
pub(super) struct Counter {
    count: Arc<AtomicU64>,
    deadline: Instant,
}

/// Run `scenario` under `backend` until the planned search ends, an execution
/// fails, or `budget` runs out (reported as [`Outcome::CutShort`]).
pub fn explore<S: Scenario>(backend: &Backend, budget: Duration, scenario: Arc<S>) -> Exploration {
    explore_shard(backend, Shard::default(), budget, scenario, None)
}

/// [`explore`] for one shard of a shuttle search (loom and std ignore it),
/// optionally reporting progress.
pub fn explore_shard<S: Scenario>(
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    scenario: Arc<S>,
    progress: Option<Progress>,
) -> Exploration {
    let start = Instant::now();
    let (counter, count) = Counter::new(start + budget);
    let stats = Arc::new(DfsStats::default());
    // Dropping `stop` wakes the reporter at once: a sleep-polled flag kept
    // every search waiting up to 100 ms for it (a third of the default
    // run's wall time went to those waits).
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let reporter = progress.map(|p| {
        let (count, stats) = (count.clone(), stats.clone());
        let total = planned(backend, shard);
        std::thread::spawn(move || report_progress(p, start, count, stopped, stats, total))
    });
    platform::clear_last_cell();
    let result = {
        let backend = backend.clone();
        let stats = stats.clone();
        panic::catch_unwind(AssertUnwindSafe(move || match backend {
            Backend::Loom { preemption_bound } => {
                loom_builder(preemption_bound).check(move || {
                    counter.tick();
                    dfs::new_execution();
                    scenario.run::<Loom>();
                });
            }
            b @ (Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }) => {
                shuttle_run(shuttle_scheduler(&b, shard), budget, counter, scenario);
            }
            Backend::ShuttleDfs {
                max_schedules,
                sleep_sets,
                stateful,
                symmetry,
                workers,
            } => {
                let knobs = DfsKnobs {
                    max_schedules,
                    sleep_sets,
                    stateful,
                    symmetry,
                    workers,
                };
                let go = |dfs| shuttle_run(dfs, budget, counter.clone(), scenario.clone());
                if let Err(e) = run_dfs(knobs, (shard.index, shard.count), stats, &go) {
                    panic::resume_unwind(e);
                }
            }
            Backend::Std { iterations } => {
                for _ in 0..iterations {
                    counter.tick();
                    scenario.run::<Std>();
                }
            }
        }))
    };
    drop(stop);
    if let Some(r) = reporter {
        let _ = r.join();
    }
    let mut e = classify(
        backend,
        shard,
        budget,
        start,
        count.load(Ordering::Relaxed),
        result,
    );
    e.pruned = stats.pruned.load(Ordering::Relaxed);
    e.states = stats.states.load(Ordering::Relaxed);
    e.revisits = stats.revisits.load(Ordering::Relaxed);
    if let Backend::ShuttleDfs {
        max_schedules,
        workers,
        ..
    } = backend
    {
        if e.outcome == Outcome::Finished
            && stats.exhausted.load(Ordering::Relaxed) < (*workers).max(1) as u64
        {
            let states = match e.states {
                0 => String::new(),
                n => format!(", {n} states"),
            };
            e.outcome = Outcome::CutShort(format!(
                "the DFS stopped after {} schedules{states} (cap {max_schedules}, budget {:.0} s, depth {}) before covering every interleaving",
                e.executions,
                budget.as_secs_f64(),
                stats.max_depth.load(Ordering::Relaxed)
            ));
        }
    }
    e
}

/// The executions a sampling search plans (for progress lines).
fn planned(backend: &Backend, shard: Shard) -> Option<u64> {
    match backend {
        Backend::ShuttleRandom { iterations, .. } | Backend::ShuttlePct { iterations, .. } => {
            Some(shard.iterations(*iterations) as u64)
        }
        Backend::Std { iterations } => Some(*iterations as u64),
        _ => None,
    }
}

impl Counter {
    /// A counter whose budget ends at `deadline`, and the count it shares.
    pub(super) fn new(deadline: Instant) -> (Counter, Arc<AtomicU64>) {
        let count = Arc::new(AtomicU64::new(0));
        let counter = Counter {
            count: count.clone(),
            deadline,
        };
        (counter, count)
    }

    pub(super) fn tick(&self) {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        if n.is_multiple_of(64) && Instant::now() > self.deadline {
            panic!("{BUDGET_PANIC}");
        }
    }
}

/// One progress line: executions so far (of how many, if planned), the
/// rate, and for the DFS its depth, the schedules pruned by sleep sets and,
/// when stateful, the states stored and the schedules stopped at a state
/// already explored.
pub fn progress_line(
    label: &str,
    secs: f64,
    executions: u64,
    planned: Option<u64>,
    stats: &DfsStats,
) -> String {
    let of = planned.map_or(String::new(), |p| format!(" of {p}"));
    let mut extra = String::new();
    let depth = stats.max_depth.load(Ordering::Relaxed);
    if depth > 0 {
        extra += &format!(", depth {depth}");
    }
    let states = stats.states.load(Ordering::Relaxed);
    if states > 0 {
        extra += &format!(
            ", {states} states ({:.0}/s), {} revisits pruned",
            states as f64 / secs.max(1e-9),
            stats.revisits.load(Ordering::Relaxed)
        );
    }
    let pruned = stats.pruned.load(Ordering::Relaxed);
    if pruned > 0 {
        extra += &format!(", {pruned} asleep pruned");
    }
    format!(
        "{label}: {executions}{of} executions in {secs:.0} s ({:.0}/s{extra})",
        executions as f64 / secs.max(1e-9)
    )
}

fn report_progress(
    p: Progress,
    start: Instant,
    count: Arc<AtomicU64>,
    stopped: std::sync::mpsc::Receiver<()>,
    stats: Arc<DfsStats>,
    planned: Option<u64>,
) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut next = start + p.every;
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(Duration::from_millis(100)) {
        if Instant::now() < next {
            continue;
        }
        next += p.every;
        let n = count.load(Ordering::Relaxed);
        let secs = start.elapsed().as_secs_f64();
        eprintln!("{}", progress_line(&p.label, secs, n, planned, &stats));
    }
}

/// Turn a caught run into an [`Exploration`].
pub(super) fn classify(
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    start: Instant,
    executions: u64,
    result: std::thread::Result<()>,
) -> Exploration {
    let outcome = match result {
        Ok(()) => {
            let planned = match backend {
                Backend::ShuttleRandom { iterations, .. }
                | Backend::ShuttlePct { iterations, .. } => {
                    Some(shard.iterations(*iterations) as u64)
                }
                _ => None,
            };
            match planned {
                Some(p) if executions < p => Outcome::CutShort(format!(
                    "time budget of {:.0} s ran out after {executions} of {p} schedules",
                    budget.as_secs_f64()
                )),
                _ => Outcome::Finished,
            }
        }
        Err(payload) => {
            let msg = panic_message(&payload);
            if msg.contains(BUDGET_PANIC) {
                Outcome::CutShort(format!(
                    "time budget of {:.0} s ran out after {executions} executions",
                    budget.as_secs_f64()
                ))
            } else if msg.contains("Model exceeded maximum number of branches") {
                Outcome::CutShort("loom's branch limit (max_branches) was reached".into())
            } else if msg.contains("Causality violation") {
                let on = platform::last_cell()
                    .map(|v| format!(" on {v}"))
                    .unwrap_or_default();
                Outcome::Failed(format!("data race{on}: {}", first_line(&msg)))
            } else {
                Outcome::Failed(msg)
            }
        }
    };
    Exploration {
        outcome,
        executions,
        elapsed: start.elapsed(),
        pruned: 0,
        states: 0,
        revisits: 0,
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

pub(super) fn shuttle_run<S: Scenario>(
    sched: impl shuttle::scheduler::Scheduler + 'static,
    budget: Duration,
    counter: Counter,
    scenario: Arc<S>,
) {
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.max_time = Some(budget);
    config.silence_warnings = true;
    let runner = shuttle::Runner::new(sched, config);
    runner.run(move || {
        counter.tick();
        dfs::new_execution();
        scenario.run::<Shuttle>();
    });
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

/// The text of a panic payload.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    let text = payload.downcast_ref::<String>().cloned();
    text.or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "<non-string panic payload>".to_string())
}

/// A loom builder for one planned search.
///
/// `Builder::new()` reads the `LOOM_*` environment variables. The ones that
/// would end a search early without saying so (`LOOM_MAX_PERMUTATIONS`,
/// `LOOM_MAX_DURATION`) or resume it from elsewhere
/// (`LOOM_CHECKPOINT_FILE`) are cleared here: flushcheck's own budget and
/// replay tokens do those jobs and report them. `LOOM_LOG` and
/// `LOOM_LOCATION` keep their effect.
pub(super) fn loom_builder(bound: Option<usize>) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    builder.max_branches = 100_000;
    builder.max_permutations = None;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder
}

/// Silence the default panic output of model threads.
///
/// Violations are reported through [`Exploration`], so the backtrace text
/// the default hook prints would only be noise. shuttle installs its own
/// hook once per process on its first run; a one-iteration warm-up run makes
/// that happen first, so ours replaces it.
pub fn quiet_panics() {
    // shuttle's schedulers replace their seed with SHUTTLE_RANDOM_SEED; the
    // seeds flushcheck prints must be the seeds it used, so that is
    // dropped. NOTE: call before any thread is spawned.
    if std::env::var_os("SHUTTLE_RANDOM_SEED").is_some() {
        eprintln!("flushcheck: ignoring SHUTTLE_RANDOM_SEED; use --seed");
        std::env::remove_var("SHUTTLE_RANDOM_SEED");
    }
    let mut config = shuttle::Config::new();
    config.silence_warnings = true;
    shuttle::Runner::new(
        shuttle::scheduler::RandomScheduler::new_from_seed(0, 1),
        config,
    )
    .run(|| {});
    panic::set_hook(Box::new(|_| {}));
}

static QUIET_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    static CALLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While alive, panics on threads other than the callers' (the
/// exploration's and the model's threads) print nothing; a panic on a
/// thread that started a quiet run (a test's own assertion) keeps the hook
/// it had. For a library caller ([`crate::drive::testing`]), where
/// [`quiet_panics`] would also hide the test harness's messages. shuttle
/// still writes a few lines of its own on stderr per failing search.
pub struct QuietRun(());

impl QuietRun {
    /// Start a quiet region (the hook is installed once per process).
    pub fn start() -> QuietRun {
        use std::sync::atomic::Ordering;
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            // shuttle's hook (installed by its first run, here) wraps every
            // panic, the caller's own too, in its failure report; the hook
            // before it is the one a caller's panic keeps.
            let previous = panic::take_hook();
            let mut config = shuttle::Config::new();
            config.silence_warnings = true;
            shuttle::Runner::new(
                shuttle::scheduler::RandomScheduler::new_from_seed(0, 1),
                config,
            )
            .run(|| {});
            drop(panic::take_hook());
            panic::set_hook(Box::new(move |info| {
                let caller = CALLER.with(|c| c.get());
                if caller || QUIET_RUNS.load(Ordering::SeqCst) == 0 {
                    previous(info);
                }
            }));
        });
        CALLER.with(|c| c.set(true));
        QUIET_RUNS.fetch_add(1, Ordering::SeqCst);
        QuietRun(())
    }
}

impl Drop for QuietRun {
    fn drop(&mut self) {
        QUIET_RUNS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
