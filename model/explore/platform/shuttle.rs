//! The shuttle backend: sampled (random, PCT) and depth-first SC search.
//! Each atomic and cell is numbered and reports its accesses to the
//! depth-first scheduler (explore/dfs), which is off for the sampling
//! schedulers.

use std::cell::RefCell;
use std::panic;
use std::sync::atomic::Ordering;

use super::common::no_ctx;
use crate::explore::dfs;
use crate::vocab::{
    Actor, BackendKind, ModelAtomic, ModelCell, ModelJoinHandle, Platform, ThreadCtx,
};

/// An atomic under shuttle: shuttle's scheduling point, then the
/// operation on a plain value, reported to the depth-first scheduler
/// ([`dfs`]) so that the access is counted in the step it starts: which
/// atomic, the value the operation returned and the value it left.
///
/// NOTE(shuttle): shuttle's own `AtomicI64` is that scheduling point
/// (`switch()`) and a value, with bookkeeping this model does not use
/// (ordering warnings, which it silences, vector clocks, off by default,
/// and a resource signature hashed at each creation, per execution). The
/// scheduling points are the same, one before each operation, so every
/// scheduler sees the same executions.
///
/// A schedule the search has pruned ([`dfs::silent`]) only runs to its end
/// so that its tasks finish; its operations are then no scheduling points,
/// so that a task runs on until it yields, blocks or ends. Only one task
/// runs at a time, so the value needs no more than `Relaxed`.
pub struct ShuttleAtomic {
    id: usize,
    v: std::sync::atomic::AtomicI64,
}

impl ShuttleAtomic {
    /// A scheduling point unless the schedule is drained, then `f` on the
    /// value, reported; the value becomes what the operation left.
    fn op<R>(
        &self,
        f: impl FnOnce(i64) -> R,
        values: impl FnOnce(&R) -> (Option<i64>, Option<i64>),
    ) -> R {
        let silent = dfs::silent();
        if !silent {
            shuttle_engine::runtime::thread::continuation::switch();
        }
        let r = f(self.v.load(Ordering::Relaxed));
        let (read, written) = values(&r);
        if !silent {
            dfs::access(self.id, read, written);
        }
        if let Some(w) = written {
            self.v.store(w, Ordering::Relaxed);
        }
        r
    }
}

impl ModelAtomic for ShuttleAtomic {
    fn new(v: i64) -> Self {
        let id = dfs::next_id();
        dfs::created(id, v);
        ShuttleAtomic {
            id,
            v: std::sync::atomic::AtomicI64::new(v),
        }
    }
    fn load(&self, _order: Ordering) -> i64 {
        self.op(|x| x, |r| (Some(*r), None))
    }
    fn store(&self, v: i64, _order: Ordering) {
        self.op(|_| (), |_| (None, Some(v)))
    }
    fn fetch_add(&self, v: i64, _order: Ordering) -> i64 {
        self.op(|x| x, |r| (Some(*r), Some(r + v)))
    }
    fn swap(&self, v: i64, _order: Ordering) -> i64 {
        self.op(|x| x, |r| (Some(*r), Some(v)))
    }
    fn compare_exchange(
        &self,
        current: i64,
        new: i64,
        _success: Ordering,
        _failure: Ordering,
    ) -> Result<i64, i64> {
        // A failed compare-and-exchange only reads.
        self.op(
            |x| if x == current { Ok(x) } else { Err(x) },
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

thread_local! {
    /// Each task's context, by shuttle task id, for the executions this OS
    /// thread runs (each task installs its own first). std's thread-local
    /// under shuttle's task id costs far less than shuttle's per-task
    /// storage, which every observation and every per-CPU access reads.
    static SHUTTLE_CTX: RefCell<Vec<Option<ThreadCtx>>> = const { RefCell::new(Vec::new()) };
}

/// The running shuttle task.
fn me() -> usize {
    usize::from(shuttle::current::me())
}

/// `f` on the running task's context, if it has one.
fn with_ctx<R>(f: impl FnOnce(&mut ThreadCtx) -> R) -> Option<R> {
    SHUTTLE_CTX.with(|c| c.borrow_mut().get_mut(me()).and_then(Option::as_mut).map(f))
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
    fn install(ctx: ThreadCtx) {
        if ctx.actor == Actor::Main {
            dfs::set_sink(ctx.sink.clone());
        }
        dfs::set_role(ctx.actor);
        let t = me();
        SHUTTLE_CTX.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() <= t {
                c.resize(t + 1, None);
            }
            c[t] = Some(ctx);
        });
    }
    fn uninstall() {
        let t = me();
        SHUTTLE_CTX.with(|c| {
            if let Some(x) = c.borrow_mut().get_mut(t) {
                *x = None;
            }
        });
    }
    fn actor() -> Actor {
        with_ctx(|c| c.actor).unwrap_or_else(|| no_ctx())
    }
    fn set_actor(actor: Actor) {
        dfs::set_role(actor);
        with_ctx(|c| c.actor = actor);
    }
    fn emit(make: impl FnOnce() -> crate::vocab::Obs) {
        if dfs::unobserved() {
            return;
        }
        if let Some((actor, sink)) = with_ctx(|c| c.sink.clone().map(|s| (c.actor, s))).flatten() {
            sink.observe(actor, make());
        }
    }
}
