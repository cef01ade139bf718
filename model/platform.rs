//! The only module that names loom, shuttle and std's concurrency primitives.
//!
//! The model is written once against the [`Platform`] trait. Three zero-sized
//! types implement it, and [`explore`] picks one at run time from a
//! [`Backend`] value, so a single `flushcheck` binary can run the same
//! scenario under all three and compare the verdicts side by side.
//!
//! | backend | what it explores | what it can decide |
//! |---|---|---|
//! | [`Backend::Loom`] | every execution (DPOR) within an optional preemption bound, C11 weak memory minus load buffering | ordering bugs, data races on [`ModelCell`]s, interleavings |
//! | [`Backend::ShuttleRandom`], [`Backend::ShuttlePct`] | sampled schedules; every atomic is SeqCst | interleaving bugs only |
//! | [`Backend::Std`] | real OS threads on the host CPU | smoke test on hardware; no coverage guarantee |
//!
//! Ghost bookkeeping ([`ghost`]) uses std atomics on every backend. Under
//! loom and shuttle these are invisible to the checker: a thread switch
//! happens only at a model operation, so ghost code placed right after a
//! model operation runs in the same atomic step as that operation.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An `i64` atomic of the chosen backend.
///
/// Every kernel integer that is shared between CPUs (`atomic_t`, `long`
/// read with `READ_ONCE`) is modelled with this one type.
pub trait ModelAtomic: Send + Sync + 'static {
    /// A new atomic holding `v`.
    fn new(v: i64) -> Self;
    /// Atomic load.
    fn load(&self, order: Ordering) -> i64;
    /// Atomic store.
    fn store(&self, v: i64, order: Ordering);
    /// Atomic add, returning the previous value.
    fn fetch_add(&self, v: i64, order: Ordering) -> i64;
    /// Atomic exchange, returning the previous value.
    fn swap(&self, v: i64, order: Ordering) -> i64;
    /// Strong compare-and-exchange.
    fn compare_exchange(
        &self,
        current: i64,
        new: i64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<i64, i64>;
}

/// A cell for plain (non-atomic) data that a lock protects.
///
/// Under loom this is `loom::cell::UnsafeCell`, whose accesses are checked
/// for causality: two accesses not ordered by happens-before are reported
/// as a data race. Under shuttle and std it is a plain `UnsafeCell`.
pub trait ModelCell<T>: Send + Sync + 'static {
    /// A new cell holding `v`.
    fn new(v: T) -> Self;
    /// Read the value.
    ///
    /// # Safety
    /// The caller must hold whatever lock protects the cell.
    unsafe fn get(&self) -> T
    where
        T: Copy;
    /// Overwrite the value.
    ///
    /// # Safety
    /// The caller must hold whatever lock protects the cell.
    unsafe fn set(&self, v: T);
}

/// A handle on a spawned model thread.
pub trait ModelJoinHandle<T> {
    /// Wait for the thread and return its result, re-raising its panic.
    fn join(self) -> T;
}

/// One way of running the model: loom, shuttle or std threads.
pub trait Platform: Sized + Send + Sync + 'static {
    /// The backend this platform stands for.
    const BACKEND_KIND: BackendKind;
    /// The atomic integer type.
    type Atomic: ModelAtomic;
    /// The lock-protected plain cell type.
    type Cell<T: Send + 'static>: ModelCell<T>;
    /// A join handle.
    type JoinHandle<T: Send + 'static>: ModelJoinHandle<T>;

    /// Spawn a model thread.
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T>;
    /// A memory fence.
    fn fence(order: Ordering);
    /// Tell the scheduler another thread should run (spin loops need this).
    fn yield_now();
}

/// Which family a backend belongs to; decides how ghost code is kept atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// loom: one OS thread, switches only at model operations, weak memory.
    Loom,
    /// shuttle: one OS thread, switches only at model operations, SeqCst.
    Shuttle,
    /// Real threads: truly parallel, so ghost steps need a lock.
    Std,
}

