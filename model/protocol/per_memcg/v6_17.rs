//! mm/memcontrol.c and kernel/cgroup/rstat.c as of v6.17 (through
//! v7.1.5): v6.8's protocol with the early `break` out of the ancestor
//! walk, re-entrant `this_cpu_*` counting, no skip of the add, and the
//! memory subsystem's rstat lock released after every CPU.
//!
//! Two functions of [`Memcontrol`] change (docs/model.md, section 3.1):
//! `memcg_rstat_updated()` and the rstat flush (`css_rstat_flush()`, which
//! replaces `cgroup_rstat_flush()`). The callback, the gate and the entry
//! points are v6.8's (the `force` flag of `__mem_cgroup_flush_stats()`,
//! v6.13, only folds the periodic work's and the reader's paths into one
//! function).
//!
//! The per-CPU counter is now `this_cpu_add_return`/`this_cpu_xchg` by the
//! owner, still zeroed remotely by the flusher's `WRITE_ONCE(.., 0)`;
//! `vmstats->stats_updates` is `atomic_t` in v6.17-v7.0 and `atomic_long_t`
//! in v7.1 (the same operations here).

use crate::kernel::{
    atomic64_add, spin_lock, spin_unlock, this_cpu_add_return_shared, this_cpu_xchg_shared,
    trace_flush_begin, trace_flush_end,
};
use crate::protocol::per_memcg::v6_8::{Memcontrol, State};
use crate::vocab::Platform;

/// v6.17's `memcg_rstat_updated(memcg, val, cpu)`: walk up from `memcg`;
/// stop at the first level that is already flushable, before counting
/// there; otherwise count, and fold the counter with `this_cpu_xchg()`
/// once it reaches the batch.
///
/// The comment the `break` carries (C12): "If @memcg is already flushable
/// then all its ancestors are flushable as well and also there is no need
/// to increase stats_updates."
pub fn memcg_rstat_updated<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    memcg: u8,
    val: i64,
) {
    if val == 0 {
        return;
    }
    let mut level = Some(memcg);
    while let Some(m) = level {
        level = mm.parent_mem_cgroup(m);
        let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
        if code.memcg_vmstats_needs_flush(mm, m) {
            break;
        }
        let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
        if s < mm.MEMCG_CHARGE_BATCH() {
            continue;
        }
        // The value can differ from add_return's: the flusher may have
        // zeroed the counter in between.
        let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
        atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
    }
}

/// v6.17's `css_rstat_flush(css)`: for each CPU, take the subsystem's
/// rstat lock, run the callbacks of the subtree, release the lock
/// ("Reacquire for each CPU to avoid disabling IRQs too long").
///
/// Each per-CPU hold is a flush section of its own: flushers of
/// overlapping subtrees interleave at CPU granularity.
///
/// NOTE(kernel): the lockless update list (`css_process_update_tree()`) is
/// not modelled: every memcg of the subtree is visited on every CPU.
pub fn css_rstat_flush<P: Platform, M: Memcontrol + ?Sized>(code: &M, mm: &State<P>, root: u8) {
    let order = mm.subtree_post_order(root);
    for cpu in 0..mm.env.cfg.cpus {
        spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        for &m in &order {
            code.mem_cgroup_css_rstat_flush(mm, m, cpu);
        }
        trace_flush_end(mm.memcg(root));
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// v6.17 (v6.17 to v7.1.5).
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_17;

impl Memcontrol for V6_17 {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        css_rstat_flush(self, mm, root);
    }
}

/// v6.17 without the early `break` (and with no skip of the add): every
/// level counts every update. Not a kernel version: the twin that C12's
/// consequence compares v6.17 with.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoBreak;

impl Memcontrol for NoBreak {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        css_rstat_flush(self, mm, root);
    }
}
