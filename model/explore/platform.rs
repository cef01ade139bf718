//! The facade over loom, shuttle and std: the only code that names their
//! concurrency primitives.
//!
//! The model is written once against [`Platform`]. Four zero-sized types
//! implement it:
//!
//! | platform | used for | steps | observations |
//! |---|---|---|---|
//! | [`Loom`] | exhaustive C11 search (DPOR) | loom's | to the execution's sink |
//! | [`Shuttle`] | sampled and depth-first SC search | shuttle's, with footprints for the DFS | to the execution's sink |
//! | [`Std`] | real threads, checked | serialised by a step lock | to the execution's sink |
//! | [`Bare`] | the hot-path benchmark | none | compiled out |
//!
//! A *step* is one shared-memory operation plus the thread-local code after
//! it, up to the next operation. loom and shuttle switch threads only at
//! operations, so an observation reported right after an operation is part
//! of that operation's step. [`Std`] gives real threads the same guarantee
//! with a per-execution step lock, taken at each operation and held until
//! the thread's next operation, yield, join or end; so monitors see the
//! same atomic steps on every checked backend. [`Bare`] has no lock and no
//! observations, so the benchmark runs the protocol code alone.

use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::explore::dfs;
use crate::observe::obs::{Actor, Obs, Sink};

/// An `i64` atomic of the chosen backend.
///
/// Every kernel integer shared between CPUs (`atomic_t`, a `long` read with
/// `READ_ONCE`) is modelled with this one type.
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
/// as a data race. Elsewhere it is a plain `UnsafeCell`.
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

/// Which family a backend belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// loom: one OS thread, switches only at operations, weak memory.
    Loom,
    /// shuttle: one OS thread, switches only at operations, SeqCst.
    Shuttle,
    /// Real threads with a step lock.
    Std,
    /// Real threads, nothing added (benchmarks).
    Bare,
}

/// What a model thread is, and where its observations go.
#[derive(Clone)]
pub struct ThreadCtx {
    /// The actor this thread plays.
    pub actor: Actor,
    /// The execution's observation sink, if any.
    pub sink: Option<Arc<dyn Sink>>,
    /// The execution's step lock (std only).
    step: Option<Arc<StepLock>>,
}

impl ThreadCtx {
    /// A context for `actor` reporting to `sink`.
    pub fn new(actor: Actor, sink: Option<Arc<dyn Sink>>) -> Self {
        ThreadCtx {
            actor,
            sink,
            step: None,
        }
    }

    /// The same execution, another actor.
    pub fn for_actor(&self, actor: Actor) -> Self {
        ThreadCtx {
            actor,
            ..self.clone()
        }
    }
}

/// One way of running the model: loom, shuttle, std threads or bare
/// threads.
pub trait Platform: Sized + Send + Sync + 'static {
    /// The backend family.
    const BACKEND_KIND: BackendKind;
    /// The atomic integer type.
    type Atomic: ModelAtomic;
    /// The lock-protected plain cell type.
    type Cell<T: Send + 'static>: ModelCell<T>;
    /// A join handle.
    type JoinHandle<T: Send + 'static>: ModelJoinHandle<T>;

    /// Spawn a model thread running `f` as `ctx`.
    fn spawn<T: Send + 'static>(
        ctx: ThreadCtx,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Self::JoinHandle<T>;
    /// A memory fence.
    fn fence(order: Ordering);
    /// Tell the scheduler another thread should run (spin loops need this).
    fn yield_now();
    /// A plain scheduling switch for a wait the backend cannot see (the
    /// crossbeam-epoch grace period): shuttle's PCT deprioritises a thread
    /// that calls `yield_now`, which hides bugs there (epoch-rcu.md,
    /// section 2), so shuttle switches with a zero sleep instead.
    fn rcu_switch() {
        Self::yield_now()
    }
    /// Make `ctx` the context of the calling model thread (the execution's
    /// main thread calls this first).
    fn install(ctx: ThreadCtx);
    /// Remove the calling thread's context at the end of an execution.
    fn uninstall();
    /// The actor of the calling model thread.
    fn actor() -> Actor;
    /// Make the calling model thread play `actor` from now on (main plays
    /// the last CPU before it joins the others).
    fn set_actor(actor: Actor);
    /// Report an observation of the calling thread (built only if a sink
    /// is installed).
    fn emit(make: impl FnOnce() -> Obs);
    /// Declare that the calling thread holds no live local state beyond
    /// `tag` (a loop counter): what it does from here depends only on `tag`
    /// and shared memory. The stateful search ([`dfs`]) then identifies
    /// every way of reaching this point; elsewhere this does nothing.
    fn checkpoint_locals(_tag: u64) {}
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

