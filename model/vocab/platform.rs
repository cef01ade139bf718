//! The interface between the model and the backends: what the kernel
//! idioms are written against ([`Platform`]), without naming a backend.
//!
//! loom keeps its `sync/` facade apart from the runtime that searches;
//! here the facade is this file and `kernel/`, and the four backends that
//! implement it (loom, shuttle, std threads, the benchmark's bare
//! threads) live in explore/platform/. Nothing here calls a search.

use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::obs::{Actor, Obs, Sink, Var};

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
    /// Backend data shared by the threads of one execution (std: its
    /// step lock).
    pub(crate) shared: Option<Arc<dyn Any + Send + Sync>>,
}

impl ThreadCtx {
    /// A context for `actor` reporting to `sink`.
    pub fn new(actor: Actor, sink: Option<Arc<dyn Sink>>) -> Self {
        ThreadCtx {
            actor,
            sink,
            shared: None,
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
    /// that calls `yield_now`, which hides bugs there (docs/model.md,
    /// section 11), so shuttle switches with a zero sleep instead.
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
    /// and shared memory. The stateful search then identifies every way of
    /// reaching this point; elsewhere this does nothing.
    fn checkpoint_locals(_tag: u64) {}
    /// Note the plain variable about to be accessed, so that a data race
    /// the backend reports on it can be attributed (loom's message does not
    /// name it); elsewhere this does nothing.
    fn note_cell(_var: Var) {}
}
