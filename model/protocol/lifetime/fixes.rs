//! The fix candidates of `death-lost-page` ([`crate::protocol::findings`]),
//! each the v6.8 lifetime form ([`super::forms::V6_8Life`]) with the
//! release or the free changed, marked `NOTE(kernel): FIX` (docs/findings.md
//! sections 16 and 18). Two are withdrawn and kept to be compared: each
//! breaks something the model shows.

use crate::kernel::{spin_lock, spin_unlock};
use crate::protocol::lifetime::css_list::OLD;
use crate::protocol::lifetime::forms::{rstat_exit_check, Life, Lifetime, WorkQueue};
use crate::protocol::per_memcg::rstat_tree;
use crate::protocol::per_memcg::rstat_tree::TreeV6_8;
use crate::protocol::per_memcg::v6_8::Memcontrol;
use crate::vocab::Platform;

/// WITHDRAWN fix candidate of `death-lost-page`
/// ([`crate::protocol::findings`]): `list_del_rcu(&css->rstat_css_node)`
/// moved from the release to `cgroup_rstat_exit()`, after its flush. It
/// was derived when the model ran `cgroup_rstat_exit()` before the memcg's
/// free; in the kernel's order `cgroup_rstat_exit()` runs at the cgroup's
/// free, after `mem_cgroup_css_free()`, so the freed memcg stays on
/// `rstat_css_list` until then: the cgroup's release flush and
/// `cgroup_rstat_exit()`'s own flush walk into it, and the `list_del_rcu()`
/// writes it (a use after free, `no_use_after_free`).
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8LifeDelAtFree;

impl Lifetime for V6_8LifeDelAtFree {
    fn rstat_css_list(&self) -> bool {
        true
    }

    fn css_release_flush<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        // NOTE(kernel): FIX (withdrawn), no list_del_rcu(&css->rstat_css_node) at release.
        self.cgroup_rstat_flush(life, memcg);
    }

    fn css_rstat_exit<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        self.cgroup_rstat_flush(life, memcg);
        // NOTE(kernel): FIX (withdrawn), the list_del_rcu() moved here, into
        // cgroup_rstat_exit(), which runs after the memcg was freed.
        life.cgroups[memcg as usize]
            .rstat_css_list
            .list_del_rcu(OLD);
        rstat_exit_check(life, memcg);
    }
}

/// WITHDRAWN fix candidate of `death-lost-page`: the css stays on
/// `rstat_css_list` from its release until its own free, where
/// `css_free_rwork_fn()`, before `ss->css_free(css)`, flushes the cgroup
/// with the memcg callback and only then takes the css off the list, under
/// `cgroup_rstat_lock`, which every reader of the list holds. The list has
/// another writer, `init_and_link_css()`, which adds a new css under
/// `cgroup_mutex` only: a memory css created in the same cgroup while the
/// old memcg waits to be freed (the controller enabled again in the
/// parent's `cgroup.subtree_control`) races the `list_del_rcu()`, and the
/// list can keep the freed css (`no_use_after_free` on `life-relink`).
/// [`V6_8LifeCallbackAtFree`] replaces it.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8LifeFlushAtCssFree;

impl Lifetime for V6_8LifeFlushAtCssFree {
    fn rstat_css_list(&self) -> bool {
        true
    }

    fn css_release_flush<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        // NOTE(kernel): FIX (withdrawn), no list_del_rcu(&css->rstat_css_node) at release.
        self.cgroup_rstat_flush(life, memcg);
    }

    fn css_free_rwork_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        // NOTE(kernel): FIX (withdrawn), in css_free_rwork_fn()'s css path,
        // before ss->css_free(css): cgroup_rstat_flush(cgrp), then
        // list_del_rcu(&css->rstat_css_node) under cgroup_rstat_lock, not
        // under cgroup_mutex.
        self.cgroup_rstat_flush(life, memcg);
        spin_lock(&life.mm.cgroup_rstat_lock);
        life.cgroups[memcg as usize]
            .rstat_css_list
            .list_del_rcu(OLD);
        spin_unlock(&life.mm.cgroup_rstat_lock);
        self.mem_cgroup_css_free(life, memcg);
        self.cgroup_put(life, wq, memcg);
        if let Some(parent) = life.mm.parent_mem_cgroup(memcg) {
            self.css_put(life, wq, parent);
        }
    }
}

/// The fix candidate of `death-lost-page` ([`crate::protocol::findings`]),
/// a stable-only change for v5.13-v6.15: the release is left as it is (its
/// flush and `list_del_rcu()` under `cgroup_mutex`, so the list's writers
/// still exclude each other), and `css_free_rwork_fn()`, before
/// `ss->css_free(css)`, calls the css's flush callback for every possible
/// CPU under `cgroup_rstat_lock`, then puts the parent cgroup on an updated
/// tree so that the next flush that covers it folds what the callback
/// passed up. The free runs a grace period after the release, so every
/// charge that found the memcg under RCU has landed by then.
///
/// Without the parent put back on a tree (`parent_updated: false`, the
/// withdrawn `v6.8-life-fix-callback-only`), the callback's delta can sit in
/// the parent's `state_pending` with the parent on no tree: a flush after the
/// late charge took the parent off every tree before the free, and nothing
/// folds the pending into the parent's aggregate.
#[derive(Clone, Copy, Debug)]
pub struct V6_8LifeCallbackAtFree {
    /// Whether the free puts the parent cgroup on an updated tree.
    pub parent_updated: bool,
}

impl Lifetime for V6_8LifeCallbackAtFree {
    fn rstat_css_list(&self) -> bool {
        true
    }

    fn css_free_rwork_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        // NOTE(kernel): FIX, cgroup_rstat_css_free_flush(css) in
        // css_free_rwork_fn()'s css path, before ss->css_free(css):
        // "spin_lock_irq(&cgroup_rstat_lock); for_each_possible_cpu(cpu)
        // css->ss->css_rstat_flush(css, cpu);
        // cgroup_rstat_updated(cgroup_parent(cgrp), smp_processor_id());
        // spin_unlock_irq(&cgroup_rstat_lock);" (the work's CPU: CPU 0 here).
        let code = TreeV6_8 { smp_mb_pair: true };
        spin_lock(&life.mm.cgroup_rstat_lock);
        for cpu in 0..life.mm.env.cfg.cpus {
            code.mem_cgroup_css_rstat_flush(&life.mm, memcg, cpu);
        }
        if let Some(parent) = life
            .mm
            .parent_mem_cgroup(memcg)
            .filter(|_| self.parent_updated)
        {
            rstat_tree::cgroup_rstat_updated_on(&life.mm, parent, 0, true);
        }
        spin_unlock(&life.mm.cgroup_rstat_lock);
        self.mem_cgroup_css_free(life, memcg);
        self.cgroup_put(life, wq, memcg);
        if let Some(parent) = life.mm.parent_mem_cgroup(memcg) {
            self.css_put(life, wq, parent);
        }
    }
}
