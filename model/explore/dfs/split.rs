//! What the workers of one exhaustive search share: the states explored
//! (one visited set, in shards under locks) and the split of the tree.
//!
//! **The split.** Every worker runs the same depth-first search over the
//! first `levels` branching levels of the tree (with sleep sets, without
//! state caching there, so that each worker meets the same nodes in the
//! same order). The nodes below the `levels`-th branching level are the
//! *prefixes*, numbered in that order: prefix `p` belongs to shard
//! `p % count` (machines, `--shard I/N`), and within a shard to the worker
//! that claims it first: a worker takes a ticket from a shared counter,
//! skips the prefixes before its ticket and searches the subtree of the one
//! that matches it, then takes the next ticket. Every prefix is searched by
//! exactly one worker of its shard, with the same sleep sets as the
//! sequential search gives it; below the prefixes the workers share one
//! visited set, and a state stored by one worker prunes the others'
//! revisits exactly as a state stored earlier prunes the sequential
//! search's (the storing worker explores everything outside its sleep
//! set). Verdicts, maxima and coverage are the same as the sequential
//! search's; which worker stores a state first is not, so the counts of
//! states and schedules vary from run to run.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::digest::{Digest, PassThrough};

/// The states a search stored, each with the sleep set (a mask) it was
/// explored with.
pub struct Visited {
    shards: Vec<Mutex<HashMap<Digest, u64, BuildHasherDefault<PassThrough>>>>,
}

/// What a state's digest says about the schedule reaching it.
pub(super) enum Seen {
    /// Explored before with a sleep set contained in this one: prune.
    Explored,
    /// Explored before with another sleep set: explore again.
    Again,
    /// Never seen: explore.
    New,
}

impl Default for Visited {
    fn default() -> Self {
        Visited {
            shards: (0..64).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Visited {
    /// Look `d` up as reached with sleep set `mask`, and record it.
    pub(super) fn check(&self, d: Digest, mask: u64) -> Seen {
        let shard = &self.shards[(d.b >> 58) as usize];
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(&d) {
            Some(stored) if *stored & !mask == 0 => Seen::Explored,
            Some(stored) => {
                // Explored before with a sleep set this one does not
                // contain: explore again with this one; from now on the
                // state counts as explored with what both left out.
                *stored &= mask;
                Seen::Again
            }
            None => {
                map.insert(d, mask);
                Seen::New
            }
        }
    }
}

/// How the tree is split between workers and machines.
#[derive(Debug)]
pub struct Split {
    /// Branching levels above a prefix.
    pub levels: usize,
    /// This machine's shard: `(index, count)`.
    pub shard: (u64, u64),
    /// The next ticket of this machine's workers.
    next: AtomicU64,
    /// A worker failed: the others stop.
    stopped: AtomicBool,
}

impl Split {
    /// Prefixes below `levels` branching levels, shard `index` of `count`.
    pub fn new(levels: usize, index: u64, count: u64) -> Self {
        Split {
            levels,
            shard: (index, count.max(1)),
            next: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// A split that searches no prefix, only counts them (in
    /// [`super::DfsStats::elsewhere`]).
    pub fn counting(levels: usize) -> Self {
        Split {
            levels,
            shard: (0, 0),
            next: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// Stop every worker at its next schedule.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Whether a worker failed.
    pub(super) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// The place of prefix `p` among this shard's, if it is this shard's.
    pub(super) fn ours(&self, p: u64) -> Option<u64> {
        let (i, n) = self.shard;
        (n > 0 && p % n == i).then(|| p / n)
    }

    /// A ticket: the place of the next prefix the calling worker searches.
    pub(super) fn ticket(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}
