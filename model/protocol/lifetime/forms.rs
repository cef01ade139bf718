//! A memcg's death: offline, release and free (kernel/cgroup/cgroup.c,
//! mm/memcontrol.c), racing updaters that reach the memcg through an
//! RCU-protected pointer and a flusher (docs/model.md, section 11).
//!
//! The statistics path is the v6.8 lineage's code with the updated tree
//! ([`crate::protocol::per_memcg::rstat_tree`], [`crate::protocol::per_memcg::rstat_llist`]), with
//! the barrier pair in (`-mb`), so that the tree's own store-buffering loss
//! (docs/findings.md section 15) does not mask a loss at death. Two forms of
//! the lifetime steps (docs/model.md, section 11, with the kernel functions):
//!
//! | step | [`V6_8Life`] (v5.13-v6.15, so v6.0 too) | [`V7_1Life`] (v6.17-v7.1.5) |
//! |---|---|---|
//! | offline | `memcg_reparent_objcgs()`: `objcg->memcg = parent` | same (cgroup v2) |
//! | release (refcount 0) | `cgroup_rstat_flush(cgrp)`, then `list_del_rcu(&css->rstat_css_node)` | `css_rstat_flush(css)` |
//! | `queue_rcu_work()` | a grace period | a grace period |
//! | free (`css_free_rwork_fn()`) | `mem_cgroup_css_free()`, `cgroup_put(cgrp)` | `css_rstat_exit()`: `css_rstat_flush(css)` again, the tree check; then `mem_cgroup_css_free()` |
//! | then | `css_put(parent)` | `css_put(parent)` |
//! | the cgroup's last reference | its self css's release, `cgroup_rstat_flush(cgrp)`; a grace period; its free, `cgroup_rstat_exit()`: a flush that no longer calls the memcg callback, the tree check, `kfree(cgrp)` | (the self css's rstat holds only the base stats: not modelled) |
//!
//! Up to v6.15 the updated tree is the cgroup's (`cgrp->rstat_cpu`), shared
//! by every controller, and lives until the cgroup is freed, after the memcg
//! (kernel/cgroup/cgroup.c `css_free_rwork_fn()`: the css path calls
//! `ss->css_free(css)` then `cgroup_put(cgrp)`; `cgroup_rstat_exit(cgrp)` is
//! on the cgroup path, when the self css is freed; v6.1.192 cgroup.c:5414,
//! 5416, 5436; v6.14.0 cgroup.c:5410, 5412, 5434). From v6.16 the tree is
//! the css's and `css_rstat_exit(css)` runs before `ss->css_free(css)`
//! (v7.1.5 cgroup.c:5568, 5575).
//!
//! An updater charges through the objcg path: `rcu_read_lock()`,
//! `memcg = obj_cgroup_memcg(objcg)`, `__mod_memcg_state(memcg)`,
//! `rcu_read_unlock()`, holding no reference on the memcg.
//!
//! NOTE(kernel): "free" marks the memcg freed for the observers and stores a
//! poison value into its atomics (so that loom orders the free against every
//! access, as loom's DPOR would otherwise treat free and use as
//! independent); the memory lives until the execution
//! ends. The release and free work run on the thread that queued them
//! ([`WorkQueue`]); `queue_rcu_work()` is `synchronize_rcu()` before the
//! work, which is the ordering the work queue gives. [`V7_1LifeV1`] adds
//! v7.1's cgroup v1 steps (redirection to the nearest live ancestor, offline
//! after a grace period with forced flushes); the v2 forms keep v6.17-v7.0's
//! offline timing.

use crate::kernel::rcu::{
    rcu_access_pointer, rcu_assign_pointer, rcu_dereference, rcu_read_lock, rcu_read_unlock,
    synchronize_rcu, RcuDefect, RcuThread,
};
use crate::kernel::{atomic_add_return, read_once, spin_lock, spin_unlock};
use crate::protocol::lifetime::css_list::{NEW, OLD};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::per_memcg::rstat_llist::{self, TreeV6_17};
use crate::protocol::per_memcg::rstat_tree::{self, TreeV6_8};
use crate::protocol::per_memcg::v6_8::Memcontrol;
use crate::vocab::obs::{LifeEvent, Obs};
use crate::vocab::Platform;

