//! `flushcheck fuzz`: seeded random configurations within stated bounds,
//! time-budgeted, every violation shrunk (see [`crate::drive::fuzz`]).

use std::process::ExitCode;
use std::time::Duration;

use crate::drive::fuzz::{self, Bounds, Event, Finding, FuzzReport, FuzzSpec, Tried};
use crate::explore::{quiet_panics, Backend};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::vocab::Family;

use super::args::{print_doc, Format};
use super::explain::render;
use crate::publish::table::truncate;

/// Largest `--max-cpus`.
const MAX_CPUS: usize = 8;
/// Largest `--max-updates`.
const MAX_UPDATES: usize = 10;
/// Seeded searches per scheduler when shrinking a schedule.
const EXPLAIN_RUNS: u64 = 4;

/// `flushcheck fuzz`.
#[derive(clap::Args, Debug, Clone)]
pub struct FuzzArgs {
    /// Time budget for searching, in seconds; a configuration started is
    /// finished (shrinking what is found has --shrink-seconds).
    #[arg(long, default_value_t = 30)]
    pub seconds: u64,
    /// Seed of the configurations and of every shuttle search.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Variants (comma-separated; default: every kernel, benign and
    /// candidate variant). Mutants given here report their smallest
    /// killing configurations.
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Properties (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    pub property: Vec<String>,
    /// Schedules per shuttle random and PCT search.
    #[arg(long, default_value_t = 2_000)]
    pub shuttle_iterations: usize,
    /// CPUs are drawn from 1 to this.
    #[arg(long, default_value_t = 3)]
    pub max_cpus: usize,
    /// Updates per CPU are drawn from 1 to this.
    #[arg(long, default_value_t = 5)]
    pub max_updates: usize,
    /// Time budget for shrinking each violation, in seconds.
    #[arg(long, default_value_t = 60)]
    pub shrink_seconds: u64,
    /// Go on after the first violation of a variant that must hold (or,
    /// with mutants only, after every mutant is killed).
    #[arg(long)]
    pub keep_going: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print the report as JSON on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Trace width in columns.
    #[arg(long, default_value_t = 80)]
    pub width: usize,
}

/// The spec the flags describe, against the variants of `registry`.
pub fn build_spec(a: &FuzzArgs, registry: &[Variant]) -> Result<FuzzSpec, String> {
    if a.seconds == 0 {
        return Err("--seconds 0: the time budget must be at least 1 second".into());
    }
    if a.shrink_seconds == 0 {
        return Err("--shrink-seconds 0: the shrink budget must be at least 1 second".into());
    }
    if a.shuttle_iterations == 0 {
        return Err("--shuttle-iterations 0: need at least 1 schedule per search".into());
    }
    if !(1..=MAX_CPUS).contains(&a.max_cpus) {
        return Err(format!(
            "--max-cpus {}: allowed 1 to {MAX_CPUS}",
            a.max_cpus
        ));
    }
    if !(1..=MAX_UPDATES).contains(&a.max_updates) {
        return Err(format!(
            "--max-updates {}: allowed 1 to {MAX_UPDATES}",
            a.max_updates
        ));
    }
    if a.jobs == Some(0) {
        return Err("--jobs 0: need at least 1 worker".into());
    }
    let variants: Vec<Variant> = if a.variant.is_empty() {
        registry
            .iter()
            .filter(|v| v.kind.must_hold() && v.family != Family::Lifetime)
            .cloned()
            .collect()
    } else {
        a.variant
            .iter()
            .map(|n| Variant::find(registry, n))
            .collect::<Result<_, _>>()?
    };
    if let Some(v) = variants.iter().find(|v| v.family == Family::Lifetime) {
        return Err(format!(
            "--variant {}: a lifetime form; fuzz draws flush-protocol configurations",
            v.name
        ));
    }
    if let Some(v) = variants.iter().find(|v| v.kind == Kind::Bound) {
        return Err(format!(
            "--variant {}: a benchmark bound, not checked; fuzz takes kernel, benign, candidate and mutant variants",
            v.name
        ));
    }
    let properties: Vec<Property> = if a.property.is_empty() {
        Property::of_family(Family::Global).collect()
    } else {
        a.property
            .iter()
            .map(|p| Property::by_name(p))
            .collect::<Result<_, _>>()?
    };
    if properties.iter().all(|p| p.refutable_claim()) {
        return Err(format!(
            "--property {}: refuted claims (the kernel violates them too) are not findings; give a property that must hold",
            a.property.join(",")
        ));
    }
    Ok(FuzzSpec {
        seed: a.seed,
        budget: Duration::from_secs(a.seconds),
        shrink_budget: Duration::from_secs(a.shrink_seconds),
        variants,
        properties: properties.clone(),
        iterations: a.shuttle_iterations,
        bounds: Bounds {
            max_cpus: a.max_cpus,
            max_updates: a.max_updates,
            always_time: properties.iter().all(|p| *p == Property::FlushTimeBound),
        },
        explain_runs: EXPLAIN_RUNS,
        keep_going: a.keep_going,
        jobs: a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
    })
}

/// The lines printed before the first configuration.
pub fn header(spec: &FuzzSpec) -> String {
    let names: Vec<&str> = spec.variants.iter().map(|v| v.name.as_str()).collect();
    let counted: Vec<&str> = spec
        .properties
        .iter()
        .filter(|p| !p.refutable_claim())
        .map(|p| p.name())
        .collect();
    let refuted: Vec<&str> = spec
        .properties
        .iter()
        .filter(|p| p.refutable_claim())
        .map(|p| p.name())
        .collect();
    let mut not = Vec::new();
    if !refuted.is_empty() {
        not.push(format!("{} (refuted claims)", refuted.join(", ")));
    }
    if spec.properties.contains(&Property::FlushTimeBound) {
        not.push("flush_time_bound when late > 0 (B11)".into());
    }
    let pinned: Vec<String> = spec
        .variants
        .iter()
        .filter_map(|v| {
            let ps: Vec<&str> = spec
                .properties
                .iter()
                .filter(|p| {
                    !p.refutable_claim()
                        && spec
                            .backends()
                            .iter()
                            .any(|b| crate::drive::fuzz::pinned(v, **p, b.id()))
                })
                .map(|p| p.name())
                .collect();
            (!ps.is_empty()).then(|| format!("{} {}", v.name, ps.join(",")))
        })
        .collect();
    if !pinned.is_empty() {
        not.push(format!("pinned findings ({})", pinned.join("; ")));
    }
    let [random, pct] = spec.backends();
    format!(
        "flushcheck fuzz: seed {}, {} s of searching, each violation shrunk within {} s\n\
         variants: {}\n\
         properties: {}{}\n\
         searches per variant and configuration: {}; {}\n\
         bounds: {}\n",
        spec.seed,
        spec.budget.as_secs(),
        spec.shrink_budget.as_secs(),
        names.join(", "),
        counted.join(", "),
        if !not.is_empty() {
            format!("; not counted: {}", not.join(", "))
        } else {
            String::new()
        },
        search_name(&random),
        search_name(&pct),
        spec.bounds.describe()
    )
}

/// One line for one variant on one configuration.
pub fn tried_line(t: &Tried, width: usize) -> String {
    let verdict = if t.kind == Kind::Mutant {
        if t.violated.is_empty() {
            "survived".to_string()
        } else {
            let by: Vec<String> = t
                .violated
                .iter()
                .map(|v| format!("{} ({})", v.property, v.backend.name()))
                .collect();
            format!("killed by {}", by.join(", "))
        }
    } else if let Some(v) = t.violated.first() {
        let all: Vec<String> = t
            .violated
            .iter()
            .map(|v| format!("{} ({})", v.property, v.backend.name()))
            .collect();
        format!("VIOLATED {}: {}", all.join(", "), v.note)
    } else {
        let n = t.held.len() + t.inconclusive.len();
        let mut s = format!("holds {}/{n}", t.held.len());
        if !t.inconclusive.is_empty() {
            let ps: Vec<&str> = t.inconclusive.iter().map(|(p, _)| p.name()).collect();
            s += &format!(", inconclusive {}", ps.join(","));
        }
        s
    };
    let only = if t.searches.len() == 1 {
        format!(" ({} only: no concurrency)", t.searches[0])
    } else {
        String::new()
    };
    truncate(
        &format!(
            "  {:<30} {:>6} schedules {:>5.2} s  {verdict}{only}",
            t.variant, t.executions, t.seconds
        ),
        width.max(120),
    )
}

fn finding_head(t: &Tried, v: &fuzz::Violation) -> String {
    let what = if t.kind.must_hold() {
        format!(
            "finding: {} ({}) violates {}",
            t.variant,
            t.kind.name(),
            v.property
        )
    } else {
        format!("kill: {} killed by {}", t.variant, v.property)
    };
    format!(
        "{what} on config {} ({})\n  violation: {}\n  first:    {}\n  shrinking the configuration with the same search, then the schedule:\n",
        t.number,
        search_name(&v.backend),
        v.note,
        t.cfg
    )
}

/// `shuttle-pct depth 3, 2000 schedules, seed 1`.
fn search_name(b: &Backend) -> String {
    match b {
        Backend::ShuttleRandom { iterations, seed } => {
            format!("shuttle-random, {iterations} schedules, seed {seed}")
        }
        Backend::ShuttlePct {
            iterations,
            depth,
            seed,
        } => format!("shuttle-pct depth {depth}, {iterations} schedules, seed {seed}"),
        other => other.search(),
    }
}

fn finding_tail(f: &Finding, width: usize) -> Result<String, String> {
    let mut out = format!(
        "  smallest: {}  ({} steps, {} candidates searched, {:.1} s)\n",
        f.shrunk,
        f.steps.len(),
        f.candidates,
        f.shrink_seconds
    );
    if let Some(n) = &f.note {
        out += &format!("  note: {n}\n");
    }
    if let Some(c) = &f.counterexample {
        out += "\n";
        out += &render(c, Format::Text, width)?;
        out += "\n";
    }
    Ok(out)
}

/// The summary lines: counts, then each violation shrunk, then the
/// mutants fuzzed that nothing killed.
pub fn summary(r: &FuzzReport, spec: &FuzzSpec) -> String {
    let kills = r.violations(false);
    let mutants: Vec<&Variant> = spec
        .variants
        .iter()
        .filter(|v| v.kind == Kind::Mutant)
        .collect();
    let killed = mutants
        .iter()
        .filter(|v| kills.iter().any(|(n, _)| *n == v.name))
        .count();
    let mutants_n = mutants.len();
    let mut out = format!(
        "fuzz: {} configurations ({} rejected, {} repeats skipped), {} searches, {} schedules \
         in {:.1} s ({:.2} configurations/s), {:.1} s shrinking; must-hold violations {}, \
         mutants killed {killed}/{mutants_n} ({} kills); {}\n",
        r.configs,
        r.rejected,
        r.repeats,
        r.searches,
        r.executions,
        r.search_seconds,
        r.configs as f64 / r.search_seconds.max(1e-9),
        r.seconds - r.search_seconds,
        r.violations(true).len(),
        kills.len(),
        r.stopped
    );
    for f in &r.findings {
        out += &format!(
            "  {} {} {}{}: {} -> {}{}\n",
            if f.must_hold { "violated" } else { "killed" },
            f.variant,
            f.property,
            if f.designated { " (designated)" } else { "" },
            f.first,
            f.shrunk,
            f.counterexample
                .as_ref()
                .map(|c| format!(", {} steps", c.steps.len()))
                .unwrap_or_default()
        );
    }
    for v in mutants {
        if kills.iter().any(|(n, _)| *n == v.name) {
            continue;
        }
        let by: Vec<String> = v
            .killed_by
            .iter()
            .map(|d| {
                let b: Vec<&str> = d.backends.iter().map(|b| b.name()).collect();
                format!("{} on {}", d.property, b.join("/"))
            })
            .collect();
        out += &format!(
            "  survived {}: designated killers {}\n",
            v.name,
            by.join(", ")
        );
    }
    out
}

/// `flushcheck fuzz`.
pub fn fuzz_cmd(a: &FuzzArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let spec = build_spec(a, registry)?;
    quiet_panics();
    let json = a.json;
    let width = a.width;
    // stdout is the product; with --json it carries the report only.
    let say = |s: &str| {
        if json {
            eprint!("{s}");
        } else {
            print!("{s}");
        }
    };
    say(&header(&spec));
    let mut failed = None;
    let mut on = |e: Event| match e {
        Event::Config(k, cfg) => say(&format!("config {k}: {cfg}\n")),
        Event::Tried(t) => say(&format!("{}\n", tried_line(t, width))),
        Event::Shrinking(t, v) => say(&format!("\n{}", finding_head(t, v))),
        Event::Step(s) => say(&format!("    {:<18} still fails: {}\n", s.change, s.cfg)),
        Event::Explaining(_) => {}
        Event::Finding(f) => match finding_tail(f, width) {
            Ok(s) => say(&s),
            Err(e) => failed = Some(e),
        },
    };
    let r = fuzz::fuzz(&spec, registry, &mut on)?;
    if let Some(e) = failed {
        return Err(e);
    }
    say(&format!("\n{}", summary(&r, &spec)));
    if json {
        print_doc("fuzz", &r)?;
    }
    Ok(if r.must_hold_violated() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
