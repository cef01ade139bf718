//! Real std threads with nothing added: the hot-path benchmark's
//! platform. No step lock, no observations.

use std::cell::Cell;
use std::panic;
use std::sync::atomic::Ordering;

use super::common::PlainCell;
use crate::vocab::{Actor, BackendKind, ModelJoinHandle, Obs, Platform, ThreadCtx};

super::common::model_atomic!(std::sync::atomic::AtomicI64);

impl<T> ModelJoinHandle<T> for std::thread::JoinHandle<T> {
    fn join(self) -> T {
        std::thread::JoinHandle::join(self).unwrap_or_else(|e| panic::resume_unwind(e))
    }
}

/// Real std threads with nothing added: the benchmark platform.
#[derive(Debug)]
pub struct Bare;

thread_local! {
    static BARE_ACTOR: Cell<Actor> = const { Cell::new(Actor::Main) };
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