macro_rules! model_atomic {
    ($ty:ty) => {
        impl ModelAtomic for $ty {
            fn new(v: i64) -> Self {
                <$ty>::new(v)
            }
            fn load(&self, order: Ordering) -> i64 {
                <$ty>::load(self, order)
            }
            fn store(&self, v: i64, order: Ordering) {
                <$ty>::store(self, v, order)
            }
            fn fetch_add(&self, v: i64, order: Ordering) -> i64 {
                <$ty>::fetch_add(self, v, order)
            }
            fn swap(&self, v: i64, order: Ordering) -> i64 {
                <$ty>::swap(self, v, order)
            }
            fn compare_exchange(
                &self,
                current: i64,
                new: i64,
                success: Ordering,
                failure: Ordering,
            ) -> Result<i64, i64> {
                <$ty>::compare_exchange(self, current, new, success, failure)
            }
        }
    };
}

model_atomic!(loom::sync::atomic::AtomicI64);
model_atomic!(std::sync::atomic::AtomicI64);

/// shuttle's atomic, announcing each operation's footprint to the DFS
/// scheduler ([`Backend::ShuttleDfs`]) before its scheduling point.
pub struct ShuttleAtomic(shuttle::sync::atomic::AtomicI64, usize);

impl ShuttleAtomic {
    fn op<R>(&self, write: bool, f: impl FnOnce(&shuttle::sync::atomic::AtomicI64) -> R) -> R {
        por::around(self.1, write, || f(&self.0))
    }
}

impl ModelAtomic for ShuttleAtomic {
    fn new(v: i64) -> Self {
        ShuttleAtomic(shuttle::sync::atomic::AtomicI64::new(v), por::next_id())
    }
    fn load(&self, order: Ordering) -> i64 {
        self.op(false, |a| a.load(order))
    }
    fn store(&self, v: i64, order: Ordering) {
        self.op(true, |a| a.store(v, order))
    }
    fn fetch_add(&self, v: i64, order: Ordering) -> i64 {
        self.op(true, |a| a.fetch_add(v, order))
    }
    fn swap(&self, v: i64, order: Ordering) -> i64 {
        self.op(true, |a| a.swap(v, order))
    }
    fn compare_exchange(
        &self,
        current: i64,
        new: i64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<i64, i64> {
        self.op(true, |a| a.compare_exchange(current, new, success, failure))
    }
}

/// Partial-order reduction for the DFS: each shuttle task's pending
/// operation, so that the scheduler can put independent choices to sleep
/// (Godefroid's sleep sets).
///
/// A step is the pending model operation plus the thread-local code after
/// it up to the next scheduling point. Two steps are independent when their
/// operations touch different atomics, or only read the same one. Lock-
/// protected and CPU-local cells never conflict, and ghost bookkeeping is
/// tied to the operation it shadows; the exception is a step that *reads*
/// ghost state all threads write (a reader's flush decision and its read of
/// the statistic, where staleness is measured), which [`observing`] marks
/// as dependent on everything. So every measured maximum and every property
/// check sees each distinct outcome; coverage counts see fewer executions.
mod por {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;

    /// What a task will do at its next scheduling point.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Fp {
        /// A task's first step, before it has run at all: up to its first
        /// atomic operation it runs only thread-local code.
        Start,
        /// Not an atomic operation (spawn, join, yield, finish).
        Unknown,
        /// A step that reads ghost state: dependent on everything.
        Observe,
        /// A load (`write == false`) or a store/RMW of atomic number `addr`
        /// (creation order, the same in every execution);
        /// `ghost` when the step also changes measured ghost state.
        Access {
            addr: usize,
            write: bool,
            ghost: bool,
        },
    }

    thread_local! {
        static ACTIVE: Cell<bool> = const { Cell::new(false) };
        static OBSERVING: Cell<bool> = const { Cell::new(false) };
        static GHOST: Cell<Option<bool>> = const { Cell::new(None) };
        static NEXT_ID: Cell<usize> = const { Cell::new(0) };
        static PENDING: RefCell<HashMap<usize, Fp>> = RefCell::new(HashMap::new());
        static STARTED: RefCell<std::collections::HashSet<usize>> = RefCell::new(Default::default());
    }

