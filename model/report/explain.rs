//! Finding, printing and replaying counterexamples.
//!
//! `flushcheck explain` looks for the shortest counterexample it can: under
//! loom it searches with increasing preemption bounds and reports the first
//! failing execution at the smallest bound that fails; under shuttle it runs
//! several seeded searches and keeps the failing schedule with the fewest
//! kernel steps, then shrinks it by guided replay. Each counterexample
//! carries a replay token that `flushcheck replay` turns back into the same
//! execution.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::check::run::{monitor_plan, on_fresh_thread};
use crate::check::FlushScenario;
use crate::config::Config;
use crate::explore::ghost::Arc;
use crate::explore::{
    explore, loom_find, loom_replay, shuttle_find, shuttle_replay, Backend, Outcome,
    ShuttleSchedule,
};
use crate::observe::monitor::{fmt_outcome, ReaderOutcome, Shared};
use crate::observe::property::{self, Property};
use crate::observe::record::{render_columns, Step, LEGEND, LEGEND_TREE};
use crate::protocol::Variant;

/// Everything needed to re-run one failing execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Format version of the token.
    pub v: u32,
    /// Variant name.
    pub variant: String,
    /// The violated property.
    pub property: Property,
    /// Configuration.
    pub cfg: Config,
    /// The reader outcome a loom `no_lost_flush` violation is about, if any.
    pub target: Option<ReaderOutcome>,
    /// How to steer the backend.
    pub how: ReplayHow,
}

/// Backend-specific replay data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayHow {
    /// A loom checkpoint (loom's serialized branch path) and its bound.
    Loom {
        /// Preemption bound of the search that found it.
        bound: Option<usize>,
        /// loom's checkpoint.
        checkpoint: serde_json::Value,
    },
    /// A shuttle schedule.
    Shuttle {
        /// The recorded schedule.
        schedule: ShuttleSchedule,
    },
}

const TOKEN_PREFIX: &str = "fc2.";

impl Replay {
    /// The token printed after a trace: `fc2.` and base64url(JSON).
    pub fn token(&self) -> String {
        let json = serde_json::to_vec(self).expect("replay data serialises");
        format!(
            "{TOKEN_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
        )
    }

    /// Decode a token; the error is one line.
    pub fn from_token(token: &str) -> Result<Replay, String> {
        let body = token
            .trim()
            .strip_prefix(TOKEN_PREFIX)
            .ok_or_else(|| format!("replay token must start with {TOKEN_PREFIX:?}"))?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| format!("replay token is not valid base64url: {e}"))?;
        serde_json::from_slice(&json).map_err(|e| format!("replay token is not readable: {e}"))
    }

    /// The backend family, for messages.
    pub fn backend(&self) -> &'static str {
        match self.how {
            ReplayHow::Loom { .. } => "loom",
            ReplayHow::Shuttle { .. } => "shuttle",
        }
    }
}

/// A counterexample, ready to print.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Counterexample {
    /// Variant name.
    pub variant: String,
    /// The violated property.
    pub property: Property,
    /// Backend that found it.
    pub backend: String,
    /// Configuration.
    pub cfg: Config,
    /// The violation, starting with the property's name.
    pub violation: String,
    /// Kernel-level steps in execution order.
    pub steps: Vec<Step>,
    /// How it was found.
    pub search: String,
    /// `flushcheck replay` token.
    pub token: String,
}

impl Counterexample {
    /// The `{ ... }` initial-state line.
    pub fn initial_state(&self) -> String {
        initial_state(&self.cfg, &self.variant)
    }

    /// The column diagram, within `width` columns where the threads allow.
    pub fn diagram(&self, width: usize) -> String {
        render_columns(
            &self.initial_state(),
            &self.steps,
            &format!("violated: {}", self.violation),
            width,
        )
    }

    /// The core of the trace as an LKMM litmus test, or why it is not
    /// exported (see [`crate::report::litmus`]).
    pub fn litmus(&self) -> Result<String, String> {
        use crate::report::litmus;
        let name = format!("flushcheck-{}-{}", self.variant, self.property).replace('.', "_");
        // A trace touching many variables is sliced to its race (issue 20).
        litmus::export(&name, &self.steps)
    }

    /// The command that reproduces this counterexample.
    pub fn replay_command(&self) -> String {
        format!("flushcheck replay {}", self.token)
    }
}

