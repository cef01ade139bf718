//! mm/memcontrol.c as of v6.8 (through v6.14): per-memcg thresholds
//! (8d59d2214c23), subtree flushes gated on the target, no flusher that
//! skips (7d7ef0a4686a).
//!
//! [`Memcontrol`] holds this lineage's kernel functions as default methods;
//! a type implementing it with no overrides *is* v6.8 ([`V6_8`]).
//! [`crate::protocol::per_memcg::v6_17`] overrides the updater (the early `break`) and
//! the rstat flush (the lock released per CPU); the 2026 proposal
//! ([`crate::protocol::per_memcg::proposal_2026`]) overrides the trigger.
//!
//! State, and who touches it (the v6.8.0 and v6.12.0 trees; docs/claims.md):
//!
//! | model field | kernel | written by | read by |
//! |---|---|---|---|
//! | `memcgs[m].vmstats_percpu[cpu].state` | `statc->state[idx]` | owner CPU (`__this_cpu_add`) | flusher (`READ_ONCE`) |
//! | `memcgs[m].vmstats_percpu[cpu].stats_updates` | `statc->stats_updates` | owner CPU; **flusher, remotely** (`WRITE_ONCE(.., 0)`) | owner CPU |
//! | `memcgs[m].vmstats.stats_updates` | `memcg->vmstats->stats_updates` (`atomic64_t`) | updaters (`atomic64_add`), flusher (`atomic64_set(0)`) | updaters, readers, flusher |
//! | `memcgs[m].vmstats.state`, `state_pending`, `state_prev` | as in v5.19 | flusher, under `cgroup_rstat_lock` | readers (`state`, locklessly) |
//! | `flush_last_time` | `static u64 flush_last_time` | root flushes (`WRITE_ONCE`) | ratelimited readers (`READ_ONCE`) |
//! | `cgroup_rstat_lock` | `static DEFINE_SPINLOCK(cgroup_rstat_lock)` | flushers | flushers |
//!
//! The global `stats_updates`, `stats_flush_threshold` and
//! `stats_flush_ongoing` of v5.16-v6.7 are gone.

use std::sync::Arc;

use crate::kernel::{
    atomic64_add, atomic64_read, atomic64_set, read_once, spin_lock, spin_unlock, this_cpu_add,
    time_after64, trace_flush_begin, trace_flush_end, trace_memcg_flush_stats,
    trace_memcg_flush_stats_ratelimited, write_once, Atomic, LockName, SpinLock, Var,
};
use crate::protocol::global::v5_19::FLUSH_TIME;
use crate::protocol::memcg::{self, memcg_tree, MemCgroup, ROOT_MEM_CGROUP};
use crate::protocol::per_memcg::rstat::RstatTree;
use crate::protocol::wing::{lineage_model, Env, FlushModel, Lineage};
use crate::vocab::Platform;

/// The initial value of `flush_last_time` in model ticks.
///
/// NOTE(kernel): the kernel's `flush_last_time` starts at 0 while
/// `jiffies_64` starts at `INITIAL_JIFFIES`, far above it, so that a
/// ratelimited reader is due from boot; the model's time starts at 0, so
/// the field starts a full ratelimit period (`2 * FLUSH_TIME`) and one tick
/// earlier to keep that relation.
pub const FLUSH_LAST_TIME_INIT: i64 = -2 * FLUSH_TIME - 1;

/// The kernel globals of the v6.8-v7.1 protocol, built fresh for each
/// execution.
pub struct State<P: Platform> {
    /// Configuration, `jiffies_64`, `num_online_cpus()` and
    /// `MEMCG_CHARGE_BATCH`.
    pub env: Env<P>,
    /// The memcg tree; children follow their parents, so reverse order is a
    /// post-order.
    pub memcgs: Vec<MemCgroup<P>>,
    /// `flush_last_time`: when the last root flush started.
    pub flush_last_time: Atomic<P>,
    /// `cgroup_rstat_lock` (v6.8-v6.14), or the memory subsystem's
    /// `rstat_ss_lock` (v6.17 on).
    pub cgroup_rstat_lock: SpinLock<P>,
    /// The per-CPU updated trees and their `cgroup_rstat_cpu_lock`s, for
    /// implementations that model them ([`Memcontrol::rstat_tree`]; see
    /// [`crate::protocol::per_memcg::rstat_tree`]).
    pub rstat: Option<RstatTree<P>>,
}

impl<P: Platform> State<P> {
    /// Every global at its initial value.
    pub fn new(env: Env<P>) -> Self {
        State {
            memcgs: memcg_tree(&env.cfg),
            flush_last_time: Atomic::new(Var::FlushTime, FLUSH_LAST_TIME_INIT),
            cgroup_rstat_lock: SpinLock::new(LockName::CgroupRstatLock),
            rstat: None,
            env,
        }
    }

    /// The per-CPU updated trees.
    ///
    /// # Panics
    /// If the implementation does not model them
    /// ([`Memcontrol::rstat_tree`] returns false).
    pub fn tree(&self) -> &RstatTree<P> {
        self.rstat
            .as_ref()
            .expect("model: an rstat-tree implementation must return true from rstat_tree()")
    }

