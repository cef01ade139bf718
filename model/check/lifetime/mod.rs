//! The lifetime scenarios (issue 12): a memcg dies while updaters charge it
//! through an RCU-protected pointer and a flusher walks the tree; the
//! observers that judge `no_use_after_free`, `stats_survive_death` and
//! `no_leak`; the lifetime variants; and their cells in the matrix.
//!
//! ```text
//! CPU c:     (rcu_read_lock; memcg = objcg->memcg; __mod_memcg_state(memcg, 1); rcu_read_unlock) x updates
//! periodic:  one flush of the whole tree, under rcu_read_lock      (entries with a flusher)
//! rmdir 2:   offline child; css_put -> release flush; grace period; free; css_put(parent)
//! rmdir 1:   offline parent; css_put                              (life-parent only)
//! main:      join all; flush the whole tree; read the parent (or the root)
//! ```

mod monitor;
mod suite;

pub use monitor::LifeShared;
pub use suite::{backends, catalogue, entries, flavor_for, for_entry, LifeEntry, LifeVariant};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::check::matrix::{Cell, ConfigVerdict, Expect};
use crate::check::run::Verdict;
use crate::explore::run::{explore, Backend, Outcome};
use crate::explore::{ModelJoinHandle, Scenario, StartGate, ThreadCtx};
use crate::kernel::rcu::RcuFlavor;
use crate::kernel::read_once;
use crate::observe::obs::{Actor, Obs, Sink};
use crate::observe::property::{attribute, Property};
use crate::protocol::lifetime::{Life, CHILD, PARENT};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::{Build, Env, Kind};
use monitor::{ExecState, LifeMonitor};
/// One lifetime variant on one entry with one RCU flavour.
pub struct LifeScenario {
    /// The entry.
    pub entry: LifeEntry,
    /// The variant.
    pub variant: LifeVariant,
    /// The RCU flavour.
    pub flavor: RcuFlavor,
    /// What executions report into.
    pub shared: Arc<LifeShared>,
}

