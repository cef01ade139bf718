//! Finding the shortest counterexample of one property.
//!
//! Under loom it searches with increasing preemption bounds and reports
//! the first failing execution at the smallest bound that fails; under
//! shuttle it runs several seeded searches and keeps the failing schedule
//! with the fewest kernel steps, then shrinks it by guided replay. Each
//! counterexample carries a replay token ([`crate::report::token`]) that
//! [`replay`] turns back into the same execution.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::check::run::{judged, monitor_plan, on_fresh_thread, VariantScenario};
use crate::config::Config;
use crate::explore::{
    explore, loom_find, loom_replay, shuttle_find, shuttle_replay, Backend, Outcome,
    ShuttleSchedule,
};
use crate::observe::plan::{fmt_outcome, MonitorPlan, ReaderOutcome, Shared};
use crate::observe::properties;
use crate::observe::property::{self, Property};
use crate::observe::record::Step;
use crate::protocol::Variant;
use crate::report::counterexample::Counterexample;
use crate::report::token::{Replay, ReplayHow};
use crate::vocab::BackendName;

use super::differential::undominated;

/// The result of a search for a counterexample.
#[derive(Clone, Debug)]
pub enum Explained {
    /// Found one.
    Found(Box<Counterexample>),
    /// None within the search; says which search and whether it was cut
    /// short.
    NotFound {
        /// The search that was run.
        search: String,
        /// Whether the whole planned search finished.
        finished: bool,
        /// Why it stopped early, if it did.
        note: Option<String>,
    },
}

/// Where to look.
#[derive(Clone, Debug)]
pub enum Search {
    /// loom at bounds 0, 1, ... up to `max_bound` (`None`: finish unbounded).
    Loom {
        /// Largest bound tried; `None` ends with an unbounded search.
        max_bound: Option<usize>,
    },
    /// shuttle, `runs` searches with seeds `seed..seed + runs`.
    Shuttle {
        /// A shuttle backend (its seed is the first seed).
        backend: Backend,
        /// Number of seeded searches.
        runs: u64,
    },
}

/// What every search of one explanation shares.
pub struct Target<'a> {
    /// The configuration.
    pub cfg: &'a Config,
    /// The variant.
    pub variant: &'a Variant,
    /// Every variant known (twins).
    pub registry: &'a [Variant],
    /// The property.
    pub property: Property,
    /// The RCU implementation of a lifetime form (default: the run's).
    pub rcu: Option<crate::kernel::rcu::RcuFlavor>,
}

impl Target<'_> {
    /// The monitor plan of a search under `backend`, checking what the run
    /// judges and the target property.
    fn plan(&self, backend: &Backend) -> Result<MonitorPlan, String> {
        let mut checks = judged(self.variant, self.cfg, backend);
        if !checks.contains(&self.property) {
            checks.push(self.property);
        }
        monitor_plan(self.variant, self.registry, self.cfg, backend, checks)
    }

    /// A traced scenario with the property armed (and, for a loom
    /// `no_lost_flush`, the outcome to fail on).
    fn scenario(
        &self,
        backend: &Backend,
        target: Option<ReaderOutcome>,
    ) -> Result<Arc<VariantScenario>, String> {
        self.scenario_failing(backend, target, None)
    }

    /// [`Target::scenario`], the target outcome failing with `why`.
    pub(crate) fn scenario_failing(
        &self,
        backend: &Backend,
        target: Option<ReaderOutcome>,
        why: Option<String>,
    ) -> Result<Arc<VariantScenario>, String> {
        let mut plan = self.plan(backend)?;
        plan.armed = vec![self.property];
        plan.trace = true;
        plan.target = target;
        plan.target_why = why;
        let shared = Shared::new(plan);
        Ok(Arc::new(VariantScenario::new(
            self.variant,
            shared,
            backend,
            self.rcu,
        )))
    }

    /// A counterexample of the target property.
    fn found(
        &self,
        backend: BackendName,
        violation: String,
        steps: Vec<Step>,
        search: String,
        token: String,
    ) -> Counterexample {
        Counterexample {
            variant: self.variant.name.clone(),
            property: self.property,
            backend: backend.name().into(),
            family: self.variant.family,
            release: self.variant.release.name.into(),
            cfg: self.cfg.clone(),
            violation,
            steps,
            search,
            token,
        }
    }

    fn attributed(&self, msg: &str) -> bool {
        properties::attribute(msg) == Some(self.property)
    }
}

/// Look for the shortest counterexample of `t.property` for `t.variant`.
pub fn explain(t: &Target, search: &Search, budget: Duration) -> Explained {
    let r = match search {
        Search::Loom { max_bound } => explain_loom(t, *max_bound, budget),
        Search::Shuttle { backend, runs } => explain_shuttle(t, backend, *runs, budget),
    };
    r.unwrap_or_else(|why| Explained::NotFound {
        search: "none".into(),
        finished: false,
        note: Some(why),
    })
}

