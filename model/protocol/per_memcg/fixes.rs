//! Fix candidates for the per-memcg lineage's findings
//! ([`crate::protocol::findings`]): each a small code difference from the
//! version it fixes, marked `NOTE(kernel): FIX` at the changed lines, registered as
//! [`crate::protocol::Kind::Fix`] so that every default run checks it as it
//! checks a kernel version.
//!
//! | type | fixes | what changes |
//! |---|---|---|
//! | [`NoBreak`] | `c12-lost-flush`, both forms (v6.16-v7.1.5) | the walk never leaves early; v6.8's per-level skip of the atomic add stays |
//! | [`BreakIfAncestors`] | the same | the walk leaves at a flushable level only if every level above is flushable too |
//! | [`FoldAncestors`] | the race-free form only: refuted | a fold at one level folds every ancestor too (the update included); the break stays |
//! | [`CommentOnly`] | nothing: refuted (v6.17's code, the comment corrected) | no code change |
//! | [`NoRemoteReset`] | nothing: refuted (both forms still lose the flush) | the callback no longer zeroes another CPU's `stats_updates` |
//! | [`GateOrRoot`] | `quiescent-read-zero` (v6.8 on) | a reader also flushes its subtree when the root is flushable |
//! | [`OrderedGate`] | `weak-triggered-read` (v6.17 on) | the reader's gate read is ordered before the flush (`smp_rmb()`, or `smp_load_acquire()`) |
//!
//! None of them is kernel code: each describes in the model's terms what a
//! patch would do. The kernel functions they leave alone are the version's.

use crate::kernel::{
    atomic64_add, atomic64_read, atomic64_set, smp_load_acquire, smp_rmb,
    this_cpu_add_return_shared, this_cpu_xchg_shared, trace_memcg_flush_stats,
};
use crate::protocol::memcg::{self, ROOT_MEM_CGROUP};
use crate::protocol::per_memcg::rstat_llist::TreeV6_17;
use crate::protocol::per_memcg::v6_17;
use crate::protocol::per_memcg::v6_8::{Memcontrol, State};
use crate::vocab::Platform;

/// Count `val` at level `m` on this CPU (`this_cpu_add_return()`) and fold
/// the counter with `this_cpu_xchg()` once it reaches the batch; the
/// folded count is added to the memcg's atomic unless `skip_add` says the
/// memcg is already flushable (asked only at a fold, as v6.8 asks).
fn count_and_fold<P: Platform, M: Memcontrol>(
    code: &M,
    mm: &State<P>,
    m: u8,
    val: i64,
    skip_add: bool,
) {
    let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
    let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
    if s < mm.MEMCG_CHARGE_BATCH() {
        return;
    }
    let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
    if !(skip_add && code.memcg_vmstats_needs_flush(mm, m)) {
        atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
    }
}

/// C12, candidate 1: v6.17's `memcg_rstat_updated()` without the early
/// `break`. Every level counts every update and folds at the batch; the
/// fold's atomic add is skipped at a level already flushable, as v6.8-v6.15
/// skip it ("If @memcg is already flush-able, increasing stats_updates is
/// redundant", 8d59d2214c23), which the model shows loses no flush.
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
            // NOTE(kernel): FIX, no break; the flushable test, at a fold, only skips the
            // atomic add, after the level has counted.
            count_and_fold(self, mm, m, val, true);
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// C12, candidate 2: keep the early `break`, but take it only when the
/// level and every level above it are flushable: what the comment assumes,
/// tested instead of assumed (one `atomic_read()` per ancestor, no RMW).
/// Below that the level counts and folds as v6.17's twin does.
#[derive(Clone, Copy, Debug, Default)]
pub struct BreakIfAncestors;

impl BreakIfAncestors {
    /// Whether every ancestor of `m` is flushable (asked once `m` is).
    fn ancestors_flushable<P: Platform>(&self, mm: &State<P>, m: u8) -> bool {
        let mut level = mm.parent_mem_cgroup(m);
        while let Some(l) = level {
            if !self.memcg_vmstats_needs_flush(mm, l) {
                return false;
            }
            level = mm.parent_mem_cgroup(l);
        }
        true
    }
}

