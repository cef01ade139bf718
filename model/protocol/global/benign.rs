//! Rewrites of v6.0 that a reviewer could propose and that must hold every
//! property: the checker must not raise false alarms on them. Each
//! overrides one kernel function; the changed lines are marked `BENIGN:`.

use crate::kernel::{
    atomic_cmpxchg, atomic_read, atomic_set, atomic_xchg, spin_is_locked, spin_trylock,
    spin_unlock, this_cpu_add_return, this_cpu_write, trace_flush_begin, trace_flush_end,
};
use crate::protocol::global::v5_19::{Memcontrol, State, FLUSH_TIME};
use crate::protocol::global::{v5_19, v6_0};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::variant::{Kind, Variant};
use crate::vocab::Platform;

/// The skip test and the add fused into one compare-and-exchange loop: add
/// only if the threshold is still at or below the trigger when the add
/// lands (`atomic_add_unless`-style). Fewer RMWs than v5.19, never a stale
/// test.
#[derive(Clone, Copy, Debug, Default)]
pub struct CasSkip;

impl Memcontrol for CasSkip {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            // BENIGN: read, then cmpxchg until it lands or the test fails.
            let mut old = atomic_read(&mm.stats_flush_threshold);
            while old <= mm.num_online_cpus() {
                let new = old + x / mm.MEMCG_CHARGE_BATCH();
                let found = atomic_cmpxchg(&mm.stats_flush_threshold, old, new);
                if found == old {
                    break;
                }
                old = found;
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// The threshold reset moved from after the walk to before it: adds that
/// land during the walk survive the reset (at worst one extra flush), and
/// everything the reset erases, the walk then reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResetBeforeWalk;

impl Memcontrol for ResetBeforeWalk {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if !spin_trylock(&mm.stats_flush_lock) {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        // BENIGN: the reset first.
        atomic_set(&mm.stats_flush_threshold, 0);
        mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
        trace_flush_end(mm.root_mem_cgroup());
        spin_unlock(&mm.stats_flush_lock);
        true
    }
}

/// Check before the RMW: a flusher that sees `stats_flush_lock` held
/// returns without touching its cache line (the read-before-xchg of v6.4's
/// `stats_flush_ongoing`, "to avoid needlessly locking the cache line"),
/// and the reset is an `atomic_xchg`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TrylockPrecheck;

impl Memcontrol for TrylockPrecheck {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        // BENIGN: a read before the trylock.
        if spin_is_locked(&mm.stats_flush_lock) || !spin_trylock(&mm.stats_flush_lock) {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
        // BENIGN: xchg for set.
        atomic_xchg(&mm.stats_flush_threshold, 0);
        trace_flush_end(mm.root_mem_cgroup());
        spin_unlock(&mm.stats_flush_lock);
        true
    }
}

/// The catalogue's entries for these rewrites: each must hold every
/// property, like the kernel.
pub fn variants() -> Vec<Variant> {
    let benign = |name: &str, summary: &str, model| {
        Variant::new(name, Kind::Benign, summary, model).twin("v5.19")
    };
    vec![
        benign(
            "benign-cas-skip",
            "skip test and add fused into a cmpxchg loop",
            v5_19::model(CasSkip),
        ),
        benign(
            "benign-reset-before-walk",
            "the threshold reset moved before the walk",
            v5_19::model(ResetBeforeWalk),
        ),
        benign(
            "benign-trylock-precheck",
            "spin_is_locked() before the trylock; the reset as atomic_xchg",
            v5_19::model(TrylockPrecheck),
        ),
    ]
}
