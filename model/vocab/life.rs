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
    /// v6.14, unlinked the css from `rstat_css_list`).
    Released {
        /// The memcg.
        memcg: u8,
    },
    /// `css_rstat_exit()`'s check: on how many CPUs' updated trees `memcg`
    /// still was.
    ExitCheck {
        /// The memcg.
        memcg: u8,
        /// CPUs whose tree still held it.
        on_tree: u8,
    },
    /// `memcg` was freed.
    Freed {
        /// The memcg.
        memcg: u8,
    },
}