    /// Whether two steps may not be swapped.
    pub fn dependent(a: Fp, b: Fp) -> bool {
        match (a, b) {
            (Fp::Start, _) | (_, Fp::Start) => false,
            (
                Fp::Access {
                    addr: x, write: v, ..
                },
                Fp::Access {
                    addr: y, write: w, ..
                },
            ) => x == y && (v || w),
            (Fp::Observe, Fp::Access { ghost, .. }) | (Fp::Access { ghost, .. }, Fp::Observe) => {
                ghost
            }
            _ => true,
        }
    }

    /// Run the atomic operation `f` on the atomic at `addr`, announcing it.
    pub fn around<R>(addr: usize, write: bool, f: impl FnOnce() -> R) -> R {
        if !ACTIVE.with(Cell::get) {
            return f();
        }
        let me = usize::from(shuttle::current::me());
        // Every task runs on this OS thread: take the marks before the
        // scheduling point inside `f`, so other tasks do not inherit them.
        let observing = OBSERVING.with(|o| o.replace(false));
        let ghost = GHOST.with(|g| g.replace(None));
        let fp = if observing {
            Fp::Observe
        } else {
            Fp::Access {
                addr,
                write,
                ghost: ghost.unwrap_or(write),
            }
        };
        PENDING.with(|p| p.borrow_mut().insert(me, fp));
        STARTED.with(|s| s.borrow_mut().insert(me));
        let r = f();
        PENDING.with(|p| p.borrow_mut().remove(&me));
        OBSERVING.with(|o| o.set(observing));
        GHOST.with(|g| g.set(ghost));
        r
    }

    /// A number for a new atomic: its place in creation order, which the
    /// deterministic scenario repeats in every execution (addresses differ).
    pub fn next_id() -> usize {
        NEXT_ID.with(|n| n.replace(n.get() + 1))
    }

    /// The pending footprint of task `tid`.
    pub fn pending(tid: usize) -> Fp {
        let started = STARTED.with(|s| s.borrow().contains(&tid));
        PENDING
            .with(|p| p.borrow().get(&tid).copied())
            .unwrap_or(if started { Fp::Unknown } else { Fp::Start })
    }

    /// Mark task `tid` as having run (the main task starts running).
    pub fn started(tid: usize) {
        STARTED.with(|s| s.borrow_mut().insert(tid));
    }

    /// Turn recording on or off for this OS thread (shuttle runs every task
    /// of an execution on the thread that runs the exploration).
    pub fn activate(on: bool) {
        ACTIVE.with(|a| a.set(on));
        NEXT_ID.with(|n| n.set(0));
        PENDING.with(|p| p.borrow_mut().clear());
        STARTED.with(|s| s.borrow_mut().clear());
    }

    /// Mark the operations `f` performs as observing.
    pub fn observing<R>(f: impl FnOnce() -> R) -> R {
        let was = OBSERVING.with(|o| o.replace(true));
        let r = f();
        OBSERVING.with(|o| o.set(was));
        r
    }

    /// Say whether the steps of the operations in `f` change measured ghost
    /// state (by default writes do and reads do not).
    pub fn ghost<R>(changes: bool, f: impl FnOnce() -> R) -> R {
        let was = GHOST.with(|o| o.replace(Some(changes)));
        let r = f();
        GHOST.with(|o| o.set(was));
        r
    }
}

/// Mark the model operation in `f` as one whose step reads the ghost state
/// that staleness is measured from (a reader's flush decision, its read of
/// the statistic): the exhaustive search never reorders it with a step that
/// changes that state. Has no effect on the other backends.
pub fn observing<R>(f: impl FnOnce() -> R) -> R {
    por::observing(f)
}

/// Declare whether the step of the model operation in `f` changes measured
/// ghost state, where the default (writes do, reads do not) is wrong: a
/// v6.0 skip is a read that records skipped pages; lock operations are
/// writes that record nothing measured. Has no effect on other backends.
pub fn ghost_step<R>(changes: bool, f: impl FnOnce() -> R) -> R {
    por::ghost(changes, f)
}

/// loom's causality-checked cell.
pub struct LoomCell<T>(loom::cell::UnsafeCell<T>);

// SAFETY: loom checks every access for races; the model only touches the
// cell with the protecting lock held.
unsafe impl<T: Send> Sync for LoomCell<T> {}

