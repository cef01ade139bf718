//! Finding, printing and replaying counterexamples.
//!
//! `flushcheck explain` looks for the shortest counterexample it can:
//! under loom it searches with increasing preemption bounds and reports the
//! first failing execution at the smallest bound that fails; under shuttle it
//! runs several seeded searches and keeps the failing schedule with the
//! fewest kernel steps. Each counterexample carries a replay token that
//! `flushcheck replay` turns back into the same execution.

use std::time::{Duration, Instant};

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::check::{fmt_observation, loom_baseline};
use crate::config::Config;
use crate::platform::ghost::Arc;
use crate::platform::{
    explore, loom_find, loom_replay, shuttle_find, shuttle_replay, Backend, Outcome,
    ShuttleSchedule,
};
use crate::property::{self, Property};
use crate::scenario::{FlushScenario, Observation};
use crate::trace::{render_columns, Step};
use crate::variant::Variant;

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
    /// The observation a differential violation is about, if any.
    pub target: Option<Observation>,
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
        /// loom's checkpoint (its serialized branch path).
        checkpoint: serde_json::Value,
    },
    /// A shuttle schedule.
    Shuttle {
        /// The recorded schedule.
        schedule: ShuttleSchedule,
    },
}

const TOKEN_PREFIX: &str = "fc1.";

impl Replay {
    /// The token printed after a trace: `fc1.` and base64url(JSON).
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
    /// exported (see [`crate::litmus`]).
    pub fn litmus(&self) -> Result<String, String> {
        let name = format!("flushcheck-{}-{}", self.variant, self.property).replace('.', "_");
        crate::litmus::export(&name, &self.steps)
    }

    /// The command that reproduces this counterexample.
    pub fn replay_command(&self) -> String {
        format!("flushcheck replay {}", self.token)
    }
}

/// The `{ ... }` line of a trace: the state every execution starts from.
pub fn initial_state(cfg: &Config, variant: &str) -> String {
    let vals: Vec<String> = cfg.vals.iter().map(|v| v.to_string()).collect();
    format!(
        "{{ {variant}: num_online_cpus() = {}; MEMCG_CHARGE_BATCH = {}; stats_flush_threshold = 0; \
         stats_updates = 0, state[0] = 0 on every CPU; vmstats.state[0] = 0; \
         each CPU runs {} __mod_memcg_state() with val = {} }}",
        cfg.cpus,
        cfg.batch,
        cfg.updates,
        vals.join(",")
    )
}

