//! Ghost state and coverage counters: bookkeeping that is not kernel state.
//!
//! Ghost updates are placed directly after the model operation they shadow.
//! Under loom and shuttle no thread switch can come between the two, so the
//! ghost update is part of that operation's atomic step. Real threads have
//! no such guarantee, so [`Ghost::step`] takes a lock around the model
//! operation and its ghost update on the std backend (this serialises the
//! threshold operations there; it does not affect what loom and shuttle
//! explore).
//!
//! Under loom the ghost sees operations in the order loom schedules them,
//! which is not the order in which weak-memory loads observe them, so
//! `no_lost_flush` is checked differentially under loom instead.

use serde::Serialize;

use crate::platform::ghost::{AtomicI64, AtomicU64, Mutex, Ordering};
use crate::platform::{BackendKind, Platform};

/// A racy situation whose occurrence a coverage check counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// `memcg_rstat_updated()` skipped its `atomic_add`.
    Skip,
    /// An update skipped its add although the threshold it read was, or
    /// was about to be, reset by a flush that did not see this update's
    /// per-CPU write: the race behind `no_lost_flush`. Counted at the reset
    /// (skip, then reset, in execution order) or at the skip (the read
    /// returned a value from before a reset that had already happened, which
    /// only loom's weak memory allows).
    SkipRacedReset,
    /// A reader decided while skipped increments were outstanding (the ghost
    /// baseline differed from the value read). Schedule-based: under loom a
    /// stale read also counts.
    ReaderSawSkippedUnits,
    /// A flush finished without an update whose per-CPU write had already
    /// happened in execution order (the flush read that counter earlier, or,
    /// under loom, read an older value): a later flush must pick it up.
    UpdateBehindFlusher,
    /// An `atomic_add` landed during a flush and was erased by its reset.
    AddErasedByReset,
    /// A reader read the aggregate while a flush was in progress.
    ReadDuringFlush,
    /// A `spin_trylock` failed because another flusher held the lock.
    TrylockContended,
    /// A reader decided not to flush while updates were missing from the
    /// aggregate.
    StaleNoFlush,
}

impl Event {
    /// Every event, in report order.
    pub const ALL: [Event; 8] = [
        Event::Skip,
        Event::SkipRacedReset,
        Event::ReaderSawSkippedUnits,
        Event::UpdateBehindFlusher,
        Event::AddErasedByReset,
        Event::ReadDuringFlush,
        Event::TrylockContended,
        Event::StaleNoFlush,
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
        }
    }
}

/// Counts of [`Event`]s over all executions of one exploration, and the
/// quantitative [`Measures`] taken over the same executions.
#[derive(Debug, Default)]
pub struct Coverage {
    counts: [AtomicU64; 8],
    /// Maxima over the executions.
    pub measures: Measures,
}

/// The largest value of one measure seen so far, with the trace of the
/// execution that reached it (when the exploration records traces).
#[derive(Debug, Default)]
pub struct Max {
    best: Mutex<Option<(i64, Split, Vec<crate::trace::Step>)>>,
}

/// How a staleness splits up (pages): per-CPU residue below the batch,
/// counted in the threshold since its last reset, skipped since that reset
/// (v6.0), and the rest: batched before the last reset but not flushed by
/// it (lost from the threshold by a reset that raced with a flush; it also
/// absorbs what a running flush has already folded).
pub type Split = [i64; 4];

impl Max {
    /// Offer a value; keeps it (and `trace()`) if it is a new maximum.
    pub fn offer(&self, value: i64, trace: impl FnOnce() -> Vec<crate::trace::Step>) {
        self.offer_split(value, [0; 4], trace)
    }

    /// [`Max::offer`] with the split of the value.
    pub fn offer_split(
        &self,
        value: i64,
        split: Split,
        trace: impl FnOnce() -> Vec<crate::trace::Step>,
    ) {
        let mut b = self.best.lock().unwrap_or_else(|e| e.into_inner());
        if b.as_ref().is_none_or(|(v, _, _)| value > *v) {
            *b = Some((value, split, trace()));
        }
    }

