//! The recorder the depth-first search reads: what each step touched
//! (its footprint) and, in a stateful search, the state reached. Kept per
//! OS thread, off unless a DFS runs on it; the backends' atomics and cells
//! report accesses here, the footprint hook (crate::vocab::footprint)
//! reports the observers' ghost locations and spin waits.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::vocab::footprint::{self, GhostKind, GhostLoc, Recorder, SpinSnapshot, WalkEntry};
use crate::vocab::obs::{Actor, Sink};

use super::digest::Digest;
use super::track::{Local, Track, MAX_SYM_CPUS};

/// Everything one step touched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    mem: Vec<(usize, bool)>,
    ghost: Vec<(GhostLoc, GhostKind)>,
    global: bool,
}

impl Footprint {
    /// Whether the two steps may not be swapped.
    pub fn dependent(&self, other: &Footprint) -> bool {
        if self.global || other.global {
            return true;
        }
        let mem = self
            .mem
            .iter()
            .any(|(a, w)| other.mem.iter().any(|(b, v)| a == b && (*w || *v)));
        mem || self.ghost.iter().any(|(a, k)| {
            other.ghost.iter().any(|(b, l)| {
                a == b
                    && !matches!(
                        (k, l),
                        (GhostKind::Read, GhostKind::Read) | (GhostKind::Add, GhostKind::Add)
                    )
            })
        })
    }
}

/// Recording off, footprints only, or footprints and state.
pub(super) const OFF: u8 = 0;
pub(super) const FOOTPRINTS: u8 = 1;
pub(super) const STATE: u8 = 2;

thread_local! {
    static MODE: Cell<u8> = const { Cell::new(OFF) };
    static SILENT: Cell<bool> = const { Cell::new(false) };
    /// The running step replays one whose footprint is known already.
    static REPLAY: Cell<bool> = const { Cell::new(false) };
    /// The running schedule replays a prefix whose end state was saved:
    /// nothing is tracked or observed until [`restore`].
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static NEXT_ID: Cell<usize> = const { Cell::new(0) };
    static CURRENT: RefCell<Footprint> = RefCell::new(Footprint::default());
    static TRACK: RefCell<Track> = RefCell::new(Track::default());
}

fn mode() -> u8 {
    MODE.with(Cell::get)
}

/// A number for a new atomic or cell: its place in creation order.
pub fn next_id() -> usize {
    NEXT_ID.with(|n| n.replace(n.get() + 1))
}

/// Record an access to location `id` (an atomic or a cell) in the running
/// step, with the value it returned (`read`) and the value it left
/// (`written`), for the footprint and, in a stateful search, the state.
pub fn access(id: usize, read: Option<i64>, written: Option<i64>) {
    let m = mode();
    if m == OFF {
        return;
    }
    if !REPLAY.with(Cell::get) {
        CURRENT.with(|c| c.borrow_mut().mem.push((id, written.is_some())));
    }
    if m == STATE {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            if let Some(v) = written {
                t.set(id, v);
            }
            t.accessed(id, read, written.is_some());
        });
    }
}

/// Record the initial value of a new location `id`.
pub fn created(id: usize, v: i64) {
    if mode() == STATE {
        TRACK.with(|t| t.borrow_mut().created(id, v));
    }
}

/// Some shared state of this execution cannot be digested (a cell of a
/// type other than `i64`): the stateful search will not prune it.
pub fn opaque() {
    if mode() == STATE {
        TRACK.with(|t| t.borrow_mut().opaque = true);
    }
}

/// The observer of this execution, whose state is part of the search's
/// state ([`Sink::digest`]).
pub fn set_sink(sink: Option<Arc<dyn Sink>>) {
    if mode() == STATE || QUIET.with(Cell::get) {
        TRACK.with(|t| t.borrow_mut().sink = sink);
    }
}

