//! The lifetime wing's scenario: a memcg dies while updaters charge it
//! through an RCU-protected pointer and a flusher walks the tree.
//!
//! ```text
//! CPU c:     (rcu_read_lock; memcg = objcg->memcg; __mod_memcg_state(memcg, 1); rcu_read_unlock) x updates
//! periodic:  one flush of the whole tree, under rcu_read_lock      (entries with a flusher)
//! rmdir 2:   offline child; css_put -> release flush; grace period; free; css_put(parent)
//! rmdir 1:   offline parent; css_put                              (when the parent dies too)
//! enable 2:  once the child is offline, a new memory css linked into its cgroup (relink:
//!            rmdir 2 is then the controller's disable, the cgroup lives on)
//! main:      join all; flush the whole tree; read the parent (or the root)
//! ```
//!
//! Which RCU runs: crossbeam-epoch wherever the backend can see it, except
//! under the depth-first search (its state and independence reasoning see
//! only the backend's own atomics) and for variants that need the flag RCU
//! ([`rcu_flavor`]).

use std::sync::Arc;

use crate::config::Config;
use crate::explore::{ModelJoinHandle, Scenario, StartGate, ThreadCtx};
use crate::kernel::rcu::RcuFlavor;
use crate::kernel::read_once;
use crate::observe::LifeMonitor;
use crate::observe::Shared;
use crate::protocol::lifetime::{LifeInput, CHILD, PARENT};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::{Env, Variant};
use crate::vocab::{Actor, BackendKind, BackendName, Obs, Platform, Sink};

/// One lifetime variant on one configuration with one RCU flavour.
pub struct LifeScenario {
    /// The configuration (its [`Config::death`] says who dies and how the
    /// CPUs charge).
    pub cfg: Arc<Config>,
    /// The variant.
    pub variant: Variant,
    /// The RCU flavour.
    pub flavor: RcuFlavor,
    /// What executions report into.
    pub shared: Arc<Shared>,
}

impl Scenario for LifeScenario {
    fn run<P: Platform>(&self) {
        let cfg = &self.cfg;
        let death = cfg.death.unwrap_or_default();
        let monitor = LifeMonitor::new(self.shared.clone());
        let sink: Arc<dyn Sink> = monitor.clone();
        let ctx = ThreadCtx::new(Actor::Main, Some(sink));
        P::install(ctx.clone());
        let proto = self.variant.life_model().build::<P>(LifeInput {
            env: Env::new_shared(cfg.clone()),
            flavor: self.flavor,
            folio_refs: i64::from(death.folio),
        });
        let n = cfg.cpus
            + usize::from(cfg.periodic)
            + 1
            + usize::from(death.parent_dies)
            + usize::from(death.relink);
        let gate = Arc::new(StartGate::new::<P>(n));
        let mut handles = Vec::new();
        // RCU reader slots: CPUs 0.., the periodic work, main; the rmdir
        // threads only wait for grace periods.
        let mut spawn =
            |actor: Actor,
             slot: Option<usize>,
             f: Box<dyn FnOnce(&crate::kernel::RcuThread) + Send>| {
                let (g, p) = (gate.clone(), proto.clone());
                handles.push(P::spawn(ctx.for_actor(actor), move || {
                    let th = p.life().rcu.register(slot);
                    g.wait();
                    f(&th);
                }));
            };
        for cpu in 0..cfg.cpus {
            let (p, updates, folio) = (proto.clone(), cfg.updates, death.folio);
            spawn(
                Actor::Cpu(cpu),
                Some(cpu),
                Box::new(move |th| {
                    for _ in 0..updates {
                        if folio {
                            p.charge_folio(th, CHILD, 1);
                        } else {
                            p.charge(th, 1);
                        }
                    }
                    if folio {
                        p.put_folio(th, CHILD);
                    }
                }),
            );
        }
        if cfg.periodic {
            let p = proto.clone();
            spawn(
                Actor::Periodic,
                Some(cfg.cpus),
                Box::new(move |th| p.flush_all(th)),
            );
        }
        let p = proto.clone();
        spawn(
            Actor::Rmdir(CHILD),
            None,
            Box::new(move |th| p.rmdir(th, CHILD)),
        );
        if death.parent_dies {
            let p = proto.clone();
            spawn(
                Actor::Rmdir(PARENT),
                None,
                Box::new(move |th| p.rmdir(th, PARENT)),
            );
        }
        if death.relink {
            let p = proto.clone();
            spawn(
                Actor::Enable(CHILD),
                None,
                Box::new(move |_| p.enable(CHILD)),
            );
        }
        for h in handles {
            h.join();
        }
        P::emit(|| Obs::Quiescent);
        if death.relink {
            proto.new_css_charged(CHILD);
        }
        let th = proto.life().rcu.register(Some(cfg.cpus + 1));
        proto.flush_all(&th);
        let read = if death.parent_dies {
            ROOT_MEM_CGROUP
        } else {
            PARENT
        };
        let value = read_once(&proto.life().mm.memcg(read).vmstats.state);
        P::emit(|| Obs::Final { memcg: read, value });
        drop(th);
        monitor.finish();
        P::uninstall();
    }
}

/// The RCU flavour a run of `variant` under `backend` uses unless told.
pub fn rcu_flavor(backend: BackendName, variant: &Variant) -> RcuFlavor {
    let kind = match backend {
        BackendName::Loom => BackendKind::Loom,
        BackendName::Std => BackendKind::Std,
        _ => BackendKind::Shuttle,
    };
    if variant.flag_rcu_only || backend == BackendName::ShuttleDfs {
        RcuFlavor::Flag
    } else {
        RcuFlavor::default_for(kind)
    }
}