/// The `{ ... }` line of a trace (the state every execution starts from)
/// and the legend of the short names.
pub fn initial_state(cfg: &Config, variant: &str) -> String {
    let vals: Vec<String> = cfg.vals.iter().map(|v| v.to_string()).collect();
    let per_memcg = crate::protocol::Variant::all()
        .iter()
        .any(|v| v.name == variant && v.family == crate::protocol::Family::PerMemcg);
    let (text, tree) = if cfg.tree.is_empty() && !per_memcg {
        (LEGEND, String::new())
    } else if cfg.tree.is_empty() {
        (LEGEND_TREE, "root memcg only; ".to_string())
    } else {
        let parents: Vec<String> = (0..cfg.tree.len())
            .map(|i| format!("{}->{}", i + 1, cfg.tree[i]))
            .collect();
        let charges: Vec<String> = (0..cfg.cpus)
            .map(|c| format!("{c}:{}", cfg.charge_of(c)))
            .collect();
        let reads: Vec<String> = (0..cfg.readers)
            .map(|r| format!("{r}:{}", cfg.read_of(r)))
            .collect();
        (
            LEGEND_TREE,
            format!(
                "memcgs 0 (root) and child->parent {}; CPU:memcg charged [{}]; reader:memcg read [{}]; ",
                parents.join(" "),
                charges.join(" "),
                reads.join(" ")
            ),
        )
    };
    let legend: Vec<String> = text.lines().map(|l| format!("  {l}")).collect();
    format!(
        "{{ {variant}: n = num_online_cpus() = {}; MEMCG_CHARGE_BATCH = {}; {tree}thr = agg = 0; \
         S[c] = U[c] = 0; each CPU runs {} __mod_memcg_state() with val = {}; {} reader(s) x {} \
         read(s); periodic work {} }}\nwhere\n{}",
        cfg.cpus,
        cfg.batch,
        cfg.updates,
        vals.join(","),
        cfg.readers,
        cfg.reads,
        if cfg.periodic { "on" } else { "off" },
        legend.join("\n")
    )
}

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
}

impl Target<'_> {
    /// A traced scenario with the property armed (and, for a loom
    /// `no_lost_flush`, the outcome to fail on).
    fn scenario(
        &self,
        backend: &Backend,
        target: Option<ReaderOutcome>,
    ) -> Result<Arc<FlushScenario>, String> {
        let mut plan = monitor_plan(self.variant, self.registry, self.cfg, backend)?;
        plan.armed = Some(self.property);
        plan.trace = true;
        plan.target = target;
        let shared = Shared::new(plan);
        Ok(Arc::new(FlushScenario::new(self.cfg, self.variant, shared)))
    }

    fn attributed(&self, msg: &str) -> bool {
        property::attribute(msg) == Some(self.property)
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
    let mut plan = monitor_plan(twin, t.registry, t.cfg, &backend)?;
    plan.collect_outcomes = true;
    let shared = Shared::new(plan);
    let scenario = Arc::new(FlushScenario::new(t.cfg, twin, shared.clone()));
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
    if !t.property.decided_by_loom() {
        return Ok(Explained::NotFound {
            search: "loom".into(),
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
            let mut plan = monitor_plan(t.variant, t.registry, t.cfg, &backend)?;
            plan.collect_outcomes = true;
            let shared = Shared::new(plan);
            let scenario = Arc::new(FlushScenario::new(t.cfg, t.variant, shared.clone()));
            let b = backend.clone();
            let e = on_fresh_thread(move || explore(&b, left, scenario));
            if e.outcome != Outcome::Finished {
                continue;
            }
            let mine: Vec<ReaderOutcome> = shared.outcomes().into_iter().collect();
            target = crate::check::matrix::undominated(&mine, base).cloned();
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
                return Ok(Explained::Found(Box::new(Counterexample {
                    variant: t.variant.name.clone(),
                    property: t.property,
                    backend: "loom".into(),
                    cfg: t.cfg.clone(),
                    violation: property::explain(t.property, msg),
                    steps: s.shared.steps(),
                    search,
                    token: replay.token(),
                })));
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
                let steps = s.shared.steps();
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
        how: ReplayHow::Shuttle { schedule },
    };
    Ok(Explained::Found(Box::new(Counterexample {
        variant: t.variant.name.clone(),
        property: t.property,
        backend: backend.name().to_string(),
        cfg: t.cfg.clone(),
        violation,
        search,
        steps,
        token: replay.token(),
    })))
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
            s.shared.steps(),
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
    };
    let (e, steps) = match &r.how {
        ReplayHow::Loom { bound, checkpoint } => {
            let backend = Backend::Loom {
                preemption_bound: *bound,
            };
            let s = t.scenario(&backend, r.target.clone())?;
            let (sc, cp, b) = (s.clone(), checkpoint.to_string(), *bound);
            let e = on_fresh_thread(move || loom_replay(&cp, b, sc));
            (e, s.shared.steps())
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
            (e, s.shared.steps())
        }
    };
    match &e.outcome {
        Outcome::Failed(msg) if t.attributed(msg) => Ok(Counterexample {
            variant: r.variant.clone(),
            property: r.property,
            backend: r.backend().into(),
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
