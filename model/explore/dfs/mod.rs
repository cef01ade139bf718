//! The exhaustive sequentially consistent search: a depth-first shuttle
//! scheduler with sleep sets (Godefroid), driven by each step's *actual*
//! footprint.
//!
//! A step is one shared-memory operation plus the thread-local code after
//! it, up to the next scheduling point. While a step runs, everything it
//! touches is recorded here: the atomics it accessed (numbered in creation
//! order, the same in every execution of a deterministic scenario), whether
//! it wrote them, and the ghost locations the monitors say it read, added
//! to or wrote ([`crate::vocab::footprint::footprint`]). When the next scheduling decision is made, the
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
//! **State caching** (`stateful`). At every new decision with more than
//! one choice the scheduler digests the state: the value of every atomic
//! and cell (reported with each access, [`access`]), each task's steps
//! and the values its operations returned since it started or last
//! declared its locals dead ([`checkpoint_locals`]), the task that just
//! yielded, and the observer's state ([`crate::vocab::obs::Sink::digest`]). A schedule that reaches a
//! state explored before with a sleep set contained in the current one
//! stops exploring; a state explored with another sleep set is explored
//! again and stored with the intersection. States are stored as 128-bit
//! digests ([`Digest`]). docs/exhaustive.md has the argument and the
//! figures.
//!
//! **Quiet prefixes.** At each branching decision the stateful search
//! saves the tracked execution and the observer's state
//! ([`crate::vocab::obs::Sink::save`]). A schedule that comes back to try
//! another choice there runs the prefix again (shuttle cannot resume an
//! execution) but tracks and observes nothing until it reaches that
//! decision, where it restores the saved state: the prefix's operations
//! run as scheduling points only. The restored state is the one a tracked
//! replay would reach, since the prefix is the same deterministic run.
//!
//! A schedule that stops exploring (every task asleep, or a state seen
//! before) is *drained*: it runs to its end with nothing recorded or
//! observed ([`silent`]), so that shuttle's tasks finish normally and their
//! stacks go back to its pool.

mod digest;
mod record;
mod split;
mod state;
mod track;

pub use crate::vocab::footprint::{GhostKind, GhostLoc};
pub use digest::{Digest, PassThrough};
pub use record::{
    access, activate, checkpoint_locals, created, global, install_recorder, new_execution, next_id,
    opaque, set_role, set_sink, silent, unobserved, Footprint,
};
pub use split::{Split, Visited};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Calls of [`tracked_replays`] in progress.
static TRACKED_REPLAYS: AtomicUsize = AtomicUsize::new(0);

/// Run `f` with the quiet prefixes off: every stateful search that starts
/// in this process meanwhile (searches run on threads of their own)
/// tracks and observes every replayed step, as before quiet prefixes
/// existed. Both store the same states; this is for the test that shows it.
pub fn tracked_replays<R>(f: impl FnOnce() -> R) -> R {
    struct Off;
    impl Drop for Off {
        fn drop(&mut self) {
            TRACKED_REPLAYS.fetch_sub(1, Ordering::SeqCst);
        }
    }
    TRACKED_REPLAYS.fetch_add(1, Ordering::SeqCst);
    let _off = Off;
    f()
}

use record::{chosen, set_mode, take, with_track, Saved, FOOTPRINTS, STATE};

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
    /// Branching levels (more than one choice) above this one.
    above: usize,
    /// The state on arrival, if this level branches and the observer can
    /// save its part (stateful search): a schedule that comes back to
    /// try another choice replays the prefix quietly and restores it.
    saved: Option<Saved>,
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
    /// Workers (searches sharing these counters) that ran every schedule
    /// of their part.
    pub exhausted: AtomicU64,
    /// Schedules started, by every worker.
    pub started: AtomicU64,
    /// Schedules stopped at a prefix another worker or shard searches.
    pub elsewhere: AtomicU64,
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
    /// The split between workers and shards, if any ([`split`]).
    split: Option<Arc<Split>>,
    /// Prefixes met so far, in order.
    prefixes: u64,
    /// The ticket held: the place of the prefix this worker searches next.
    ticket: Option<u64>,
    /// The level of the prefix being searched.
    root: Option<usize>,
    /// What the search has done so far.
    pub stats: Arc<DfsStats>,
    sleep_sets: bool,
    stateful: bool,
    /// Store states by their canonical digest under permutations of
    /// interchangeable CPUs ([`state`]).
    symmetry: bool,
    /// The running schedule was pruned and only runs to its end.
    draining: bool,
    /// Save the state at branching decisions and replay prefixes quietly.
    quiet: bool,
    /// Per state digest, the sleep set (a mask of task ids) it was
    /// explored with: every choice outside it was explored from there.
    visited: Arc<Visited>,
}

impl Dfs {
    /// A search of at most `cap` schedules, pruned by sleep sets if
    /// `sleep_sets`, and at states already explored if `stateful`.
    pub fn new(cap: u64, sleep_sets: bool, stateful: bool) -> Self {
        install_recorder();
        Dfs {
            levels: Vec::new(),
            depth: 0,
            started: 0,
            cap,
            split: None,
            prefixes: 0,
            ticket: None,
            root: None,
            stats: Arc::new(DfsStats::default()),
            sleep_sets,
            stateful,
            symmetry: false,
            draining: false,
            quiet: TRACKED_REPLAYS.load(Ordering::SeqCst) == 0,
            visited: Arc::default(),
        }
    }