/// shuttle's atomic, reporting each access to the depth-first scheduler
/// ([`dfs`]) after shuttle's scheduling point, so that the access is
/// counted in the step it starts: which atomic, the value the operation
/// returned and the value it left.
pub struct ShuttleAtomic(shuttle::sync::atomic::AtomicI64, usize);

impl ShuttleAtomic {
    fn op<R>(
        &self,
        f: impl FnOnce(&shuttle::sync::atomic::AtomicI64) -> R,
        values: impl FnOnce(&R) -> (Option<i64>, Option<i64>),
    ) -> R {
        let r = f(&self.0);
        let (read, written) = values(&r);
        dfs::access(self.1, read, written);
        r
    }
}

impl ModelAtomic for ShuttleAtomic {
    fn new(v: i64) -> Self {
        let id = dfs::next_id();
        dfs::created(id, v);
        ShuttleAtomic(shuttle::sync::atomic::AtomicI64::new(v), id)
    }
    fn load(&self, order: Ordering) -> i64 {
        self.op(|a| a.load(order), |r| (Some(*r), None))
    }
    fn store(&self, v: i64, order: Ordering) {
        self.op(|a| a.store(v, order), |_| (None, Some(v)))
    }
    fn fetch_add(&self, v: i64, order: Ordering) -> i64 {
        self.op(|a| a.fetch_add(v, order), |r| (Some(*r), Some(r + v)))
    }
    fn swap(&self, v: i64, order: Ordering) -> i64 {
        self.op(|a| a.swap(v, order), |r| (Some(*r), Some(v)))
    }
    fn compare_exchange(
        &self,
        current: i64,
        new: i64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<i64, i64> {
        // A failed compare-and-exchange only reads.
        self.op(
            |a| a.compare_exchange(current, new, success, failure),
            |r| match r {
                Ok(old) => (Some(*old), Some(new)),
                Err(found) => (Some(*found), None),
            },
        )
    }
}

/// A std atomic whose every operation starts a step (takes the step lock).
pub struct StdAtomic(std::sync::atomic::AtomicI64);

impl ModelAtomic for StdAtomic {
    fn new(v: i64) -> Self {
        StdAtomic(std::sync::atomic::AtomicI64::new(v))
    }
    fn load(&self, order: Ordering) -> i64 {
        step::begin();
        self.0.load(order)
    }
    fn store(&self, v: i64, order: Ordering) {
        step::begin();
        self.0.store(v, order)
    }
    fn fetch_add(&self, v: i64, order: Ordering) -> i64 {
        step::begin();
        self.0.fetch_add(v, order)
    }
    fn swap(&self, v: i64, order: Ordering) -> i64 {
        step::begin();
        self.0.swap(v, order)
    }
    fn compare_exchange(
        &self,
        current: i64,
        new: i64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<i64, i64> {
        step::begin();
        self.0.compare_exchange(current, new, success, failure)
    }
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

/// shuttle's plain cell: numbered like the atomics, so that the
/// depth-first scheduler counts its accesses in the footprint of the step
/// that makes them, and its value in the state of a stateful search.
pub struct ShuttleCell<T>(std::cell::UnsafeCell<T>, usize);

// SAFETY: callers of `get`/`set` promise to hold the protecting lock.
unsafe impl<T: Send> Sync for ShuttleCell<T> {}

/// The value of a cell as the stateful search records it (`i64` cells
/// only; any other type makes the execution opaque to it).
fn cell_value<T: 'static>(v: &T) -> Option<i64> {
    let x = (v as &dyn std::any::Any).downcast_ref::<i64>().copied();
    if x.is_none() {
        dfs::opaque();
    }
    x
}

impl<T: Send + 'static> ModelCell<T> for ShuttleCell<T> {
    fn new(v: T) -> Self {
        let id = dfs::next_id();
        if let Some(x) = cell_value(&v) {
            dfs::created(id, x);
        }
        ShuttleCell(std::cell::UnsafeCell::new(v), id)
    }
    unsafe fn get(&self) -> T
    where
        T: Copy,
    {
        let v = unsafe { *self.0.get() };
        dfs::access(self.1, cell_value(&v), None);
        v
    }
    unsafe fn set(&self, v: T) {
        dfs::access(self.1, None, Some(cell_value(&v).unwrap_or(0)));
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

/// A std join handle that leaves the step before waiting.
pub struct StdJoin<T>(std::thread::JoinHandle<T>);

impl<T> ModelJoinHandle<T> for StdJoin<T> {
    fn join(self) -> T {
        step::end();
        self.0.join().unwrap_or_else(|e| panic::resume_unwind(e))
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
/// The shuttle platform (random, PCT or depth-first scheduler).
#[derive(Debug)]
pub struct Shuttle;
/// Real std threads, one step at a time.
#[derive(Debug)]
pub struct Std;
/// Real std threads with nothing added: the benchmark platform.
#[derive(Debug)]
pub struct Bare;

loom::thread_local! {
    static LOOM_CTX: RefCell<Option<ThreadCtx>> = RefCell::new(None);
}

shuttle::thread_local! {
    static SHUTTLE_CTX: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
}

thread_local! {
    static STD_CTX: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
    static BARE_ACTOR: Cell<Actor> = const { Cell::new(Actor::Main) };
}

fn no_ctx() -> ! {
    panic!("model: a model thread ran without its context (spawn through Platform::spawn)")
}

macro_rules! ctx_fns {
    ($key:ident) => {
        ctx_fns!($key, |_: &ThreadCtx| {});
    };
    ($key:ident, $on_install:expr) => {
        fn install(ctx: ThreadCtx) {
            ($on_install)(&ctx);
            $key.with(|c| *c.borrow_mut() = Some(ctx));
        }
        fn uninstall() {
            $key.with(|c| *c.borrow_mut() = None);
        }
        fn actor() -> Actor {
            $key.with(|c| c.borrow().as_ref().map(|c| c.actor))
                .unwrap_or_else(|| no_ctx())
        }
        fn set_actor(actor: Actor) {
            $key.with(|c| {
                if let Some(c) = c.borrow_mut().as_mut() {
                    c.actor = actor;
                }
            });
        }
        fn emit(make: impl FnOnce() -> Obs) {
            if dfs::silent() {
                return;
            }
            let target = $key.with(|c| {
                c.borrow()
                    .as_ref()
                    .and_then(|c| c.sink.clone().map(|s| (c.actor, s)))
            });
            if let Some((actor, sink)) = target {
                sink.observe(actor, make());
            }
        }
    };
}

impl Platform for Loom {
    const BACKEND_KIND: BackendKind = BackendKind::Loom;
    type Atomic = loom::sync::atomic::AtomicI64;
    type Cell<T: Send + 'static> = LoomCell<T>;
    type JoinHandle<T: Send + 'static> = loom::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(
        ctx: ThreadCtx,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Self::JoinHandle<T> {
        loom::thread::spawn(move || {
            Self::install(ctx);
            f()
        })
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
    fn yield_now() {
        loom::thread::yield_now()
    }
    ctx_fns!(LOOM_CTX);
}

impl Platform for Shuttle {
    const BACKEND_KIND: BackendKind = BackendKind::Shuttle;
    type Atomic = ShuttleAtomic;
    type Cell<T: Send + 'static> = ShuttleCell<T>;
    type JoinHandle<T: Send + 'static> = shuttle::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(
        ctx: ThreadCtx,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Self::JoinHandle<T> {
        // Spawning is a scheduling point that depends on everything.
        dfs::global();
        shuttle::thread::spawn(move || {
            Self::install(ctx);
            f()
        })
    }
    fn fence(order: Ordering) {
        shuttle::sync::atomic::fence(order)
    }
    fn yield_now() {
        shuttle::thread::yield_now()
    }
    fn rcu_switch() {
        shuttle::thread::sleep(std::time::Duration::ZERO)
    }
    fn checkpoint_locals(tag: u64) {
        dfs::checkpoint_locals(tag);
    }
    ctx_fns!(SHUTTLE_CTX, |ctx: &ThreadCtx| {
        if ctx.actor == Actor::Main {
            dfs::set_sink(ctx.sink.clone());
        }
    });
}

impl Platform for Std {
    const BACKEND_KIND: BackendKind = BackendKind::Std;
    type Atomic = StdAtomic;
    type Cell<T: Send + 'static> = PlainCell<T>;
    type JoinHandle<T: Send + 'static> = StdJoin<T>;
    fn spawn<T: Send + 'static>(
        ctx: ThreadCtx,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Self::JoinHandle<T> {
        let mut ctx = ctx;
        ctx.step = STD_CTX.with(|c| c.borrow().as_ref().and_then(|c| c.step.clone()));
        step::end();
        StdJoin(std::thread::spawn(move || {
            Self::install(ctx);
            let r = f();
            step::end();
            Self::uninstall();
            r
        }))
    }
    fn fence(order: Ordering) {
        step::begin();
        std::sync::atomic::fence(order)
    }
    fn yield_now() {
        step::end();
        std::thread::yield_now()
    }
    fn install(ctx: ThreadCtx) {
        let mut ctx = ctx;
        if ctx.step.is_none() {
            ctx.step = Some(Arc::new(StepLock::default()));
        }
        STD_CTX.with(|c| *c.borrow_mut() = Some(ctx));
    }
    fn uninstall() {
        step::end();
        STD_CTX.with(|c| *c.borrow_mut() = None);
    }
    fn actor() -> Actor {
        STD_CTX
            .with(|c| c.borrow().as_ref().map(|c| c.actor))
            .unwrap_or_else(|| no_ctx())
    }
    fn set_actor(actor: Actor) {
        STD_CTX.with(|c| {
            if let Some(c) = c.borrow_mut().as_mut() {
                c.actor = actor;
            }
        });
    }
    fn emit(make: impl FnOnce() -> Obs) {
        let target = STD_CTX.with(|c| {
            c.borrow()
                .as_ref()
                .and_then(|c| c.sink.clone().map(|s| (c.actor, s)))
        });
        if let Some((actor, sink)) = target {
            // An observation made before the thread's first operation
            // still needs the step lock.
            step::begin_if_idle();
            sink.observe(actor, make());
        }
    }
}

impl Platform for Bare {
    const BACKEND_KIND: BackendKind = BackendKind::Bare;
    type Atomic = std::sync::atomic::AtomicI64;
    type Cell<T: Send + 'static> = PlainCell<T>;
    type JoinHandle<T: Send + 'static> = std::thread::JoinHandle<T>;
    fn spawn<T: Send + 'static>(
        ctx: ThreadCtx,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Self::JoinHandle<T> {
        std::thread::spawn(move || {
            Self::install(ctx);
            f()
        })
    }
    fn fence(order: Ordering) {
        std::sync::atomic::fence(order)
    }
    fn yield_now() {
        std::thread::yield_now()
    }
    fn install(ctx: ThreadCtx) {
        BARE_ACTOR.with(|a| a.set(ctx.actor));
    }
    fn uninstall() {}
    fn actor() -> Actor {
        BARE_ACTOR.with(Cell::get)
    }
    fn set_actor(actor: Actor) {
        BARE_ACTOR.with(|a| a.set(actor));
    }
    #[inline(always)]
    fn emit(_make: impl FnOnce() -> Obs) {}
}

/// The per-execution lock that makes each step of a std thread atomic.
#[derive(Debug, Default)]
pub struct StepLock(AtomicBool);

impl StepLock {
    fn lock(&self) {
        let mut spins = 0u32;
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins > 64 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Taking and releasing the step lock of the calling std thread.
mod step {
    use super::*;

    thread_local! {
        static HELD: Cell<bool> = const { Cell::new(false) };
        static RNG: Cell<u64> = const { Cell::new(0) };
    }

    /// Whether to let other threads go first at this step: real threads
    /// on two cores otherwise mostly run one after another, and the races
    /// the properties are about never happen.
    fn dither() -> bool {
        RNG.with(|r| {
            let mut x = r.get();
            if x == 0 {
                let here = &x as *const u64 as u64;
                x = here ^ 0x9E37_79B9_7F4A_7C15;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r.set(x);
            x % 3 == 0
        })
    }

    fn lock_of_thread() -> Option<Arc<StepLock>> {
        STD_CTX.with(|c| c.borrow().as_ref().and_then(|c| c.step.clone()))
    }

    /// An operation starts a step: end the previous one, take the lock.
    pub fn begin() {
        let Some(lock) = lock_of_thread() else { return };
        if HELD.with(|h| h.replace(false)) {
            lock.unlock();
            if dither() {
                std::thread::yield_now();
            }
        }
        lock.lock();
        HELD.with(|h| h.set(true));
    }

    /// Take the lock unless this thread already holds it.
    pub fn begin_if_idle() {
        if !HELD.with(Cell::get) {
            begin();
        }
    }

    /// Leave the current step (before waiting, yielding or exiting).
    pub fn end() {
        if HELD.with(|h| h.replace(false)) {
            if let Some(lock) = lock_of_thread() {
                lock.unlock();
            }
        }
    }
}

/// Bookkeeping that is not part of the modelled kernel (ghost state,
/// coverage, collected outcomes). std types on every backend: loom and
/// shuttle do not see them, so they add no scheduling points.
pub mod ghost {
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
    pub use std::sync::{Arc, Mutex, MutexGuard};
}

/// A start line for the threads of one execution.
///
/// On real threads every participant waits here so that they actually race
/// (otherwise the first spawned thread often finishes before the last one
/// starts). Under loom and shuttle it does nothing: their schedulers already
/// choose every start order.
#[derive(Debug)]
pub struct StartGate(Option<std::sync::Barrier>);

impl StartGate {
    /// A gate for `n` participants on platform `P`.
    pub fn new<P: Platform>(n: usize) -> Self {
        let real = matches!(P::BACKEND_KIND, BackendKind::Std | BackendKind::Bare);
        StartGate(real.then(|| std::sync::Barrier::new(n)))
    }

    /// Wait until all participants have arrived (real threads only).
    pub fn wait(&self) {
        if let Some(b) = &self.0 {
            step::end();
            b.wait();
        }
    }
}

/// The most threads a loom execution may use, the main thread included.
pub const MAX_LOOM_THREADS: usize = loom::MAX_THREADS;

thread_local! {
    static LAST_CELL: Cell<Option<crate::observe::obs::Var>> = const { Cell::new(None) };
}

/// Note the plain variable about to be accessed, so that a data race loom
/// reports on it can be attributed (loom's message does not name it).
pub fn note_cell(var: crate::observe::obs::Var) {
    LAST_CELL.with(|c| c.set(Some(var)));
}

/// The plain variable accessed last on this OS thread.
pub fn last_cell() -> Option<crate::observe::obs::Var> {
    LAST_CELL.with(Cell::get)
}

/// Forget the last plain variable (before an exploration).
pub fn clear_last_cell() {
    LAST_CELL.with(|c| c.set(None));
}