impl<T: Send + 'static> ModelCell<T> for LoomCell<T> {
    fn new(v: T) -> Self {
        LoomCell(loom::cell::UnsafeCell::new(v))
    }
    unsafe fn get(&self) -> T
    where
        T: Copy,
    {
        self.0.with(|p| unsafe { *p })
    }
    unsafe fn set(&self, v: T) {
        self.0.with_mut(|p| unsafe { *p = v })
    }
}

/// A plain cell for shuttle and std, which have no race detector.
pub struct PlainCell<T>(std::cell::UnsafeCell<T>);

// SAFETY: callers of `get`/`set` promise to hold the protecting lock.
unsafe impl<T: Send> Sync for PlainCell<T> {}

impl<T: Send + 'static> ModelCell<T> for PlainCell<T> {
    fn new(v: T) -> Self {
        PlainCell(std::cell::UnsafeCell::new(v))
    }
    unsafe fn get(&self) -> T
    where
        T: Copy,
    {
        unsafe { *self.0.get() }
    }
    unsafe fn set(&self, v: T) {
        unsafe { *self.0.get() = v }
    }
}

impl<T> ModelJoinHandle<T> for loom::thread::JoinHandle<T> {
    fn join(self) -> T {
        loom::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

impl<T> ModelJoinHandle<T> for shuttle::thread::JoinHandle<T> {
    fn join(self) -> T {
        shuttle::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

impl<T> ModelJoinHandle<T> for std::thread::JoinHandle<T> {
    fn join(self) -> T {
        std::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

/// The loom platform.
#[derive(Debug)]
pub struct Loom;
/// The shuttle platform (random or PCT scheduler).
#[derive(Debug)]
pub struct Shuttle;
/// Real std threads.
#[derive(Debug)]
pub struct Std;

impl Platform for Loom {
    const BACKEND_KIND: BackendKind = BackendKind::Loom;
    type Atomic = loom::sync::atomic::AtomicI64;
    type Cell<T: Send + 'static> = LoomCell<T>;
    type JoinHandle<T: Send + 'static> = loom::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        loom::thread::spawn(f)
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
    fn yield_now() {
        loom::thread::yield_now()
    }
}

impl Platform for Shuttle {
    const BACKEND_KIND: BackendKind = BackendKind::Shuttle;
    type Atomic = ShuttleAtomic;
    type Cell<T: Send + 'static> = PlainCell<T>;
    type JoinHandle<T: Send + 'static> = shuttle::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        shuttle::thread::spawn(f)
    }
    fn fence(order: Ordering) {
        shuttle::sync::atomic::fence(order)
    }
    fn yield_now() {
        shuttle::thread::yield_now()
    }
}

impl Platform for Std {
    const BACKEND_KIND: BackendKind = BackendKind::Std;
    type Atomic = std::sync::atomic::AtomicI64;
    type Cell<T: Send + 'static> = PlainCell<T>;
    type JoinHandle<T: Send + 'static> = std::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        std::thread::spawn(f)
    }
    fn fence(order: Ordering) {
        std::sync::atomic::fence(order)
    }
    fn yield_now() {
        std::thread::yield_now()
    }
}

/// Bookkeeping that is not part of the modelled kernel: ghost state,
/// coverage counters and observation sets.
///
/// These are std types on every backend. loom and shuttle do not see them,
/// so they add no branch points and no scheduling points.
pub mod ghost {
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
    pub use std::sync::{Arc, Mutex, MutexGuard};
}

/// A start line for the threads of one execution.
///
/// On real threads every participant waits here so that they actually race
/// (otherwise the first spawned thread often finishes before the last one
/// starts). Under loom and shuttle it does nothing: their schedulers already
/// choose every start order, and a barrier would only add steps.
#[derive(Debug)]
pub struct StartGate(Option<std::sync::Barrier>);

impl StartGate {
    /// A gate for `n` participants on platform `P`.
    pub fn new<P: Platform>(n: usize) -> Self {
        StartGate((P::BACKEND_KIND == BackendKind::Std).then(|| std::sync::Barrier::new(n)))
    }

    /// Wait until all participants have arrived (std only).
    pub fn wait(&self) {
        if let Some(b) = &self.0 {
            b.wait();
        }
    }
}

/// The most threads a loom execution may use, the main thread included.
pub const MAX_LOOM_THREADS: usize = loom::MAX_THREADS;

/// Where a backend's knobs are set for one exploration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// loom: exhaustive DPOR, optionally preemption-bounded.
    Loom {
        /// `None` explores every interleaving.
        preemption_bound: Option<usize>,
    },
    /// shuttle with its uniformly random scheduler.
    ShuttleRandom {
        /// Number of schedules to run.
        iterations: usize,
        /// Seed of the scheduler's PRNG.
        seed: u64,
    },
    /// shuttle with PCT (probabilistic concurrency testing).
    ShuttlePct {
        /// Number of schedules to run.
        iterations: usize,
        /// Bug depth PCT targets.
        depth: usize,
        /// Seed of the scheduler's PRNG.
        seed: u64,
    },
    /// shuttle with flushcheck's depth-first scheduler: every sequentially
    /// consistent interleaving, up to `max_schedules` (exhaustive when it
    /// finishes below the cap).
    ShuttleDfs {
        /// Cap on schedules; reaching it makes the search inconclusive.
        max_schedules: usize,
    },
    /// Real threads, repeated.
    Std {
        /// Number of repetitions.
        iterations: usize,
    },
}

impl Backend {
    /// Short name used in tables and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Loom { .. } => "loom",
            Backend::ShuttleRandom { .. } => "shuttle-random",
            Backend::ShuttlePct { .. } => "shuttle-pct",
            Backend::ShuttleDfs { .. } => "shuttle-dfs",
            Backend::Std { .. } => "std",
        }
    }

    /// Whether a finished search covers every execution of the scenario.
    pub fn exhaustive(&self) -> bool {
        matches!(
            self,
            Backend::Loom {
                preemption_bound: None
            } | Backend::ShuttleDfs { .. }
        )
    }

    /// One-line description of the planned search.
    pub fn search(&self) -> String {
        match self {
            Backend::Loom {
                preemption_bound: None,
            } => "loom DPOR, unbounded (exhaustive)".into(),
            Backend::Loom {
                preemption_bound: Some(b),
            } => format!("loom DPOR, preemption bound {b} (exhaustive within the bound)"),
            Backend::ShuttleRandom { iterations, seed } => {
                format!("shuttle random, {iterations} schedules, seed {seed} (sampled)")
            }
            Backend::ShuttlePct {
                iterations,
                depth,
                seed,
            } => {
                format!("shuttle PCT depth {depth}, {iterations} schedules, seed {seed} (sampled)")
            }
            Backend::ShuttleDfs { max_schedules } => format!(
                "shuttle DFS, every SC interleaving, cap {max_schedules} schedules (exhaustive)"
            ),
            Backend::Std { iterations } => format!("std threads, {iterations} runs (sampled)"),
        }
    }

    /// The most threads one execution may use, the main thread included.
    pub fn max_threads(&self) -> usize {
        match self {
            Backend::Loom { .. } => MAX_LOOM_THREADS,
            _ => usize::MAX,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Something that can run one execution on any platform.
pub trait Scenario: Send + Sync + 'static {
    /// Run one execution. Violations panic.
    fn run<P: Platform>(&self);
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

/// A 64-bit mix (splitmix64) of a seed and a schedule number.
fn mix(seed: u64, j: u64) -> u64 {
    let mut z = seed ^ j.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniformly random scheduler (the policy of shuttle's `RandomScheduler`)
/// re-seeded for every schedule: schedule `j` of a search with seed `s`
/// draws from `mix(s, j)`. A search split into shards (schedule `j` runs in
/// shard `j mod N`) therefore runs exactly the schedules of the unsplit
/// search. (shuttle's own `RandomScheduler` cannot be re-seeded this way:
/// dropping one mid-search prints its seed as a failure, and
/// `SHUTTLE_RANDOM_SEED` would override every seed.)
struct PerSchedule {
    seed: u64,
    next: u64,
    step: u64,
    end: u64,
    rng: u64,
}

impl PerSchedule {
    fn draw(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.rng, 0)
    }
}

impl shuttle::scheduler::Scheduler for PerSchedule {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        if self.next >= self.end {
            return None;
        }
        let seed = mix(self.seed, self.next);
        self.next += self.step;
        self.rng = seed;
        Some(shuttle::scheduler::Schedule::new(seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        _current: Option<shuttle::scheduler::TaskId>,
        _is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let i = (self.draw() % runnable.len() as u64) as usize;
        Some(runnable.get(i)?.id())
    }

    fn next_u64(&mut self) -> u64 {
        self.draw()
    }
}

/// A depth-first enumeration of every schedule, for the exhaustive
/// sequentially consistent search ([`Backend::ShuttleDfs`]).
///
/// Unlike shuttle's `DfsScheduler` it does not reschedule a thread that has
/// just yielded while another thread can run: a `spin_lock()` loop would
/// otherwise make the schedule tree infinite. Skipping those choices loses
/// no behaviour, because a spinning thread that is rescheduled at once
/// re-reads the same state.
struct Dfs {
    levels: Vec<Level>,
    depth: usize,
    started: u64,
    cap: u64,
    /// Set once every schedule has been run.
    exhausted: Arc<ghost::AtomicBool>,
}

/// One decision of the DFS: the tasks to try (with their pending steps),
/// which one is being tried, and the tasks asleep on arrival.
struct Level {
    choices: Vec<(usize, por::Fp)>,
    idx: usize,
    sleep: Vec<(usize, por::Fp)>,
}

impl Level {
    /// The sleep set below the current choice: what was asleep here or tried
    /// before, if independent of the step taken.
    fn child_sleep(&self) -> Vec<(usize, por::Fp)> {
        let (t, fp) = self.choices[self.idx];
        self.sleep
            .iter()
            .chain(&self.choices[..self.idx])
            .filter(|(u, ufp)| *u != t && !por::dependent(*ufp, fp))
            .copied()
            .collect()
    }
}

impl shuttle::scheduler::Scheduler for Dfs {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        por::activate(true);
        if self.started > 0 {
            self.levels.truncate(self.depth);
            while let Some(l) = self.levels.last_mut() {
                if l.idx + 1 < l.choices.len() {
                    l.idx += 1;
                    break;
                }
                self.levels.pop();
            }
            if self.levels.is_empty() {
                self.exhausted.store(true, Ordering::Relaxed);
                return None;
            }
        }
        if self.started == self.cap {
            return None;
        }
        self.started += 1;
        self.depth = 0;
        Some(shuttle::scheduler::Schedule::new(0))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        if let Some(c) = current {
            por::started(usize::from(c));
        }
        if self.depth < self.levels.len() {
            let l = &self.levels[self.depth];
            self.depth += 1;
            return Some(l.choices[l.idx].0.into());
        }
        let sleep = match self.depth {
            0 => Vec::new(),
            d => self.levels[d - 1].child_sleep(),
        };
        let choices: Vec<(usize, por::Fp)> = runnable
            .iter()
            .map(|t| t.id())
            .filter(|id| !(is_yielding && runnable.len() > 1 && Some(*id) == current))
            .map(usize::from)
            .filter(|id| !sleep.iter().any(|(s, _)| s == id))
            .map(|id| (id, por::pending(id)))
            .collect();
        // Every runnable task asleep: this schedule only reorders
        // independent steps of one already explored, so stop it.
        let first = choices.first()?.0;
        self.levels.push(Level {
            choices,
            idx: 0,
            sleep,
        });
        self.depth += 1;
        Some(first.into())
    }

    fn next_u64(&mut self) -> u64 {
        0
    }
}

/// The shuttle scheduler for `backend` (a shuttle backend) and `shard`.
fn shuttle_scheduler(
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
        _ => panic!("not a shuttle backend: {backend}"),
    }
}

/// Run `scenario` under `backend` until the planned search ends, an execution
/// fails, or `budget` runs out (reported as [`Outcome::CutShort`]).
pub fn explore<S: Scenario>(backend: &Backend, budget: Duration, scenario: Arc<S>) -> Exploration {
    explore_shard(backend, Shard::default(), budget, scenario)
}

/// [`explore`] for one shard of a shuttle search (loom and std ignore it).
pub fn explore_shard<S: Scenario>(
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    scenario: Arc<S>,
) -> Exploration {
    let start = Instant::now();
    let count = Arc::new(ghost::AtomicU64::new(0));
    let counter = count.clone();
    let deadline = start + budget;
    let backend_c = backend.clone();
    let exhausted = Arc::new(ghost::AtomicBool::new(false));
    let exhausted_c = exhausted.clone();
    let result = panic::catch_unwind(AssertUnwindSafe(move || match backend_c {
        Backend::Loom { preemption_bound } => {
            let builder = loom_builder(preemption_bound);
            builder.check(move || {
                if counter.fetch_add(1, Ordering::Relaxed).is_multiple_of(64)
                    && Instant::now() > deadline
                {
                    panic!("{BUDGET_PANIC}");
                }
                scenario.run::<Loom>();
            });
        }
        b @ (Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }) => {
            shuttle_run(shuttle_scheduler(&b, shard), budget, counter, scenario);
        }
        Backend::ShuttleDfs { max_schedules } => {
            let dfs = Dfs {
                levels: Vec::new(),
                depth: 0,
                started: 0,
                cap: max_schedules as u64,
                exhausted: exhausted_c,
            };
            shuttle_run(dfs, budget, counter, scenario);
            por::activate(false);
        }
        Backend::Std { iterations } => {
            for _ in 0..iterations {
                if Instant::now() > deadline {
                    panic!("{BUDGET_PANIC}");
                }
                counter.fetch_add(1, Ordering::Relaxed);
                scenario.run::<Std>();
            }
        }
    }));
    let mut e = classify(
        backend,
        shard,
        budget,
        start,
        count.load(Ordering::Relaxed),
        result,
    );
    if let Backend::ShuttleDfs { max_schedules } = backend {
        if e.outcome == Outcome::Finished && !exhausted.load(Ordering::Relaxed) {
            e.outcome = Outcome::CutShort(format!(
                "the DFS stopped after {} schedules (cap {max_schedules}, budget {:.0} s) before covering every interleaving",
                e.executions,
                budget.as_secs_f64()
            ));
        }
    }
    e
}

/// Turn a caught run into an [`Exploration`].
fn classify(
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
            } else {
                Outcome::Failed(msg)
            }
        }
    };
    Exploration {
        outcome,
        executions,
        elapsed: start.elapsed(),
    }
}