    /// One worker of a search split by `split`, sharing `visited` and
    /// `stats` with the others.
    pub fn worker(
        mut self,
        split: Arc<Split>,
        visited: Arc<Visited>,
        stats: Arc<DfsStats>,
    ) -> Self {
        self.split = Some(split);
        self.visited = visited;
        self.stats = stats;
        self
    }

    /// Store states by their canonical digest under permutations of
    /// interchangeable CPUs (stateful searches only).
    pub fn with_symmetry(mut self, on: bool) -> Self {
        self.symmetry = on;
        self
    }

    /// File the footprint of the step that just ended under its choice.
    fn close_step(&mut self) {
        let fp = take();
        if self.depth > 0 {
            let l = &mut self.levels[self.depth - 1];
            // A replayed step's footprint was filed when it first ran (and
            // was not recorded now).
            if l.fps[l.idx].is_none() {
                l.fps[l.idx] = Some(fp);
            }
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
        record::drain();
    }

    /// Whether the state reached now was explored before with a sleep set
    /// contained in `sleep` (then everything explorable from here was
    /// explored); otherwise it is recorded as explored with `sleep`.
    fn seen_before(&mut self, sleep: &[(usize, Footprint)], yielded: Option<usize>) -> bool {
        let key = with_track(|t| {
            if self.symmetry {
                state::canonical(t, yielded)
            } else {
                state::plain(t, yielded)
            }
        });
        let Some(key) = key else {
            return false;
        };
        if sleep.iter().any(|(t, _)| key.bit(*t) >= 64) {
            return false;
        }
        let mask = sleep.iter().fold(0u64, |m, (t, _)| m | 1u64 << key.bit(*t));
        match self.visited.check(key.digest, mask) {
            split::Seen::Explored => true,
            split::Seen::Again => false,
            split::Seen::New => {
                self.stats.states.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// A new level with `above` branching levels above it is the root of a
    /// prefix: whether this worker searches it (taking a ticket if it holds
    /// none).
    fn take_prefix(&mut self, above: usize) -> bool {
        let Some(split) = self.split.clone() else {
            return true;
        };
        let is_root = above == split.levels
            && match self.depth.checked_sub(1) {
                None => split.levels == 0,
                Some(d) => self.levels[d].above < split.levels,
            };
        if !is_root {
            return true;
        }
        let p = self.prefixes;
        self.prefixes += 1;
        let Some(place) = split.ours(p) else {
            return false;
        };
        let ticket = *self.ticket.get_or_insert_with(|| split.ticket());
        assert!(
            place <= ticket,
            "flushcheck: the split search met prefix {place} while holding ticket {ticket}: the workers' trees differ"
        );
        if place == ticket {
            self.root = Some(self.depth);
        }
        place == ticket
    }

    /// Whether states may be stored at a level with `above` branching
    /// levels above it: not above the prefixes of a split search, whose
    /// levels every worker must meet alike.
    fn caches_at(&self, above: usize) -> bool {
        self.split.as_ref().is_none_or(|s| above >= s.levels)
    }
}

impl shuttle::scheduler::Scheduler for Dfs {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        set_mode(if self.stateful { STATE } else { FOOTPRINTS });
        self.draining = false;
        if self.split.as_ref().is_some_and(|s| s.stopped()) {
            return None;
        }
        if self.started > 0 {
            self.levels.truncate(self.depth);
            while let Some(l) = self.levels.last_mut() {
                if l.idx + 1 < l.choices.len() {
                    l.idx += 1;
                    break;
                }
                self.levels.pop();
            }
            if self.root.is_some_and(|r| self.levels.len() <= r) {
                // The prefix's subtree is done: the next one needs a ticket.
                self.root = None;
                self.ticket = None;
            }
            if self.levels.is_empty() {
                self.stats.exhausted.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            if self.levels.last().is_some_and(|l| l.saved.is_some()) {
                record::quiet();
            }
        }
        if self.stats.started.fetch_add(1, Ordering::Relaxed) >= self.cap {
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
            let replay = l.fps[l.idx].is_some();
            if !replay {
                // The end of the prefix: the choice tried anew.
                if let Some(saved) = &l.saved {
                    record::restore(saved);
                }
            }
            self.depth += 1;
            let t = l.choices[l.idx];
            chosen(t, replay);
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
        let above = self.depth.checked_sub(1).map_or(0, |d| {
            let l = &self.levels[d];
            l.above + usize::from(l.choices.len() > 1)
        });
        if !self.take_prefix(above) {
            self.stats.elsewhere.fetch_add(1, Ordering::Relaxed);
            self.drain();
            return self.next_task(runnable, current, is_yielding);
        }
        // Only branching states are stored: a revisit of a state with one
        // choice is caught one step on, at the next branching one (or the
        // schedule ends without branching), and the states in between are
        // not digested (docs/exhaustive.md, section 9).
        if self.stateful
            && choices.len() > 1
            && self.caches_at(above)
            && self.seen_before(&sleep, yielded.map(usize::from))
        {
            self.stats.revisits.fetch_add(1, Ordering::Relaxed);
            self.drain();
            return self.next_task(runnable, current, is_yielding);
        }
        let n = choices.len();
        let saved = if self.stateful && self.quiet && n > 1 {
            record::save()
        } else {
            None
        };
        self.levels.push(Level {
            choices,
            idx: 0,
            fps: vec![None; n],
            sleep,
            above,
            saved,
        });
        self.depth += 1;
        self.stats
            .max_depth
            .fetch_max(self.depth as u64, Ordering::Relaxed);
        chosen(first, false);
        Some(first.into())
    }

    fn next_u64(&mut self) -> u64 {
        0
    }
}