impl Memcontrol for BreakIfAncestors {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            // NOTE(kernel): FIX, a flushable level leaves only if its ancestors are
            // flushable too; otherwise it counts like any other.
            if self.memcg_vmstats_needs_flush(mm, m) && self.ancestors_flushable(mm, m) {
                break;
            }
            count_and_fold(self, mm, m, val, false);
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// C12, candidate 3: keep the early `break`, and make its comment true
/// without a race: once a level folds its per-CPU counter into its atomic,
/// every ancestor counts the update and folds its own counter at once
/// (`this_cpu_xchg()` plus the update, `atomic_add()`), so that no level's
/// atomic is behind a descendant's on the CPU's account; then the walk
/// ends. The flush's resets still land at different instants of the walk.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldAncestors;

impl Memcontrol for FoldAncestors {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            if self.memcg_vmstats_needs_flush(mm, m) {
                break;
            }
            let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
            // NOTE(kernel): FIX, a fold folds every ancestor too, the update
            // included, flushable or not; the walk ends here.
            while let Some(a) = level {
                level = mm.parent_mem_cgroup(a);
                let statc = mm.memcg(a).vmstats_percpu.this_cpu::<P>();
                let s = this_cpu_xchg_shared(&statc.stats_updates, 0) + val.abs();
                atomic64_add(s, &mm.memcg(a).vmstats.stats_updates);
            }
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// C12, candidate 4, the comment-only alternative: v6.17's code unchanged, as a
/// candidate of its own so that the findings check it beside the others
/// (what remains: the lost reader flushes, bounded in time by the
/// periodic flush).
#[derive(Clone, Copy, Debug, Default)]
pub struct CommentOnly;

impl Memcontrol for CommentOnly {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// C12, candidate 5: v6.17 with the break, but a flush's callback no
/// longer zeroes the per-CPU `statc->stats_updates` of the CPU it visits
/// (the remote `WRITE_ONCE(.., 0)`), so a count cannot be erased between
/// the owner's `this_cpu_add_return()` and its `this_cpu_xchg()`: only
/// its owner resets a per-CPU counter, at its fold. The memcg's atomic is
/// still reset. Refuted: the levels' atomics are reset at different
/// instants of the walk too (the child's callback before the root's), so a
/// fold landing between them still skews the levels (the racy witness),
/// and the levels' own fold points differ (the race-free form).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRemoteReset;

impl Memcontrol for NoRemoteReset {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
    fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
        memcg::mem_cgroup_css_rstat_flush(&mm.memcgs, memcg, cpu);
        let m = mm.memcg(memcg);
        // NOTE(kernel): FIX, no WRITE_ONCE(statc->stats_updates, 0) of CPU `cpu`'s
        // counter here.
        if atomic64_read(&m.vmstats.stats_updates) != 0 {
            atomic64_set(&m.vmstats.stats_updates, 0);
        }
    }
}

/// `quiescent-read-zero` (B9): v6.8 whose reader also flushes its subtree
/// when the root is flushable, so that updates of a sibling that push the
/// whole hierarchy over the trigger make a small memcg's read flush, as
/// v5.16-v6.7's global threshold did. The hot path is v6.8's.
#[derive(Clone, Copy, Debug, Default)]
pub struct GateOrRoot;

impl Memcontrol for GateOrRoot {
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        // NOTE(kernel): FIX, the root's atomic is read as well (not for the root
        // itself), and first: the decision follows the memcg's own read at
        // once, as v6.8's does (read the other way round, a reader
        // preempted between the two reads decides on a stale own count;
        // the default suite's memcg-chain shows that order losing a flush).
        let root = memcg != ROOT_MEM_CGROUP && self.memcg_vmstats_needs_flush(mm, ROOT_MEM_CGROUP);
        let own = self.memcg_vmstats_needs_flush(mm, memcg);
        let needs_flush = own || root;
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
}

/// How [`OrderedGate`] orders the reader's gate read before its flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateOrder {
    /// `atomic_read()` then `smp_rmb()`.
    Rmb,
    /// `smp_load_acquire()` of the counter (`atomic_read_acquire()`).
    Acquire,
}

/// `weak-triggered-read`: v6.17-tree with the `smp_mb()` pair the 2025
/// comments describe, and a reader whose gate read is ordered before the
/// flush's reads, so that a flush a count triggered sees the list
/// insertions and the counters written before that count.
#[derive(Clone, Copy, Debug)]
pub struct OrderedGate {
    /// How the gate read is ordered.
    pub order: GateOrder,
}

impl OrderedGate {
    const TREE: TreeV6_17 = TreeV6_17 { smp_mb_pair: true };
}

impl Memcontrol for OrderedGate {
    fn rstat_tree(&self) -> bool {
        true
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        Self::TREE.memcg_rstat_updated(mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        Self::TREE.cgroup_rstat_flush(mm, root);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let counter = &mm.memcg(memcg).vmstats.stats_updates;
        // NOTE(kernel): FIX, the gate's read is ordered before what the flush reads.
        let count = match self.order {
            GateOrder::Rmb => {
                let c = atomic64_read(counter);
                smp_rmb::<P>();
                c
            }
            GateOrder::Acquire => smp_load_acquire(counter),
        };
        let needs_flush = count > self.memcg_vmstats_flush_threshold(mm);
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
}
