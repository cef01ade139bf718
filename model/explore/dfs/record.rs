//! The recorder the depth-first search reads: what each step touched
//! (its footprint) and, in a stateful search, the state reached. Kept per
//! OS thread, off unless a DFS runs on it; the backends' atomics and cells
//! report accesses here, the footprint hook (crate::vocab::footprint)
//! reports the observers' ghost locations and spin waits.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::vocab::footprint::{self, GhostKind, GhostLoc, Recorder, SpinSnapshot};
use crate::vocab::obs::Sink;

use super::digest::Digest;

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

/// What the stateful search knows of one task's local state: the steps it
/// has taken and a digest of the values its operations returned, since it
/// started or since it last declared its locals dead
/// ([`checkpoint_locals`]). A task's code is deterministic, so these fix
/// where it is and what its locals hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Local {
    steps: u64,
    seen: Digest,
}

/// The execution as the stateful search tracks it.
#[derive(Default)]
struct Track {
    /// The value of every atomic and cell, by id.
    mem: Vec<i64>,
    /// Per task id.
    tasks: Vec<Local>,
    /// The task running the current step.
    current: usize,
    /// The execution's observer.
    sink: Option<Arc<dyn Sink>>,
    /// Some state could not be digested: never prune this execution.
    opaque: bool,
}

impl Track {
    fn task(&mut self, t: usize) -> &mut Local {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, Local::default());
        }
        &mut self.tasks[t]
    }

    fn set(&mut self, id: usize, v: i64) {
        if self.mem.len() <= id {
            self.mem.resize(id + 1, 0);
        }
        self.mem[id] = v;
    }
}

/// Recording off, footprints only, or footprints and state.
pub(super) const OFF: u8 = 0;
pub(super) const FOOTPRINTS: u8 = 1;
pub(super) const STATE: u8 = 2;

thread_local! {
    static MODE: Cell<u8> = const { Cell::new(OFF) };
    static SILENT: Cell<bool> = const { Cell::new(false) };
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
    CURRENT.with(|c| c.borrow_mut().mem.push((id, written.is_some())));
    if m == STATE {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            if let Some(v) = written {
                t.set(id, v);
            }
            let cur = t.current;
            let seen = &mut t.task(cur).seen;
            seen.word(id as u64 | u64::from(written.is_some()) << 40);
            if let Some(r) = read {
                seen.word(r as u64);
            }
        });
    }
}

/// Record the initial value of a new location `id`.
pub fn created(id: usize, v: i64) {
    if mode() == STATE {
        TRACK.with(|t| t.borrow_mut().set(id, v));
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
    if mode() == STATE {
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
            *t.task(cur) = Local { steps: 0, seen };
        });
    }
}

fn spin_snapshot() -> Option<SpinSnapshot> {
    (mode() == STATE).then(|| {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            let l = *t.task(cur);
            SpinSnapshot([l.steps, l.seen.a, l.seen.b])
        })
    })
}

fn spin_restore(snap: SpinSnapshot) {
    if mode() == STATE {
        let [steps, a, b] = snap.0;
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            *t.task(cur) = Local {
                steps,
                seen: Digest { a, b },
            };
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
}

/// Install the search's recorder behind the footprint hook (idempotent).
pub fn install_recorder() {
    footprint::install(&DfsRecorder);
}

/// Record that the running step touches ghost location `loc`.
fn ghost(loc: GhostLoc, kind: GhostKind) {
    if mode() != OFF {
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
    new_execution();
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

/// The task `t` takes the next step.
pub(super) fn chosen(t: usize) {
    TRACK.with(|tr| {
        let mut tr = tr.borrow_mut();
        tr.current = t;
        tr.task(t).steps += 1;
    });
}

/// The digest of the current state: every location's value, every task's
/// local state, the task that may not run next (it just yielded), and the
/// observer's state. `None` if some of it cannot be digested.
pub(super) fn state_digest(yielded: Option<usize>) -> Option<Digest> {
    let sink = TRACK.with(|t| {
        let t = t.borrow();
        (!t.opaque).then(|| t.sink.clone())
    })?;
    let mut d = Digest::default();
    TRACK.with(|t| {
        let t = t.borrow();
        d.word(t.mem.len() as u64);
        for v in &t.mem {
            d.word(*v as u64);
        }
        d.word(t.tasks.len() as u64);
        for l in &t.tasks {
            d.word(l.steps);
            d.word(l.seen.a);
            d.word(l.seen.b);
        }
    });
    d.word(yielded.map_or(u64::MAX, |t| t as u64));
    if let Some(s) = sink {
        if !s.digest(&mut d) {
            return None;
        }
    }
    Some(d)
}
