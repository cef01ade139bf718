//! Mutants of the lifetime steps: each one small code difference from
//! [`super::forms::V7_1Life`] (or [`super::forms::V6_8Life`]), and their part of the
//! catalogue.

use crate::explore::BackendName;
use crate::kernel::atomic_add_return;
use crate::kernel::rcu::{rcu_dereference, rcu_read_lock, rcu_read_unlock, RcuDefect, RcuThread};
use crate::observe::Property;
use crate::protocol::lifetime::forms::{emit, rstat_exit_check, Life, Lifetime, WorkQueue};
use crate::protocol::lifetime::wing::model;
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::variant::{Kind, Variant};
use crate::vocab::obs::{LifeEvent, Obs};
use crate::vocab::Platform;

/// `queue_work()` instead of `queue_rcu_work()`: the free does not wait
/// for a grace period.
#[derive(Clone, Copy, Debug, Default)]
pub struct FreeWithoutGracePeriod;

impl Lifetime for FreeWithoutGracePeriod {
    fn css_release_work_fn<P: Platform>(
        &self,
        life: &Life<P>,
        _th: &RcuThread,
        wq: &mut WorkQueue,
        memcg: u8,
    ) {
        self.css_release_flush(life, memcg);
        emit::<P>(LifeEvent::Released { memcg });
        self.css_free_rwork_fn(life, wq, memcg);
    }
}

/// `css_rstat_exit()` without its flush: what landed after the release
/// flush stays on the tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExitFlush;

impl Lifetime for NoExitFlush {
    fn css_rstat_exit<P: Platform>(&self, life: &Life<P>, memcg: u8) {
        rstat_exit_check(life, memcg);
    }
}

/// The updater leaves its read-side critical section before it charges
/// the memcg it found (`rcu_dereference()` used outside
/// `rcu_read_lock()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DerefOutsideRcu;

impl Lifetime for DerefOutsideRcu {
    fn mod_objcg_state<P: Platform>(&self, life: &Life<P>, th: &RcuThread, val: i64) {
        let guard = rcu_read_lock(&life.rcu, th);
        let memcg = rcu_dereference(&life.objcg);
        emit::<P>(LifeEvent::Deref { memcg });
        rcu_read_unlock(guard);
        emit::<P>(LifeEvent::Unlocked);
        let memcg = self.mod_memcg_state(life, th, memcg, val);
        P::emit(|| Obs::UpdateDone { memcg, val });
    }
}

/// The reference on the parent is put when the child goes offline, not
/// after the child is freed: a path that still holds a reference on the
/// child (a charged folio) can then walk into a freed parent.
#[derive(Clone, Copy, Debug, Default)]
pub struct EarlyParentPut;

impl Lifetime for EarlyParentPut {
    fn css_killed_work_fn<P: Platform>(&self, life: &Life<P>, wq: &mut WorkQueue, memcg: u8) {
        let mut css = Some(memcg);
        while let Some(m) = css {
            self.mem_cgroup_css_offline(life, m);
            self.css_put(life, wq, m);
            let parent = life.mm.parent_mem_cgroup(m);
            if let Some(p) = parent {
                self.css_put(life, wq, p);
            }
            css = parent.filter(|p| {
                *p != ROOT_MEM_CGROUP
                    && atomic_add_return(-1, &life.css[*p as usize].online_cnt) == 0
            });
        }
    }
    fn css_free_rwork_fn<P: Platform>(&self, life: &Life<P>, _wq: &mut WorkQueue, memcg: u8) {
        self.css_rstat_exit(life, memcg);
        self.mem_cgroup_css_free(life, memcg);
    }
}

/// v7.1 on an RCU whose grace period does not order the readers'
/// critical sections before what follows it (the flag RCU's quiescent
/// check made relaxed): only weak memory can tell.
#[derive(Clone, Copy, Debug, Default)]
pub struct GracePeriodWithoutOrdering;

impl Lifetime for GracePeriodWithoutOrdering {
    fn rcu_defect(&self) -> RcuDefect {
        RcuDefect {
            gp_without_acquire: true,
        }
    }
}

/// The catalogue's entries for these mutants, each with the property, the
/// backend and the entry that must kill it.
pub fn variants() -> Vec<Variant> {
    use BackendName::*;
    let m =
        |name: &str, summary: &str, model| Variant::lifetime(name, Kind::Mutant, summary, model);
    vec![
        m(
            "mutant-life-free-without-gp",
            "v7.1 freeing with queue_work(), no grace period",
            model(FreeWithoutGracePeriod),
        )
        .killed_on(Property::NoUseAfterFree, ShuttleDfs, "life-child"),
        m(
            "mutant-life-no-exit-flush",
            "v7.1 whose css_rstat_exit() does not flush",
            model(NoExitFlush),
        )
        .killed_on(Property::NoLeak, ShuttleDfs, "life-child"),
        m(
            "mutant-life-deref-outside-rcu",
            "v7.1 whose updater charges the memcg after rcu_read_unlock()",
            model(DerefOutsideRcu),
        )
        .killed_on(Property::NoUseAfterFree, ShuttleRandom, "life-child"),
        m(
            "mutant-life-early-parent-put",
            "v7.1 putting the parent when the child goes offline, before the child is freed",
            model(EarlyParentPut),
        )
        .killed_on(Property::NoUseAfterFree, ShuttleDfs, "life-parent"),
        m(
            "mutant-life-gp-no-acquire",
            "v7.1 on an RCU whose grace period does not order the readers' sections (weak memory only)",
            model(GracePeriodWithoutOrdering),
        )
        .killed_on(Property::NoUseAfterFree, Loom, "life-child")
        .flag_rcu_only(),
    ]
}
