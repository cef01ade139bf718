//! Fuzzing configurations: seeded random configurations within stated
//! bounds, each variant searched under shuttle random and PCT, and every
//! violation shrunk to the smallest configuration (greedily, by neighbours
//! that still fail under the same seeded search) and then the shortest
//! schedule (by [`crate::drive::explain`]).
//!
//! The suite is a handful of hand-picked configurations; fuzzing asks
//! whether anything in a wider box breaks a property the suite says holds.
//!
//! Why not proptest's strategies and shrinking (considered for issue 42):
//! - a configuration is drawn by its number alone ([`draw()`]: splitmix64 of
//!   (seed, k)), so a report's "configuration k of seed S" is drawn again
//!   without the k - 1 before it; proptest's runner draws from one stream;
//! - each shrink candidate is a model-checking search (a tenth of a second
//!   to seconds), under a time budget: the shrink tries named one-step
//!   neighbours fewest threads first ([`neighbours()`]) and reports each
//!   accepted step ("cpus 3 -> 2"); proptest's value trees shrink field
//!   by field by binary search, which on ranges of 1 to 3 saves no
//!   search, and name no step;
//! - the fuzzer is a subcommand, not a test: proptest would be a
//!   dependency of the binary for some 240 lines it would not shorten.

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod draw;
mod shrink;

pub use draw::{
    draw, Bounds, MAX_BATCH, MAX_LATE, MAX_READERS, MAX_READS, MAX_VALS, TICKS, TIME_ONE_IN, VALS,
};
pub use shrink::neighbours;

use crate::check::run::{judged, run, RunSpec, Verdict};
use crate::config::Config;
use crate::drive::explain::{self, Explained, Search, Target};
use crate::explore::{Backend, BackendName};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::report::Counterexample;

/// Whether a violation of `p` on `cfg` counts against a variant that must
/// hold (and so kills a mutant): not a claim the model refutes for the
/// kernel itself. `flush_time_bound` is claimed only for periodic work on
/// time: late work breaks it in v5.19 and v6.0 alike (B11, C2 in
/// docs/findings.md).
pub fn claimed(p: Property, cfg: &Config) -> bool {
    let late_work = p == Property::FlushTimeBound && cfg.late > 0;
    !(p.refutable_claim() || late_work)
}

/// What to fuzz.
#[derive(Clone, Debug)]
pub struct FuzzSpec {
    /// Seed of the configurations and of every shuttle search.
    pub seed: u64,
    /// Time budget of the search for violations (shrinking is not counted).
    pub budget: Duration,
    /// Time budget for shrinking each violation.
    pub shrink_budget: Duration,
    /// Variants to run on every configuration.
    pub variants: Vec<Variant>,
    /// Properties that count (others are not reported).
    pub properties: Vec<Property>,
    /// Schedules per shuttle search.
    pub iterations: usize,
    /// The box.
    pub bounds: Bounds,
    /// Seeded searches per scheduler when shrinking the schedule.
    pub explain_runs: u64,
    /// Go on after the first must-hold violation.
    pub keep_going: bool,
    /// Worker threads for the searches of one configuration.
    pub jobs: usize,
}

impl FuzzSpec {
    /// The two searches every configuration gets.
    pub fn backends(&self) -> [Backend; 2] {
        [
            Backend::ShuttleRandom {
                iterations: self.iterations,
                seed: self.seed,
            },
            Backend::ShuttlePct {
                iterations: self.iterations,
                depth: 3,
                seed: self.seed,
            },
        ]
    }
}

/// A violation seen in one search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Violation {
    /// The property.
    pub property: Property,
    /// The search that saw it.
    pub backend: Backend,
    /// The message.
    pub note: String,
}

