//! Coverage events (racy situations whose occurrence a "holds" depends on)
//! and the quantitative measures taken over the executions of a search.

use serde::Serialize;

use crate::observe::record::Step;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A racy situation whose occurrence a coverage check counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// An update read the threshold and did not add to it (v6.0's skip).
    Skip,
    /// An update skipped its add although the threshold it read was, or
    /// was about to be, reset by a flush that did not see this update's
    /// per-CPU write: the race behind `no_lost_flush`. Counted at the reset
    /// (skip, then reset, in execution order) or at the skip (the read
    /// returned a value older than the latest write, which only loom's weak
    /// memory allows).
    SkipRacedReset,
    /// A reader decided while skipped magnitude was outstanding (not yet
    /// reset).
    ReaderSawSkippedUnits,
    /// A flush finished without an update whose per-CPU write had already
    /// happened in execution order: a later flush must pick it up.
    UpdateBehindFlusher,
    /// A threshold add landed during a flush and was erased by its reset.
    AddErasedByReset,
    /// A reader read the aggregate while a flush was in progress.
    ReadDuringFlush,
    /// A flusher found the flush lock taken: a `spin_trylock` of
    /// `stats_flush_lock` failed (v5.16-v6.3), or `spin_lock` of
    /// `cgroup_rstat_lock` had to wait (v6.8 on).
    TrylockContended,
    /// A reader decided not to flush while updates were missing from the
    /// aggregate.
    StaleNoFlush,
    /// A later epoch: a CPU that skipped an add, then saw the threshold
    /// reset, accounted a batch again (added or skipped).
    RecrossAfterReset,
    /// A second reset of the threshold in one execution.
    SecondReset,
    /// A ratelimited reader's time gate said not due, and it skipped the
    /// flush.
    RatelimitedSkip,
    /// A ratelimited reader's time gate found it due while a flush of the
    /// whole tree was open and had not yet stamped the flush time: the
    /// race on `flush_next_time` that 3cd9992b9302 calls harmless (C9).
    RatelimitedRacedStamp,
    /// The periodic work found another flush in progress and skipped its
    /// own (v5.16-v6.7: it goes through the trylock or
    /// `stats_flush_ongoing`).
    PeriodicSkipped,
    /// After every update and the final flush, an aggregate was short of
    /// the updates (counted once per execution; `eventual_conservation`).
    LostAtFinal,
    /// Of those, one of the `--settle` flushes brought it back.
    RecoveredByFlush,
    /// Of those, it was still short after every `--settle` flush.
    LostAfterSettle,
    /// Still short after the settle flushes, exact after the later update
    /// (`--settle-update`) and one more flush.
    RecoveredByUpdate,
    /// Still short even after the later update and its flush.
    LostAfterUpdate,
    /// Lifetime: an updater's read-side critical section that had found a
    /// memcg was still open when that memcg's release work ran.
    ReaderAcrossRelease,
    /// Lifetime: an update landed on a memcg after its release flush.
    UpdateAfterRelease,
    /// At a reader's decision the no-skip twin's gate over the same
    /// history would flush: what a flush entry must be able to show, since
    /// an entry whose twin never flushes cannot show a lost flush (blind).
    TwinFlushed,
    /// An update of a non-zero value returned: what an entry must show for
    /// `conservation`.
    Charged,
    /// Main's quiescent reader decided while pages were missing from the
    /// aggregate it reads: `quiescent_read_exact`'s premise.
    QuiescentStale,
    /// A read missed an update that returned a tick or more earlier:
    /// `flush_time_bound`'s premise.
    StaleForTicks,
    /// An updater added to a threshold: `stats_updates_bound`'s premise.
    ThresholdAdded,
    /// A ratelimited reader's time gate ran when no flush of the whole tree
    /// had run for more than `2 * FLUSH_TIME` ticks (the periodic work
    /// late): `ratelimited_skip_justified`'s premise.
    RatelimitedLate,
    /// A reader read a memcg it (or, for main, any reader) had read
    /// before: `monotonic_reads`' premise.
    ReadAgain,
    /// A reader decided, to flush or not, while pages were missing from
    /// the aggregate it reads: the staleness bounds' premise.
    StaleAtDecision,
    /// A step of an update (its counter, its fold, its updated-tree link)
    /// while a flush section was open: `eventual_conservation`'s premise.
    UpdateDuringFlush,
    /// A step of an update while some memcg was flushable (its atomic
    /// above the trigger): `ancestors_flushable`'s premise.
    FlushableDuringUpdate,
    /// Lifetime: a memcg went offline while a charge was in progress: the
    /// premise of the lifetime properties.
    ChargeRacedDeath,
    /// Main's quiescent gate decided with more pages pending than its
    /// trigger plus what every CPU may hold below the batch:
    /// `quiescent_reader_flushes`' premise.
    QuiescentOverdue,
}

