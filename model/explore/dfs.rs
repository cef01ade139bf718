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
//!
//! **State caching** (`stateful`). At every new decision the scheduler
//! digests the state: the value of every atomic and cell (reported with
//! each access, [`access`]), each task's steps and the values its
//! operations returned since it started or last declared its locals dead
//! ([`checkpoint_locals`]), the task that just yielded, and the observer's
//! state ([`crate::observe::obs::Sink::digest`]). A schedule that reaches a
//! state explored before with a sleep set contained in the current one
//! stops exploring; a state explored with another sleep set is explored
//! again and stored with the intersection. States are stored as 128-bit
//! digests ([`Digest`]). docs/exhaustive.md has the argument and the
//! figures.
//!
//! A schedule that stops exploring (every task asleep, or a state seen
//! before) is *drained*: it runs to its end with nothing recorded or
//! observed ([`silent`]), so that shuttle's tasks finish normally and their
//! stacks go back to its pool.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::observe::obs::Sink;

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

/// A 128-bit digest of a sequence of words: two independent 64-bit lanes,
/// each a chain of splitmix64 finalisers. It is a [`Hasher`], so anything
/// that derives `Hash` can be fed into it.
///
/// The stateful search stores these instead of states (hash compaction):
/// two distinct states that collide would make it skip the second. With
/// `k` states stored the chance of any collision is about `k^2 / 2^129`,
/// below `10^-24` for the `10^7` states a search here can store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest {
    a: u64,
    b: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            a: 0x243F_6A88_85A3_08D3,
            b: 0x1319_8A2E_0370_7344,
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Digest {
    /// Fold one word in.
    pub fn word(&mut self, x: u64) {
        self.a = mix(self.a ^ x);
        self.b = mix(self
            .b
            .rotate_left(23)
            .wrapping_add(x ^ 0xA076_1D64_78BD_642F));
    }
}

impl Hasher for Digest {
    fn finish(&self) -> u64 {
        self.a
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 60));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.word(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
}

/// A hasher for maps keyed by [`Digest`]s, which are hashes already.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 ^= i;
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
const OFF: u8 = 0;
const FOOTPRINTS: u8 = 1;
const STATE: u8 = 2;

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

/// The running task's local state, taken after a failed attempt of a spin
/// loop (see [`spin_restore`]).
#[derive(Clone, Copy, Debug)]
pub struct SpinSnapshot(Local);

/// Snapshot the running task's local state (stateful search only).
pub fn spin_snapshot() -> Option<SpinSnapshot> {
    (mode() == STATE).then(|| {
        TRACK.with(|t| {
            let mut t = t.borrow_mut();
            let cur = t.current;
            SpinSnapshot(*t.task(cur))
        })
    })
}

/// A spin loop failed again after `snap`: its attempt only re-read what the
/// first failure read, so the task's locals are as they were then. Without
/// this, each retry would count as new local state and a wait would never
/// reach a state explored before.
pub fn spin_restore(snap: Option<SpinSnapshot>) {
    if let Some(SpinSnapshot(l)) = snap {
        if mode() == STATE {
            TRACK.with(|t| {
                let mut t = t.borrow_mut();
                let cur = t.current;
                *t.task(cur) = l;
            });
        }
    }
}