/// Every reader outcome of `twin` on `cfg` at `bound` (`None`: unbounded).
fn twin_outcomes(
    t: &Target,
    twin: &Variant,
    bound: Option<usize>,
    budget: Duration,
) -> Result<BTreeSet<ReaderOutcome>, String> {
    let backend = Backend::Loom {
        preemption_bound: bound,
    };
    let checks = judged(twin, t.cfg, &backend);
    let mut plan = monitor_plan(twin, t.registry, t.cfg, &backend, checks)?;
    plan.collect_outcomes = true;
    let shared = Shared::new(plan);
    let scenario = Arc::new(VariantScenario::new(twin, shared.clone(), &backend, None));
    let e = on_fresh_thread(move || explore(&backend, budget, scenario));
    match e.outcome {
        Outcome::Finished => Ok(shared.outcomes()),
        Outcome::CutShort(why) => Err(format!(
            "the search of the twin {} was cut short: {why}",
            twin.name
        )),
        Outcome::Failed(msg) => Err(format!(
            "the search of the twin {} failed: {}",
            twin.name,
            msg.lines().next().unwrap_or("")
        )),
    }
}

fn explain_loom(
    t: &Target,
    max_bound: Option<usize>,
    budget: Duration,
) -> Result<Explained, String> {
    let start = Instant::now();
    if !t.property.def().backends.contains(&BackendName::Loom) {
        return Ok(Explained::NotFound {
            search: BackendName::Loom.name().into(),
            finished: false,
            note: Some(format!("{} is not decided by loom", t.property)),
        });
    }
    let differential = t.property == Property::NoLostFlush;
    let bounds: Vec<Option<usize>> = match max_bound {
        Some(m) => (0..=m).map(Some).collect(),
        None => (0..=3).map(Some).chain([None]).collect(),
    };
    let describe = |b: Option<usize>| match b {
        Some(b) => format!("loom, preemption bounds 0..={b}"),
        None => "loom, preemption bounds 0..=3 then unbounded".to_string(),
    };
    let base = match (&t.variant.twin, differential) {
        (Some(twin), true) if *twin != t.variant.name => {
            let twin = Variant::find(t.registry, twin)?;
            // At most a quarter of the budget, so that the shuttle fallback
            // runs in time when the twin cannot be exhausted.
            match twin_outcomes(t, &twin, None, budget / 4) {
                Ok(o) => Some(o),
                Err(why) => {
                    return Ok(Explained::NotFound {
                        search: "loom, outcomes against the twin".into(),
                        finished: false,
                        note: Some(why),
                    })
                }
            }
        }
        (_, true) => {
            return Ok(Explained::NotFound {
                search: "loom, outcomes against the twin".into(),
                finished: true,
                note: Some("the variant is its own twin".into()),
            })
        }
        _ => None,
    };
    for bound in bounds {
        let left = budget.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Ok(Explained::NotFound {
                search: describe(bound),
                finished: false,
                note: Some(format!(
                    "time budget of {:.0} s ran out",
                    budget.as_secs_f64()
                )),
            });
        }
        let backend = Backend::Loom {
            preemption_bound: bound,
        };
        let mut target = None;
        if let Some(base) = &base {
            // First an outcome no twin outcome dominates, at this bound.
            let mut plan = t.plan(&backend)?;
            plan.collect_outcomes = true;
            let shared = Shared::new(plan);
            let scenario = Arc::new(VariantScenario::new(
                t.variant,
                shared.clone(),
                &backend,
                t.rcu,
            ));
            let b = backend.clone();
            let e = on_fresh_thread(move || explore(&b, left, scenario));
            if e.outcome != Outcome::Finished {
                continue;
            }
            let mine: Vec<ReaderOutcome> = shared.outcomes().into_iter().collect();
            target = undominated(&mine, base).cloned();
            if target.is_none() {
                continue;
            }
        }
        let s = t.scenario(&backend, target.clone())?;
        let left = budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1));
        let sc = s.clone();
        let (e, checkpoint) = on_fresh_thread(move || loom_find(bound, left, sc));
        match (&e.outcome, checkpoint) {
            (Outcome::Failed(msg), Some(checkpoint)) if t.attributed(msg) => {
                let checkpoint = serde_json::from_str(&checkpoint)
                    .map_err(|_| "loom wrote an unreadable checkpoint".to_string())?;
                let replay = Replay {
                    v: 2,
                    variant: t.variant.name.clone(),
                    property: t.property,
                    cfg: t.cfg.clone(),
                    target: target.clone(),
                    rcu: t.rcu,
                    how: ReplayHow::Loom { bound, checkpoint },
                };
                let search = format!(
                    "loom, smallest failing preemption bound {}, execution {} of that search{}",
                    bound.map_or("unbounded".to_string(), |b| b.to_string()),
                    e.executions,
                    match &target {
                        Some(o) => format!(
                            "; the readers' observation {} is dominated by none of {}'s (exhaustive)",
                            fmt_outcome(o),
                            t.variant.twin.as_deref().unwrap_or("")
                        ),
                        None => String::new(),
                    }
                );
                return Ok(Explained::Found(Box::new(t.found(
                    BackendName::Loom,
                    property::explain(t.property, msg),
                    s.shared().steps(),
                    search,
                    replay.token(),
                ))));
            }
            (Outcome::Failed(msg), _) => {
                return Ok(Explained::NotFound {
                    search: describe(bound),
                    finished: false,
                    note: Some(format!(
                        "search stopped by another failure: {}",
                        msg.lines().next().unwrap_or("")
                    )),
                });
            }
            (Outcome::CutShort(why), _) => {
                return Ok(Explained::NotFound {
                    search: describe(bound),
                    finished: false,
                    note: Some(why.clone()),
                });
            }
            (Outcome::Finished, _) => {}
        }
    }
    Ok(Explained::NotFound {
        search: describe(max_bound),
        finished: true,
        note: None,
    })
}

