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
    /// A skip decided while a flush that had already read this CPU's
    /// counters was about to reset the threshold: the race behind
    /// `no_lost_flush` (the skipped units are erased by the reset, and the
    /// update is not in the aggregate).
    SkipRacedReset,
    /// A reader decided while skipped increments were outstanding (the ghost
    /// baseline differed from the real threshold).
    ReaderSawSkippedUnits,
    /// An update's per-CPU write landed on a CPU the running flush had
    /// already read: it must be picked up by a later flush.
    UpdateBehindFlusher,
    /// An `atomic_add` landed during a flush and was erased by its reset.
    AddErasedByReset,
    /// A reader read the aggregate while a flush was in progress.
    ReadDuringFlush,
    /// A `spin_trylock` failed because another flusher held the lock.
    TrylockContended,
}

impl Event {
    /// Every event, in report order.
    pub const ALL: [Event; 7] = [
        Event::Skip,
        Event::SkipRacedReset,
        Event::ReaderSawSkippedUnits,
        Event::UpdateBehindFlusher,
        Event::AddErasedByReset,
        Event::ReadDuringFlush,
        Event::TrylockContended,
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
        }
    }
}

/// Counts of [`Event`]s over all executions of one exploration.
#[derive(Debug, Default)]
pub struct Coverage {
    counts: [AtomicU64; 7],
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
    /// The highest CPU whose counters the running flush has read, or -1.
    pub flush_cursor: AtomicI64,
    /// Threshold units added since the running flush started.
    pub added_during_flush: AtomicI64,
}

impl Ghost {
    /// Fresh ghost state for one execution on platform `P`.
    pub fn new<P: Platform>() -> Self {
        Ghost {
            lock: (P::BACKEND_KIND == BackendKind::Std).then(|| Mutex::new(())),
            baseline_threshold: AtomicI64::new(0),
            flushers_inside: AtomicI64::new(0),
            flush_cursor: AtomicI64::new(-1),
            added_during_flush: AtomicI64::new(0),
        }
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

    /// Ghost read (never a model operation).
    pub fn get(a: &AtomicI64) -> i64 {
        a.load(Ordering::SeqCst)
    }
}