impl Event {
    /// Every event, in report order.
    pub const ALL: [Event; 32] = [
        Event::Skip,
        Event::SkipRacedReset,
        Event::ReaderSawSkippedUnits,
        Event::UpdateBehindFlusher,
        Event::AddErasedByReset,
        Event::ReadDuringFlush,
        Event::TrylockContended,
        Event::StaleNoFlush,
        Event::RecrossAfterReset,
        Event::SecondReset,
        Event::RatelimitedSkip,
        Event::RatelimitedRacedStamp,
        Event::PeriodicSkipped,
        Event::LostAtFinal,
        Event::RecoveredByFlush,
        Event::LostAfterSettle,
        Event::RecoveredByUpdate,
        Event::LostAfterUpdate,
        Event::ReaderAcrossRelease,
        Event::UpdateAfterRelease,
        Event::TwinFlushed,
        Event::Charged,
        Event::QuiescentStale,
        Event::StaleForTicks,
        Event::ThresholdAdded,
        Event::RatelimitedLate,
        Event::ReadAgain,
        Event::StaleAtDecision,
        Event::UpdateDuringFlush,
        Event::FlushableDuringUpdate,
        Event::ChargeRacedDeath,
        Event::QuiescentOverdue,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Event::Skip => "skip",
            Event::SkipRacedReset => "skip_raced_reset",
            Event::ReaderSawSkippedUnits => "reader_saw_skipped_units",
            Event::UpdateBehindFlusher => "update_behind_flusher",
            Event::AddErasedByReset => "add_erased_by_reset",
            Event::ReadDuringFlush => "read_during_flush",
            Event::TrylockContended => "trylock_contended",
            Event::StaleNoFlush => "stale_no_flush",
            Event::RecrossAfterReset => "recross_after_reset",
            Event::SecondReset => "second_reset",
            Event::RatelimitedSkip => "ratelimited_skip",
            Event::RatelimitedRacedStamp => "ratelimited_raced_stamp",
            Event::PeriodicSkipped => "periodic_skipped",
            Event::LostAtFinal => "lost_at_final",
            Event::RecoveredByFlush => "recovered_by_flush",
            Event::LostAfterSettle => "lost_after_settle",
            Event::RecoveredByUpdate => "recovered_by_update",
            Event::LostAfterUpdate => "lost_after_update",
            Event::ReaderAcrossRelease => "reader_across_release",
            Event::UpdateAfterRelease => "update_after_release",
            Event::TwinFlushed => "twin_flushed",
            Event::Charged => "charged",
            Event::QuiescentStale => "quiescent_stale",
            Event::StaleForTicks => "stale_for_ticks",
            Event::ThresholdAdded => "threshold_added",
            Event::RatelimitedLate => "ratelimited_late",
            Event::ReadAgain => "read_again",
            Event::StaleAtDecision => "stale_at_decision",
            Event::UpdateDuringFlush => "update_during_flush",
            Event::FlushableDuringUpdate => "flushable_during_update",
            Event::ChargeRacedDeath => "charge_raced_death",
            Event::QuiescentOverdue => "quiescent_overdue",
        }
    }

    /// Look an event up by name.
    pub fn by_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Counts of [`Event`]s over all executions of one exploration.