type Best = (Vec<Step>, ShuttleSchedule, String);

fn explain_shuttle(
    t: &Target,
    backend: &Backend,
    runs: u64,
    budget: Duration,
) -> Result<Explained, String> {
    let start = Instant::now();
    let mut best: Option<Best> = None;
    let mut failing = 0;
    let mut done = 0;
    let first_seed = match backend {
        Backend::ShuttleRandom { seed, .. } | Backend::ShuttlePct { seed, .. } => *seed,
        _ => 0,
    };
    for k in 0..runs {
        let left = budget.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        let b = match backend.clone() {
            Backend::ShuttleRandom { iterations, seed } => Backend::ShuttleRandom {
                iterations,
                seed: seed + k,
            },
            Backend::ShuttlePct {
                iterations,
                depth,
                seed,
            } => Backend::ShuttlePct {
                iterations,
                depth,
                seed: seed + k,
            },
            other => other,
        };
        let s = t.scenario(&b, None)?;
        let sc = s.clone();
        let (e, schedule) = on_fresh_thread(move || shuttle_find(&b, left, sc));
        done += 1;
        if let (Outcome::Failed(msg), Some(schedule)) = (&e.outcome, schedule) {
            if t.attributed(msg) {
                failing += 1;
                let steps = s.shared().steps();
                if best.as_ref().is_none_or(|(b, _, _)| steps.len() < b.len()) {
                    best = Some((steps, schedule, property::explain(t.property, msg)));
                }
            }
        }
    }
    let search = format!(
        "{} ({}), {done} seeded searches from seed {first_seed}",
        backend.name(),
        backend.search()
    );
    let Some(found) = best else {
        return Ok(Explained::NotFound {
            finished: done == runs,
            note: (done < runs)
                .then(|| format!("time budget ran out after {done} of {runs} searches")),
            search,
        });
    };
    let first_len = found.0.len();
    let (steps, schedule, violation, replays) = shrink(t, found, start, budget)?;
    let search = format!(
        "{search}: shortest of {failing} failing schedules ({first_len} steps), \
         shrunk by {replays} replays to {} steps and {} context switches",
        steps.len(),
        schedule.switches()
    );
    let replay = Replay {
        v: 2,
        variant: t.variant.name.clone(),
        property: t.property,
        cfg: t.cfg.clone(),
        target: None,
        rcu: t.rcu,
        how: ReplayHow::Shuttle { schedule },
    };
    Ok(Explained::Found(Box::new(t.found(
        backend.id(),
        violation,
        steps,
        search,
        replay.token(),
    ))))
}

/// Replay `schedule` on `t`; the steps, the schedule followed and the
/// violation, if it still violates `t.property`.
pub fn try_schedule(t: &Target, schedule: &ShuttleSchedule) -> Result<Option<Best>, String> {
    let s = t.scenario(
        &Backend::ShuttleRandom {
            iterations: 1,
            seed: schedule.seed,
        },
        None,
    )?;
    let (sc, sched) = (s.clone(), schedule.clone());
    let (e, followed) = on_fresh_thread(move || shuttle_replay(&sched, sc));
    Ok(match e.outcome {
        Outcome::Failed(msg) if t.attributed(&msg) => Some((
            s.shared().steps(),
            followed,
            property::explain(t.property, &msg),
        )),
        _ => None,
    })
}