    /// The maximum, its split and its witness steps, if any value was offered.
    pub fn get(&self) -> Option<(i64, Split, Vec<crate::trace::Step>)> {
        self.best.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Quantities measured over every explored execution (issue: staleness
/// bounds). Staleness is in update magnitude (pages): the sum of the
/// updates written so far, in execution order, minus the aggregate.
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
    /// The largest value `stats_flush_threshold` reached.
    pub max_threshold: Max,
    /// Ticks since the oldest update missing from the aggregate was
    /// written, at every read of the statistic (abstract time only).
    pub stale_ticks: Max,
    /// Threshold RMWs issued by updaters, over all executions.
    pub rmws: AtomicU64,
    /// `__mod_memcg_state()` calls, over all executions.
    pub updates: AtomicU64,
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

/// Per-execution ghost state.
#[derive(Debug)]
pub struct Ghost {
    /// Serialises ghost steps on real threads only.
    lock: Option<Mutex<()>>,
    /// The threshold v5.19 would hold in this schedule.
    pub baseline_threshold: AtomicI64,
    /// Flushers between their trylock and their unlock.
    pub flushers_inside: AtomicI64,
    /// Per CPU: `stats_updates` as it stands.
    pub residue: Vec<AtomicI64>,
    /// Magnitude (the `x` values) added to the threshold since its reset.
    pub counted: AtomicI64,
    /// Magnitude skipped since the threshold's reset (v6.0).
    pub skipped: AtomicI64,
    /// The root aggregate as it stands in execution order.
    pub agg_mirror: AtomicI64,
    /// `stats_flush_threshold` as it stands in execution order. Under loom a
    /// load may return an older value than this.
    pub threshold_mirror: AtomicI64,
    /// Per CPU: the running sum of its updates, in execution order.
    pub written: Vec<AtomicI64>,
    /// Per CPU: the value the running flush read from its counter.
    pub seen_by_flush: Vec<AtomicI64>,
    /// Per CPU: the running sum that included its latest skipping update
    /// since the last reset, or `i64::MIN`.
    pub skipped_at: Vec<AtomicI64>,
    /// Threshold units added since the running flush started.
    pub added_during_flush: AtomicI64,
    /// `jiffies_64` as it stands (abstract time).
    pub now: AtomicI64,
    /// Per CPU: (running sum after the update, tick) for every update.
    pub stamps: Vec<Mutex<Vec<(i64, i64)>>>,
    /// Per CPU: the running sum the root aggregate accounts for.
    pub folded: Vec<AtomicI64>,
}

impl Ghost {
    /// Fresh ghost state for one execution on platform `P`.
    pub fn new<P: Platform>(cpus: usize) -> Self {
        let per_cpu = |v: i64| (0..cpus).map(|_| AtomicI64::new(v)).collect();
        Ghost {
            lock: (P::BACKEND_KIND == BackendKind::Std).then(|| Mutex::new(())),
            baseline_threshold: AtomicI64::new(0),
            flushers_inside: AtomicI64::new(0),
            threshold_mirror: AtomicI64::new(0),
            agg_mirror: AtomicI64::new(0),
            residue: per_cpu(0),
            counted: AtomicI64::new(0),
            skipped: AtomicI64::new(0),
            written: per_cpu(0),
            seen_by_flush: per_cpu(0),
            skipped_at: per_cpu(i64::MIN),
            added_during_flush: AtomicI64::new(0),
            now: AtomicI64::new(0),
            stamps: (0..cpus).map(|_| Mutex::new(Vec::new())).collect(),
            folded: per_cpu(0),
        }
    }

    /// Ticks since the oldest update the root aggregate does not account
    /// for was written (0 if it accounts for all); non-negative updates.
    pub fn stale_ticks(&self) -> i64 {
        let now = Ghost::get(&self.now);
        self.stamps
            .iter()
            .zip(&self.folded)
            .filter_map(|(s, f)| {
                let folded = Ghost::get(f);
                let s = s.lock().unwrap_or_else(|e| e.into_inner());
                s.iter()
                    .find(|(sum, _)| *sum > folded)
                    .map(|(_, t)| now - t)
            })
            .max()
            .unwrap_or(0)
    }

    /// Run one model operation together with its ghost update as one step.
    pub fn step<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.lock {
            Some(m) => {
                let _g = m.lock().unwrap_or_else(|e| e.into_inner());
                f()
            }
            None => f(),
        }
    }

    /// Updates written so far minus the aggregate, in execution order.
    pub fn staleness(&self) -> i64 {
        self.written.iter().map(Ghost::get).sum::<i64>() - Ghost::get(&self.agg_mirror)
    }

    /// The [`Split`] of the current staleness.
    pub fn split(&self) -> Split {
        let residue: i64 = self.residue.iter().map(Ghost::get).sum();
        let (counted, skipped) = (Ghost::get(&self.counted), Ghost::get(&self.skipped));
        [
            residue,
            counted,
            skipped,
            self.staleness() - residue - counted - skipped,
        ]
    }

    /// Ghost read (never a model operation).
    pub fn get(a: &AtomicI64) -> i64 {
        a.load(Ordering::SeqCst)
    }
}
