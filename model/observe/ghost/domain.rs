//! The small records ghost state is made of: a threshold domain, a flush
//! section, the update a CPU is in, and what one observation made happen.

use crate::vocab::Actor;

/// The per-CPU state of the later-epoch coverage event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Epoch {
    /// Nothing pending.
    Fresh,
    /// Skipped an add since the last reset.
    Skipped,
    /// Skipped, then a reset followed.
    SkippedThenReset,
}

/// The update a CPU is in the middle of, in one domain.
#[derive(Clone, Copy, Debug, Default, Hash)]
pub(super) struct InUpdate {
    /// The threshold value the update read, if it read it.
    pub(super) read: Option<i64>,
    /// Whether it wrote the threshold.
    pub(super) wrote: bool,
    /// Whether it already accounted a batch (added or skipped).
    pub(super) accounted: bool,
    /// Whether it wrote its per-CPU counter (per-memcg domains: it counted
    /// the update before any skip).
    pub(super) counted: bool,
}

/// Situations a step just produced, for coverage (see
/// [`crate::observe::coverage::Event`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Happened {
    /// An update skipped its add.
    pub skip: bool,
    /// The skip was v6.17's `break`: the update left the ancestor walk at
    /// a flushable level without counting there.
    pub broke: bool,
    /// A skip raced with a reset.
    pub skip_raced_reset: bool,
    /// A flush section ended without an update already written.
    pub update_behind_flusher: bool,
    /// A reset erased an add made during the flush.
    pub add_erased_by_reset: bool,
    /// A flusher found the flush lock taken: the trylock of
    /// `stats_flush_lock` failed (v5.16-v6.3), or `cgroup_rstat_lock` made
    /// it wait (v6.8 on).
    pub trylock_contended: bool,
    /// The periodic work found another flush in progress (lost the
    /// trylock, or found `stats_flush_ongoing` set) and skipped its flush.
    pub periodic_skipped: bool,
    /// A CPU accounted a batch again after a skip and a reset.
    pub recross_after_reset: bool,
    /// A threshold was reset a second time.
    pub second_reset: bool,
}

/// One threshold and its per-CPU counters.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Per CPU: the counter as last observed, less what the owner already
    /// added from it (v6.8 adds before it zeroes the counter).
    pub residue: Vec<i64>,
    /// Per CPU (per-memcg domains): pages the owner took out of its counter
    /// (`this_cpu_xchg()`) and has not added yet.
    pub flight: Vec<i64>,
    /// Magnitude added to the threshold since its last reset.
    pub counted: i64,
    /// Magnitude skipped since the threshold's last reset.
    pub skipped: i64,
    /// The threshold as last written.
    pub threshold: i64,
    /// The largest value the threshold held.
    pub max_threshold: i64,
    /// Per CPU: the update's running sum at its latest skip since the last
    /// reset.
    pub(super) skipped_at: Vec<Option<i64>>,
    /// Threshold adds made while a flush section was open.
    pub(super) added_during_flush: i64,
    /// Resets so far.
    pub resets: u32,
    pub(super) in_update: Vec<InUpdate>,
    pub(super) epoch: Vec<Epoch>,
}

impl Domain {
    pub(super) fn new(cpus: usize) -> Self {
        Domain {
            residue: vec![0; cpus],
            flight: vec![0; cpus],
            counted: 0,
            skipped: 0,
            threshold: 0,
            max_threshold: 0,
            skipped_at: vec![None; cpus],
            added_during_flush: 0,
            resets: 0,
            in_update: vec![InUpdate::default(); cpus],
            epoch: vec![Epoch::Fresh; cpus],
        }
    }
}

/// A flush section in progress.
#[derive(Clone, Copy, Debug, Hash)]
pub struct Section {
    /// The flusher.
    pub actor: Actor,
    /// The memcg whose subtree it flushes (0: the whole tree).
    pub root: u8,
    /// The (memcg, CPU) counters its walk has read, one bit each
    /// (`memcg * cpus + cpu`).
    pub walked: u64,
    /// Whether it has written the flush time (`flush_next_time`,
    /// `flush_last_time`) yet.
    pub stamped: bool,
}

/// The state of a stateful search (see [`super::Ghost`]'s `Hash`). Left out:
/// `max_threshold` (a maximum over the past, which decides nothing later),
/// `resets` beyond 2 (only the second reset is an event) and
/// `added_during_flush` beyond 1 (only whether it is positive is tested).
impl std::hash::Hash for Domain {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Domain {
            residue,
            flight,
            counted,
            skipped,
            threshold,
            max_threshold: _,
            skipped_at,
            added_during_flush,
            resets,
            in_update,
            epoch,
        } = self;
        (residue, flight, counted, skipped, threshold, skipped_at).hash(h);
        let added = (*added_during_flush).min(1);
        (added, (*resets).min(2), in_update, epoch).hash(h);
    }
}