/// One variant on one configuration, under both searches.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tried {
    /// Configuration number (the `k` of `draw`).
    pub number: u64,
    /// The configuration.
    pub cfg: Config,
    /// Variant name.
    pub variant: String,
    /// What the variant is.
    pub kind: Kind,
    /// The searches run (PCT only where there is concurrency).
    pub searches: Vec<String>,
    /// Schedules run, both searches.
    pub executions: u64,
    /// Seconds, both searches.
    pub seconds: f64,
    /// Counted properties that held in every search.
    pub held: Vec<Property>,
    /// Counted properties violated, with the first search that saw each.
    pub violated: Vec<Violation>,
    /// Counted properties neither held nor violated, and why.
    pub inconclusive: Vec<(Property, String)>,
}

/// One accepted step of the configuration shrink.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShrinkStep {
    /// What changed.
    pub change: String,
    /// The configuration after it.
    pub cfg: Config,
}

/// A violation of a counted property, shrunk: a finding for a variant that
/// must hold, a kill for a mutant.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    /// Variant name.
    pub variant: String,
    /// What the variant is.
    pub kind: Kind,
    /// Whether the variant must hold the property (a finding, not a kill).
    pub must_hold: bool,
    /// Whether the variant's catalogue entry names the property as a killer.
    pub designated: bool,
    /// The property.
    pub property: Property,
    /// The configuration number it was first seen on.
    pub number: u64,
    /// The search that saw it, which the shrink repeats.
    pub backend: Backend,
    /// The configuration it was first seen on.
    pub first: Config,
    /// The violation there.
    pub violation: String,
    /// Accepted shrink steps, in order.
    pub steps: Vec<ShrinkStep>,
    /// The smallest configuration found that still violates.
    pub shrunk: Config,
    /// Candidate configurations searched while shrinking.
    pub candidates: usize,
    /// Seconds spent shrinking the configuration.
    pub shrink_seconds: f64,
    /// The shortest schedule on `shrunk`, if explain found one.
    pub counterexample: Option<Counterexample>,
    /// Why there is no counterexample, or that the shrink was cut short.
    pub note: Option<String>,
}

/// What a fuzz run did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FuzzReport {
    /// The seed.
    pub seed: u64,
    /// The box.
    pub bounds: Bounds,
    /// Configurations searched.
    pub configs: u64,
    /// Draws `Config::validate` refused.
    pub rejected: u64,
    /// Draws equal to a configuration already searched (skipped).
    pub repeats: u64,
    /// Searches run (excluding shrinking).
    pub searches: u64,
    /// Schedules run (excluding shrinking).
    pub executions: u64,
    /// Seconds searching (excluding shrinking).
    pub search_seconds: f64,
    /// Seconds in all.
    pub seconds: f64,
    /// Every variant on every configuration.
    pub tried: Vec<Tried>,
    /// Violations, shrunk.
    pub findings: Vec<Finding>,
    /// Why the run stopped.
    pub stopped: String,
}

impl FuzzReport {
    /// Whether a variant that must hold violated a counted property.
    pub fn must_hold_violated(&self) -> bool {
        !self.violations(true).is_empty()
    }

    /// The (variant, property) pairs violated by variants that must hold
    /// (`must_hold`), or that killed a mutant.
    pub fn violations(&self, must_hold: bool) -> BTreeSet<(String, Property)> {
        self.tried
            .iter()
            .filter(|t| t.kind.must_hold() == must_hold)
            .flat_map(|t| t.violated.iter().map(|v| (t.variant.clone(), v.property)))
            .collect()
    }
}