pub use super::state::{emit, CgroupState, CssState, Life, Work, WorkQueue, CHILD, PARENT, POISON};

/// The lifetime steps, as default methods over the two forms' common code;
/// a form or a mutant overrides the step it changes.
pub trait Lifetime: Clone + Send + Sync + 'static {
    /// Whether the form keeps `rstat_css_list` (v4.18-v6.15): the release
    /// unlinks the css and later flushes skip its callback, and the updated
    /// tree is the cgroup's, freed with the cgroup after the memcg. The
    /// statistics path follows: v6.8's updated tree with it, v6.17's llist
    /// without.
    fn rstat_css_list(&self) -> bool {
        false
    }

    /// Whether the memory controller is on cgroup v1 (v7.1's redirection of
    /// updates to the nearest live ancestor, and its flushes at offline).
    fn cgroup_v1(&self) -> bool {
        false
    }

    /// Defects of the RCU implementation (mutants of the facade only).
    fn rcu_defect(&self) -> RcuDefect {
        RcuDefect::default()
    }

    /// `__mod_memcg_state()` of the form's statistics path.
    fn __mod_memcg_state<P: Platform>(&self, life: &Life<P>, memcg: u8, val: i64) {
        if self.rstat_css_list() {
            TreeV6_8 { smp_mb_pair: true }.__mod_memcg_state(&life.mm, memcg, val);
        } else {
            TreeV6_17 { smp_mb_pair: true }.__mod_memcg_state(&life.mm, memcg, val);
        }
    }

    /// A flush of `root`'s subtree (`cgroup_rstat_flush()` /
    /// `css_rstat_flush()`): the callback of each memcg the tree yields,
    /// unless the form keeps `rstat_css_list` and the css is off it.
    fn cgroup_rstat_flush<P: Platform>(&self, life: &Life<P>, root: u8) {
        if self.rstat_css_list() {
            // The memcg callback runs for the memcg's css if the walk of
            // its cgroup's rstat_css_list reaches it; a later memory css of
            // the same cgroup holds nothing the model follows.
            let listed = |m: u8| {
                life.cgroups[m as usize]
                    .rstat_css_list
                    .walk()
                    .contains(&OLD)
            };
            let code = TreeV6_8 { smp_mb_pair: true };
            rstat_tree::cgroup_rstat_flush_locked(&code, &life.mm, root, true, &listed);
        } else {
            let code = TreeV6_17 { smp_mb_pair: true };
            rstat_llist::css_rstat_flush(&code, &life.mm, root, true);
        }
    }

    /// The objcg charge path (`mod_objcg_mlstate()`): the memcg is found
    /// and charged inside one read-side critical section.
    fn mod_objcg_state<P: Platform>(&self, life: &Life<P>, th: &RcuThread, val: i64) {
        let guard = rcu_read_lock(&life.rcu, th);
        let memcg = rcu_dereference(&life.objcg);
        emit::<P>(LifeEvent::Deref { memcg });
        let memcg = self.mod_memcg_state(life, th, memcg, val);
        rcu_read_unlock(guard);
        emit::<P>(LifeEvent::Unlocked);
        P::emit(|| Obs::UpdateDone { memcg, val });
    }

    /// `mod_memcg_state()`: on cgroup v1 in v7.1, first
    /// `get_non_dying_memcg_start()` (under `rcu_read_lock()`, walk up while
    /// `memcg_is_dying()`). Returns the memcg charged.
    fn mod_memcg_state<P: Platform>(
        &self,
        life: &Life<P>,
        th: &RcuThread,
        memcg: u8,
        val: i64,
    ) -> u8 {
        if !self.cgroup_v1() {
            self.__mod_memcg_state(life, memcg, val);
            return memcg;
        }
        let guard = rcu_read_lock(&life.rcu, th);
        let mut m = memcg;
        while crate::kernel::read_once(&life.css[m as usize].dying) != 0 {
            m = life.mm.parent_mem_cgroup(m).expect("the root never dies");
        }
        self.__mod_memcg_state(life, m, val);
        rcu_read_unlock(guard);
        m
    }

    /// A charge through a reference the caller holds on `memcg` (a charged
    /// folio's `memcg_data`), no RCU: only the reference keeps the memcg and,
    /// through the memcg's own reference on its parent, its ancestors alive.
    fn mod_folio_state<P: Platform>(&self, life: &Life<P>, th: &RcuThread, memcg: u8, val: i64) {
        let memcg = self.mod_memcg_state(life, th, memcg, val);
        P::emit(|| Obs::UpdateDone { memcg, val });
    }

    /// The folio's reference put (`css_put()` at uncharge), and any release
    /// work that queues run on this thread.
    fn folio_put<P: Platform>(&self, life: &Life<P>, th: &RcuThread, memcg: u8) {
        let mut wq = WorkQueue::default();
        self.css_put(life, &mut wq, memcg);
        self.run_work(life, th, wq);
    }

    /// Run queued release work, and whatever it queues in turn.
    fn run_work<P: Platform>(&self, life: &Life<P>, th: &RcuThread, mut wq: WorkQueue) {
        while !wq.0.is_empty() {
            match wq.0.remove(0) {
                Work::Css(m) => self.css_release_work_fn(life, th, &mut wq, m),
                Work::Cgroup(m) => self.cgroup_release_work_fn(life, th, &mut wq, m),
            }
        }
    }

    /// A flush of the whole tree by a worker (the periodic work, or main's
    /// final flush), walking the css lists under `rcu_read_lock()`.
    ///
    /// NOTE(kernel): the kernel holds `rcu_read_lock()` around each
    /// cgroup's css-list walk; the model holds it around the whole flush,
    /// which only makes grace periods wait longer.
    fn flush_all<P: Platform>(&self, life: &Life<P>, th: &RcuThread) {
        let guard = rcu_read_lock(&life.rcu, th);
        self.cgroup_rstat_flush(life, ROOT_MEM_CGROUP);
        rcu_read_unlock(guard);
    }

    /// `cgroup_rmdir()` of `memcg`: `kill_css()`, whose confirmation
    /// (`css_killed_ref_fn()`) drops the css's own count in `online_cnt`;
    /// the one that reaches 0 runs `css_killed_work_fn()`. Then the release
    /// work this queued, and whatever that queues in turn.
    fn rmdir<P: Platform>(&self, life: &Life<P>, th: &RcuThread, memcg: u8) {
        let mut wq = WorkQueue::default();
        if self.cgroup_v1() {
            crate::kernel::write_once(&life.css[memcg as usize].dying, 1);
        }
        if atomic_add_return(-1, &life.css[memcg as usize].online_cnt) == 0 {
            if self.cgroup_v1() {
                // v7.1: css_killed_work_fn() runs as RCU work, after every
                // updater that saw the memcg live has left its section.
                synchronize_rcu(&life.rcu, th);
            }
            self.css_killed_work_fn(life, &mut wq, memcg);
        }
        self.run_work(life, th, wq);
    }

    /// `css_killed_work_fn()`: offline the css and put the reference the
    /// kill held, then do the same for each ancestor whose last online child
    /// this was ("do { offline_css(css); css_put(css); css = css->parent; }
    /// while (css && atomic_dec_and_test(&css->online_cnt))").
    ///
    /// Under `cgroup_mutex` in the forms with `rstat_css_list` (see
    /// [`Life::cgroup_mutex`]), where `offline_css()` also clears
    /// `cgrp->subsys[]`, which `cgroup_drain_offline()` waits for.
    fn css_killed_work_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        let locked = self.rstat_css_list();
        if locked {
            spin_lock(&life.cgroup_mutex);
        }
        let mut css = Some(memcg);
        while let Some(m) = css {
            self.mem_cgroup_css_offline(life, m);
            if locked {
                // offline_css(): RCU_INIT_POINTER(css->cgroup->subsys[ss->id], NULL)
                crate::kernel::write_once(&life.cgroups[m as usize].subsys, 0);
            }
            self.css_put(life, wq, m);
            css = life.mm.parent_mem_cgroup(m).filter(|p| {
                *p != ROOT_MEM_CGROUP
                    && atomic_add_return(-1, &life.css[*p as usize].online_cnt) == 0
            });
        }
        if locked {
            spin_unlock(&life.cgroup_mutex);
        }
    }

    /// `mem_cgroup_css_offline()` → `memcg_reparent_objcgs()`: objcgs of
    /// `memcg` now charge its parent.
    fn mem_cgroup_css_offline<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        let parent = life.mm.parent_mem_cgroup(memcg).expect("not the root");
        spin_lock(&life.objcg_lock);
        if rcu_access_pointer(&life.objcg) == memcg {
            rcu_assign_pointer(&life.objcg, parent);
        }
        spin_unlock(&life.objcg_lock);
        if self.cgroup_v1() {
            // reparent_state_local(): a forced flush of the memcg, the move
            // of its non-hierarchical counters (not modelled: the model's
            // one item is hierarchical), a forced flush of the parent.
            self.cgroup_rstat_flush(life, memcg);
            self.cgroup_rstat_flush(life, parent);
        }
        emit::<P>(LifeEvent::Offline { memcg });
    }

    /// `css_put(css)`: the last put queues the release work
    /// (`queue_work(cgroup_release_wq, ...)`).
    fn css_put<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        if atomic_add_return(-1, &life.css[memcg as usize].refcnt) == 0 {
            wq.0.push(Work::Css(memcg));
        }
    }

    /// `cgroup_put(cgrp)` of `memcg`'s cgroup (`css_put(&cgrp->self)`): the
    /// last put queues the self css's release.
    fn cgroup_put<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        if atomic_add_return(-1, &life.cgroups[memcg as usize].refcnt) == 0 {
            wq.0.push(Work::Cgroup(memcg));
        }
    }

    /// `css_release_work_fn()`: the release flush, then the free after a
    /// grace period (`queue_rcu_work(cgroup_free_wq, css_free_rwork_fn)`).
    fn css_release_work_fn<P: Platform>(
        &self,
        life: &Life<P>,
        th: &RcuThread,
        wq: &mut WorkQueue,
        memcg: u8,
    ) {
        // cgroup_lock() around the release (the forms with rstat_css_list).
        let locked = self.rstat_css_list();
        if locked {
            spin_lock(&life.cgroup_mutex);
        }
        self.css_release_flush(life, memcg);
        emit::<P>(LifeEvent::Released { memcg });
        if locked {
            spin_unlock(&life.cgroup_mutex);
        }
        synchronize_rcu(&life.rcu, th);
        self.css_free_rwork_fn(life, wq, memcg);
    }

    /// The release's flush: v4.18-v6.15 `cgroup_rstat_flush(cgrp)` then
    /// `list_del_rcu(&css->rstat_css_node)`; v6.16 on `css_rstat_flush(css)`.
    fn css_release_flush<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        self.cgroup_rstat_flush(life, memcg);
        if self.rstat_css_list() {
            life.cgroups[memcg as usize]
                .rstat_css_list
                .list_del_rcu(OLD);
        }
    }

    /// The memory controller enabled again in the parent's
    /// `cgroup.subtree_control` while `memcg`'s css dies
    /// (`cgroup_apply_control()`): `cgroup_drain_offline()` waits, under
    /// `cgroup_mutex`, until the old css is offline; `css_create()` then
    /// links a new memory css into the same cgroup (`init_and_link_css()`:
    /// `cgroup_get_live(cgrp)`, and in the forms with `rstat_css_list`
    /// `list_add_rcu()` of its node) and brings it online.
    ///
    /// NOTE(kernel): the new css's memcg and its statistics are not
    /// modelled, only its node on the list and its reference on the
    /// cgroup; the forms without the list take no `cgroup_mutex`, and there
    /// the new css is linked without waiting.
    fn enable<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        let cg = &life.cgroups[memcg as usize];
        if self.rstat_css_list() {
            // NOTE(kernel): cgroup_drain_offline() tests under cgroup_mutex
            // and sleeps on the cgroup's offline_waitq without it; the model
            // waits for the offline first and then takes the mutex, which
            // only offline_css() could otherwise clear the pointer under.
            let mut snap = None;
            while read_once(&cg.subsys) != 0 {
                if snap.is_none() {
                    snap = crate::vocab::footprint::spin_snapshot();
                } else {
                    crate::vocab::footprint::spin_restore(snap);
                }
                P::yield_now();
            }
            spin_lock(&life.cgroup_mutex);
        }
        atomic_add_return(1, &cg.refcnt);
        if self.rstat_css_list() {
            cg.rstat_css_list.list_add_rcu(NEW);
            crate::kernel::write_once(&cg.subsys, NEW);
            spin_unlock(&life.cgroup_mutex);
        }
        emit::<P>(LifeEvent::Linked { memcg });
    }

    /// The new memory css of `memcg`'s cgroup charged: its update puts the
    /// cgroup on CPU 0's updated tree (the forms with `rstat_css_list`,
    /// whose tree is the cgroup's), so that the next flush walks the
    /// cgroup's `rstat_css_list`.
    fn new_css_charged<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        if self.rstat_css_list() {
            rstat_tree::cgroup_rstat_updated_on(&life.mm, memcg, 0, true);
        }
    }

    /// `css_free_rwork_fn()` of the memcg's css: from v6.16
    /// `css_rstat_exit(css)` first; then `ss->css_free(css)`
    /// ([`Self::mem_cgroup_css_free`]), `cgroup_put(cgrp)` (up to v6.15 the
    /// cgroup's release and free, with `cgroup_rstat_exit()`, follow from
    /// it: [`Self::cgroup_release_work_fn`]), then the reference on the
    /// parent put.
    fn css_free_rwork_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        if !self.rstat_css_list() {
            self.css_rstat_exit(life, memcg);
        }
        self.mem_cgroup_css_free(life, memcg);
        if self.rstat_css_list() {
            self.cgroup_put(life, wq, memcg);
        }
        if let Some(parent) = life.mm.parent_mem_cgroup(memcg) {
            self.css_put(life, wq, parent);
        }
    }

    /// `mem_cgroup_css_free()` → `mem_cgroup_free()`: the memcg freed, with
    /// its updated-tree node when that is the css's (v6.16 on).
    fn mem_cgroup_css_free<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        mem_cgroup_free(life, memcg, !self.rstat_css_list());
    }

    /// Up to v6.15, the release of `memcg`'s cgroup once its last reference
    /// is put (`css_release_work_fn()` of the self css, its cgroup release
    /// path): `cgroup_rstat_flush(cgrp)`, then the free after a grace period
    /// (`queue_rcu_work()`). The memcg's css is already off
    /// `rstat_css_list` and freed, so the flush skips its callback.
    fn cgroup_release_work_fn<P: Platform>(
        &self,
        life: &Life<P>,
        th: &RcuThread,
        wq: &mut WorkQueue,
        memcg: u8,
    ) {
        self.cgroup_rstat_flush(life, memcg);
        synchronize_rcu(&life.rcu, th);
        self.cgroup_free_rwork_fn(life, wq, memcg);
    }

    /// Up to v6.15, `css_free_rwork_fn()` of the self css, its cgroup free
    /// path: `cgroup_put(cgroup_parent(cgrp))`, `cgroup_rstat_exit(cgrp)`
    /// ([`Self::css_rstat_exit`]), `kfree(cgrp)`.
    fn cgroup_free_rwork_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        if let Some(parent) = life.mm.parent_mem_cgroup(memcg) {
            self.cgroup_put(life, wq, parent);
        }
        self.css_rstat_exit(life, memcg);
        emit::<P>(LifeEvent::CgroupFreed { memcg });
    }

    /// The rstat exit: `css_rstat_exit(css)` at the css's free (v6.16 on),
    /// `cgroup_rstat_exit(cgrp)` at the cgroup's (up to v6.15). Flush once
    /// more (up to v6.15 without the memcg callback: the css is off
    /// `rstat_css_list`), then check that the memcg is on no CPU's updated
    /// tree ("WARN_ON_ONCE" and return without freeing the per-CPU rstat
    /// data if it is: a leak).
    fn css_rstat_exit<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        self.cgroup_rstat_flush(life, memcg);
        rstat_exit_check(life, memcg);
    }
}

