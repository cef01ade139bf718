//! A cgroup's `rstat_css_list` (v4.18-v6.15): the csses whose flush
//! callback a flush of the cgroup calls, as the doubly linked RCU list the
//! kernel keeps (include/linux/rculist.h), so that two writers that do not
//! exclude each other can corrupt it in the model as in the kernel.
//!
//! Writers, v5.13-v6.15 (kernel/cgroup/cgroup.c, read in v5.15.0, v6.1.0,
//! v6.6.9 and v6.12.0): `init_and_link_css()` adds a new css
//! (`list_add_rcu(&css->rstat_css_node, &cgrp->rstat_css_list)`, with
//! `lockdep_assert_held(&cgroup_mutex)`), and `css_release_work_fn()`
//! removes a released one (`list_del_rcu(&css->rstat_css_node)`, inside
//! `cgroup_lock()`). Readers: `cgroup_rstat_flush_locked()`'s
//! `list_for_each_entry_rcu(css, &pos->rstat_css_list, rstat_css_node)`,
//! under `cgroup_rstat_lock`.
//!
//! A list holds at most three nodes: its head (the cgroup's), the memcg's
//! own css, and a second memory css that `css_create()` links into the same
//! cgroup once the first is offline (the memory controller disabled and
//! enabled again in the parent's `cgroup.subtree_control`). Pointers are
//! node numbers ([`HEAD`], [`OLD`], [`NEW`]).

use crate::kernel::{read_once, smp_load_acquire, smp_store_release, write_once, Atomic, Var};
use crate::vocab::Platform;

/// The list head, `cgrp->rstat_css_list`.
pub const HEAD: i64 = 0;
/// The memcg's css's node, `css->rstat_css_node`.
pub const OLD: i64 = 1;
/// The node of a memory css created later in the same cgroup.
pub const NEW: i64 = 2;
/// `LIST_POISON2`, which `list_del_rcu()` leaves in the removed node's
/// `prev`.
pub const LIST_POISON2: i64 = -2;

/// A node's `next` and `prev`.
pub struct Node<P: Platform> {
    /// `next`.
    pub next: Atomic<P>,
    /// `prev`.
    pub prev: Atomic<P>,
}

/// One cgroup's `rstat_css_list`.
pub struct CssList<P: Platform> {
    /// `cgrp->rstat_css_list`: a word of the cgroup, not of the memcg.
    pub head: Node<P>,
    /// The memcg's css's `rstat_css_node`: freed with the memcg.
    pub old: Node<P>,
    /// A later memory css's `rstat_css_node`.
    pub new: Node<P>,
}

/// Static names of the words, per memcg (the model has three).
const HEAD_NEXT: [&str; 3] = [
    "rstat_css_list.next",
    "rstat_css_list.next.1",
    "rstat_css_list.next.2",
];
const HEAD_PREV: [&str; 3] = [
    "rstat_css_list.prev",
    "rstat_css_list.prev.1",
    "rstat_css_list.prev.2",
];
const NEW_NEXT: [&str; 3] = [
    "new_css.rstat_css_node.next",
    "new_css.rstat_css_node.next.1",
    "new_css.rstat_css_node.next.2",
];
const NEW_PREV: [&str; 3] = [
    "new_css.rstat_css_node.prev",
    "new_css.rstat_css_node.prev.1",
    "new_css.rstat_css_node.prev.2",
];

impl<P: Platform> CssList<P> {
    /// Memcg `m`'s cgroup's list holding the memcg's css only, the new
    /// node unlinked (pointing at itself, as `INIT_LIST_HEAD()` leaves it).
    pub fn new(m: u8) -> Self {
        let other = |name: &'static str| Var::Other { name, cpu: None };
        let css = |field: &'static str| Var::Css { memcg: m, field };
        let i = m as usize;
        CssList {
            head: Node {
                next: Atomic::new(other(HEAD_NEXT[i]), OLD),
                prev: Atomic::new(other(HEAD_PREV[i]), OLD),
            },
            old: Node {
                next: Atomic::new(css("rstat_css_node.next"), HEAD),
                prev: Atomic::new(css("rstat_css_node.prev"), HEAD),
            },
            new: Node {
                next: Atomic::new(other(NEW_NEXT[i]), NEW),
                prev: Atomic::new(other(NEW_PREV[i]), NEW),
            },
        }
    }

    /// The node a pointer names.
    ///
    /// NOTE(kernel): following `LIST_POISON2` oopses the kernel; the model
    /// stops the execution with a message naming the corruption.
    fn node(&self, p: i64) -> &Node<P> {
        match p {
            HEAD => &self.head,
            OLD => &self.old,
            NEW => &self.new,
            _ => panic!("model: rstat_css_list corrupted: a walk followed LIST_POISON2"),
        }
    }

    /// `list_add_rcu(&css->rstat_css_node, &cgrp->rstat_css_list)` of
    /// node `new`: after the head, before its old first node.
    pub fn list_add_rcu(&self, new: i64) {
        // __list_add_rcu(new, head, head->next)
        let next = read_once(&self.head.next);
        write_once(&self.node(new).next, next);
        write_once(&self.node(new).prev, HEAD);
        // rcu_assign_pointer(list_next_rcu(prev), new)
        smp_store_release(&self.head.next, new);
        write_once(&self.node(next).prev, new);
    }

    /// `list_del_rcu(&css->rstat_css_node)` of node `entry`: its
    /// neighbours linked to each other, its `prev` poisoned, its `next`
    /// left for readers still on it.
    pub fn list_del_rcu(&self, entry: i64) {
        let prev = read_once(&self.node(entry).prev);
        let next = read_once(&self.node(entry).next);
        // __list_del(entry->prev, entry->next)
        write_once(&self.node(next).prev, prev);
        write_once(&self.node(prev).next, next);
        write_once(&self.node(entry).prev, LIST_POISON2);
    }

    /// `list_for_each_entry_rcu()` over the list: the css nodes reached
    /// from the head, in order.
    ///
    /// NOTE(kernel): a corrupted list can loop without coming back to its
    /// head; the model stops after more nodes than the list can hold.
    pub fn walk(&self) -> Vec<i64> {
        let mut seen = Vec::new();
        let mut p = smp_load_acquire(&self.head.next);
        while p != HEAD {
            seen.push(p);
            assert!(
                seen.len() <= 2,
                "model: rstat_css_list corrupted: a walk from the head did not come back to it \
                 (nodes {seen:?})"
            );
            p = smp_load_acquire(&self.node(p).next);
        }
        seen
    }
}
