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
//! - *walks*: a flusher's walk over the CPUs declares, after each CPU, that
//!   nothing it read is live any more ([`walk_begin`], [`walk_done`]), so
//!   that its locals name the set of CPUs walked rather than what it read;
//! - *ownership*: which CPU a location belongs to ([`owner`], set while
//!   per-CPU data is built) and which CPUs run the same program
//!   ([`cpu_classes`]), so that the search can treat interchangeable CPUs
//!   as one under its symmetry reduction (explore/dfs, docs/exhaustive.md).
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

/// A task's local state as the search tracks it when it begins a walk over
/// the CPUs ([`walk_begin`]): opaque here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkEntry(pub [u64; 4]);

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
    /// The running task's local state as a walk over the CPUs begins.
    fn walk_begin(&self) -> Option<WalkEntry> {
        None
    }
    /// The walk begun at `entry` has visited the CPUs of `done` (a mask).
    fn walk_done(&self, _entry: WalkEntry, _done: u64) {}
    /// Locations created from now on by the running thread belong to CPU
    /// `cpu` (`None`: to no CPU).
    fn owner(&self, _cpu: Option<usize>) {}
    /// A location named for CPU `cpu` is being created: if it is not being
    /// built as that CPU's, the execution cannot be permuted.
    fn named_for(&self, _cpu: usize) {}
    /// The CPUs' programs: CPUs of equal class run the same code on the
    /// same values and may be permuted.
    fn cpu_classes(&self, _classes: &[u64]) {}
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

/// A walk over the CPUs (a flush) begins: the running task's locals now
/// are its entry, which [`walk_done`] keeps.
pub fn walk_begin() -> Option<WalkEntry> {
    RECORDER.get().and_then(|r| r.walk_begin())
}

/// The walk begun at `entry` has visited the CPUs of `done` (bit `c` for
/// CPU `c`) and holds nothing it read from them: the running task's locals
/// are `entry` and the set `done` (which the symmetry reduction renames
/// with the CPUs), not the values the walk read.
pub fn walk_done(entry: Option<WalkEntry>, done: u64) {
    if let (Some(r), Some(e)) = (RECORDER.get(), entry) {
        r.walk_done(e, done);
    }
}

/// Locations created from now on by the calling thread belong to CPU `cpu`
/// (`None`: to no CPU). `PerCpu::new` sets this around each CPU's
/// instance.
pub fn owner(cpu: Option<usize>) {
    if let Some(r) = RECORDER.get() {
        r.owner(cpu);
    }
}

/// A location whose kernel name says it is CPU `cpu`'s is being created
/// (a cross-check of [`owner`]: one built outside `PerCpu::new` makes the
/// execution unpermutable, never wrongly permuted).
pub fn named_for(cpu: usize) {
    if let Some(r) = RECORDER.get() {
        r.named_for(cpu);
    }
}

/// The scenario declares its CPUs' programs: CPU `c` runs program
/// `classes[c]`; CPUs of one class are interchangeable.
pub fn cpu_classes(classes: &[u64]) {
    if let Some(r) = RECORDER.get() {
        r.cpu_classes(classes);
    }
}