/// The tree check of `css_rstat_exit()`: the memcg's `updated_next` on each
/// CPU (the model's tree has one word per node; `updated_children` is not
/// modelled, see [`crate::protocol::per_memcg::rstat_tree`]).
pub fn rstat_exit_check<P: Platform>(life: &Life<P>, memcg: u8) {
    let t = life.mm.rstat.as_ref().expect("tree");
    let on: Vec<usize> = (0..life.mm.env.cfg.cpus)
        .filter(|&cpu| read_once(t.updated_next[memcg as usize].per_cpu(cpu)) != 0)
        .collect();
    emit::<P>(LifeEvent::ExitCheck {
        memcg,
        on_tree: on.len() as u8,
    });
}

/// `__mem_cgroup_free()`: mark freed, then poison every atomic of the
/// memcg's statistics (the observers see the mark first, so any access
/// from here on is a use after free). `rstat`: the memcg's updated-tree
/// node goes with it (per-css rstat, v6.16 on).
pub fn mem_cgroup_free<P: Platform>(life: &Life<P>, memcg: u8, rstat: bool) {
    emit::<P>(LifeEvent::Freed { memcg, rstat });
    let m = life.mm.memcg(memcg);
    for cpu in 0..life.mm.env.cfg.cpus {
        let pc = m.vmstats_percpu.per_cpu(cpu);
        pc.state.poison(POISON);
        pc.stats_updates.poison(POISON);
    }
    m.vmstats.state.poison(POISON);
    m.vmstats.stats_updates.poison(POISON);
}

/// The v5.13-v6.15 form (memcg on rstat from v5.13, 2d146aa3aa84; the
/// release and free lines are rstat's since v4.18; read in v6.1.192,
/// v6.8.0, v6.12.117 and v6.14.0): the release flushes the cgroup and takes
/// the css off `rstat_css_list`; after a grace period the memcg is freed
/// and its reference on the cgroup put; the cgroup's own release flush and,
/// after another grace period, `cgroup_rstat_exit()` follow once the
/// cgroup's last reference goes, both without the memcg callback.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8Life;

impl Lifetime for V6_8Life {
    fn rstat_css_list(&self) -> bool {
        true
    }
}

/// The v6.17-v7.1.5 form.
#[derive(Clone, Copy, Debug, Default)]
pub struct V7_1Life;

impl Lifetime for V7_1Life {}

/// v7.1.5 on cgroup v1: updates to a dying memcg go to its nearest live
/// ancestor, the kill waits a grace period before offline, and offline
/// flushes the memcg and its parent.
#[derive(Clone, Copy, Debug, Default)]
pub struct V7_1LifeV1;

impl Lifetime for V7_1LifeV1 {
    fn cgroup_v1(&self) -> bool {
        true
    }
}
