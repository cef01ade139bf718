//! Real std threads, checked: a per-execution step lock makes each step
//! (an operation and the thread-local code after it) atomic, so monitors
//! see the same steps as under loom and shuttle.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::common::PlainCell;
use crate::vocab::{Actor, BackendKind, ModelAtomic, ModelJoinHandle, Obs, Platform, ThreadCtx};

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

/// A std join handle that leaves the step before waiting.
pub struct StdJoin<T>(std::thread::JoinHandle<T>);

impl<T> ModelJoinHandle<T> for StdJoin<T> {
    fn join(self) -> T {
        step::end();
        self.0.join().unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

/// Real std threads, one step at a time.
#[derive(Debug)]
pub struct Std;

thread_local! {
    static STD_CTX: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
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
        ctx.shared = STD_CTX.with(|c| c.borrow().as_ref().and_then(|c| c.shared.clone()));
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
        if ctx.shared.is_none() {
            ctx.shared = Some(Arc::new(StepLock::default()));
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
            .unwrap_or_else(|| super::common::no_ctx())
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
        let shared: Option<Arc<dyn Any + Send + Sync>> =
            STD_CTX.with(|c| c.borrow().as_ref().and_then(|c| c.shared.clone()));
        shared.and_then(|s| s.downcast::<StepLock>().ok())
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

/// Leave the calling std thread's step (before waiting at a start gate).
pub(super) fn leave_step() {
    step::end();
}
