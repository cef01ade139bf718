//! Replaying a finding's witness and checking its fix candidates
//! ([`crate::protocol::findings`]).
//!
//! [`check`] decides, for one variant on one configuration, whether the
//! finding shows: its property violated (the finding's backend, the DFS
//! exhaustively or loom at the finding's bound), the reader outcome only
//! weak memory gives (loom's outcome set), or staleness after a skipped
//! flush (the DFS's maximum); and, for a fix candidate, which must-hold
//! properties the same search saw violated. [`replay`] runs the witness
//! and finds its shortest trace.

use std::time::{Duration, Instant};

use crate::check::run::{
    explore_variant, judged, monitor_plan, on_fresh_thread, run, RunSpec, Verdict,
};
use crate::config::Config;
use crate::explore::{loom_find, Backend, Outcome, Shard};
use crate::observe::plan::{fmt_outcome, ReaderOutcome};
use crate::observe::property::Property;
use crate::protocol::findings::{Expected, Finding, Shown};
use crate::protocol::Variant;
use crate::report::counterexample::Counterexample;
use crate::vocab::BackendName;

use super::explain::{explain, Explained, Search, Target};

/// The most schedules one exhaustive check may take.
pub const DFS_CAP: usize = 2_000_000;

/// The schedules of a random witness search.
pub const RANDOM_ITERATIONS: usize = 20_000;

/// What one search of one variant on one configuration found.
#[derive(Clone, Debug)]
pub struct Check {
    /// The variant.
    pub variant: String,
    /// The configuration.
    pub cfg: Config,
    /// The search, in words.
    pub search: String,
    /// Whether it covered every execution.
    pub exhaustive: bool,
    /// Whether it was a random sample (not finding it decides nothing).
    pub sampled: bool,
    /// Whether the planned search finished (loom at a preemption bound
    /// finishes without covering every execution).
    pub finished: bool,
    /// Executions explored.
    pub executions: u64,
    /// Whether the finding shows.
    pub shows: bool,
    /// What showed it, or the measure.
    pub note: String,
    /// Properties that must hold for this variant and were violated (a
    /// kernel version's pinned findings and the refuted claims excepted).
    pub broken: Vec<Property>,
    /// Wall-clock seconds the search took.
    pub seconds: f64,
}

impl Check {
    /// The verdict on the finding, in a word: `shows`, `holds*`
    /// (exhaustive), `holds` (a finished search that is not exhaustive:
    /// loom at a preemption bound), or `inconclusive` (a search cut short,
    /// or a random sample that did not find it).
    pub fn verdict(&self) -> &'static str {
        match (self.shows, self.exhaustive, self.finished && !self.sampled) {
            (true, _, _) => "shows",
            (false, true, _) => "holds*",
            (false, false, true) => "holds",
            (false, false, false) => "inconclusive",
        }
    }
}

/// The search that decides `f` on a configuration: its backend, the DFS
/// (stateful, capped at [`DFS_CAP`]) or loom at the finding's bound.
pub fn backend(f: &Finding) -> Backend {
    match f.witness.shown.backend() {
        BackendName::Loom => Backend::Loom {
            preemption_bound: f.witness.loom_bound,
        },
        // A witness too deep for the DFS's budget: a seeded random search
        // shows it or is inconclusive.
        BackendName::ShuttleRandom => Backend::ShuttleRandom {
            iterations: RANDOM_ITERATIONS,
            seed: 1,
        },
        _ => Backend::ShuttleDfs {
            max_schedules: DFS_CAP,
            sleep_sets: true,
            stateful: true,
            symmetry: false,
            workers: 1,
        },
    }
}

/// The pages charged to reader 0's memcg's subtree: what a triggered
/// reader must read in the finding's configurations, where the gate fires
/// only once every update has folded.
fn raised(cfg: &Config) -> i64 {
    cfg.total_of(cfg.read_of(0))
}

/// The first outcome in which reader 0 flushed and read fewer than
/// `raised` pages.
fn short_read(outcomes: &[ReaderOutcome], raised: i64) -> Option<&ReaderOutcome> {
    outcomes.iter().find(|o| {
        o.first()
            .is_some_and(|(flushed, v)| *flushed && *v < raised)
    })
}

/// Decide `f` for `variant` on `cfg`, timing the search.
pub fn check(
    f: &Finding,
    variant: &Variant,
    cfg: &Config,
    registry: &[Variant],
    budget: Duration,
) -> Result<Check, String> {
    let t0 = Instant::now();
    let mut c = decide(f, variant, cfg, registry, budget)?;
    c.seconds = t0.elapsed().as_secs_f64();
    Ok(c)
}