/// The calling task declares every local it holds dead: from here on, what
/// it does depends only on `tag` (a loop counter) and shared state. The
/// scenario calls this between updates and between reads.
pub fn checkpoint_locals(tag: u64) {
    if mode() == STATE {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            let mut seen = Digest::default();
            seen.word(0xC4EC_7901_0000_0000 ^ tag);
            *t.task(cur) = Local {
                steps: 0,
                seen,
                pins: 0,
                walked: 0,
            };
        });
    }
}

// The spin snapshot and the walk entry are kept in the tracked execution,
// per task, not in the token the caller holds: a quiet prefix
// ([`quiet`]) may take one that the step after [`restore`] uses, and the
// restored execution has it as a tracked replay would.

fn spin_snapshot() -> Option<SpinSnapshot> {
    if QUIET.with(Cell::get) {
        return Some(SpinSnapshot([0; 3]));
    }
    (mode() == STATE).then(|| {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            let l = *t.task(cur);
            t.kept(cur).spin = [l.steps, l.seen.a, l.seen.b];
            SpinSnapshot([0; 3])
        })
    })
}

fn spin_restore(_snap: SpinSnapshot) {
    if mode() == STATE {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            let [steps, a, b] = t.kept(cur).spin;
            let l = t.task(cur);
            // The retry re-read what the first failure read: the CPUs it
            // pinned are pinned already.
            l.steps = steps;
            l.seen = Digest { a, b };
        });
    }
}

/// The depth-first search's side of the footprint hook
/// ([`crate::vocab::footprint`]): everything goes to this OS thread's
/// recorder state, which is off unless a DFS runs on it.
struct DfsRecorder;

impl Recorder for DfsRecorder {
    fn footprint(&self, loc: GhostLoc, kind: GhostKind) {
        ghost(loc, kind);
    }
    fn silent(&self) -> bool {
        silent()
    }
    fn spin_snapshot(&self) -> Option<SpinSnapshot> {
        spin_snapshot()
    }
    fn spin_restore(&self, snap: SpinSnapshot) {
        spin_restore(snap);
    }
    fn walk_begin(&self) -> Option<WalkEntry> {
        if QUIET.with(Cell::get) {
            return Some(WalkEntry([0; 4]));
        }
        (mode() == STATE).then(|| {
            TRACK.with(|t| {
                let mut t = t.borrow_mut();
                let cur = t.current;
                let l = *t.task(cur);
                t.kept(cur).walk = [l.steps, l.seen.a, l.seen.b, l.pins];
                WalkEntry([0; 4])
            })
        })
    }
    fn walk_done(&self, _entry: WalkEntry, done: u64) {
        if mode() == STATE {
            TRACK.with(|t| {
                let mut t = t.borrow_mut();
                let cur = t.current;
                let [steps, a, b, pins] = t.kept(cur).walk;
                let mut seen = Digest::default();
                for w in [0x3A1C_0000_0000_0000, steps, a, b] {
                    seen.word(w);
                }
                *t.task(cur) = Local {
                    steps: 0,
                    seen,
                    pins,
                    walked: done,
                };
            });
        }
    }
    fn owner(&self, cpu: Option<usize>) {
        if mode() == STATE {
            TRACK.with(|t| {
                let mut t = t.borrow_mut();
                match cpu {
                    Some(c) if c >= MAX_SYM_CPUS => {
                        t.asymmetric = true;
                        t.building = None;
                    }
                    c => t.building = c.map(|c| c as u8),
                }
            });
        }
    }
    fn named_for(&self, cpu: usize) {
        if mode() == STATE {
            TRACK.with(|t| {
                let mut t = t.borrow_mut();
                if t.building.map(usize::from) != Some(cpu) {
                    t.asymmetric = true;
                }
            });
        }
    }
    fn cpu_classes(&self, classes: &[u64]) {
        if mode() == STATE {
            TRACK.with(|t| t.borrow_mut().classes = classes.to_vec());
        }
    }
}

/// The running task plays `actor` from now on: a task standing for a CPU
/// is one the symmetry reduction may permute with the others of its class.
pub fn set_role(actor: Actor) {
    if mode() == STATE {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            let cpu = match actor {
                Actor::Cpu(c) => Some(c),
                _ => None,
            };
            t.set_role(cur, cpu);
        });
    }
}

