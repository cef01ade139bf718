//! The per-CPU rstat "updated" tree (kernel/cgroup/rstat.c) and its
//! store-buffering race, hooked into the v6.8 lineage.
//!
//! Without this module the v6.8 flush visits every memcg on every CPU
//! (docs/model.md, section 5.1). With it, a flush visits on each CPU only
//! the memcgs that CPU's tree holds, as the kernel does:
//!
//! ```text
//! updater (CPU c)                           flusher (under cgroup_rstat_lock)
//! __this_cpu_add(state[c], val)             raw_spin_lock(cgroup_rstat_cpu_lock[c])
//! [smp_mb()]            (9a9e97b2f1f2 only) updated_next = NULL   (the whole subtree)
//! if (updated_next) return;   (data_race)   [smp_mb()]            (9a9e97b2f1f2 only)
//! raw_spin_lock(cgroup_rstat_cpu_lock[c])   raw_spin_unlock(..)
//! link memcg and its ancestors              READ_ONCE(state[c])   (the callback)
//! raw_spin_unlock(..)
//! ```
//!
//! Without the barriers (the kernel since d8ef4b38cb69, v5.7, through v6.14)
//! this is the store-buffering (SB) shape: the updater may see its memcg
//! still on the tree while the flusher reads the counter without its add.
//! The add then sits in `state[c]`, off every tree, until the next update of
//! that memcg on that CPU puts it back ("temporary inaccuracies", C4).
//!
//! State: one `updated_next` word per (memcg, CPU) (`Var::UpdatedNext`,
//! 0 = off the tree) and one `cgroup_rstat_cpu_lock` per CPU.
//!
//! NOTE(kernel): the tree's links (`updated_next` pointing to a sibling or
//! the parent, `updated_children`, `rstat_flush_next`) are reduced to one
//! on/off word per node. Under the per-CPU lock the kernel keeps "if a
//! cgroup is on the tree, all its ancestors are", so the nodes the kernel's
//! walk reaches from `root` are exactly the nodes of `root`'s subtree whose
//! word is set, which the model's flusher reads one by one under the lock.

use crate::kernel::{
    read_once, smp_mb, smp_processor_id, spin_lock, spin_unlock, this_cpu_add, trace_flush_begin,
    trace_flush_end, write_once,
};
use crate::protocol::per_memcg::rstat::ON_TREE;
use crate::protocol::per_memcg::v6_8::{Memcontrol, State, V6_8NoSkip};
use crate::vocab::Platform;

/// `cgroup_rstat_updated(cgrp, smp_processor_id())` (v5.7-v6.14): put
/// `memcg` and its ancestors on the calling CPU's updated tree, unless the
/// speculative lockless test finds it there already. `smp_mb` adds the
/// updater's half of 9a9e97b2f1f2's barrier pair before that test.
pub fn cgroup_rstat_updated<P: Platform>(mm: &State<P>, memcg: u8, smp_mb_pair: bool) {
    cgroup_rstat_updated_on(mm, memcg, smp_processor_id::<P>(), smp_mb_pair);
}

/// `cgroup_rstat_updated(cgrp, cpu)` for CPU `cpu`, which need not be the
/// caller's (the function takes `cpu`'s per-CPU lock, so any context may
/// call it): see [`cgroup_rstat_updated`].
pub fn cgroup_rstat_updated_on<P: Platform>(
    mm: &State<P>,
    memcg: u8,
    cpu: usize,
    smp_mb_pair: bool,
) {
    let t = mm.tree();
    if smp_mb_pair {
        // 9a9e97b2f1f2: "Paired with the one in cgroup_rstat_cpu_pop_updated()".
        smp_mb::<P>();
    }
    // "Speculative already-on-list test. This may race leading to temporary
    // inaccuracies, which is fine." (d8ef4b38cb69)
    if read_once(t.updated_next[memcg as usize].per_cpu(cpu)) != 0 {
        return;
    }
    let lock = t.cpu_lock.per_cpu(cpu);
    spin_lock(lock);
    // Bottom-up: stop at the first node already on the tree ("If a cgroup is
    // already in the tree, all ancestors are").
    let mut level = Some(memcg);
    while let Some(m) = level {
        let next = t.updated_next[m as usize].per_cpu(cpu);
        if read_once(next) != 0 {
            break;
        }
        // NOTE(kernel): the root points to itself, others to the parent's
        // `updated_children`; the parent's `updated_children` store is not
        // modelled (see the module note).
        write_once(next, ON_TREE);
        level = mm.parent_mem_cgroup(m);
    }
    spin_unlock(lock);
}

/// `cgroup_rstat_updated_list(root, cpu)` (v6.8-v6.14): under CPU `cpu`'s
/// lock, unlink `root`'s whole subtree from that CPU's tree and return the
/// unlinked memcgs, children first. The callbacks run afterwards, outside
/// the per-CPU lock. `smp_mb` adds the flusher's half of 9a9e97b2f1f2's pair
/// after the unlink.
///
/// NOTE(kernel): 9a9e97b2f1f2 (v5.7-rc1, reverted in v5.7) put that barrier
/// in `cgroup_rstat_cpu_pop_updated()`, after each node's unlink; with the
/// v6.8 list built first, one barrier after the whole unlink orders every
/// unlink before every callback's read.
pub fn cgroup_rstat_updated_list<P: Platform>(
    mm: &State<P>,
    root: u8,
    cpu: usize,
    smp_mb_pair: bool,
) -> Vec<u8> {
    let t = mm.tree();
    let lock = t.cpu_lock.per_cpu(cpu);
    spin_lock(lock);
    let mut list = Vec::new();
    if read_once(t.updated_next[root as usize].per_cpu(cpu)) != 0 {
        // Unlink root first, then each node of its subtree on the tree.
        write_once(t.updated_next[root as usize].per_cpu(cpu), 0);
        for m in mm.subtree_post_order(root) {
            if m == root {
                continue;
            }
            let next = t.updated_next[m as usize].per_cpu(cpu);
            if read_once(next) != 0 {
                write_once(next, 0);
                list.push(m);
            }
        }
        list.push(root);
        if smp_mb_pair {
            smp_mb::<P>();
        }
    }
    spin_unlock(lock);
    list
}

