//! Fuzzing configurations: seeded random configurations within stated
//! bounds, each variant searched under shuttle random and PCT, and every
//! violation shrunk to the smallest configuration (greedily, by neighbours
//! that still fail under the same seeded search) and then the shortest
//! schedule (by [`crate::report::explain`]).
//!
//! The suite is a handful of hand-picked configurations; fuzzing asks
//! whether anything in a wider box breaks a property the suite says holds.

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::explore::sched::mix;
use crate::explore::{Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::report::explain::{self, Counterexample, Explained, Search, Target};

use super::run::{judged, run, RunSpec, Verdict};

/// The update values drawn from; 5 exceeds every batch drawn (a huge page).
pub const VALS: [i64; 4] = [1, 2, 3, 5];
/// Values per configuration: 1 to this many, distinct.
pub const MAX_VALS: usize = 3;
/// `MEMCG_CHARGE_BATCH` is drawn from 1 to this.
pub const MAX_BATCH: i64 = 3;
/// Reader threads: 0 to this.
pub const MAX_READERS: usize = 2;
/// Reads per reader: 1 to this.
pub const MAX_READS: usize = 3;
/// Abstract time, when drawn: ticks in this range.
pub const TICKS: (usize, usize) = (4, 8);
/// Abstract time, when drawn: lateness 0 to this.
pub const MAX_LATE: usize = 1;
/// Abstract time is drawn on 1 in this many configurations.
pub const TIME_ONE_IN: u64 = 5;

/// The box configurations are drawn from (the parts that are flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    /// CPUs: 1 to this.
    pub max_cpus: usize,
    /// Updates per CPU: 1 to this.
    pub max_updates: usize,
    /// Draw abstract time on every configuration (when only
    /// `flush_time_bound` is fuzzed, which needs it).
    pub always_time: bool,
}

impl Bounds {
    /// The bounds in one line, as printed before a run.
    pub fn describe(&self) -> String {
        let vals: Vec<String> = VALS.iter().map(|v| v.to_string()).collect();
        format!(
            "cpus 1..={}, batch 1..={MAX_BATCH}, updates 1..={}, vals 1 to {MAX_VALS} distinct of \
             {{{}}} (5 > batch: a huge page), readers 0..={MAX_READERS}, reads 1..={MAX_READS}, \
             periodic on/off, abstract time (ticks {}..={}, late 0..={MAX_LATE}, periodic on) on {}",
            self.max_cpus,
            self.max_updates,
            vals.join(","),
            TICKS.0,
            TICKS.1,
            if self.always_time {
                "every configuration".to_string()
            } else {
                format!("1 in {TIME_ONE_IN} configurations")
            }
        )
    }
}

/// A splitmix64 stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0, 0)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}

/// Configuration number `k` of a run seeded with `seed`: every draw comes
/// from splitmix64 of (seed, k), so a configuration can be drawn again
/// without drawing the ones before it.
pub fn draw(seed: u64, k: u64, b: &Bounds) -> Config {
    let mut r = Rng(mix(seed, k));
    let time = b.always_time || r.next().is_multiple_of(TIME_ONE_IN);
    let cpus = r.range(1, b.max_cpus);
    let batch = r.range(1, MAX_BATCH as usize) as i64;
    let updates = r.range(1, b.max_updates);
    let mut pool = VALS.to_vec();
    let vals = (0..r.range(1, MAX_VALS))
        .map(|_| pool.remove(r.range(0, pool.len() - 1)))
        .collect();
    let readers = r.range(0, MAX_READERS);
    let reads = r.range(1, MAX_READS);
    let periodic = time || r.next().is_multiple_of(2);
    let (ticks, late) = if time {
        (r.range(TICKS.0, TICKS.1), r.range(0, MAX_LATE))
    } else {
        (0, 0)
    };
    canonical(Config {
        cpus,
        batch,
        updates,
        vals,
        readers,
        reads,
        periodic,
        ticks,
        late,
        tree: Vec::new(),
        charge: Vec::new(),
        read: Vec::new(),
        ratelimited: 0,
        settle: 0,
        settle_update: false,
    })
}

/// One representative of configurations that run the same scenario:
/// `reads` counts reader threads' reads only, values past the last update
/// are never used, and `vals` all equal cycle like one value.
fn canonical(mut c: Config) -> Config {
    if c.readers == 0 {
        c.reads = 1;
    }
    c.vals.truncate((c.cpus * c.updates).max(1));
    if c.vals.windows(2).all(|w| w[0] == w[1]) {
        c.vals.truncate(1);
    }
    c
}