/// The result of a search for a counterexample.
#[derive(Clone, Debug)]
pub enum Explained {
    /// Found one.
    Found(Box<Counterexample>),
    /// None within the search; says which search and whether it was cut short.
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

/// Look for the shortest counterexample of `property` for `variant`.
pub fn explain(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    search: &Search,
    budget: Duration,
) -> Explained {
    match search {
        Search::Loom { max_bound } => explain_loom(cfg, variant, property, *max_bound, budget),
        Search::Shuttle { backend, runs } => {
            explain_shuttle(cfg, variant, property, backend, *runs, budget)
        }
    }
}

fn scenario(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    target: Option<Observation>,
) -> FlushScenario {
    let mut s = FlushScenario::new(cfg.clone(), variant.clone(), Some(property), false).traced();
    s.target = target;
    s
}

fn attributed(property: Property, msg: &str) -> bool {
    property::attribute(msg) == Some(property)
}

fn explain_loom(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    max_bound: Option<usize>,
    budget: Duration,
) -> Explained {
    let start = Instant::now();
    let differential = property == Property::NoLostFlush;
    let bounds: Vec<Option<usize>> = match max_bound {
        Some(m) => (0..=m).map(Some).collect(),
        None => (0..=3).map(Some).chain([None]).collect(),
    };
    let describe = |b: Option<usize>| match b {
        Some(b) => format!("loom, preemption bounds 0..={b}"),
        None => "loom, preemption bounds 0..=3 then unbounded".to_string(),
    };
    let base = if differential {
        // At most a quarter of the budget: when v5.19 cannot be exhausted
        // (the periodic flusher is on), fall through to shuttle in time.
        let b = loom_baseline(cfg, None, budget / 4);
        if let Err(why) = b.usable() {
            return Explained::NotFound {
                search: "loom, differential against v5.19".into(),
                finished: false,
                note: Some(why),
            };
        }
        Some(b)
    } else {
        None
    };
    for bound in bounds {
        let left = budget.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Explained::NotFound {
                search: describe(bound),
                finished: false,
                note: Some(format!(
                    "time budget of {:.0} s ran out",
                    budget.as_secs_f64()
                )),
            };
        }
        let mut target = None;
        if let Some(base) = &base {
            // Find an observation v5.19 cannot produce at this bound first.
            let collect = Arc::new(FlushScenario::new(cfg.clone(), variant.clone(), None, true));
            let e = explore(
                &Backend::Loom {
                    preemption_bound: bound,
                },
                left,
                collect.clone(),
            );
            if !matches!(e.outcome, Outcome::Finished) {
                continue;
            }
            target = collect
                .observed()
                .difference(&base.observations)
                .next()
                .cloned();
            if target.is_none() {
                continue;
            }
        }
        let s = Arc::new(scenario(cfg, variant, property, target.clone()));
        let left = budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1));
        let (e, checkpoint) = loom_find(bound, left, s.clone());
        match (&e.outcome, checkpoint) {
            (Outcome::Failed(msg), Some(checkpoint)) if attributed(property, msg) => {
                let Ok(checkpoint) = serde_json::from_str(&checkpoint) else {
                    return Explained::NotFound {
                        search: describe(bound),
                        finished: false,
                        note: Some("loom wrote an unreadable checkpoint".into()),
                    };
                };
                let replay = Replay {
                    v: 1,
                    variant: variant.name.to_string(),
                    property,
                    cfg: cfg.clone(),
                    target: target.clone(),
                    how: ReplayHow::Loom { bound, checkpoint },
                };
                let search = format!(
                    "loom, smallest failing preemption bound {}, execution {} of that search{}",
                    bound.map_or("unbounded".to_string(), |b| b.to_string()),
                    e.executions,
                    if differential {
                        format!(
                            "; the readers' observation {} is not one of v5.19's (exhaustive)",
                            target.as_ref().map(fmt_observation).unwrap_or_default()
                        )
                    } else {
                        String::new()
                    }
                );
                return Explained::Found(Box::new(Counterexample {
                    variant: variant.name.to_string(),
                    property,
                    backend: "loom".into(),
                    cfg: cfg.clone(),
                    violation: property::explain(property, msg),
                    steps: s.tracer.steps(),
                    search,
                    token: replay.token(),
                }));
            }
            (Outcome::Failed(msg), _) => {
                return Explained::NotFound {
                    search: describe(bound),
                    finished: false,
                    note: Some(format!(
                        "search stopped by another failure: {}",
                        msg.lines().next().unwrap_or("")
                    )),
                };
            }
            (Outcome::CutShort(why), _) => {
                return Explained::NotFound {
                    search: describe(bound),
                    finished: false,
                    note: Some(why.clone()),
                };
            }
            (Outcome::Finished, _) => {}
        }
    }
    Explained::NotFound {
        search: describe(max_bound),
        finished: true,
        note: None,
    }
}

fn explain_shuttle(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    backend: &Backend,
    runs: u64,
    budget: Duration,
) -> Explained {
    let start = Instant::now();
    let mut best: Option<(Vec<Step>, ShuttleSchedule, String)> = None;
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
        let s = Arc::new(scenario(cfg, variant, property, None));
        let (e, schedule) = shuttle_find(&b, left, s.clone());
        done += 1;
        if let (Outcome::Failed(msg), Some(schedule)) = (&e.outcome, schedule) {
            if attributed(property, msg) {
                failing += 1;
                let steps = s.tracer.steps();
                if best.as_ref().is_none_or(|(b, _, _)| steps.len() < b.len()) {
                    best = Some((steps, schedule, property::explain(property, msg)));
                }
            }
        }
    }
    let search = format!(
        "{} ({}), {done} seeded searches from seed {first_seed}",
        backend.name(),
        backend.search()
    );
    match best {
        Some((steps, schedule, violation)) => {
            let found = steps.len();
            let (steps, schedule, violation, replays) = shrink(
                cfg, variant, property, steps, schedule, violation, start, budget,
            );
            let search = format!(
                "{search}: shortest of {failing} failing schedules ({found} steps), \
                 shrunk by {replays} replays to {} steps and {} context switches",
                steps.len(),
                schedule.switches()
            );
            let replay = Replay {
                v: 1,
                variant: variant.name.to_string(),
                property,
                cfg: cfg.clone(),
                target: None,
                how: ReplayHow::Shuttle { schedule },
            };
            Explained::Found(Box::new(Counterexample {
                variant: variant.name.to_string(),
                property,
                backend: backend.name().to_string(),
                cfg: cfg.clone(),
                violation,
                search,
                steps,
                token: replay.token(),
            }))
        }
        None => Explained::NotFound {
            finished: done == runs,
            note: (done < runs)
                .then(|| format!("time budget ran out after {done} of {runs} searches")),
            search,
        },
    }
}

