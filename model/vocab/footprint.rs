//! The footprint hook: how the kernel idioms and the observers tell the
//! exhaustive search what a step touched beyond the backend's own memory,
//! without knowing which search runs, or whether one does.
//!
//! The stateful depth-first search (explore/dfs) decides which steps
//! commute from what each step touched. The backend's atomics and cells
//! report themselves; two things it cannot see are reported here:
//!
//! - *ghost locations*: state an observer keeps (a property's running sum,
//!   a twin gate's counters). A step that updates one declares it with
//!   [`footprint`], or the search would swap two steps whose order a
//!   property can tell apart;
//! - *spin waits*: a `spin_lock()` retry re-reads what the first failed
//!   attempt read, so the task's local state is unchanged
//!   ([`spin_snapshot`], [`spin_restore`]); without this a wait would never
//!   reach a state explored before.
//!
//! The search installs a [`Recorder`] once ([`install`]); until then, and
//! on every backend but the depth-first one, each call here is a load and
//! a branch. LKMM keeps its vocabulary (`linux-kernel.bell`) apart from
//! its axioms in the same way: this file knows nothing of either side.

use std::sync::OnceLock;

/// How a step touches a ghost location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GhostKind {
    /// Reads it (a check or a measure).
    Read,
    /// Adds to it; adds commute with each other.
    Add,
    /// Overwrites it, or updates it in a way that does not commute.
    Write,
}

/// A ghost location: a number an observer chooses (observe/ghost/mod.rs lists
/// the flush monitor's).
pub type GhostLoc = u32;

/// A task's local state as the search tracks it, taken after a spin loop's
/// first failed attempt: opaque here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinSnapshot(pub [u64; 3]);

/// What a search installs to be told of footprints and spin waits.
pub trait Recorder: Send + Sync {
    /// The running step touches ghost location `loc`.
    fn footprint(&self, loc: GhostLoc, kind: GhostKind);
    /// Whether the running execution is being drained: the search pruned
    /// it and runs it to its end unobserved.
    fn silent(&self) -> bool;
    /// The running task's local state, if a stateful search tracks it.
    fn spin_snapshot(&self) -> Option<SpinSnapshot>;
    /// Restore the running task's local state to `snap`.
    fn spin_restore(&self, snap: SpinSnapshot);
}

static RECORDER: OnceLock<&'static dyn Recorder> = OnceLock::new();

/// Install the search's recorder (the first call wins; later ones are
/// ignored, so a search may call this before every exploration).
pub fn install(recorder: &'static dyn Recorder) {
    let _ = RECORDER.set(recorder);
}

/// The running step touches ghost location `loc`.
pub fn footprint(loc: GhostLoc, kind: GhostKind) {
    if let Some(r) = RECORDER.get() {
        r.footprint(loc, kind);
    }
}

/// Whether the running execution is being drained (observations are not
/// made meanwhile).
pub fn silent() -> bool {
    RECORDER.get().is_some_and(|r| r.silent())
}

/// Snapshot the running task's local state after a spin loop's first
/// failed attempt (stateful search only).
pub fn spin_snapshot() -> Option<SpinSnapshot> {
    RECORDER.get().and_then(|r| r.spin_snapshot())
}

/// A spin loop failed again after `snap`: its attempt only re-read what
/// the first failure read, so the task's locals are as they were then.
pub fn spin_restore(snap: Option<SpinSnapshot>) {
    if let (Some(r), Some(s)) = (RECORDER.get(), snap) {
        r.spin_restore(s);
    }
}
