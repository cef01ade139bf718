//! Exploration: the backends and how a scenario is run under each.
//!
//! This module is the only one that names loom, shuttle and std's
//! concurrency primitives ([`platform`]). Around the facade: our shuttle
//! schedulers ([`sched`]), the exhaustive sequentially consistent search
//! with sleep sets ([`dfs`]), and the planned searches, their budgets, and
//! finding and replaying one failing execution ([`run`]).
//!
//! | backend | what it explores | what it can decide |
//! |---|---|---|
//! | [`Backend::Loom`] | every execution (DPOR) within an optional preemption bound, C11 weak memory minus load buffering | ordering bugs, data races on plain fields, interleavings |
//! | [`Backend::ShuttleRandom`], [`Backend::ShuttlePct`] | sampled schedules; every atomic is SeqCst | interleaving bugs |
//! | [`Backend::ShuttleDfs`] | every SC interleaving, reduced by sleep sets | interleaving bugs, exactly |
//! | [`Backend::Std`] | real OS threads, one step at a time | smoke test on hardware scheduling |

mod backend;
#[doc(hidden)]
pub mod dfs;
#[doc(hidden)]
pub mod platform;
#[doc(hidden)]
pub mod replay;
#[doc(hidden)]
pub mod run;
#[doc(hidden)]
pub mod sched;
mod search;

pub use crate::vocab::{BackendKind, ModelAtomic, ModelCell, ModelJoinHandle, Platform, ThreadCtx};
pub use platform::{Bare, Loom, Shuttle, StartGate, Std, MAX_LOOM_THREADS};
pub use replay::{loom_find, loom_replay, shuttle_find, shuttle_replay, silenced};
pub use run::{
    explore, explore_shard, on_fresh_thread, panic_message, quiet_panics, Backend, BackendName,
    Exploration, Outcome, Progress, QuietRun, Scenario, Shard,
};
pub use sched::ShuttleSchedule;
