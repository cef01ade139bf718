//! mm/memcontrol.c as of v6.0: v5.19 plus 873f64b791a2 ("mm/memcontrol.c:
//! remove the redundant updating of stats_flush_threshold", Jiebin Sun),
//! which changes one function, `memcg_rstat_updated()`.
//!
//! Everything else is v5.19's ([`crate::protocol::global::v5_19`]). A variant of
//! v6.0 implements [`Memcontrol`] and delegates `memcg_rstat_updated` to
//! [`memcg_rstat_updated`] here, as [`V6_0`] does, unless that is the
//! function it changes.

use crate::kernel::{atomic_add, atomic_read, this_cpu_add_return, this_cpu_write};
use crate::protocol::global::v5_19::{Memcontrol, State};
use crate::vocab::Platform;

/// v6.0's `memcg_rstat_updated(memcg, val)`: as v5.19, but the
/// `atomic_add` is skipped once the threshold is above
/// `num_online_cpus()`. The per-CPU counter is reset either way.
///
/// 873f64b791a2's comment: "If stats_flush_threshold exceeds the threshold
/// (>num_online_cpus()), cgroup stats update will be triggered in
/// __mem_cgroup_flush_stats(). Increasing this var further is redundant and
/// simply adds overhead in atomic update."
pub fn memcg_rstat_updated<P: Platform, M: Memcontrol + ?Sized>(
    _code: &M,
    mm: &State<P>,
    _memcg: u8,
    val: i64,
) {
    let x = this_cpu_add_return(&mm.stats_updates, val.abs());
    if x > mm.MEMCG_CHARGE_BATCH() {
        if atomic_read(&mm.stats_flush_threshold) <= mm.num_online_cpus() {
            atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
        }
        this_cpu_write(&mm.stats_updates, 0);
    }
}

/// v6.0.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_0;

impl Memcontrol for V6_0 {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        memcg_rstat_updated(self, mm, memcg, val);
    }
}

/// The benchmark ceiling: per-CPU counting only, no traffic on
/// `stats_flush_threshold` at all (not even the read); only the periodic
/// work flushes. Not a kernel version: a bound for `flushcheck bench`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoGlobalAccounting;

impl Memcontrol for NoGlobalAccounting {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}