fn decide(
    f: &Finding,
    variant: &Variant,
    cfg: &Config,
    registry: &[Variant],
    budget: Duration,
) -> Result<Check, String> {
    let b = backend(f);
    if f.witness.shown == Shown::SkippedFlush {
        return skipped_flush(variant, cfg, registry, &b, budget);
    }
    let sampled = matches!(b, Backend::ShuttleRandom { .. });
    let mut spec = RunSpec::new(&variant.name, "finding", cfg, b, budget.as_secs_f64());
    spec.collect = f.witness.shown == Shown::TriggeredRead;
    let r = run(&spec, registry)?;
    let (shows, note) = match f.witness.shown {
        Shown::Property { property, .. } => {
            let v = r
                .verdict(property)
                .ok_or_else(|| format!("{property} is not judged for {}", variant.name))?;
            (
                v.verdict == Verdict::Violated,
                v.note.clone().unwrap_or_default(),
            )
        }
        _ => {
            let outcomes = r.outcomes.clone().unwrap_or_default();
            match short_read(&outcomes, raised(cfg)) {
                Some(o) => (
                    true,
                    format!(
                        "reader outcome {} ({} pages charged before its gate fired)",
                        fmt_outcome(o),
                        raised(cfg)
                    ),
                ),
                None => (
                    false,
                    format!("{} outcomes, no triggered read short", outcomes.len()),
                ),
            }
        }
    };
    let own = |p: Property| variant.findings.iter().any(|d| d.property == p);
    let broken = r
        .verdicts
        .iter()
        .filter(|v| v.verdict == Verdict::Violated)
        .map(|v| v.property)
        .filter(|p| !p.refutable_claim() && !own(*p))
        .collect();
    Ok(Check {
        variant: variant.name.clone(),
        cfg: cfg.clone(),
        search: r.search.clone(),
        exhaustive: r.exhaustive,
        sampled,
        finished: r.finished,
        executions: r.executions,
        shows,
        note,
        broken,
        seconds: 0.0,
    })
}

/// B7's measure: the most pages a reader whose flush was skipped read
/// stale, over every SC interleaving.
fn skipped_flush(
    variant: &Variant,
    cfg: &Config,
    registry: &[Variant],
    b: &Backend,
    budget: Duration,
) -> Result<Check, String> {
    let checks = judged(variant, cfg, b);
    let plan = monitor_plan(variant, registry, cfg, b, checks)?;
    let (e, shared) = explore_variant(variant, plan, b, Shard::default(), budget, None, None);
    let finished = matches!(e.outcome, Outcome::Finished);
    let stale = shared.measures.stale_after_skipped_flush.value();
    Ok(Check {
        variant: variant.name.clone(),
        cfg: cfg.clone(),
        search: b.search(),
        exhaustive: finished && b.exhaustive(),
        sampled: false,
        finished,
        executions: e.executions,
        shows: stale > 0,
        note: format!(
            "most pages stale at a read after a skipped flush: {stale} of {}",
            cfg.total()
        ),
        broken: Vec::new(),
        seconds: 0.0,
    })
}

/// B7's trace: the first interleaving of the search in which a reader
/// whose flush was skipped read the most pages stale.
fn skip_trace(
    variant: &Variant,
    cfg: &Config,
    registry: &[Variant],
    b: &Backend,
    budget: Duration,
) -> Result<(Option<Counterexample>, String), String> {
    let checks = judged(variant, cfg, b);
    let mut plan = monitor_plan(variant, registry, cfg, b, checks)?;
    plan.trace = true;
    let (_, shared) = explore_variant(variant, plan, b, Shard::default(), budget, None, None);
    let Some((stale, _, steps)) = shared.measures.stale_after_skipped_flush.get() else {
        return Ok((None, format!("{}: no skipped flush read stale", b.search())));
    };
    let c = Counterexample {
        variant: variant.name.clone(),
        // The staleness is a measure, not a property's verdict: C1's is
        // the bound it is measured beside.
        property: Property::DocumentedErrorBound,
        backend: b.id().to_string(),
        family: variant.family,
        release: variant.release.name.into(),
        cfg: cfg.clone(),
        violation: format!(
            "reader 0's flush was skipped for the one in progress and it read {stale} of {} pages stale",
            cfg.total()
        ),
        steps,
        search: b.search(),
        token: String::new(),
    };
    let how = format!(
        "{}: the first interleaving with the most pages stale after a skipped flush",
        b.search()
    );
    Ok((Some(c), how))
}

