//! The state of one lifetime execution ([`Life`]): the v6.8-lineage
//! statistics state, each memcg's css and cgroup (its `rstat_css_list`,
//! `cgroup_mutex`), the objcg and the RCU; and the release work a thread
//! queues ([`WorkQueue`]). The steps are [`super::forms::Lifetime`]'s.

use crate::config::Config;
use crate::kernel::rcu::{Rcu, RcuDefect, RcuFlavor, RcuPointer};
use crate::kernel::{Atomic, LockName, SpinLock, Var};
use crate::protocol::lifetime::css_list::{CssList, OLD};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::per_memcg::rstat::RstatTree;
use crate::protocol::per_memcg::v6_8::State;
use crate::vocab::obs::{LifeEvent, Obs};
use crate::vocab::Platform;

/// The memcg under the root that the scenario may remove.
pub const PARENT: u8 = 1;
/// The memcg that dies, a child of [`PARENT`].
pub const CHILD: u8 = 2;

/// What the poisoned atomics of a freed memcg hold.
pub const POISON: i64 = -0x6b6b;

/// A memcg's `struct cgroup_subsys_state` as its death sees it.
pub struct CssState<P: Platform> {
    /// `css->refcnt` (a percpu_ref in atomic mode once killed at offline).
    pub refcnt: Atomic<P>,
    /// `css->online_cnt`: 1 plus the children still online; a css goes
    /// offline only after all its children have.
    pub online_cnt: Atomic<P>,
    /// `CSS_DYING` in `css->flags`, set by `kill_css()`.
    ///
    /// NOTE(kernel): set in every version; the model sets it only in the
    /// form that reads it (cgroup v1 in v7.1), so the other forms' searches
    /// carry no operation nobody observes.
    pub dying: Atomic<P>,
}

/// A memcg's cgroup as its death sees it (the forms with `rstat_css_list`,
/// v5.13-v6.15, whose updated tree is the cgroup's).
pub struct CgroupState<P: Platform> {
    /// `cgrp->self.refcnt`: a reference from the memcg's css
    /// (`init_and_link_css()`'s `cgroup_get_live()`, put by
    /// `css_free_rwork_fn()`) and one from each child cgroup (put when the
    /// child cgroup is freed).
    ///
    /// NOTE(kernel): the cgroup's base reference, which `cgroup_rmdir()`
    /// kills before the memcg can be released, is left out (it is in when
    /// the cgroup outlives its memory css, [`crate::config::Death::relink`]);
    /// so are the other controllers' csses.
    pub refcnt: Atomic<P>,
    /// `cgrp->rstat_css_list` (v4.18-v6.15), with the memcg's css on it.
    pub rstat_css_list: CssList<P>,
    /// `cgrp->subsys[memory_cgrp_id]`: non-zero while a memory css of the
    /// cgroup is online (`online_css()` sets it, `offline_css()` clears it).
    pub subsys: Atomic<P>,
}

/// The kernel state of one lifetime execution: the v6.8-lineage statistics
/// state and its updated tree, RCU, the objcg the updaters charge through,
/// each memcg's css and its cgroup.
pub struct Life<P: Platform> {
    /// Statistics state (memcgs 0 = root, [`PARENT`], [`CHILD`]).
    pub mm: State<P>,
    /// RCU.
    pub rcu: Rcu<P>,
    /// `objcg->memcg`: where the updaters' charges go.
    pub objcg: RcuPointer<P>,
    /// `objcg_lock`, which serialises reparenting.
    pub objcg_lock: SpinLock<P>,
    /// `cgroup_mutex`, held by `css_killed_work_fn()`,
    /// `css_release_work_fn()` and `css_create()`.
    ///
    /// NOTE(kernel): held in every version; the model takes it in the forms
    /// with `rstat_css_list`, where it orders the list's writers
    /// (`init_and_link_css()` against `css_release_work_fn()`). The forms
    /// without the list run offline and release unserialised, a superset of
    /// the kernel's interleavings.
    pub cgroup_mutex: SpinLock<P>,
    /// The css of each memcg.
    pub css: Vec<CssState<P>>,
    /// The cgroup of each memcg.
    pub cgroups: Vec<CgroupState<P>>,
}

fn css_name(field: &'static str, m: u8) -> Var {
    Var::Css { memcg: m, field }
}

