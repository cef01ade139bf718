//! The exhaustive search's driver: one depth-first scheduler on the
//! calling thread, or several workers on threads of their own splitting the
//! tree between them and, with `--shard I/N`, between machines
//! ([`crate::explore::dfs::Split`]).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::explore::dfs::{self, Dfs, DfsStats, Split, Visited};

/// The knobs of one exhaustive search.
#[derive(Clone, Copy, Debug)]
pub(super) struct DfsKnobs {
    pub(super) max_schedules: usize,
    pub(super) sleep_sets: bool,
    pub(super) stateful: bool,
    pub(super) symmetry: bool,
    pub(super) workers: usize,
}

impl DfsKnobs {
    fn scheduler(&self) -> Dfs {
        Dfs::new(self.max_schedules as u64, self.sleep_sets, self.stateful)
            .with_symmetry(self.symmetry && self.stateful)
    }

    /// Whether the search is split: several workers, or one shard of
    /// `shards`.
    pub(super) fn split(&self, shards: u64) -> bool {
        self.workers > 1 || shards > 1
    }
}

/// Prefixes wanted per shard: enough that no one subtree holds most of a
/// search, few enough that every worker walking all of them costs little.
/// It depends only on the number of shards, so that every machine of a
/// sharded search splits at the same level.
const PREFIXES_PER_SHARD: u64 = 128;

/// The deepest split tried.
const MAX_SPLIT_LEVELS: usize = 24;

/// Run the search on the calling thread (one worker, one shard) or on
/// `knobs.workers` threads; `shard` is `(index, count)`, and `go` runs one
/// scheduler over the scenario to its end. `Err` carries the first
/// worker's panic.
pub(super) fn run_dfs(
    knobs: DfsKnobs,
    shard: (u64, u64),
    stats: Arc<DfsStats>,
    go: &(dyn Fn(Dfs) + Sync),
) -> std::thread::Result<()> {
    if !knobs.split(shard.1) {
        let mut dfs = knobs.scheduler();
        dfs.stats = stats;
        let r = panic::catch_unwind(AssertUnwindSafe(|| go(dfs)));
        dfs::activate(false);
        return r;
    }
    let levels = split_levels(knobs, shard.1, go)?;
    let split = Arc::new(Split::new(levels, shard.0, shard.1));
    let visited = Arc::new(Visited::default());
    let workers = knobs.workers.max(1);
    let results: Vec<std::thread::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (split, visited, stats) = (split.clone(), visited.clone(), stats.clone());
                s.spawn(move || {
                    let dfs = knobs.scheduler().worker(split.clone(), visited, stats);
                    let r = panic::catch_unwind(AssertUnwindSafe(|| go(dfs)));
                    dfs::activate(false);
                    if r.is_err() {
                        split.stop();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(Err))
            .collect()
    });
    results.into_iter().find(Result::is_err).unwrap_or(Ok(()))
}

/// The branching levels above the prefixes: the fewest that give
/// [`PREFIXES_PER_SHARD`] prefixes per shard, counted by short searches
/// that stop at each prefix.
fn split_levels(
    knobs: DfsKnobs,
    shards: u64,
    go: &(dyn Fn(Dfs) + Sync),
) -> std::thread::Result<usize> {
    let want = PREFIXES_PER_SHARD * shards.max(1);
    let mut last = 0;
    for levels in 1..=MAX_SPLIT_LEVELS {
        let stats = Arc::new(DfsStats::default());
        let count = Arc::new(Split::counting(levels));
        let dfs = knobs
            .scheduler()
            .worker(count, Arc::new(Visited::default()), stats.clone());
        let r = panic::catch_unwind(AssertUnwindSafe(|| go(dfs)));
        dfs::activate(false);
        r?;
        let prefixes = stats.elsewhere.load(Ordering::Relaxed);
        if prefixes >= want || prefixes <= last {
            return Ok(levels);
        }
        last = prefixes;
    }
    Ok(MAX_SPLIT_LEVELS)
}