fn shuttle_run<S: Scenario>(
    sched: impl shuttle::scheduler::Scheduler + 'static,
    budget: Duration,
    counter: Arc<ghost::AtomicU64>,
    scenario: Arc<S>,
) {
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.max_time = Some(budget);
    config.silence_warnings = true;
    let runner = shuttle::Runner::new(sched, config);
    runner.run(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        scenario.run::<Shuttle>();
    });
}

/// The text of a panic payload.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "<non-string panic payload>".to_string()
    }
}

/// A loom builder for one planned search.
///
/// `Builder::new()` reads the `LOOM_*` environment variables. The ones that
/// would end a search early without saying so (`LOOM_MAX_PERMUTATIONS`,
/// `LOOM_MAX_DURATION`) or resume it from elsewhere
/// (`LOOM_CHECKPOINT_FILE`) are cleared here: flushcheck's own budget and
/// replay tokens do those jobs and report them. `LOOM_LOG` and
/// `LOOM_LOCATION` keep their effect.
fn loom_builder(bound: Option<usize>) -> loom::model::Builder {
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

/// A shuttle schedule that can be written into a replay token: the
/// scheduler's seed and, for each scheduling decision, the task chosen
/// (`None` for a random-number draw).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShuttleSchedule {
    /// Seed of the data source.
    pub seed: u64,
    /// Decisions in order.
    pub steps: Vec<Option<usize>>,
}