    /// The memcg numbered `id`.
    pub fn memcg(&self, id: u8) -> &MemCgroup<P> {
        &self.memcgs[id as usize]
    }

    /// `parent_mem_cgroup(memcg)`.
    pub fn parent_mem_cgroup(&self, id: u8) -> Option<u8> {
        self.memcg(id).parent
    }

    /// The memcgs of `root`'s subtree, children before parents: the order
    /// in which `cgroup_rstat_updated_list()` hands them to the callbacks.
    ///
    /// NOTE(kernel): the updated tree is not modelled: every memcg of the
    /// subtree is visited on every CPU, as if each had been updated there.
    pub fn subtree_post_order(&self, root: u8) -> Vec<u8> {
        (root..self.memcgs.len() as u8)
            .rev()
            .filter(|m| self.env.cfg.in_subtree(*m, root))
            .collect()
    }

    /// `num_online_cpus()` (see [`Env::num_online_cpus`]).
    pub fn num_online_cpus(&self) -> i64 {
        self.env.num_online_cpus()
    }

    /// `MEMCG_CHARGE_BATCH` (see [`Env::memcg_charge_batch`]).
    #[allow(non_snake_case)]
    pub fn MEMCG_CHARGE_BATCH(&self) -> i64 {
        self.env.memcg_charge_batch()
    }
}

/// `mem_cgroup_is_root(memcg)`.
pub fn mem_cgroup_is_root(memcg: u8) -> bool {
    memcg == ROOT_MEM_CGROUP
}

/// The kernel functions of mm/memcontrol.c v6.8 that the flush protocol
/// runs, each a default method (see [`crate::protocol::global::v5_19::Memcontrol`]
/// for the pattern).
pub trait Memcontrol: Send + Sync + 'static {
    /// Whether this implementation models the per-CPU updated tree (its
    /// state is then built in [`State::rstat`]). v6.8 itself does not: its
    /// flush visits every memcg on every CPU.
    fn rstat_tree(&self) -> bool {
        false
    }

    /// `__mod_memcg_state(memcg, idx, val)` on the calling CPU: the
    /// per-CPU counter first, then `memcg_rstat_updated()`, no barrier
    /// between.
    ///
    /// NOTE(kernel): `memcg_state_val_in_pages()` (new in v6.8) turns bytes
    /// into pages for byte-sized items; the model's values are pages.
    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        this_cpu_add(&mm.memcg(memcg).vmstats_percpu.this_cpu::<P>().state, val);
        self.memcg_rstat_updated(mm, memcg, val);
    }

    /// The reader's trigger: `MEMCG_CHARGE_BATCH * num_online_cpus()`.
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        mm.MEMCG_CHARGE_BATCH() * mm.num_online_cpus()
    }

    /// `memcg_vmstats_needs_flush(vmstats)`: the memcg's atomic above the
    /// trigger.
    fn memcg_vmstats_needs_flush<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        atomic64_read(&mm.memcg(memcg).vmstats.stats_updates)
            > self.memcg_vmstats_flush_threshold(mm)
    }

    /// `memcg_rstat_updated(memcg, val)` (8d59d2214c23, 9cee7e8ef3e3):
    /// walk up from `memcg`, count `|val|` in each level's per-CPU counter,
    /// and fold a level's counter into its atomic once it reaches the batch,
    /// unless that atomic is already above the trigger (the per-level skip;
    /// the counter is zeroed either way).
    ///
    /// NOTE(kernel): `cgroup_rstat_updated()` is not modelled (the flush
    /// visits every memcg). The counter accesses are v6.12's
    /// `READ_ONCE`/`WRITE_ONCE` with the sum kept in a local; v6.8.0 has
    /// plain `+=` and `= 0`, a C data race with the flusher's remote store
    /// that the annotations later made explicit.
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            let s = read_once(&statc.stats_updates) + val.abs();
            write_once(&statc.stats_updates, s);
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            // "If @memcg is already flush-able, increasing stats_updates is
            // redundant" (8d59d2214c23).
            if !self.memcg_vmstats_needs_flush(mm, m) {
                atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
            }
            write_once(&statc.stats_updates, 0);
        }
    }

    /// `mem_cgroup_flush_stats(memcg)`: flush `memcg`'s subtree if its own
    /// atomic is above the trigger. Returns the reader's decision.
    ///
    /// NOTE(kernel): the `trace_memcg_flush_stats()` tracepoint exists from
    /// v6.13; the model reports the decision in every version.
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let needs_flush = self.memcg_vmstats_needs_flush(mm, memcg);
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }

    /// `do_flush_stats(memcg)`: stamp `flush_last_time` for a root flush,
    /// then flush the subtree. Every flusher waits for the rstat lock; none
    /// skips (7d7ef0a4686a).
    fn do_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) {
        if mem_cgroup_is_root(memcg) {
            write_once(&mm.flush_last_time, mm.env.jiffies_64());
        }
        self.cgroup_rstat_flush(mm, memcg);
    }

    /// `cgroup_rstat_flush(cgrp)`: under `cgroup_rstat_lock`, for each CPU,
    /// the memcg callback on every memcg of the subtree, children first.
    ///
    /// NOTE(kernel): `cgroup_rstat_flush_locked()` may drop and retake the
    /// lock between CPUs when `need_resched()`; the model never does, so a
    /// v6.8 flush is one flush section (v6.17 releases it after every CPU,
    /// [`crate::protocol::per_memcg::v6_17`]). The base-stat and BPF flushers and the
    /// per-CPU `cgroup_rstat_cpu_lock` are not modelled.
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        let order = mm.subtree_post_order(root);
        for cpu in 0..mm.env.cfg.cpus {
            for &m in &order {
                self.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
        }
        trace_flush_end(mm.memcg(root));
        spin_unlock(&mm.cgroup_rstat_lock);
    }

    /// `mem_cgroup_css_rstat_flush(css, cpu)` (v6.8): the v5.13 fold (see
    /// [`memcg::mem_cgroup_css_rstat_flush`]), then both resets: CPU
    /// `cpu`'s counter, remotely, and the memcg's atomic if non-zero ("We
    /// are in a per-cpu loop here, only do the atomic write once").
    fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
        memcg::mem_cgroup_css_rstat_flush(&mm.memcgs, memcg, cpu);
        let m = mm.memcg(memcg);
        write_once(&m.vmstats_percpu.per_cpu(cpu).stats_updates, 0);
        if atomic64_read(&m.vmstats.stats_updates) != 0 {
            atomic64_set(&m.vmstats.stats_updates, 0);
        }
    }

    /// `flush_memcg_stats_dwork()`: a forced root flush ("Deliberately
    /// ignore memcg_vmstats_needs_flush() here so that flushing in
    /// latency-sensitive paths is as cheap as possible").
    fn flush_memcg_stats_dwork<P: Platform>(&self, mm: &State<P>) {
        self.do_flush_stats(mm, ROOT_MEM_CGROUP);
    }

    /// `mem_cgroup_flush_stats_ratelimited(memcg)`: "Only flush if the
    /// periodic flusher is one full cycle late".
    fn mem_cgroup_flush_stats_ratelimited<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let jiffies = mm.env.jiffies_64();
        let due = time_after64(jiffies, read_once(&mm.flush_last_time) + 2 * FLUSH_TIME);
        trace_memcg_flush_stats_ratelimited(mm.memcg(memcg), jiffies, due);
        due && self.mem_cgroup_flush_stats(mm, memcg)
    }

    /// `memcg_page_state(memcg, idx)`: see [`memcg::memcg_page_state`].
    fn memcg_page_state<P: Platform>(&self, mm: &State<P>, memcg: u8) -> i64 {
        memcg::memcg_page_state(mm.memcg(memcg))
    }
}