/// The configurations one step smaller than `c`, each with what changed,
/// fewest threads first. Every field of each is at most `c`'s.
pub fn neighbours(c: &Config) -> Vec<(String, Config)> {
    let mut out: Vec<(String, Config)> = Vec::new();
    let mut push = |what: String, n: Config| {
        let n = canonical(n);
        if n != *c && n.validate(usize::MAX, "shuttle").is_ok() && !out.iter().any(|(_, o)| *o == n)
        {
            out.push((what, n));
        }
    };
    if c.cpus > 1 {
        push(
            format!("cpus {} -> {}", c.cpus, c.cpus - 1),
            Config {
                cpus: c.cpus - 1,
                ..c.clone()
            },
        );
    }
    if c.readers > 0 {
        push(
            format!("readers {} -> {}", c.readers, c.readers - 1),
            Config {
                readers: c.readers - 1,
                ratelimited: c.ratelimited.min(c.readers - 1),
                ..c.clone()
            },
        );
    }
    if c.periodic {
        push(
            "periodic off".into(),
            Config {
                periodic: false,
                ticks: 0,
                late: 0,
                ratelimited: 0,
                ..c.clone()
            },
        );
    }
    if c.ticks > 0 {
        push(
            "time off".into(),
            Config {
                ticks: 0,
                late: 0,
                ratelimited: 0,
                ..c.clone()
            },
        );
    }
    if c.updates > 1 {
        push(
            format!("updates {} -> {}", c.updates, c.updates - 1),
            Config {
                updates: c.updates - 1,
                ..c.clone()
            },
        );
    }
    if c.readers > 0 && c.reads > 1 {
        push(
            format!("reads {} -> {}", c.reads, c.reads - 1),
            Config {
                reads: c.reads - 1,
                ..c.clone()
            },
        );
    }
    if c.vals.len() > 1 {
        for i in 0..c.vals.len() {
            let mut vals = c.vals.clone();
            let v = vals.remove(i);
            push(format!("drop val {v}"), Config { vals, ..c.clone() });
        }
    }
    for i in 0..c.vals.len() {
        let v = c.vals[i];
        for w in VALS.into_iter().filter(|w| *w < v.abs()) {
            let mut vals = c.vals.clone();
            vals[i] = w * v.signum();
            push(
                format!("val {v} -> {}", vals[i]),
                Config { vals, ..c.clone() },
            );
        }
    }
    if c.batch > 1 {
        push(
            format!("batch {} -> {}", c.batch, c.batch - 1),
            Config {
                batch: c.batch - 1,
                ..c.clone()
            },
        );
    }
    if c.ticks > 1 {
        push(
            format!("ticks {} -> {}", c.ticks, c.ticks - 1),
            Config {
                ticks: c.ticks - 1,
                ..c.clone()
            },
        );
    }
    if c.late > 0 {
        push(
            format!("late {} -> {}", c.late, c.late - 1),
            Config {
                late: c.late - 1,
                ..c.clone()
            },
        );
    }
    out
}

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
    /// Configuration number (the `k` of [`draw`]).
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

/// The properties counted for `variant` on `cfg` under `backend`.
fn counted(spec: &FuzzSpec, variant: &Variant, cfg: &Config, backend: &Backend) -> Vec<Property> {
    spec.properties
        .iter()
        .copied()
        .filter(|p| claimed(*p, cfg) && judged(*p, variant, cfg, backend))
        .collect()
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
                    &RunSpec {
                        variant: spec.variants[*i].name.clone(),
                        entry: format!("fuzz-{number}"),
                        cfg: cfg.clone(),
                        backend: b.clone(),
                        budget_secs: budget.as_secs_f64(),
                        shard: Shard::default(),
                        collect: false,
                    },
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
    if !claimed(p, cfg) || !judged(p, variant, cfg, backend) {
        return Ok(false);
    }
    let r = run(
        &RunSpec {
            variant: variant.name.clone(),
            entry: "fuzz-shrink".into(),
            cfg: cfg.clone(),
            backend: backend.clone(),
            budget_secs: budget.as_secs_f64(),
            shard: Shard::default(),
            collect: false,
        },
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
        designated: variant.killed_by.iter().any(|(p, _)| *p == v.property),
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