impl ShuttleSchedule {
    /// Context switches: decisions that pick a different task than the one
    /// before.
    pub fn switches(&self) -> usize {
        self.steps
            .windows(2)
            .filter(|w| w[0].is_some() && w[1].is_some() && w[0] != w[1])
            .count()
    }
}

/// Wraps a shuttle scheduler and records the schedule of the current
/// execution, so that a failing one can be replayed and shrunk.
struct Recording {
    inner: Box<dyn shuttle::scheduler::Scheduler + Send>,
    current: Arc<ghost::Mutex<ShuttleSchedule>>,
}

impl shuttle::scheduler::Scheduler for Recording {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        let s = self.inner.new_execution()?;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = ShuttleSchedule {
            seed: s.seed,
            steps: Vec::new(),
        };
        Some(s)
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let t = self.inner.next_task(runnable, current, is_yielding)?;
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(Some(usize::from(t)));
        Some(t)
    }

    fn next_u64(&mut self) -> u64 {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(None);
        self.inner.next_u64()
    }
}

/// Explore under shuttle (`backend` must be a shuttle backend) and, if an
/// execution fails, also return its schedule.
pub fn shuttle_find<S: Scenario>(
    backend: &Backend,
    budget: Duration,
    scenario: Arc<S>,
) -> (Exploration, Option<ShuttleSchedule>) {
    let inner = shuttle_scheduler(backend, Shard::default());
    let current = Arc::new(ghost::Mutex::new(ShuttleSchedule {
        seed: 0,
        steps: Vec::new(),
    }));
    let sched = Recording {
        inner,
        current: current.clone(),
    };
    let exploration = run_catching(backend, budget, move |counter| {
        shuttle_run(sched, budget, counter, scenario)
    });
    let schedule = matches!(exploration.outcome, Outcome::Failed(_))
        .then(|| current.lock().unwrap_or_else(|e| e.into_inner()).clone());
    (exploration, schedule)
}