/// Shrink a failing shuttle schedule by replay: first the shortest prefix
/// that still fails (the rest runs without preemption), then greedily drop
/// single context switches, keeping any change that still violates the
/// property with no more kernel steps. Returns the result and the number
/// of replays spent.
pub fn shrink(
    t: &Target,
    found: Best,
    start: Instant,
    budget: Duration,
) -> Result<(Vec<Step>, ShuttleSchedule, String, usize), String> {
    const MAX_REPLAYS: usize = 400;
    let mut best = found;
    let mut replays = 0;
    let better =
        |new: &Best, old: &Best| (new.0.len(), new.1.switches()) < (old.0.len(), old.1.switches());
    for k in 0..best.1.steps.len() {
        if replays >= MAX_REPLAYS || start.elapsed() > budget {
            return Ok((best.0, best.1, best.2, replays));
        }
        let prefix = ShuttleSchedule {
            seed: best.1.seed,
            steps: best.1.steps[..k].to_vec(),
        };
        replays += 1;
        if let Some(found) = try_schedule(t, &prefix)? {
            if better(&found, &best) || found.0.len() <= best.0.len() {
                best = found;
            }
            break;
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in 1..best.1.steps.len() {
            if replays >= MAX_REPLAYS || start.elapsed() > budget {
                return Ok((best.0, best.1, best.2, replays));
            }
            let (prev, cur) = (best.1.steps[i - 1], best.1.steps[i]);
            if prev.is_none() || cur.is_none() || prev == cur {
                continue;
            }
            let mut candidate = best.1.clone();
            candidate.steps[i] = prev;
            candidate.steps.truncate(i + 1);
            replays += 1;
            if let Some(found) = try_schedule(t, &candidate)? {
                if better(&found, &best) {
                    best = found;
                    changed = true;
                    break;
                }
            }
        }
    }
    Ok((best.0, best.1, best.2, replays))
}

/// Re-run the execution a token describes, resolving its variant in
/// `registry`. Returns the reproduced counterexample, or why it did not
/// reproduce.
pub fn replay(token: &str, registry: &[Variant]) -> Result<Counterexample, String> {
    let r = Replay::from_token(token)?;
    let variant = Variant::find(registry, &r.variant)?;
    let t = Target {
        cfg: &r.cfg,
        variant: &variant,
        registry,
        property: r.property,
        rcu: r.rcu,
    };
    let (e, steps) = match &r.how {
        ReplayHow::Loom { bound, checkpoint } => {
            let backend = Backend::Loom {
                preemption_bound: *bound,
            };
            let s = t.scenario(&backend, r.target.clone())?;
            let (sc, cp, b) = (s.clone(), checkpoint.to_string(), *bound);
            let e = on_fresh_thread(move || loom_replay(&cp, b, sc));
            (e, s.shared().steps())
        }
        ReplayHow::Shuttle { schedule } => {
            let s = t.scenario(
                &Backend::ShuttleRandom {
                    iterations: 1,
                    seed: schedule.seed,
                },
                None,
            )?;
            let (sc, sched) = (s.clone(), schedule.clone());
            let (e, _) = on_fresh_thread(move || shuttle_replay(&sched, sc));
            (e, s.shared().steps())
        }
    };
    match &e.outcome {
        Outcome::Failed(msg) if t.attributed(msg) => Ok(Counterexample {
            variant: r.variant.clone(),
            property: r.property,
            backend: r.backend().into(),
            family: variant.family,
            release: variant.release.name.into(),
            cfg: r.cfg.clone(),
            violation: property::explain(r.property, msg),
            steps,
            search: format!("replay of a {} token", r.backend()),
            token: token.trim().to_string(),
        }),
        Outcome::Failed(msg) => Err(format!(
            "the replayed execution failed differently: {}",
            msg.lines().next().unwrap_or("")
        )),
        _ => Err(format!(
            "the replayed execution did not violate {} (a model change since the token was made?)",
            r.property
        )),
    }
}

/// One planned search of `t.property` under `backend` with the property
/// armed and traces on: the first failing execution's trace, as the
/// deterministic searches (the DFS, loom, a seeded shuttle scheduler) find
/// it, and what the search did. Unlike [`explain`], nothing is shrunk and
/// no replay token is made (the DFS records no schedule).
pub fn witness(
    t: &Target,
    backend: &Backend,
    budget: Duration,
) -> Result<(crate::explore::Exploration, Option<Counterexample>), String> {
    let s = t.scenario(backend, None)?;
    let (sc, b) = (s.clone(), backend.clone());
    // Failures reach the caller as the outcome, not shuttle's own lines.
    let e = on_fresh_thread(move || crate::explore::silenced(|| explore(&b, budget, sc)));
    let found = match &e.outcome {
        Outcome::Failed(msg) if t.attributed(msg) => Some(t.found(
            backend.id(),
            property::explain(t.property, msg),
            s.shared().steps(),
            format!("{} ({})", backend.name(), backend.search()),
            String::new(),
        )),
        _ => None,
    };
    Ok((e, found))
}
