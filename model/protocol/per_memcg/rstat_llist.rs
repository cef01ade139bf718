//! The v6.17+ form of the updated tree (kernel/cgroup/rstat.c, v6.17
//! through v7.1.5): a lock-free per-CPU `llist` of updated nodes, drained
//! by the flusher into the tree it then walks (docs/model.md, section 3.1;
//! docs/claims.md, C13).
//!
//! ```text
//! updater (CPU c)                              flusher (under the ss rstat lock, per CPU)
//! this_cpu_add(state[c], val)                  css_process_update_tree():
//! [smp_mb()]          ("a memory barrier is      while node = llist_del_first(lhead[c]):
//!                      needed", C13)                 smp_load_acquire(head->first); READ_ONCE(next)
//! if llist_on_list(lnode) return;  (racy)            try_cmpxchg(head->first)   (full barrier)
//! try_cmpxchg(lnode.next, self, NULL)                init_llist_node: WRITE_ONCE(next, self)
//! llist_add(lnode, lhead[c]) (try_cmpxchg loop)      [smp_mb()]  ("would be needed here")
//!                                                    link it and its ancestors on the tree
//!                                              unlink the subtree; callbacks read state[c]
//! ```
//!
//! The same store-buffering shape as v5.x-v6.14: the updater writes its
//! counter, then reads `lnode.next`; the flusher writes `lnode.next = self`,
//! then reads the counter.
//!
//! Encoding of the pointer words (all start at 0, as litmus tests do):
//! `lnode.next` is [`OFF_LIST`] (0, the node points to itself), [`NULL`]
//! (1: claimed, or the tail of the list) or `m + 2` (memcg `m`'s node);
//! `lhead->first` is [`NULL`] or `m + 2`.
//!
//! NOTE(kernel): `memcg_rstat_updated()` calls `css_rstat_updated()` for
//! the memcg itself; its ancestors are linked by the flusher
//! (`__css_process_update_tree()`), as here. The reentrancy the claim
//! `try_cmpxchg` guards against (IRQ and NMI on the same CPU) is not
//! modelled: only one context per CPU runs, so the claim always succeeds
//! after the `llist_on_list()` test failed.

use crate::kernel::{
    cmpxchg, read_once, smp_load_acquire, smp_mb, spin_lock, spin_unlock, trace_flush_begin,
    trace_flush_end, write_once,
};
use crate::protocol::per_memcg::rstat::{NULL, OFF_LIST, ON_TREE};
use crate::protocol::per_memcg::v6_17;
use crate::protocol::per_memcg::v6_8::{Memcontrol, State};
use crate::vocab::Platform;

/// The pointer to memcg `m`'s `lnode`.
fn node(m: u8) -> i64 {
    i64::from(m) + 2
}

/// `css_rstat_updated(&memcg->css, smp_processor_id())` (v6.17;
/// `__css_rstat_updated()` in v7.1). `smp_mb_pair` adds the barrier the
/// comment says a user needing the guarantee must put before the call.
pub fn css_rstat_updated<P: Platform>(mm: &State<P>, memcg: u8, smp_mb_pair: bool) {
    let t = mm.tree();
    let lnode = t.lnode_next[memcg as usize].this_cpu::<P>();
    if smp_mb_pair {
        smp_mb::<P>();
    }
    // llist_on_list(): "This check is racy and smp_mb() is needed ..." (C13).
    if read_once(lnode) != OFF_LIST {
        return;
    }
    // Claim the node among this CPU's contexts (fully ordered on success).
    // NOTE(kernel): v6.17.0 claims with this_cpu_cmpxchg(), which implies no
    // ordering; v6.18 on with try_cmpxchg(). The claim runs only when the
    // racy test found the node off the list, so the update is then listed
    // either way; the ordering does not bear on the race modelled here.
    if cmpxchg(lnode, OFF_LIST, NULL) != OFF_LIST {
        return;
    }
    // llist_add(): link in front of head->first with a try_cmpxchg loop.
    let head = t.lhead.this_cpu::<P>();
    let mut first = read_once(head);
    loop {
        write_once(lnode, first);
        let found = cmpxchg(head, first, node(memcg));
        if found == first {
            break;
        }
        first = found;
    }
}