/// Follows a recorded schedule where it can; where the scheduled task is
/// not runnable, or the schedule has run out, it keeps running the current
/// task (or the lowest-numbered runnable one). It records what it actually
/// chose, so a shrunk or truncated schedule yields a complete one.
struct Guided {
    schedule: ShuttleSchedule,
    pos: usize,
    started: bool,
    actual: Arc<ghost::Mutex<ShuttleSchedule>>,
}

impl shuttle::scheduler::Scheduler for Guided {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        if std::mem::replace(&mut self.started, true) {
            return None;
        }
        Some(shuttle::scheduler::Schedule::new(self.schedule.seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let wanted = self.schedule.steps.get(self.pos).copied().flatten();
        self.pos += 1;
        let ids: Vec<usize> = runnable.iter().map(|t| usize::from(t.id())).collect();
        let pick = match wanted {
            Some(t) if ids.contains(&t) => t,
            _ => match current.map(usize::from) {
                Some(c) if ids.contains(&c) && !(is_yielding && ids.len() > 1) => c,
                _ => *ids.iter().min()?,
            },
        };
        self.actual
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(Some(pick));
        Some(pick.into())
    }

    fn next_u64(&mut self) -> u64 {
        // The model draws no shuttle randomness; keep the schedule aligned.
        self.pos += 1;
        self.actual
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(None);
        self.schedule.seed
    }
}

/// Run one execution along `schedule` under shuttle (see `Guided`) and
/// return it with the schedule actually followed.
pub fn shuttle_replay<S: Scenario>(
    schedule: &ShuttleSchedule,
    scenario: Arc<S>,
) -> (Exploration, ShuttleSchedule) {
    let actual = Arc::new(ghost::Mutex::new(ShuttleSchedule {
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
    let e = run_catching(
        &Backend::ShuttleRandom {
            iterations: 1,
            seed: schedule.seed,
        },
        budget,
        move |counter| shuttle_run(sched, budget, counter, scenario),
    );
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
            let deadline = Instant::now() + budget;
            builder.check(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                if Instant::now() > deadline {
                    panic!("{BUDGET_PANIC}");
                }
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
                counter.fetch_add(1, Ordering::Relaxed);
                scenario.run::<Loom>();
            });
        },
    );
    let _ = std::fs::remove_file(&file);
    exploration
}

fn temp_file(what: &str) -> std::path::PathBuf {
    static N: ghost::AtomicU64 = ghost::AtomicU64::new(0);
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
    f: impl FnOnce(Arc<ghost::AtomicU64>) + Send,
) -> Exploration {
    let start = Instant::now();
    let count = Arc::new(ghost::AtomicU64::new(0));
    let counter = count.clone();
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