/// Shrink a failing shuttle schedule by replay: first the shortest prefix
/// that still fails (the rest runs without preemption), then greedily drop
/// single context switches, keeping any change that still violates
/// `property` with no more kernel steps. Returns the result and the number
/// of replays spent.
#[allow(clippy::too_many_arguments)]
fn shrink(
    cfg: &Config,
    variant: &Variant,
    property: Property,
    steps: Vec<Step>,
    schedule: ShuttleSchedule,
    violation: String,
    start: Instant,
    budget: Duration,
) -> (Vec<Step>, ShuttleSchedule, String, usize) {
    const MAX_REPLAYS: usize = 400;
    let mut best = (steps, schedule, violation);
    let mut replays = 0;
    let try_one = |candidate: &ShuttleSchedule| {
        let s = Arc::new(scenario(cfg, variant, property, None));
        let (e, followed) = shuttle_replay(candidate, s.clone());
        match e.outcome {
            Outcome::Failed(msg) if attributed(property, &msg) => Some((
                s.tracer.steps(),
                followed,
                property::explain(property, &msg),
            )),
            _ => None,
        }
    };
    let better = |new: &(Vec<Step>, ShuttleSchedule, String),
                  old: &(Vec<Step>, ShuttleSchedule, String)| {
        (new.0.len(), new.1.switches()) < (old.0.len(), old.1.switches())
    };
    for k in 0..best.1.steps.len() {
        if replays >= MAX_REPLAYS || start.elapsed() > budget {
            return (best.0, best.1, best.2, replays);
        }
        let prefix = ShuttleSchedule {
            seed: best.1.seed,
            steps: best.1.steps[..k].to_vec(),
        };
        replays += 1;
        if let Some(found) = try_one(&prefix) {
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
                return (best.0, best.1, best.2, replays);
            }
            let (prev, cur) = (best.1.steps[i - 1], best.1.steps[i]);
            if prev.is_none() || cur.is_none() || prev == cur {
                continue;
            }
            let mut candidate = best.1.clone();
            candidate.steps[i] = prev;
            candidate.steps.truncate(i + 1);
            replays += 1;
            if let Some(found) = try_one(&candidate) {
                if better(&found, &best) {
                    best = found;
                    changed = true;
                    break;
                }
            }
        }
    }
    (best.0, best.1, best.2, replays)
}

/// Re-run the execution a token describes. Returns the reproduced
/// counterexample, or why it did not reproduce.
pub fn replay(token: &str) -> Result<Counterexample, String> {
    let r = Replay::from_token(token)?;
    let variant = Variant::by_name(&r.variant)?;
    let s = Arc::new(scenario(&r.cfg, &variant, r.property, r.target.clone()));
    let e = match &r.how {
        ReplayHow::Loom { bound, checkpoint } => {
            loom_replay(&checkpoint.to_string(), *bound, s.clone())
        }
        ReplayHow::Shuttle { schedule } => shuttle_replay(schedule, s.clone()).0,
    };
    match &e.outcome {
        Outcome::Failed(msg) if attributed(r.property, msg) => Ok(Counterexample {
            variant: r.variant.clone(),
            property: r.property,
            backend: r.backend().into(),
            cfg: r.cfg.clone(),
            violation: property::explain(r.property, msg),
            steps: s.tracer.steps(),
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