/// v6.8 itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8;

impl Memcontrol for V6_8 {}

/// v6.8 without the per-level skip: every fold is added (the twin of v6.8's
/// `no_lost_flush`; not a kernel version).
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8NoSkip;

impl Memcontrol for V6_8NoSkip {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            let s = read_once(&statc.stats_updates) + val.abs();
            write_once(&statc.stats_updates, s);
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            // TWIN: no memcg_vmstats_needs_flush() test.
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
            write_once(&statc.stats_updates, 0);
        }
    }
}

/// A [`Memcontrol`] implementation as a [`Lineage`]: the scenario's entry
/// points are these kernel functions; the per-CPU updated tree is built
/// for implementations that model it.
#[derive(Clone)]
pub struct PerMemcg<M>(pub M);

impl<M: Memcontrol + Clone> Lineage for PerMemcg<M> {
    type State<P: Platform> = State<P>;
    fn state<P: Platform>(&self, env: Env<P>) -> State<P> {
        let mut mm = State::new(env);
        if self.0.rstat_tree() {
            mm.rstat = Some(RstatTree::new(&mm.env.cfg));
        }
        mm
    }
    fn mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        self.0.__mod_memcg_state(mm, memcg, val);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        self.0.mem_cgroup_flush_stats(mm, memcg)
    }
    fn mem_cgroup_flush_stats_ratelimited<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        self.0.mem_cgroup_flush_stats_ratelimited(mm, memcg)
    }
    fn flush<P: Platform>(&self, mm: &State<P>) -> bool {
        self.0.do_flush_stats(mm, ROOT_MEM_CGROUP);
        true
    }
    fn periodic<P: Platform>(&self, mm: &State<P>) {
        self.0.flush_memcg_stats_dwork(mm);
    }
    fn memcg_page_state<P: Platform>(&self, mm: &State<P>, memcg: u8) -> i64 {
        self.0.memcg_page_state(mm, memcg)
    }
}

/// The model of a v6.8-lineage implementation (v6.8, v6.17, the rstat
/// tree forms, the 2026 proposal, or a variant of one), ready for
/// [`crate::protocol::Variant::new`].
pub fn model<M: Memcontrol + Clone>(code: M) -> Arc<FlushModel> {
    lineage_model(PerMemcg(code))
}
