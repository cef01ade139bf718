//! The lifetime model's observations: a memcg's death under RCU, as
//! protocol/lifetime reports it.

use serde::Serialize;

/// The lifetime model's events (protocol/lifetime).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LifeEvent {
    /// An updater's `rcu_dereference()` of the objcg found `memcg`.
    Deref {
        /// The memcg found.
        memcg: u8,
    },
    /// The updater's `rcu_read_unlock()`.
    Unlocked,
    /// `mem_cgroup_css_offline()` of `memcg` reparented its objcgs.
    Offline {
        /// The memcg.
        memcg: u8,
    },
    /// `css_release_work_fn()` of `memcg` finished its flush (and, up to
    /// v6.15, unlinked the css from `rstat_css_list`).
    Released {
        /// The memcg.
        memcg: u8,
    },
    /// `css_rstat_exit()`'s check (`cgroup_rstat_exit()`'s up to v6.15): on
    /// how many CPUs' updated trees `memcg` still was.
    ExitCheck {
        /// The memcg.
        memcg: u8,
        /// CPUs whose tree still held it.
        on_tree: u8,
    },
    /// `memcg` was freed (`mem_cgroup_css_free()`).
    Freed {
        /// The memcg.
        memcg: u8,
        /// Whether its updated-tree node went with it: per-css rstat
        /// (v6.16 on), whose `css_rstat_exit()` runs just before. Up to
        /// v6.15 the node is the cgroup's, freed later ([`Self::CgroupFreed`]).
        rstat: bool,
    },
    /// `css_create()` linked a new memory css into `memcg`'s cgroup (the
    /// controller enabled again while the old css dies).
    Linked {
        /// The memcg whose cgroup it is.
        memcg: u8,
    },
    /// The cgroup of `memcg` was freed, with its rstat data (up to v6.15:
    /// the cgroup's self css freed, `cgroup_rstat_exit()`, `kfree(cgrp)`).
    CgroupFreed {
        /// The memcg whose cgroup it is.
        memcg: u8,
    },
}
