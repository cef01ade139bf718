//! Finding and replaying single executions: the first failing execution of
//! a search with the schedule (shuttle) or checkpoint (loom) that leads to
//! it, and running exactly that execution again. Searches themselves are in
//! [`super::run`].

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::explore::dfs;
use crate::explore::platform::{self, Loom};
use crate::explore::run::{
    classify, loom_builder, shuttle_run, shuttle_scheduler, Backend, Counter, Exploration, Outcome,
    Scenario, Shard,
};
use crate::explore::sched::{Guided, Recording, ShuttleSchedule};

/// Run `f` with this process's standard error sent to /dev/null.
///
/// shuttle prints "test panicked in task ..." for every failing execution,
/// unconditionally; the searches for counterexamples run many, and report
/// them through [`Exploration`] instead. NOTE: affects every thread.
pub fn silenced<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: plain POSIX calls on fd 2 and a fresh descriptor; the saved
    // descriptor is restored and closed before returning, also on panic.
    struct Restore(i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            if self.0 >= 0 {
                unsafe {
                    libc::dup2(self.0, 2);
                    libc::close(self.0);
                }
            }
        }
    }
    let saved = unsafe { libc::dup(2) };
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null");
    if let (true, Ok(null)) = (saved >= 0, &null) {
        use std::os::fd::AsRawFd;
        unsafe { libc::dup2(null.as_raw_fd(), 2) };
    }
    let _restore = Restore(saved);
    f()
}

/// Explore under shuttle (`backend` must be a random or PCT backend) and,
/// if an execution fails, also return its schedule.
pub fn shuttle_find<S: Scenario>(
    backend: &Backend,
    budget: Duration,
    scenario: Arc<S>,
) -> (Exploration, Option<ShuttleSchedule>) {
    let inner = shuttle_scheduler(backend, Shard::default());
    let current = Arc::new(Mutex::new(ShuttleSchedule {
        seed: 0,
        steps: Vec::new(),
    }));
    let sched = Recording {
        inner,
        current: current.clone(),
    };
    let exploration = silenced(|| {
        run_catching(backend, budget, move |counter| {
            shuttle_run(sched, budget, counter, scenario)
        })
    });
    let schedule = matches!(exploration.outcome, Outcome::Failed(_))
        .then(|| current.lock().unwrap_or_else(|e| e.into_inner()).clone());
    (exploration, schedule)
}

/// Run one execution along `schedule` under shuttle (see [`Guided`]) and
/// return it with the schedule actually followed.
pub fn shuttle_replay<S: Scenario>(
    schedule: &ShuttleSchedule,
    scenario: Arc<S>,
) -> (Exploration, ShuttleSchedule) {
    let actual = Arc::new(Mutex::new(ShuttleSchedule {
        seed: schedule.seed,
        steps: Vec::new(),
    }));
    let sched = Guided {
        schedule: schedule.clone(),
        pos: 0,
        started: false,
        actual: actual.clone(),
    };
    let budget = Duration::from_secs(60);
    let e = silenced(|| {
        run_catching(
            &Backend::ShuttleRandom {
                iterations: 1,
                seed: schedule.seed,
            },
            budget,
            move |counter| shuttle_run(sched, budget, counter, scenario),
        )
    });
    let followed = actual.lock().unwrap_or_else(|e| e.into_inner()).clone();
    (e, followed)
}

/// Explore under loom at `bound` preemptions, checkpointing every
/// execution; if one fails, also return loom's checkpoint of it (JSON).
pub fn loom_find<S: Scenario>(
    bound: Option<usize>,
    budget: Duration,
    scenario: Arc<S>,
) -> (Exploration, Option<String>) {
    let file = temp_file("find");
    let path = file.clone();
    let exploration = run_catching(
        &Backend::Loom {
            preemption_bound: bound,
        },
        budget,
        move |counter| {
            let mut builder = loom_builder(bound);
            builder.checkpoint_file = Some(path);
            builder.checkpoint_interval = 1;
            builder.check(move || {
                counter.tick();
                dfs::new_execution();
                scenario.run::<Loom>();
            });
        },
    );
    let checkpoint = match exploration.outcome {
        Outcome::Failed(_) => std::fs::read_to_string(&file).ok(),
        _ => None,
    };
    let _ = std::fs::remove_file(&file);
    (exploration, checkpoint)
}

/// Run the one loom execution that `checkpoint` (from [`loom_find`]) leads to.
pub fn loom_replay<S: Scenario>(
    checkpoint: &str,
    bound: Option<usize>,
    scenario: Arc<S>,
) -> Exploration {
    let file = temp_file("replay");
    if let Err(e) = std::fs::write(&file, checkpoint) {
        return Exploration {
            outcome: Outcome::CutShort(format!("cannot write {}: {e}", file.display())),
            executions: 0,
            elapsed: Duration::ZERO,
            pruned: 0,
            states: 0,
            revisits: 0,
        };
    }
    let path = file.clone();
    let exploration = run_catching(
        &Backend::Loom {
            preemption_bound: bound,
        },
        Duration::from_secs(60),
        move |counter| {
            let mut builder = loom_builder(bound);
            builder.checkpoint_file = Some(path);
            builder.checkpoint_interval = 1;
            // The limit is checked before each execution: 2 runs exactly one.
            builder.max_permutations = Some(2);
            builder.check(move || {
                counter.tick();
                dfs::new_execution();
                scenario.run::<Loom>();
            });
        },
    );
    let _ = std::fs::remove_file(&file);
    exploration
}

fn temp_file(what: &str) -> std::path::PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "flushcheck-{}-{}-{what}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Run `f` catching its panic, and classify the outcome like [`explore`].
fn run_catching(
    backend: &Backend,
    budget: Duration,
    f: impl FnOnce(Counter) + Send,
) -> Exploration {
    let start = Instant::now();
    let (counter, count) = Counter::new(start + budget);
    platform::clear_last_cell();
    let result = panic::catch_unwind(AssertUnwindSafe(move || f(counter)));
    classify(
        backend,
        Shard::default(),
        budget,
        start,
        count.load(Ordering::Relaxed),
        result,
    )
}