/// A finding's witness, replayed: the deciding search, and the shortest
/// trace found.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The deciding search of the witness variant on the witness.
    pub check: Check,
    /// The trace, if one was found.
    pub trace: Option<Counterexample>,
    /// How the trace was found, or why there is none.
    pub how: String,
}

/// Replay `f`'s witness: decide it, then find a short trace (explain's
/// seeded shuttle searches with shrinking under SC, loom at increasing
/// bounds for weak memory, the DFS's first for staleness).
pub fn replay(f: &Finding, registry: &[Variant], budget: Duration) -> Result<Replayed, String> {
    let variant = Variant::find(registry, f.witness.variant)?;
    let cfg = (f.witness.cfg)();
    let check = check(f, &variant, &cfg, registry, budget)?;
    let (trace, how) = match f.witness.shown {
        Shown::Property { property, .. } => {
            let t = Target {
                cfg: &cfg,
                variant: &variant,
                registry,
                property,
                rcu: None,
            };
            let search = if f.weak_memory {
                Search::Loom {
                    max_bound: f.witness.loom_bound.or(Some(3)),
                }
            } else {
                Search::Shuttle {
                    backend: Backend::ShuttleRandom {
                        iterations: 4000,
                        seed: 1,
                    },
                    runs: 10,
                }
            };
            match explain(&t, &search, budget) {
                Explained::Found(c) => {
                    let how = c.search.clone();
                    (Some(*c), how)
                }
                Explained::NotFound { search, note, .. } => {
                    (None, format!("{search}: {}", note.unwrap_or_default()))
                }
            }
        }
        Shown::TriggeredRead => triggered_trace(f, &variant, &cfg, registry, budget)?,
        Shown::SkippedFlush => skip_trace(&variant, &cfg, registry, &backend(f), budget)?,
    };
    Ok(Replayed { check, trace, how })
}

/// The first loom execution (at the smallest bound that has it) in which
/// reader 0 flushed and read short.
fn triggered_trace(
    f: &Finding,
    variant: &Variant,
    cfg: &Config,
    registry: &[Variant],
    budget: Duration,
) -> Result<(Option<Counterexample>, String), String> {
    let mut spec = RunSpec::new(
        &variant.name,
        "finding",
        cfg,
        backend(f),
        budget.as_secs_f64(),
    );
    spec.collect = true;
    let outcomes = run(&spec, registry)?.outcomes.unwrap_or_default();
    let Some(outcome) = short_read(&outcomes, raised(cfg)).cloned() else {
        return Ok((None, "no triggered read short".into()));
    };
    // The target outcome fails the execution; no_lost_flush, which loom
    // decides across executions, is armed only to build the scenario.
    let t = Target {
        cfg,
        variant,
        registry,
        property: Property::NoLostFlush,
        rcu: None,
    };
    const WHY: &str = "triggered_read";
    for bound in [Some(0), Some(1), Some(2), None] {
        let backend = Backend::Loom {
            preemption_bound: bound,
        };
        let s = t.scenario_failing(&backend, Some(outcome.clone()), Some(WHY.into()))?;
        let sc = s.clone();
        let (e, _) = on_fresh_thread(move || loom_find(bound, budget, sc));
        if let Outcome::Failed(msg) = &e.outcome {
            if msg.starts_with(WHY) {
                let read = outcome[0].1;
                let c = Counterexample {
                    variant: variant.name.clone(),
                    property: Property::NoLostFlush,
                    backend: BackendName::Loom.name().into(),
                    family: variant.family,
                    release: variant.release.name.into(),
                    cfg: cfg.clone(),
                    violation: format!(
                        "reader 0's gate fired and it flushed, then read {read} of the {} \
                         pages charged before its gate read the count (outcome {})",
                        raised(cfg),
                        fmt_outcome(&outcome)
                    ),
                    steps: s.shared().steps(),
                    search: format!(
                        "loom, preemption bound {}, execution {}",
                        bound.map_or("unbounded".into(), |b| b.to_string()),
                        e.executions
                    ),
                    token: String::new(),
                };
                let how = c.search.clone();
                return Ok((Some(c), how));
            }
        }
    }
    Ok((None, "loom did not reach the outcome again".into()))
}

/// The configurations `f`'s candidates are checked on: the witness's, the
/// larger one (when given) and those at scale.
pub fn candidate_configs(f: &Finding) -> Vec<Config> {
    let mut cfgs = vec![(f.witness.cfg)()];
    if let Some(l) = f.larger {
        cfgs.push(l());
    }
    cfgs.extend(f.scale.iter().map(|c| c()));
    cfgs
}

