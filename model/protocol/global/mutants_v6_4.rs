//! Deliberately broken variants of v6.4, each a small code difference from
//! [`crate::protocol::global::v6_4`], with the changed line marked `MUTANT:`. They
//! show that the properties about v6.4's own changes can fail: the
//! `stats_flush_ongoing` trylock, its release, and the ratelimit stamp.
//!
//! Every override that is not the mutant's own change delegates to v6.4.

use crate::kernel::{
    atomic_read, atomic_set, atomic_xchg, read_once, time_after64, trace_flush_begin,
    trace_flush_end, trace_memcg_flush_stats_ratelimited, write_once,
};
use crate::observe::Property;
use crate::protocol::global::v5_19::{Memcontrol, State, FLUSH_TIME};
use crate::protocol::global::{v5_19, v6_4};
use crate::protocol::variant::{Kind, Variant};
use crate::protocol::variant::{ALL_CHECKERS, SAMPLED};
use crate::vocab::Platform;

/// Delegate the functions v6.4 changed, except `$skip`, to v6.4.
macro_rules! v6_4_except {
    (flush) => {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            v6_4::memcg_rstat_updated(self, mm, memcg, val);
        }
        fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
            v6_4::mem_cgroup_flush_stats_ratelimited(self, mm, memcg)
        }
    };
    (ratelimited) => {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            v6_4::memcg_rstat_updated(self, mm, memcg, val);
        }
        fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
            v6_4::do_flush_stats(self, mm)
        }
    };
}

/// Flusher: the ongoing test without the `atomic_xchg()`: a flusher that
/// reads the flag clear sets it with a separate store, so two flushers
/// that both read it clear both flush.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoXchg;

impl Memcontrol for NoXchg {
    v6_4_except!(flush);
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        // MUTANT: a read and a set for `read || xchg`.
        if atomic_read(&mm.stats_flush_ongoing) != 0 {
            return false;
        }
        atomic_set(&mm.stats_flush_ongoing, 1);
        v6_4::flush_ongoing(self, mm);
        atomic_set(&mm.stats_flush_ongoing, 0);
        true
    }
}

/// Flusher: `stats_flush_ongoing` is never cleared (an early return that
/// forgets the release): after the first flush every flush is skipped, the
/// periodic work's included.
#[derive(Clone, Copy, Debug, Default)]
pub struct OngoingNeverCleared;

impl Memcontrol for OngoingNeverCleared {
    v6_4_except!(flush);
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if atomic_read(&mm.stats_flush_ongoing) != 0 || atomic_xchg(&mm.stats_flush_ongoing, 1) != 0
        {
            return false;
        }
        v6_4::flush_ongoing(self, mm);
        // MUTANT: no atomic_set(&stats_flush_ongoing, 0).
        true
    }
}

/// Flusher: the flag cleared before the threshold reset rather than after
/// it, so the next flusher can win and walk while this one's reset is
/// still to land: the reset runs outside the exclusion.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClearBeforeReset;

impl Memcontrol for ClearBeforeReset {
    v6_4_except!(flush);
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if atomic_read(&mm.stats_flush_ongoing) != 0 || atomic_xchg(&mm.stats_flush_ongoing, 1) != 0
        {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        v6_4::stamp_and_walk(self, mm);
        // MUTANT: the release moved above the reset.
        atomic_set(&mm.stats_flush_ongoing, 0);
        atomic_set(&mm.stats_flush_threshold, 0);
        trace_flush_end(mm.root_mem_cgroup());
        true
    }
}

/// Ratelimited reader: a reader that finds the periodic flusher late
/// stamps `flush_next_time` itself before trying to flush, so that other
/// ratelimited readers back off (a fix one might write for a thundering
/// herd on the refault path). When its threshold gate then says no, no
/// flush runs, yet every ratelimited reader skips for `2 * FLUSH_TIME`.
#[derive(Clone, Copy, Debug, Default)]
pub struct StampAtRatelimit;

impl Memcontrol for StampAtRatelimit {
    v6_4_except!(ratelimited);
    fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let jiffies = mm.env.jiffies_64();
        let due = time_after64(jiffies, read_once(&mm.flush_next_time_once));
        trace_memcg_flush_stats_ratelimited(mm.root_mem_cgroup(), jiffies, due);
        if !due {
            return false;
        }
        // MUTANT: the reader stamps the next flush time, flush or not.
        write_once(&mm.flush_next_time_once, jiffies + 2 * FLUSH_TIME);
        self.mem_cgroup_flush_stats(mm, memcg)
    }
}

/// The catalogue's entries for these mutants.
pub fn variants() -> Vec<Variant> {
    let v6_4_mutant = |name: &str, summary: &str, model| {
        Variant::new(name, Kind::Mutant, summary, model).twin("v6.4-no-skip")
    };
    vec![
        v6_4_mutant(
            "mutant-v6.4-no-xchg",
            "v6.4 flusher: the ongoing test is atomic_read() then atomic_set(), no atomic_xchg()",
            v5_19::model(NoXchg),
        )
        .killed_by(Property::FlushExclusion, ALL_CHECKERS),
        v6_4_mutant(
            "mutant-v6.4-ongoing-never-cleared",
            "v6.4 flusher: stats_flush_ongoing is never cleared, so every later flush skips",
            v5_19::model(OngoingNeverCleared),
        )
        .killed_by(Property::Conservation, ALL_CHECKERS),
        v6_4_mutant(
            "mutant-v6.4-clear-before-reset",
            "v6.4 flusher: stats_flush_ongoing cleared before the threshold reset",
            v5_19::model(ClearBeforeReset),
        )
        .killed_by(Property::FlushExclusion, ALL_CHECKERS),
        v6_4_mutant(
            "mutant-v6.4-stamp-at-ratelimit",
            "v6.4 ratelimited reader: stamps flush_next_time itself before the threshold gate",
            v5_19::model(StampAtRatelimit),
        )
        .killed_by(Property::RatelimitedSkipJustified, SAMPLED),
    ]
}