/// `cgrp->self.refcnt` of memcg `m`'s cgroup: not a word of the memcg, so
/// not a [`Var::Css`] (the memcg is freed before its cgroup).
/// `cgrp->subsys[memory_cgrp_id]` of memcg `m`'s cgroup.
const SUBSYS_NAMES: [&str; 3] = ["cgrp->subsys", "cgrp->subsys.1", "cgrp->subsys.2"];

fn cgroup_refcnt_name(m: u8) -> Var {
    const NAMES: [&str; 3] = ["self.refcnt", "self.refcnt.1", "self.refcnt.2"];
    Var::Other {
        name: NAMES[m as usize],
        cpu: None,
    }
}

impl<P: Platform> Life<P> {
    /// Every memcg online with one reference (the child's reference on its
    /// parent added), the objcg pointing at [`CHILD`].
    ///
    /// `folio_refs` more references on [`CHILD`] are held by charged folios.
    pub fn new(
        env: crate::protocol::wing::Env<P>,
        flavor: RcuFlavor,
        defect: RcuDefect,
        folio_refs: i64,
    ) -> Self {
        // Readers: the CPUs, the periodic work, main.
        let threads = env.cfg.cpus + 2;
        let relink = env.cfg.death.is_some_and(|d| d.relink);
        let mut mm = State::new(env);
        mm.rstat = Some(RstatTree::new(&mm.env.cfg));
        let css = (0..mm.memcgs.len() as u8)
            .map(|m| {
                let children = (0..mm.memcgs.len() as u8)
                    .filter(|c| mm.parent_mem_cgroup(*c) == Some(m))
                    .count() as i64;
                CssState {
                    // The reference kill_css() holds until offline, plus one
                    // from each child (put when the child is freed).
                    refcnt: Atomic::new(
                        css_name("refcnt", m),
                        1 + children + if m == CHILD { folio_refs } else { 0 },
                    ),
                    online_cnt: Atomic::new(css_name("online_cnt", m), 1 + children),
                    dying: Atomic::new(css_name("dying", m), 0),
                }
            })
            .collect();
        let cgroups = (0..mm.memcgs.len() as u8)
            .map(|m| {
                let children = (0..mm.memcgs.len() as u8)
                    .filter(|c| mm.parent_mem_cgroup(*c) == Some(m))
                    .count() as i64;
                // The cgroup's base reference stays when only its memory css
                // is killed (relink).
                let base = i64::from(relink && m == CHILD);
                CgroupState {
                    refcnt: Atomic::new(cgroup_refcnt_name(m), 1 + children + base),
                    rstat_css_list: CssList::new(m),
                    subsys: Atomic::new(
                        Var::Other {
                            name: SUBSYS_NAMES[m as usize],
                            cpu: None,
                        },
                        OLD,
                    ),
                }
            })
            .collect();
        Life {
            rcu: Rcu::new(flavor, threads, defect),
            objcg: RcuPointer::new(
                Var::Other {
                    name: "objcg->memcg",
                    cpu: None,
                },
                CHILD,
            ),
            objcg_lock: SpinLock::new(LockName::Other("objcg_lock")),
            cgroup_mutex: SpinLock::new(LockName::Other("cgroup_mutex")),
            css,
            cgroups,
            mm,
        }
    }

    /// The configuration the statistics state is built from: root, parent,
    /// child.
    pub fn config(cpus: usize) -> Config {
        Config {
            cpus,
            batch: 64,
            tree: vec![ROOT_MEM_CGROUP, PARENT],
            periodic: false,
            readers: 0,
            ..Config::default()
        }
    }
}

/// One queued release: of a memcg's css, or (the forms with
/// `rstat_css_list`) of its cgroup's self css.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `css_release_work_fn()` of the memcg's css.
    Css(u8),
    /// `css_release_work_fn()` of the memcg's cgroup's self css.
    Cgroup(u8),
}

/// The release work a thread has queued and will run when its current work
/// is done.
///
/// NOTE(kernel): `cgroup_release_wq` and `cgroup_free_wq` run the work on
/// worker threads, later; the model runs it on the thread that queued it,
/// after that thread's current work (so a parent can go offline before its
/// child's release runs, as in the kernel), in the order queued, which
/// leaves out runs of the work concurrent with the rest of that thread's
/// work.
#[derive(Default, Debug)]
pub struct WorkQueue(pub Vec<Work>);

/// Report lifetime event `e` to the monitors: a step overridden by a
/// variant emits what the default body it replaces emits.
pub fn emit<P: Platform>(e: LifeEvent) {
    P::emit(|| Obs::Life(e));
}
