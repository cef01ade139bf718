//! The fix candidate of `b7-skipped-flusher` ([`crate::protocol::findings`]):
//! v6.4 (v6.4-v6.7) with what 7d7ef0a4686a ("mm: memcg: restore subtree
//! stats flushing", v6.8) made the rule, nobody skips. A flusher that finds
//! another flush in progress waits for it and then flushes itself, so a
//! reader whose gate fired reads after a flush of its own. Marked `NOTE(kernel): FIX`.

use crate::kernel::{atomic_set, spin_lock, spin_unlock, trace_flush_begin, trace_flush_end};
use crate::protocol::global::v5_19::{Memcontrol, State};
use crate::protocol::global::v6_4;
use crate::vocab::Platform;

/// v6.4's `do_flush_stats()` with a waiting lock for the skipping trylock:
/// every flusher takes `stats_flush_lock` in turn, stamps
/// `flush_next_time`, flushes the whole tree and resets the threshold.
///
/// NOTE(kernel): v6.8 serialises flushers on `cgroup_rstat_lock` and drops
/// `stats_flush_ongoing` altogether; the model keeps v6.4's global
/// threshold and lets v5.19's `stats_flush_lock` (a spinning lock here)
/// stand for the waiting, so that only the skip differs from v6.4.
pub fn do_flush_stats<P: Platform, M: Memcontrol + ?Sized>(code: &M, mm: &State<P>) -> bool {
    // NOTE(kernel): FIX, wait instead of `atomic_read() || atomic_xchg()` and returning.
    spin_lock(&mm.stats_flush_lock);
    trace_flush_begin(mm.root_mem_cgroup());
    v6_4::stamp_and_walk(code, mm);
    atomic_set(&mm.stats_flush_threshold, 0);
    trace_flush_end(mm.root_mem_cgroup());
    spin_unlock(&mm.stats_flush_lock);
    true
}

/// v6.4 whose flushers never skip.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlushersWait;

impl Memcontrol for FlushersWait {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_4::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        do_flush_stats(self, mm)
    }
    fn flush_memcg_stats_dwork<P: Platform>(&self, mm: &State<P>) {
        do_flush_stats(self, mm);
    }
    fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        v6_4::mem_cgroup_flush_stats_ratelimited(self, mm, memcg)
    }
}