impl Scenario for LifeScenario {
    fn run<P: Build>(&self) {
        let e = &self.entry;
        let monitor = Arc::new(LifeMonitor {
            shared: self.shared.clone(),
            state: Mutex::new(ExecState::default()),
        });
        let sink: Arc<dyn Sink> = monitor.clone();
        let ctx = ThreadCtx::new(Actor::Main, Some(sink));
        P::install(ctx.clone());
        let cfg = Life::<P>::config(e.cpus);
        let life = Life::new(
            Env::<P>::new(&cfg),
            self.flavor,
            self.variant.model.defect(),
            i64::from(e.folio),
        );
        let proto = P::build_life(&*self.variant.model, life);
        let n = e.cpus + usize::from(e.periodic) + 1 + usize::from(e.parent_dies);
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
        for cpu in 0..e.cpus {
            let (p, updates, folio) = (proto.clone(), e.updates, e.folio);
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
        if e.periodic {
            let p = proto.clone();
            spawn(
                Actor::Periodic,
                Some(e.cpus),
                Box::new(move |th| p.flush_all(th)),
            );
        }
        let p = proto.clone();
        spawn(
            Actor::Rmdir(CHILD),
            None,
            Box::new(move |th| p.rmdir(th, CHILD)),
        );
        if e.parent_dies {
            let p = proto.clone();
            spawn(
                Actor::Rmdir(PARENT),
                None,
                Box::new(move |th| p.rmdir(th, PARENT)),
            );
        }
        for h in handles {
            h.join();
        }
        P::emit(|| Obs::Quiescent);
        let th = proto.life().rcu.register(Some(e.cpus + 1));
        proto.flush_all(&th);
        let read = if e.parent_dies {
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

/// The result of one lifetime exploration.
#[derive(Clone, Debug)]
pub struct LifeRun {
    /// Verdict on the armed property.
    pub verdict: Verdict,
    /// The violation, or why not holds.
    pub note: Option<String>,
    /// Executions.
    pub executions: u64,
    /// Seconds.
    pub seconds: f64,
    /// Whether the search was exhaustive and finished.
    pub exhaustive: bool,
    /// The property's coverage count.
    pub coverage: u64,
    /// Largest loss per memcg read.
    pub lost: BTreeMap<String, i64>,
}

/// Explore `variant` on `entry` under `backend` with `property` armed.
pub fn explore_life(
    variant: &LifeVariant,
    entry: &LifeEntry,
    backend: &Backend,
    property: Property,
    flavor: RcuFlavor,
    budget: Duration,
    tracing: bool,
) -> LifeRun {
    let shared = Arc::new(LifeShared::new(property, tracing));
    let scenario = Arc::new(LifeScenario {
        entry: entry.clone(),
        variant: variant.clone(),
        flavor,
        shared: shared.clone(),
    });
    let start = Instant::now();
    let x = explore(backend, budget, scenario);
    let (verdict, note) = match &x.outcome {
        Outcome::Finished => (Verdict::Holds, None),
        Outcome::Failed(msg) if attribute(msg) == Some(property) => {
            (Verdict::Violated, Some(msg.clone()))
        }
        Outcome::Failed(msg) => (
            Verdict::Inconclusive,
            Some(format!("an execution failed otherwise: {msg}")),
        ),
        Outcome::CutShort(why) => (Verdict::Inconclusive, Some(why.clone())),
    };
    LifeRun {
        verdict,
        note,
        executions: x.executions,
        seconds: start.elapsed().as_secs_f64(),
        exhaustive: backend.exhaustive() && x.outcome == Outcome::Finished,
        coverage: shared.coverage(property.coverage_event()),
        lost: shared.max_lost(),
    }
}

/// What the matrix expects of `variant`'s `property` on `backend`, given
/// the entry's name.
fn expect(variant: &LifeVariant, p: Property, backend: &str, entry: &str) -> Expect {
    if variant.killed_by == Some((p, backend, entry)) {
        return Expect::Killed;
    }
    if variant.findings.contains(&(p, backend, entry)) {
        return Expect::Finding;
    }
    match variant.kind {
        Kind::Mutant => Expect::Any,
        // A pinned finding's property may be violated elsewhere too.
        _ if variant.findings.iter().any(|f| f.0 == p) => Expect::Any,
        _ => Expect::Holds,
    }
}

/// The lifetime cells: every variant, property and backend over the
/// entries, one exploration each (the property armed), with the flavour
/// [`flavor_for`] picks; `progress` is told of each exploration.
pub fn life_cells(
    variants: &[LifeVariant],
    backends: &[Backend],
    loom_bound: Option<Option<usize>>,
    budget: Duration,
    progress: &mut dyn FnMut(&str),
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for v in variants {
        for p in Property::LIFETIME {
            for b in backends {
                let mut configs = Vec::new();
                let (mut executions, mut seconds, mut coverage) = (0, 0.0, 0);
                let mut expects = Vec::new();
                let mut searches = Vec::new();
                for e in entries() {
                    let flavor = flavor_for(b, v);
                    let be = for_entry(b, &e, v, loom_bound);
                    if !searches.contains(&be.search()) {
                        searches.push(be.search());
                    }
                    let r = explore_life(v, &e, &be, p, flavor, budget, false);
                    progress(&format!(
                        "{} {} {} {} ({}): {} in {} executions",
                        v.name,
                        e.name,
                        b.name(),
                        p.name(),
                        flavor.name(),
                        r.verdict.name(),
                        r.executions
                    ));
                    executions += r.executions;
                    seconds += r.seconds;
                    coverage += r.coverage;
                    expects.push(expect(v, p, b.name(), e.name));
                    configs.push(ConfigVerdict {
                        entry: e.name.into(),
                        verdict: r.verdict,
                        note: r.note.map(|n| n.lines().next().unwrap_or("").to_string()),
                        executions: r.executions,
                        exhaustive: r.exhaustive,
                        coverage: r.coverage,
                    });
                }
                let mut c = cell(v, p, b, configs, executions, seconds, coverage, &expects);
                c.search = searches.join("; ");
                cells.push(c);
            }
        }
    }
    cells
}

#[allow(clippy::too_many_arguments)]
fn cell(
    v: &LifeVariant,
    p: Property,
    b: &Backend,
    configs: Vec<ConfigVerdict>,
    executions: u64,
    seconds: f64,
    coverage: u64,
    expects: &[Expect],
) -> Cell {
    let violated = configs.iter().find(|c| c.verdict == Verdict::Violated);
    let inconclusive = configs.iter().find(|c| c.verdict == Verdict::Inconclusive);
    let (verdict, mut note) = match (violated, inconclusive) {
        (Some(c), _) => (
            Verdict::Violated,
            c.note.as_ref().map(|n| format!("{n} [{}]", c.entry)),
        ),
        (None, Some(c)) => (
            Verdict::Inconclusive,
            c.note.as_ref().map(|n| format!("{n} [{}]", c.entry)),
        ),
        (None, None) => (Verdict::Holds, None),
    };
    if verdict == Verdict::Holds && coverage == 0 {
        note = Some(format!(
            "race not seen: {} never happened in this suite, so this holds says little",
            p.coverage_event().name()
        ));
    }
    // Killed or shown where designated; a cell's expectation is the
    // strongest of its entries'.
    let expect = if expects.contains(&Expect::Killed) {
        Expect::Killed
    } else if expects.contains(&Expect::Finding) {
        Expect::Finding
    } else if expects.iter().all(|e| *e == Expect::Holds) {
        Expect::Holds
    } else {
        Expect::Any
    };
    let designated = |e: Expect| {
        configs
            .iter()
            .zip(expects)
            .filter(|(_, x)| **x == e)
            .all(|(c, _)| c.verdict == Verdict::Violated)
    };
    let ok = match expect {
        Expect::Holds => verdict == Verdict::Holds,
        Expect::Killed => designated(Expect::Killed),
        Expect::Finding => designated(Expect::Finding),
        Expect::Any => true,
    };
    Cell {
        variant: v.name.into(),
        kind: v.kind,
        property: p,
        backend: b.name().into(),
        verdict,
        executions,
        seconds,
        search: b.search(),
        exhaustive: configs.iter().all(|c| c.exhaustive),
        note,
        coverage_event: p.coverage_event().name().into(),
        coverage,
        later_epoch: 0,
        configs,
        expect,
        ok,
        shard: Default::default(),
    }
}
