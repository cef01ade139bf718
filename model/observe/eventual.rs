//! Eventual conservation and `stays_lost` (C4, C13): is an update the
//! final flush missed only "temporarily" lost?
//!
//! After every thread has been joined, the scenario runs the final flush
//! (`Obs::Final`), then `Config::settle` more flushes (`Obs::Settled`,
//! `flushes` 1 ..= settle) and, with `Config::settle_update`, one more
//! 1-page update per CPU and one more flush (`flushes` = settle + 1). This
//! observer records, per execution, after which of these an aggregate was
//! still short of the updates written so far (the ghost's
//! `written_total`), from observations alone.
//!
//! `stays_lost` of an execution whose final flush left an aggregate short
//! is the number of further flushes after which every aggregate is exact
//! again, or "never" within the flushes run. It is reported as coverage
//! counts over a search ([`crate::observe::Event`]): `lost_at_final`,
//! `recovered_by_flush` (the settle flushes alone brought it back),
//! `lost_after_settle` (still short after every settle flush) and
//! `recovered_by_update` / `lost_after_update` (after the later update on
//! the same CPU and memcg, and one flush).

use crate::config::MAX_SETTLE;
use crate::observe::coverage::Event;

/// One execution's record: which stages left an aggregate short.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Eventual {
    /// Some aggregate was short after the final flush.
    pub final_short: bool,
    /// Bit `k`: some aggregate was short after `k` more flushes.
    pub short_after: u32,
    /// Bit `k`: the aggregates after `k` more flushes were reported.
    pub reported: u32,
}

impl Eventual {
    /// The final flush's aggregate of one memcg: `short` if it is not the
    /// sum of the updates written.
    pub fn at_final(&mut self, short: bool) {
        self.final_short |= short;
    }

    /// After `k` more flushes, one memcg's aggregate: `short` as above.
    pub fn settled(&mut self, k: usize, short: bool) {
        assert!(k <= MAX_SETTLE + 1);
        self.reported |= 1 << k;
        if short {
            self.short_after |= 1 << k;
        }
    }

    fn short(&self, k: usize) -> bool {
        if k == 0 {
            self.final_short
        } else {
            self.short_after & (1 << k) != 0
        }
    }

    /// `stays_lost`: `None` if the final flush left nothing short;
    /// `Some(Some(k))` if every aggregate was exact after `k` more flushes
    /// (the smallest such `k`, counting the update's flush as `settle + 1`);
    /// `Some(None)` if it never was.
    pub fn stays_lost(&self) -> Option<Option<usize>> {
        if !self.final_short {
            return None;
        }
        Some((1..=MAX_SETTLE + 1).find(|&k| self.reported & (1 << k) != 0 && !self.short(k)))
    }

    /// The coverage events of this execution, for `settle` flushes and,
    /// with `update`, the later update.
    pub fn events(&self, settle: usize, update: bool) -> Vec<Event> {
        let mut out = Vec::new();
        if !self.final_short {
            return out;
        }
        out.push(Event::LostAtFinal);
        let recovered_by_flush = (1..=settle).any(|k| !self.short(k));
        if settle > 0 {
            out.push(if recovered_by_flush {
                Event::RecoveredByFlush
            } else {
                Event::LostAfterSettle
            });
        }
        if update && !recovered_by_flush {
            out.push(if self.short(settle + 1) {
                Event::LostAfterUpdate
            } else {
                Event::RecoveredByUpdate
            });
        }
        out
    }
}
