//! The exhaustive sequentially consistent search: a depth-first shuttle
//! scheduler with sleep sets (Godefroid), driven by each step's *actual*
//! footprint.
//!
//! A step is one shared-memory operation plus the thread-local code after
//! it, up to the next scheduling point. While a step runs, everything it
//! touches is recorded here: the atomics it accessed (numbered in creation
//! order, the same in every execution of a deterministic scenario), whether
//! it wrote them, and the ghost locations the monitors say it read, added
//! to or wrote ([`ghost`]). When the next scheduling decision is made, the
//! record is the footprint of the step just taken. Two steps are
//! independent when no location is written by one and touched by the
//! other, where two commutative adds to one ghost location do not conflict.
//!
//! The sleep set below a choice holds the choices tried before it (and
//! those asleep above it) whose steps are independent of the step taken:
//! each was already run from the same state in a sibling branch, so its
//! recorded footprint is exact. A schedule in which every runnable thread
//! is asleep only reorders independent steps of one already explored, and
//! is stopped. Because the monitors' ghost state is part of the footprint,
//! every property check and measure sees every distinct value it can take;
//! coverage counters (which declare no footprint) may see fewer executions.
//!
//! Unlike shuttle's own `DfsScheduler`, a thread that has just yielded is
//! not rescheduled while another can run: a `spin_lock()` loop would
//! otherwise make the tree infinite, and rescheduling a spinning thread at
//! once only re-reads the same state.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

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

/// A ghost location: a number the monitors choose (see
/// [`crate::observe::ghost`]).
pub type GhostLoc = u32;

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

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static NEXT_ID: Cell<usize> = const { Cell::new(0) };
    static CURRENT: RefCell<Footprint> = RefCell::new(Footprint::default());
}

/// A number for a new atomic: its place in creation order.
pub fn next_id() -> usize {
    NEXT_ID.with(|n| n.replace(n.get() + 1))
}

/// Record an access to atomic `id` in the running step.
pub fn memory(id: usize, write: bool) {
    if ACTIVE.with(Cell::get) {
        CURRENT.with(|c| c.borrow_mut().mem.push((id, write)));
    }
}

/// Record that the running step touches ghost location `loc`.
pub fn ghost(loc: GhostLoc, kind: GhostKind) {
    if ACTIVE.with(Cell::get) {
        CURRENT.with(|c| c.borrow_mut().ghost.push((loc, kind)));
    }
}

/// Record that the running step depends on every other step (spawn).
pub fn global() {
    if ACTIVE.with(Cell::get) {
        CURRENT.with(|c| c.borrow_mut().global = true);
    }
}

fn take() -> Footprint {
    CURRENT.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Turn recording on or off for this OS thread and start a new execution.
pub fn activate(on: bool) {
    ACTIVE.with(|a| a.set(on));
    NEXT_ID.with(|n| n.set(0));
    take();
}

/// Start numbering atomics from zero (every execution, every backend).
pub fn new_execution() {
    NEXT_ID.with(|n| n.set(0));
    take();
}

/// One decision of the search.
struct Level {
    /// Tasks to try from here.
    choices: Vec<usize>,
    /// The one being tried.
    idx: usize,
    /// The footprint of each tried choice's step, once it has run.
    fps: Vec<Option<Footprint>>,
    /// Tasks asleep on arrival, with their steps' footprints.
    sleep: Vec<(usize, Footprint)>,
}

impl Level {
    /// The sleep set below the current choice: what was asleep here or tried
    /// before, if independent of the step taken.
    fn child_sleep(&self) -> Vec<(usize, Footprint)> {
        let t = self.choices[self.idx];
        let Some(fp) = &self.fps[self.idx] else {
            return Vec::new();
        };
        let tried = self.choices[..self.idx]
            .iter()
            .zip(&self.fps[..self.idx])
            .filter_map(|(u, f)| f.as_ref().map(|f| (*u, f.clone())));
        self.sleep
            .iter()
            .cloned()
            .chain(tried)
            .filter(|(u, ufp)| *u != t && !ufp.dependent(fp))
            .collect()
    }
}

/// The depth-first scheduler.
pub struct Dfs {
    levels: Vec<Level>,
    depth: usize,
    started: u64,
    cap: u64,
    /// Set once every schedule has been run.
    pub exhausted: Arc<AtomicBool>,
    /// Schedules stopped because every runnable thread was asleep.
    pub pruned: Arc<AtomicU64>,
    /// Deepest level reached.
    pub max_depth: Arc<AtomicU64>,
    sleep_sets: bool,
}

impl Dfs {
    /// A search of at most `cap` schedules, pruned by sleep sets if
    /// `sleep_sets`.
    pub fn new(cap: u64, sleep_sets: bool) -> Self {
        Dfs {
            levels: Vec::new(),
            depth: 0,
            started: 0,
            cap,
            exhausted: Arc::new(AtomicBool::new(false)),
            pruned: Arc::new(AtomicU64::new(0)),
            max_depth: Arc::new(AtomicU64::new(0)),
            sleep_sets,
        }
    }

    /// File the footprint of the step that just ended under its choice.
    fn close_step(&mut self) {
        let fp = take();
        if self.depth > 0 {
            let l = &mut self.levels[self.depth - 1];
            l.fps[l.idx] = Some(fp);
        }
    }
}

impl shuttle::scheduler::Scheduler for Dfs {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        activate(true);
        if self.started > 0 {
            self.levels.truncate(self.depth);
            while let Some(l) = self.levels.last_mut() {
                if l.idx + 1 < l.choices.len() {
                    l.idx += 1;
                    break;
                }
                self.levels.pop();
            }
            if self.levels.is_empty() {
                self.exhausted.store(true, Ordering::Relaxed);
                return None;
            }
        }
        if self.started == self.cap {
            return None;
        }
        self.started += 1;
        self.depth = 0;
        Some(shuttle::scheduler::Schedule::new(0))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        self.close_step();
        if self.depth < self.levels.len() {
            let l = &self.levels[self.depth];
            self.depth += 1;
            return Some(l.choices[l.idx].into());
        }
        let sleep = match self.depth {
            d if d == 0 || !self.sleep_sets => Vec::new(),
            d => self.levels[d - 1].child_sleep(),
        };
        let choices: Vec<usize> = runnable
            .iter()
            .map(|t| t.id())
            .filter(|id| !(is_yielding && runnable.len() > 1 && Some(*id) == current))
            .map(usize::from)
            .filter(|id| !sleep.iter().any(|(s, _)| s == id))
            .collect();
        let Some(&first) = choices.first() else {
            // Every runnable task asleep: this schedule only reorders
            // independent steps of one already explored.
            self.pruned.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let n = choices.len();
        self.levels.push(Level {
            choices,
            idx: 0,
            fps: vec![None; n],
            sleep,
        });
        self.depth += 1;
        self.max_depth
            .fetch_max(self.depth as u64, Ordering::Relaxed);
        Some(first.into())
    }

    fn next_u64(&mut self) -> u64 {
        0
    }
}