#[derive(Debug, Default)]
pub struct Coverage {
    counts: [AtomicU64; Event::ALL.len()],
}

impl Coverage {
    /// Count one occurrence.
    pub fn hit(&self, e: Event) {
        self.counts[e as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Occurrences so far.
    pub fn count(&self, e: Event) -> u64 {
        self.counts[e as usize].load(Ordering::Relaxed)
    }

    /// All counts, by event name.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        Event::ALL
            .iter()
            .map(|e| (e.name(), self.count(*e)))
            .collect()
    }
}

/// How a staleness splits up (pages): per-CPU residue below the batch,
/// counted in the threshold since its last reset, skipped since that reset
/// (v6.0), and the rest: batched before the last reset but not flushed by
/// it (lost from the threshold by a reset that raced with a flush; it also
/// absorbs what a running flush has already folded).
pub type Split = [i64; 4];

/// The largest value of one measure seen so far, with the trace of the
/// execution that reached it (when the exploration records traces).
#[derive(Debug, Default)]
pub struct Max {
    best: Mutex<Option<(i64, Split, Vec<Step>)>>,
}

impl Max {
    /// Offer a value; keeps it (and `trace()`) if it is a new maximum.
    pub fn offer(&self, value: i64, trace: impl FnOnce() -> Vec<Step>) {
        self.offer_split(value, [0; 4], trace)
    }

    /// [`Max::offer`] with the split of the value. Of equal values the
    /// split with the most pages lost, then skipped, then counted is kept,
    /// so the result does not depend on the order a search runs its
    /// executions in.
    pub fn offer_split(&self, value: i64, split: Split, trace: impl FnOnce() -> Vec<Step>) {
        let key = |v: i64, s: &Split| (v, s[3], s[2], s[1], s[0]);
        let mut b = self.best.lock().unwrap_or_else(|e| e.into_inner());
        if b.as_ref()
            .is_none_or(|(v, s, _)| key(value, &split) > key(*v, s))
        {
            *b = Some((value, split, trace()));
        }
    }

    /// The maximum, its split and its witness steps, if any value was offered.
    pub fn get(&self) -> Option<(i64, Split, Vec<Step>)> {
        self.best.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The maximum, or 0.
    pub fn value(&self) -> i64 {
        self.get().map_or(0, |(v, _, _)| v)
    }
}

/// Quantities measured over every explored execution (staleness in
/// update magnitude, pages: the sum of the updates written so far, in
/// execution order, minus the aggregate).
#[derive(Debug, Default)]
pub struct Measures {
    /// At a reader decision not to flush.
    pub stale_at_no_flush: Max,
    /// The same without the pages lost to a racing reset: residue, counted
    /// and skipped since the last reset, the part the threshold gate
    /// answers for.
    pub stale_since_reset: Max,
    /// When a reader that decided to flush reads the statistic (a trylock
    /// loser returns at once and reads whatever is there).
    pub stale_after_flush_call: Max,
    /// When a reader whose gate decided to flush reads the statistic
    /// although its flush was skipped: it found another flush in progress
    /// (lost the trylock or the `stats_flush_ongoing` race) and returned
    /// at once (B7).
    pub stale_after_skipped_flush: Max,
    /// The same in ticks: the age of the oldest update missing from the
    /// aggregate at that read (abstract time only).
    pub ticks_after_skipped_flush: Max,
    /// The largest value of the threshold.
    pub max_threshold: Max,
    /// Ticks since the oldest update missing from the aggregate was
    /// written, at every read of the statistic (abstract time only).
    pub stale_ticks: Max,
    /// Lifetime: pages missing from a memcg's aggregate at the quiescent
    /// read after a death.
    pub lost_at_death: Max,
    /// Threshold RMWs issued by updaters, over all executions.
    pub rmws: AtomicU64,
    /// `__mod_memcg_state()` calls, over all executions.
    pub updates: AtomicU64,
}