/// The unfixed version (the witness's variant) on `f`'s configurations at
/// scale: each must still show the finding, or a candidate holding there
/// says nothing.
pub fn check_unfixed_at_scale(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<Check>, String> {
    let v = Variant::find(registry, f.witness.variant)?;
    f.scale
        .iter()
        .map(|c| check(f, &v, &c(), registry, budget))
        .collect()
}

/// Each fix candidate of `f` on [`candidate_configs`]: the candidate's
/// [`Check`]s.
pub fn check_candidates(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<(String, Vec<Check>)>, String> {
    check_candidates_on(f, &candidate_configs(f), registry, budget)
}

/// Each fix candidate of `f` on `cfgs`.
pub fn check_candidates_on(
    f: &Finding,
    cfgs: &[Config],
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<(String, Vec<Check>)>, String> {
    let n = f.fixes.len();
    f.fixes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let v = Variant::find(registry, c.variant)?;
            let own = c.refuted_on.map(|f| f());
            let checks = cfgs
                .iter()
                .chain(own.as_ref())
                .map(|cfg| {
                    // Progress: each check is one search, up to `budget`.
                    eprintln!(
                        "{}: fix candidate {}/{n} {} on {cfg} ...",
                        f.id,
                        i + 1,
                        c.variant
                    );
                    check(f, &v, cfg, registry, budget)
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok((c.variant.to_string(), checks))
        })
        .collect()
}

/// The reader check of a finding whose witness is judged by comparing
/// with the walk a candidate restores (`no_lost_flush`): what a reader of
/// the root observes, judged without that walk. On each configuration of
/// [`reader_configs`] the pages charged exceed the trigger plus what every
/// CPU may hold below the batch (`T + nr_cpus * (MEMCG_CHARGE_BATCH - 1)`)
/// and no flush runs before the final read, so any walk that counts every
/// update at the root leaves that reader more than the trigger pending, and
/// a reader that flushes then must read every page charged:
/// `quiescent_read_exact`, which compares the read with the charges and
/// knows no walk. The unfixed version comes first, then each candidate.
pub fn reader_check(
    f: &Finding,
    cfgs: &[Config],
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<(String, Vec<Check>)>, String> {
    let mut g = *f;
    g.witness.shown = Shown::Property {
        property: Property::QuiescentReadExact,
        backend: BackendName::ShuttleDfs,
    };
    std::iter::once(f.witness.variant)
        .chain(f.fixes.iter().map(|c| c.variant))
        .map(|name| {
            let v = Variant::find(registry, name)?;
            let checks = cfgs
                .iter()
                .map(|cfg| check(&g, &v, cfg, registry, budget))
                .collect::<Result<Vec<_>, String>>()?;
            Ok((name.to_string(), checks))
        })
        .collect()
}

/// The configurations of [`reader_check`]: `f`'s candidate configurations
/// with no flush before the final read (no periodic flush, no reader) on
/// which the pages charged to the root exceed `T + nr_cpus *
/// (MEMCG_CHARGE_BATCH - 1)` for the unfixed version's trigger `T`; none
/// unless `f`'s witness is judged by `no_lost_flush`.
pub fn reader_configs(f: &Finding, registry: &[Variant]) -> Vec<Config> {
    let judged_by_walk = matches!(
        f.witness.shown,
        Shown::Property { property, .. } if property == Property::NoLostFlush
    );
    let Ok(v) = Variant::find(registry, f.witness.variant) else {
        return Vec::new();
    };
    if !judged_by_walk {
        return Vec::new();
    }
    candidate_configs(f)
        .into_iter()
        .filter(|c| !c.periodic && c.readers == 0 && reader_premise(c, &v))
        .collect()
}

/// Whether the pages charged on `cfg` exceed `T + nr_cpus *
/// (MEMCG_CHARGE_BATCH - 1)` for `v`'s trigger: more than any walk that
/// counts every update lets a reader of the root skip.
pub fn reader_premise(cfg: &Config, v: &Variant) -> bool {
    let charged = cfg.total_of(cfg.read_of(0));
    let slack = v.trigger_on(cfg) + cfg.cpus as i64 * (cfg.batch - 1);
    charged > slack
}

/// Whether a candidate's checks are what the data expects: a fix holds on
/// every configuration (exhaustively, or loom at the finding's bound) and
/// breaks no must-hold property there; a refuted candidate still shows the
/// finding on one of them.
pub fn candidate_met(expected: Expected, checks: &[Check]) -> bool {
    match expected {
        Expected::Fixes => checks
            .iter()
            .all(|c| !c.shows && c.finished && c.broken.is_empty()),
        Expected::Refuted => checks.iter().any(|c| c.shows),
    }
}