/// Record that the running step touches ghost location `loc`.
pub fn ghost(loc: GhostLoc, kind: GhostKind) {
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

fn take() -> Footprint {
    CURRENT.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Turn recording on or off for this OS thread and start a new execution.
pub fn activate(on: bool) {
    set_mode(if on { FOOTPRINTS } else { OFF });
}

fn set_mode(m: u8) {
    MODE.with(|a| a.set(m));
    SILENT.with(|a| a.set(false));
    new_execution();
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
fn chosen(t: usize) {
    TRACK.with(|tr| {
        let mut tr = tr.borrow_mut();
        tr.current = t;
        tr.task(t).steps += 1;
    });
}

/// The digest of the current state: every location's value, every task's
/// local state, the task that may not run next (it just yielded), and the
/// observer's state. `None` if some of it cannot be digested.
fn state_digest(yielded: Option<usize>) -> Option<Digest> {
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

/// Counters of a depth-first search, shared with a progress reporter.
#[derive(Debug, Default)]
pub struct DfsStats {
    /// Set once every schedule has been run.
    pub exhausted: AtomicBool,
    /// Schedules stopped because every runnable thread was asleep.
    pub pruned: AtomicU64,
    /// Deepest level reached.
    pub max_depth: AtomicU64,
    /// Distinct states stored (stateful search).
    pub states: AtomicU64,
    /// Schedules stopped at a state already explored (stateful search).
    pub revisits: AtomicU64,
}

/// The depth-first scheduler.
pub struct Dfs {
    levels: Vec<Level>,
    depth: usize,
    started: u64,
    cap: u64,
    /// What the search has done so far.
    pub stats: Arc<DfsStats>,
    sleep_sets: bool,
    stateful: bool,
    /// The running schedule was pruned and only runs to its end.
    draining: bool,
    /// Per state digest, the sleep set (a mask of task ids) it was
    /// explored with: every choice outside it was explored from there.
    visited: HashMap<Digest, u64, BuildHasherDefault<PassThrough>>,
}

impl Dfs {
    /// A search of at most `cap` schedules, pruned by sleep sets if
    /// `sleep_sets`, and at states already explored if `stateful`.
    pub fn new(cap: u64, sleep_sets: bool, stateful: bool) -> Self {
        Dfs {
            levels: Vec::new(),
            depth: 0,
            started: 0,
            cap,
            stats: Arc::new(DfsStats::default()),
            sleep_sets,
            stateful,
            draining: false,
            visited: HashMap::default(),
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

    /// Stop exploring the running schedule: it runs on to its end, each
    /// task as long as it can, with nothing recorded or observed.
    ///
    /// Stopping it at once would be cheaper in steps but not in time:
    /// shuttle leaks what the stopped tasks' stacks own (measured: 5.7 GB
    /// for 750,000 stopped schedules) and maps a new stack for each of
    /// them in the next schedule, while a task that finishes returns its
    /// stack to shuttle's pool.
    fn drain(&mut self) {
        self.draining = true;
        MODE.with(|m| m.set(OFF));
        SILENT.with(|s| s.set(true));
    }

    /// Whether the state reached now was explored before with a sleep set
    /// contained in `sleep` (then everything explorable from here was
    /// explored); otherwise it is recorded as explored with `sleep`.
    fn seen_before(&mut self, sleep: &[(usize, Footprint)], yielded: Option<usize>) -> bool {
        let Some(d) = state_digest(yielded) else {
            return false;
        };
        if sleep.iter().any(|(t, _)| *t >= 64) {
            return false;
        }
        let mask = sleep.iter().fold(0u64, |m, (t, _)| m | 1u64 << *t);
        match self.visited.get_mut(&d) {
            Some(stored) if *stored & !mask == 0 => true,
            Some(stored) => {
                // Explored before with a sleep set this one does not
                // contain: explore again with this one; from now on the
                // state counts as explored with what both left out.
                *stored &= mask;
                false
            }
            None => {
                self.visited.insert(d, mask);
                self.stats.states.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }
}

impl shuttle::scheduler::Scheduler for Dfs {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        set_mode(if self.stateful { STATE } else { FOOTPRINTS });
        self.draining = false;
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
                self.stats.exhausted.store(true, Ordering::Relaxed);
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
        if self.draining {
            let yielded = current.filter(|_| is_yielding && runnable.len() > 1);
            let ids = runnable.iter().map(|t| t.id());
            // After a yield, the next task in id order after the one that
            // yielded: two threads spinning in turn must not starve the one
            // they wait for.
            let after = |y: shuttle::scheduler::TaskId| {
                let y = usize::from(y);
                ids.clone()
                    .filter(|t| usize::from(*t) > y)
                    .chain(ids.clone().filter(|t| usize::from(*t) < y))
                    .next()
            };
            return match current.filter(|c| Some(*c) != yielded) {
                Some(c) if ids.clone().any(|t| t == c) => Some(c),
                _ => match yielded {
                    Some(y) => after(y),
                    None => ids.clone().next(),
                },
            };
        }
        self.close_step();
        if self.depth < self.levels.len() {
            let l = &self.levels[self.depth];
            self.depth += 1;
            let t = l.choices[l.idx];
            chosen(t);
            return Some(t.into());
        }
        let sleep = match self.depth {
            d if d == 0 || !self.sleep_sets => Vec::new(),
            d => self.levels[d - 1].child_sleep(),
        };
        let yielded = current.filter(|_| is_yielding && runnable.len() > 1);
        let choices: Vec<usize> = runnable
            .iter()
            .map(|t| t.id())
            .filter(|id| Some(*id) != yielded)
            .map(usize::from)
            .filter(|id| !sleep.iter().any(|(s, _)| s == id))
            .collect();
        let Some(&first) = choices.first() else {
            // Every runnable task asleep: this schedule only reorders
            // independent steps of one already explored.
            self.stats.pruned.fetch_add(1, Ordering::Relaxed);
            self.drain();
            return self.next_task(runnable, current, is_yielding);
        };
        if self.stateful && self.seen_before(&sleep, yielded.map(usize::from)) {
            self.stats.revisits.fetch_add(1, Ordering::Relaxed);
            self.drain();
            return self.next_task(runnable, current, is_yielding);
        }
        let n = choices.len();
        self.levels.push(Level {
            choices,
            idx: 0,
            fps: vec![None; n],
            sleep,
        });
        self.depth += 1;
        self.stats
            .max_depth
            .fetch_max(self.depth as u64, Ordering::Relaxed);
        chosen(first);
        Some(first.into())
    }

    fn next_u64(&mut self) -> u64 {
        0
    }
}