/// `css_process_update_tree(ss, cpu)`: drain CPU `cpu`'s llist
/// (`llist_del_first_init()` until empty), re-initialising each node, and
/// link each drained memcg and its ancestors on the updated tree (plain
/// accesses under the ss lock). `smp_mb_pair` adds the barrier the comment
/// says "would be needed here", after each re-initialisation.
pub fn css_process_update_tree<P: Platform>(mm: &State<P>, cpu: usize, smp_mb_pair: bool) {
    let t = mm.tree();
    let head = t.lhead.per_cpu(cpu);
    loop {
        // llist_del_first(); one consumer at a time (the ss lock).
        let mut entry = smp_load_acquire(head);
        let m = loop {
            if entry == NULL {
                break None;
            }
            let m = (entry - 2) as u8;
            let next = read_once(t.lnode_next[m as usize].per_cpu(cpu));
            let found = cmpxchg(head, entry, next);
            if found == entry {
                break Some(m);
            }
            entry = found;
        };
        let Some(m) = m else { break };
        // init_llist_node(): the node is off the list from here.
        write_once(t.lnode_next[m as usize].per_cpu(cpu), OFF_LIST);
        if smp_mb_pair {
            smp_mb::<P>();
        }
        // __css_process_update_tree(): bottom-up, stop at the first node
        // already on the tree.
        let mut level = Some(m);
        while let Some(l) = level {
            let next = t.updated_next[l as usize].per_cpu(cpu);
            if read_once(next) != 0 {
                break;
            }
            write_once(next, ON_TREE);
            level = mm.parent_mem_cgroup(l);
        }
    }
}

/// `css_rstat_updated_list(root, cpu)`: drain the llist into the tree, then
/// unlink `root`'s subtree as v6.8 does (under the ss lock, which the
/// caller holds; no per-CPU lock any more).
pub fn css_rstat_updated_list<P: Platform>(
    mm: &State<P>,
    root: u8,
    cpu: usize,
    smp_mb_pair: bool,
) -> Vec<u8> {
    css_process_update_tree(mm, cpu, smp_mb_pair);
    let t = mm.tree();
    let mut list = Vec::new();
    if read_once(t.updated_next[root as usize].per_cpu(cpu)) != 0 {
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
    }
    list
}

/// `css_rstat_flush(css)` (v6.17): per CPU, take the ss lock, drain and
/// unlink, run the callbacks, release the lock.
pub fn css_rstat_flush<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    root: u8,
    smp_mb_pair: bool,
) {
    for cpu in 0..mm.env.cfg.cpus {
        spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        for m in css_rstat_updated_list(mm, root, cpu, smp_mb_pair) {
            code.mem_cgroup_css_rstat_flush(mm, m, cpu);
        }
        trace_flush_end(mm.memcg(root));
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// v6.17 (through v7.1.5) with the llist and the updated tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeV6_17 {
    /// Whether the barriers the 2025 comments describe are in.
    pub smp_mb_pair: bool,
}

impl Memcontrol for TreeV6_17 {
    fn rstat_tree(&self) -> bool {
        true
    }

    /// `memcg_rstat_updated()` (v6.17): `css_rstat_updated()` first, then
    /// v6.17's ancestor walk.
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        css_rstat_updated(mm, memcg, self.smp_mb_pair);
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        css_rstat_flush(self, mm, root, self.smp_mb_pair);
    }
}

/// The twin of [`TreeV6_17`]: the same llist and tree, without the early
/// `break` ([`v6_17::NoBreak`]'s walk).
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeV6_17NoBreak {
    /// Whether the barriers are in.
    pub smp_mb_pair: bool,
}

impl Memcontrol for TreeV6_17NoBreak {
    fn rstat_tree(&self) -> bool {
        true
    }

    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        css_rstat_updated(mm, memcg, self.smp_mb_pair);
        v6_17::NoBreak.memcg_rstat_updated(mm, memcg, val);
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        css_rstat_flush(self, mm, root, self.smp_mb_pair);
    }
}
