//! The shuttle backend: sampled (random, PCT) and depth-first SC search.
//! Each atomic and cell is numbered and reports its accesses to the
//! depth-first scheduler (explore/dfs), which is off for the sampling
//! schedulers.

use std::cell::RefCell;
use std::panic;
use std::sync::atomic::Ordering;

use super::common::ctx_fns;
use crate::explore::dfs;
use crate::vocab::{
    Actor, BackendKind, ModelAtomic, ModelCell, ModelJoinHandle, Platform, ThreadCtx,
};

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

impl<T> ModelJoinHandle<T> for shuttle::thread::JoinHandle<T> {
    fn join(self) -> T {
        shuttle::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

/// The shuttle platform (random, PCT or depth-first scheduler).
#[derive(Debug)]
pub struct Shuttle;

shuttle::thread_local! {
    static SHUTTLE_CTX: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
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