/// What [`fuzz`] reports as it goes.
pub enum Event<'a> {
    /// A configuration is about to be searched.
    Config(u64, &'a Config),
    /// One variant on it, both searches done.
    Tried(&'a Tried),
    /// Shrinking a violation starts.
    Shrinking(&'a Tried, &'a Violation),
    /// A smaller configuration still violates.
    Step(&'a ShrinkStep),
    /// The configuration is shrunk; the schedule shrink starts.
    Explaining(&'a Config),
    /// A violation, shrunk.
    Finding(&'a Finding),
}

/// After this many draws in a row that repeat a configuration already
/// searched, the box is taken to be exhausted.
const MAX_REPEATS_IN_A_ROW: u64 = 500;

/// Fuzz: draw configurations until the budget runs out, run every variant
/// on each, and shrink each new (variant, property) violation. Stops after
/// the first must-hold violation unless `keep_going`, and when only
/// mutants are fuzzed, once each is killed.
pub fn fuzz(
    spec: &FuzzSpec,
    registry: &[Variant],
    on: &mut dyn FnMut(Event),
) -> Result<FuzzReport, String> {
    let start = Instant::now();
    let mut report = FuzzReport {
        seed: spec.seed,
        bounds: spec.bounds,
        configs: 0,
        rejected: 0,
        repeats: 0,
        searches: 0,
        executions: 0,
        search_seconds: 0.0,
        seconds: 0.0,
        tried: Vec::new(),
        findings: Vec::new(),
        stopped: String::new(),
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut shrunk: BTreeSet<(String, Property)> = BTreeSet::new();
    let mut in_a_row = 0;
    let mut search_time = Duration::ZERO;
    let only_mutants = spec.variants.iter().all(|v| v.kind == Kind::Mutant);
    let mut k = 0u64;
    report.stopped = loop {
        if search_time >= spec.budget {
            break format!("time budget of {} s used", spec.budget.as_secs());
        }
        let cfg = draw(spec.seed, k, &spec.bounds);
        let number = k;
        k += 1;
        if cfg.validate(usize::MAX, "shuttle").is_err() {
            report.rejected += 1;
            continue;
        }
        if !seen.insert(cfg.to_string()) {
            report.repeats += 1;
            in_a_row += 1;
            if in_a_row >= MAX_REPEATS_IN_A_ROW {
                break format!(
                    "{MAX_REPEATS_IN_A_ROW} draws in a row repeated configurations already searched: the box is (nearly) exhausted"
                );
            }
            continue;
        }
        in_a_row = 0;
        on(Event::Config(number, &cfg));
        let t0 = Instant::now();
        // A configuration started is finished, so that no search is cut
        // short by the budget (a few tenths of a second at 2000 schedules).
        let tried = try_config(spec, registry, number, &cfg, spec.budget)?;
        search_time += t0.elapsed();
        report.configs += 1;
        report.searches += tried.iter().map(|t| t.searches.len() as u64).sum::<u64>();
        report.executions += tried.iter().map(|t| t.executions).sum::<u64>();
        let mut stop = false;
        for t in &tried {
            on(Event::Tried(t));
        }
        for t in &tried {
            for v in &t.violated {
                if stop || !shrunk.insert((t.variant.clone(), v.property)) {
                    continue;
                }
                let variant = Variant::find(registry, &t.variant)?;
                on(Event::Shrinking(t, v));
                let f = shrink_finding(spec, registry, &variant, t, v, on)?;
                on(Event::Finding(&f));
                report.findings.push(f);
                stop = t.kind.must_hold() && !spec.keep_going;
            }
        }
        report.tried.extend(tried);
        if stop {
            break "stopped at the first must-hold violation (--keep-going to go on)".into();
        }
        let all_killed = spec
            .variants
            .iter()
            .all(|v| shrunk.iter().any(|(n, _)| *n == v.name));
        if only_mutants && all_killed && !spec.keep_going {
            break "every mutant killed (--keep-going to go on)".into();
        }
    };
    report.search_seconds = search_time.as_secs_f64();
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// The properties counted for `variant` on `cfg` under `backend`: not the
/// findings the catalogue pins on a variant that must hold (the suite
/// shows them; `pinned`).
fn counted(spec: &FuzzSpec, variant: &Variant, cfg: &Config, backend: &Backend) -> Vec<Property> {
    spec.properties
        .iter()
        .copied()
        .filter(|p| claimed(*p, cfg) && judged(variant, cfg, backend).contains(p))
        .filter(|p| !pinned(variant, *p, backend.id()))
        .collect()
}

/// Whether `p` under `backend` is a finding the catalogue pins on
/// `variant`, a variant that must hold (c12's `no_lost_flush` on v6.17
/// under shuttle, ...): known, witnessed and pinned by the suite, so not a
/// new violation for `fuzz`. A finding pinned under loom alone (a weak
/// memory one) still counts under shuttle; a refuted claim counts under
/// none.
pub fn pinned(variant: &Variant, p: Property, backend: BackendName) -> bool {
    // A claim the catalogue says the variant refutes (`Variant::refutes`,
    // no backend named) is refuted under every backend.
    variant.kind.must_hold()
        && variant
            .findings
            .iter()
            .any(|d| d.property == p && (d.backends.is_empty() || d.backends.contains(&backend)))
}

/// Whether the scenario has a scheduling choice: with one CPU and nothing
/// else, main only waits for it, and shuttle's PCT refuses to run ("test
/// closure did not exercise any concurrency").
pub fn concurrent(cfg: &Config) -> bool {
    cfg.threads() > 1
}

/// The searches `cfg` gets: PCT only where there is concurrency.
fn searches_for(spec: &FuzzSpec, cfg: &Config) -> Vec<Backend> {
    spec.backends()
        .into_iter()
        .filter(|b| concurrent(cfg) || !matches!(b, Backend::ShuttlePct { .. }))
        .collect()
}

/// Every variant on `cfg` under its searches, on `spec.jobs` threads.
fn try_config(
    spec: &FuzzSpec,
    registry: &[Variant],
    number: u64,
    cfg: &Config,
    budget: Duration,
) -> Result<Vec<Tried>, String> {
    let work: Vec<(usize, Backend)> = (0..spec.variants.len())
        .flat_map(|i| searches_for(spec, cfg).into_iter().map(move |b| (i, b)))
        .collect();
    let next = std::sync::Mutex::new(work.iter().enumerate());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..spec.jobs.clamp(1, work.len().max(1)) {
            s.spawn(|| loop {
                let Some((j, (i, b))) = next.lock().unwrap_or_else(|e| e.into_inner()).next()
                else {
                    break;
                };
                let r = run(
                    &RunSpec::new(
                        &spec.variants[*i].name,
                        &format!("fuzz-{number}"),
                        cfg,
                        b.clone(),
                        budget.as_secs_f64(),
                    ),
                    registry,
                );
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((j, *i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(j, _, _)| *j);
    let mut out = Vec::new();
    for (i, v) in spec.variants.iter().enumerate() {
        let mut t = Tried {
            number,
            cfg: cfg.clone(),
            variant: v.name.clone(),
            kind: v.kind,
            searches: Vec::new(),
            executions: 0,
            seconds: 0.0,
            held: Vec::new(),
            violated: Vec::new(),
            inconclusive: Vec::new(),
        };
        let runs: Vec<_> = results
            .iter()
            .filter(|(_, j, _)| *j == i)
            .map(|(_, _, r)| r.clone())
            .collect::<Result<_, _>>()?;
        for r in &runs {
            t.searches.push(r.spec.backend.name().to_string());
            t.executions += r.executions;
            t.seconds += r.seconds;
        }
        for p in &spec.properties {
            let mut judged_any = false;
            let mut held = true;
            let mut why = None;
            for r in &runs {
                if !counted(spec, v, cfg, &r.spec.backend).contains(p) {
                    continue;
                }
                judged_any = true;
                let Some(pv) = r.verdict(*p) else { continue };
                match pv.verdict {
                    Verdict::Violated if t.violated.iter().all(|x| x.property != *p) => {
                        t.violated.push(Violation {
                            property: *p,
                            backend: r.spec.backend.clone(),
                            note: pv.note.clone().unwrap_or_default(),
                        });
                    }
                    Verdict::Holds => {}
                    _ => {
                        held = false;
                        why = why.or_else(|| pv.note.clone());
                    }
                }
            }
            if !judged_any || t.violated.iter().any(|x| x.property == *p) {
                continue;
            }
            if held {
                t.held.push(*p);
            } else {
                t.inconclusive.push((*p, why.unwrap_or_default()));
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// Whether `variant` violates `p` on `cfg` under `backend`.
fn still_violates(
    variant: &Variant,
    registry: &[Variant],
    p: Property,
    cfg: &Config,
    backend: &Backend,
    budget: Duration,
) -> Result<bool, String> {
    if !claimed(p, cfg) || !judged(variant, cfg, backend).contains(&p) {
        return Ok(false);
    }
    let r = run(
        &RunSpec::new(
            &variant.name,
            "fuzz-shrink",
            cfg,
            backend.clone(),
            budget.as_secs_f64(),
        ),
        registry,
    )?;
    Ok(r.verdict(p).is_some_and(|v| v.verdict == Verdict::Violated))
}

/// Shrink one violation: the configuration greedily to a fixpoint (the
/// first neighbour that still violates under the same seeded search is
/// kept), then the schedule on it with explain, under PCT and random.
fn shrink_finding(
    spec: &FuzzSpec,
    registry: &[Variant],
    variant: &Variant,
    t: &Tried,
    v: &Violation,
    on: &mut dyn FnMut(Event),
) -> Result<Finding, String> {
    let start = Instant::now();
    let deadline = |s: &Instant| spec.shrink_budget.saturating_sub(s.elapsed());
    let mut cfg = t.cfg.clone();
    let mut steps = Vec::new();
    let mut passed: HashSet<String> = HashSet::new();
    let mut candidates = 0;
    let mut note = None;
    'fixpoint: loop {
        for (change, n) in neighbours(&cfg) {
            if !passed.insert(n.to_string()) {
                continue;
            }
            let left = deadline(&start);
            if left.is_zero() {
                note = Some("configuration shrink cut short by --shrink-seconds".to_string());
                break 'fixpoint;
            }
            candidates += 1;
            if still_violates(variant, registry, v.property, &n, &v.backend, left)? {
                let step = ShrinkStep { change, cfg: n };
                on(Event::Step(&step));
                cfg = step.cfg.clone();
                steps.push(step);
                continue 'fixpoint;
            }
        }
        break;
    }
    let shrink_seconds = start.elapsed().as_secs_f64();
    on(Event::Explaining(&cfg));
    let target = Target {
        cfg: &cfg,
        variant,
        registry,
        property: v.property,
        rcu: None,
    };
    let mut best: Option<Counterexample> = None;
    let mut why = Vec::new();
    let searches: Vec<Backend> = searches_for(spec, &cfg).into_iter().rev().collect();
    let n = searches.len();
    for (i, backend) in searches.into_iter().enumerate() {
        // An equal share of what is left to each scheduler, at least a second.
        let left = deadline(&start) / (n - i) as u32;
        let search = Search::Shuttle {
            backend,
            runs: spec.explain_runs,
        };
        match explain::explain(&target, &search, left.max(Duration::from_secs(1))) {
            Explained::Found(c) => {
                if best.as_ref().is_none_or(|b| c.steps.len() < b.steps.len()) {
                    best = Some(*c);
                }
            }
            Explained::NotFound { search, note, .. } => why.push(format!(
                "{search}: none found{}",
                note.map(|n| format!(" ({n})")).unwrap_or_default()
            )),
        }
    }
    if best.is_none() {
        why.extend(note);
        note = Some(why.join("; "));
    }
    Ok(Finding {
        variant: variant.name.clone(),
        kind: variant.kind,
        must_hold: variant.kind.must_hold(),
        designated: variant.killed_by.iter().any(|d| d.property == v.property),
        property: v.property,
        number: t.number,
        backend: v.backend.clone(),
        first: t.cfg.clone(),
        violation: v.note.clone(),
        steps,
        shrunk: cfg,
        candidates,
        shrink_seconds,
        counterexample: best,
        note,
    })
}
