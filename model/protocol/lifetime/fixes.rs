//! The fix candidates of `death-lost-page` ([`crate::protocol::findings`]),
//! each the v6.8 lifetime form ([`super::forms::V6_8Life`]) with the
//! release and free changed, marked `NOTE(kernel): FIX` (docs/findings.md
//! sections 16 and 18).

use crate::kernel::{spin_lock, spin_unlock};
use crate::protocol::lifetime::forms::{rstat_exit_check, Life, Lifetime, WorkQueue};
use crate::vocab::Platform;

/// WITHDRAWN fix candidate of `death-lost-page`
/// ([`crate::protocol::findings`]): `list_del_rcu(&css->rstat_css_node)`
/// moved from the release to `cgroup_rstat_exit()`, after its flush. It
/// was derived when the model ran `cgroup_rstat_exit()` before the memcg's
/// free; in the kernel's order `cgroup_rstat_exit()` runs at the cgroup's
/// free, after `mem_cgroup_css_free()`, so the freed memcg stays on
/// `rstat_css_list` until then: the cgroup's release flush and
/// `cgroup_rstat_exit()`'s own flush walk into it, and the `list_del_rcu()`
/// writes it (a use after free, `no_use_after_free`). Kept to be compared,
/// not proposed; [`V6_8LifeFlushAtCssFree`] replaces it.
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
        crate::kernel::write_once(&life.css[memcg as usize].rstat_css_node, 0);
        rstat_exit_check(life, memcg);
    }
}

/// The fix candidate of `death-lost-page` ([`crate::protocol::findings`]):
/// the css stays on `rstat_css_list` from its release until its own free,
/// where `css_free_rwork_fn()`, before `ss->css_free(css)`, flushes the
/// cgroup with the memcg callback and only then takes the css off the list,
/// under `cgroup_rstat_lock`, which every walker of the list holds; as
/// `css_rstat_exit(css)` does in the same place from v6.16 (5da3bfa029d6).
/// Every update that can still land (a charge inside a read-side section
/// that found the memcg before offline) has landed by then: the free runs
/// after the release's grace period.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8LifeFlushAtCssFree;

impl Lifetime for V6_8LifeFlushAtCssFree {
    fn rstat_css_list(&self) -> bool {
        true
    }

    fn css_release_flush<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        // NOTE(kernel): FIX, no list_del_rcu(&css->rstat_css_node) at release.
        self.cgroup_rstat_flush(life, memcg);
    }

    fn css_free_rwork_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        // NOTE(kernel): FIX, in css_free_rwork_fn()'s css path, before
        // ss->css_free(css): "if (!list_empty(&css->rstat_css_node)) {
        // cgroup_rstat_flush(cgrp); spin_lock_irq(&cgroup_rstat_lock);
        // list_del_rcu(&css->rstat_css_node); spin_unlock_irq(...); }". The
        // lock, not a grace period, keeps walkers off the css once it is
        // freed: cgroup_rstat_flush_locked() walks the list with it held.
        self.cgroup_rstat_flush(life, memcg);
        spin_lock(&life.mm.cgroup_rstat_lock);
        crate::kernel::write_once(&life.css[memcg as usize].rstat_css_node, 0);
        spin_unlock(&life.mm.cgroup_rstat_lock);
        self.mem_cgroup_css_free(life, memcg);
        self.cgroup_put(life, wq, memcg);
        if let Some(parent) = life.mm.parent_mem_cgroup(memcg) {
            self.css_put(life, wq, parent);
        }
    }
}
