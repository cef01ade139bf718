//! The backends behind [`Platform`]: the only code that names loom's,
//! shuttle's and std's concurrency primitives, one backend per file.
//!
//! The model is written once against [`Platform`] (crate::vocab::platform).
//! Four zero-sized types implement it:
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

mod bare;
mod common;
mod loom;
mod shuttle;
mod std;

pub use self::bare::Bare;
pub use self::loom::{clear_last_cell, last_cell, Loom, LoomCell, MAX_LOOM_THREADS};
pub use self::shuttle::{Shuttle, ShuttleAtomic, ShuttleCell};
pub use self::std::{Std, StdAtomic, StdJoin, StepLock};

pub use self::common::PlainCell;
use crate::vocab::{BackendKind, Platform};

/// A start line for the threads of one execution.
///
/// On real threads every participant waits here so that they actually race
/// (otherwise the first spawned thread often finishes before the last one
/// starts). Under loom and shuttle it does nothing: their schedulers already
/// choose every start order.
#[derive(Debug)]
pub struct StartGate(Option<::std::sync::Barrier>);

impl StartGate {
    /// A gate for `n` participants on platform `P`.
    pub fn new<P: Platform>(n: usize) -> Self {
        let real = matches!(P::BACKEND_KIND, BackendKind::Std | BackendKind::Bare);
        StartGate(real.then(|| ::std::sync::Barrier::new(n)))
    }

    /// Wait until all participants have arrived (real threads only).
    pub fn wait(&self) {
        if let Some(b) = &self.0 {
            self::std::leave_step();
            b.wait();
        }
    }
}
