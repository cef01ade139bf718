//! What the backends share: the thread-context functions, the std-style
//! atomic impl, and the plain cell of the backends without a race
//! detector.

use crate::vocab::ModelCell;

/// A model thread without its context: a bug of the caller.
pub(crate) fn no_ctx() -> ! {
    panic!("model: a model thread ran without its context (spawn through Platform::spawn)")
}

/// `ModelAtomic` for a type with std's atomic API (loom's and std's own).
macro_rules! model_atomic {
    ($ty:ty) => {
        impl $crate::vocab::ModelAtomic for $ty {
            fn new(v: i64) -> Self {
                <$ty>::new(v)
            }
            fn load(&self, order: ::std::sync::atomic::Ordering) -> i64 {
                <$ty>::load(self, order)
            }
            fn store(&self, v: i64, order: ::std::sync::atomic::Ordering) {
                <$ty>::store(self, v, order)
            }
            fn fetch_add(&self, v: i64, order: ::std::sync::atomic::Ordering) -> i64 {
                <$ty>::fetch_add(self, v, order)
            }
            fn swap(&self, v: i64, order: ::std::sync::atomic::Ordering) -> i64 {
                <$ty>::swap(self, v, order)
            }
            fn compare_exchange(
                &self,
                current: i64,
                new: i64,
                success: ::std::sync::atomic::Ordering,
                failure: ::std::sync::atomic::Ordering,
            ) -> Result<i64, i64> {
                <$ty>::compare_exchange(self, current, new, success, failure)
            }
        }
    };
}
pub(super) use model_atomic;

/// The thread-context functions of a platform that keeps its
/// [`crate::vocab::ThreadCtx`] in the thread-local `$key`.
macro_rules! ctx_fns {
    ($key:ident) => {
        ctx_fns!($key, |_: &$crate::vocab::ThreadCtx| {});
    };
    ($key:ident, $on_install:expr) => {
        ctx_fns!($key, $on_install, |_: $crate::vocab::Actor| {});
    };
    ($key:ident, $on_install:expr, $on_actor:expr) => {
        fn install(ctx: $crate::vocab::ThreadCtx) {
            ($on_install)(&ctx);
            $key.with(|c| *c.borrow_mut() = Some(ctx));
        }
        fn uninstall() {
            $key.with(|c| *c.borrow_mut() = None);
        }
        fn actor() -> $crate::vocab::Actor {
            $key.with(|c| c.borrow().as_ref().map(|c| c.actor))
                .unwrap_or_else(|| $crate::explore::platform::common::no_ctx())
        }
        fn set_actor(actor: $crate::vocab::Actor) {
            ($on_actor)(actor);
            $key.with(|c| {
                if let Some(c) = c.borrow_mut().as_mut() {
                    c.actor = actor;
                }
            });
        }
        fn emit(make: impl FnOnce() -> $crate::vocab::Obs) {
            if $crate::explore::dfs::silent() {
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
pub(super) use ctx_fns;

/// A plain cell for std and the benchmark, which have no race detector.
pub struct PlainCell<T>(::std::cell::UnsafeCell<T>);

// SAFETY: callers of `get`/`set` promise to hold the protecting lock.
unsafe impl<T: Send> Sync for PlainCell<T> {}

impl<T: Send + 'static> ModelCell<T> for PlainCell<T> {
    fn new(v: T) -> Self {
        PlainCell(::std::cell::UnsafeCell::new(v))
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