/// v6.8 (through v6.14) with the updated tree: each flush visits, per CPU,
/// only the memcgs that CPU's tree holds. `smp_mb_pair` restores the
/// reverted barrier pair of 9a9e97b2f1f2.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeV6_8 {
    /// Whether both halves of the barrier pair are in.
    pub smp_mb_pair: bool,
}

impl Memcontrol for TreeV6_8 {
    fn rstat_tree(&self) -> bool {
        true
    }

    /// `__mod_memcg_state()`: see [`mod_memcg_state_tree`].
    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        mod_memcg_state_tree(self, mm, memcg, val, self.smp_mb_pair);
    }

    /// `cgroup_rstat_flush(cgrp)`: see [`cgroup_rstat_flush_locked`].
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        cgroup_rstat_flush_locked(self, mm, root, self.smp_mb_pair, &|_| true);
    }
}

/// `__mod_memcg_state()` with the updated tree: the counter, then
/// `code.memcg_rstat_updated()`, whose first step is
/// `cgroup_rstat_updated()`.
///
/// NOTE(kernel): the tree insert is made here, between the counter and
/// the v6.8 `memcg_rstat_updated()` body, rather than inside it; the
/// steps run in the kernel's order (`if (!val) return;` first).
pub fn mod_memcg_state_tree<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    memcg: u8,
    val: i64,
    smp_mb_pair: bool,
) {
    this_cpu_add(&mm.memcg(memcg).vmstats_percpu.this_cpu::<P>().state, val);
    if val != 0 {
        cgroup_rstat_updated(mm, memcg, smp_mb_pair);
    }
    code.memcg_rstat_updated(mm, memcg, val);
}

/// `cgroup_rstat_flush(cgrp)` with `cgroup_rstat_flush_locked()` (v6.8 to
/// v6.14): under `cgroup_rstat_lock`, per CPU, unlink the subtree, then the
/// memcg callback of each unlinked memcg whose css `css_listed` says is
/// still on its cgroup's `rstat_css_list` (the walk
/// `list_for_each_entry_rcu(css, &pos->rstat_css_list, rstat_css_node)`;
/// every css is, until its release unlinks it: see
/// [`crate::protocol::lifetime`]).
pub fn cgroup_rstat_flush_locked<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    root: u8,
    smp_mb_pair: bool,
    css_listed: &dyn Fn(u8) -> bool,
) {
    spin_lock(&mm.cgroup_rstat_lock);
    trace_flush_begin(mm.memcg(root));
    for cpu in 0..mm.env.cfg.cpus {
        for m in cgroup_rstat_updated_list(mm, root, cpu, smp_mb_pair) {
            if css_listed(m) {
                code.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
        }
    }
    trace_flush_end(mm.memcg(root));
    spin_unlock(&mm.cgroup_rstat_lock);
}

/// Mutant: the flusher reads the counters before it unlinks (the callbacks
/// run on the tree as found, then the subtree is unlinked). An update
/// between the read and the unlink finds its memcg on the tree, does not
/// insert it, and is unlinked unflushed: lost under every memory model,
/// barriers or not.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeReadBeforeUnlink;

impl Memcontrol for TreeReadBeforeUnlink {
    fn rstat_tree(&self) -> bool {
        true
    }

    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        TreeV6_8 { smp_mb_pair: true }.__mod_memcg_state(mm, memcg, val);
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        let t = mm.tree();
        for cpu in 0..mm.env.cfg.cpus {
            let lock = t.cpu_lock.per_cpu(cpu);
            spin_lock(lock);
            let on: Vec<u8> = mm
                .subtree_post_order(root)
                .into_iter()
                .filter(|&m| read_once(t.updated_next[m as usize].per_cpu(cpu)) != 0)
                .collect();
            spin_unlock(lock);
            for &m in &on {
                self.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
            smp_mb::<P>();
            spin_lock(lock);
            for &m in &on {
                write_once(t.updated_next[m as usize].per_cpu(cpu), 0);
            }
            spin_unlock(lock);
        }
        trace_flush_end(mm.memcg(root));
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// The twin of [`TreeV6_8`]: the same tree (and barriers), v6.8's updater
/// without the per-level skip ([`V6_8NoSkip`]).
/// `no_lost_flush` compares a tree variant with it, so a read that misses an
/// update lost to the tree is not taken for a flush lost to the skip.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeNoSkip {
    /// Whether both halves of the barrier pair are in.
    pub smp_mb_pair: bool,
}

impl Memcontrol for TreeNoSkip {
    fn rstat_tree(&self) -> bool {
        true
    }

    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        mod_memcg_state_tree(self, mm, memcg, val, self.smp_mb_pair);
    }

    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        V6_8NoSkip.memcg_rstat_updated(mm, memcg, val);
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        TreeV6_8 {
            smp_mb_pair: self.smp_mb_pair,
        }
        .cgroup_rstat_flush(mm, root);
    }
}