/// Install the search's recorder behind the footprint hook (idempotent).
pub fn install_recorder() {
    footprint::install(&DfsRecorder);
}

/// Record that the running step touches ghost location `loc`.
fn ghost(loc: GhostLoc, kind: GhostKind) {
    if mode() != OFF && !REPLAY.with(Cell::get) {
        CURRENT.with(|c| c.borrow_mut().ghost.push((loc, kind)));
    }
}

/// Record that the running step depends on every other step (spawn).
pub fn global() {
    if mode() != OFF {
        CURRENT.with(|c| c.borrow_mut().global = true);
    }
}

pub(super) fn take() -> Footprint {
    CURRENT.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Turn recording on or off for this OS thread and start a new execution.
pub fn activate(on: bool) {
    set_mode(if on { FOOTPRINTS } else { OFF });
}

pub(super) fn set_mode(m: u8) {
    MODE.with(|a| a.set(m));
    SILENT.with(|a| a.set(false));
    REPLAY.with(|a| a.set(false));
    QUIET.with(|a| a.set(false));
    new_execution();
}

/// What a stateful search saves at a branching decision: the tracked
/// execution and the observer's state ([`Sink::save`]).
pub(super) struct Saved {
    track: Track,
    observer: Box<dyn std::any::Any + Send + Sync>,
}

/// The state reached now, if the observer can save its part.
pub(super) fn save() -> Option<Saved> {
    TRACK.with(|t| {
        let t = t.borrow();
        let observer = t.sink.as_ref()?.save()?;
        Some(Saved {
            track: t.clone(),
            observer,
        })
    })
}

/// Replay the coming prefix quietly: track and observe nothing (the
/// operations still run, as scheduling points) until [`restore`].
pub(super) fn quiet() {
    MODE.with(|m| m.set(OFF));
    QUIET.with(|q| q.set(true));
}

/// The end of a quiet prefix: put back the state saved where it ends.
pub(super) fn restore(saved: &Saved) {
    TRACK.with(|t| {
        let mut t = t.borrow_mut();
        // This execution's observer, which set_sink installed.
        let sink = t.sink.take();
        *t = saved.track.clone();
        if let Some(s) = &sink {
            s.restore(&*saved.observer);
        }
        t.sink = sink;
    });
    MODE.with(|m| m.set(STATE));
    QUIET.with(|q| q.set(false));
}

/// Whether observations are skipped: a drained schedule, or a quiet
/// prefix.
pub fn unobserved() -> bool {
    SILENT.with(Cell::get) || QUIET.with(Cell::get)
}

/// Drain the running schedule: record nothing, observe nothing, until the
/// next execution.
pub(super) fn drain() {
    MODE.with(|m| m.set(OFF));
    SILENT.with(|s| s.set(true));
}

/// Whether the running execution is being drained: the search has pruned
/// it, and it only runs to its end so that its tasks finish normally.
/// Observations are not made meanwhile.
pub fn silent() -> bool {
    SILENT.with(Cell::get)
}

/// Start numbering atomics from zero (every execution, every backend).
pub fn new_execution() {
    NEXT_ID.with(|n| n.set(0));
    take();
    TRACK.with(|t| *t.borrow_mut() = Track::default());
}

/// The task `t` takes the next step; `replay`: a step whose footprint the
/// search knows already (a schedule's prefix runs again), so that only its
/// state is tracked.
pub(super) fn chosen(t: usize, replay: bool) {
    REPLAY.with(|r| r.set(replay));
    TRACK.with(|tr| {
        let mut tr = tr.borrow_mut();
        tr.current = t;
        tr.task(t).steps += 1;
    });
}

/// Run `f` on the execution as tracked so far.
pub(super) fn with_track<R>(f: impl FnOnce(&Track) -> R) -> R {
    TRACK.with(|t| f(&t.borrow()))
}
