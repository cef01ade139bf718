//! The loom backend: exhaustive C11 search (DPOR), with loom's
//! causality-checked cells for the flusher's plain fields.

use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::atomic::Ordering;

use super::common::{ctx_fns, model_atomic};
use crate::vocab::{BackendKind, ModelCell, ModelJoinHandle, Platform, ThreadCtx, Var};

model_atomic!(loom::sync::atomic::AtomicI64);

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

impl<T> ModelJoinHandle<T> for loom::thread::JoinHandle<T> {
    fn join(self) -> T {
        loom::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

/// The loom platform.
#[derive(Debug)]
pub struct Loom;

loom::thread_local! {
    static LOOM_CTX: RefCell<Option<ThreadCtx>> = RefCell::new(None);
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
    fn note_cell(var: Var) {
        LAST_CELL.with(|c| c.set(Some(var)));
    }
    ctx_fns!(LOOM_CTX);
}

/// The most threads a loom execution may use, the main thread included.
pub const MAX_LOOM_THREADS: usize = loom::MAX_THREADS;

thread_local! {
    static LAST_CELL: Cell<Option<Var>> = const { Cell::new(None) };
}

/// The plain variable accessed last on this OS thread.
pub fn last_cell() -> Option<Var> {
    LAST_CELL.with(Cell::get)
}

/// Forget the last plain variable (before an exploration).
pub fn clear_last_cell() {
    LAST_CELL.with(|c| c.set(None));
}
