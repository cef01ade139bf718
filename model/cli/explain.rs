//! `flushcheck explain` and `flushcheck replay`: counterexamples as
//! kernel-style column traces, and their replay.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::check::{judged, Sizes, Suite};
use crate::config::Config;
use crate::drive::explain::{self, Explained, Search, Target};
use crate::explore::{quiet_panics, Backend, MAX_LOOM_THREADS};
use crate::observe::property::Property;
use crate::protocol::Variant;
use crate::report::{Counterexample, Replay};
use crate::vocab::{BackendName, Family};

use super::args::{parse_bound, Bound, ConfigArgs, Format};

/// `flushcheck explain`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExplainArgs {
    /// The configuration (default: each entry of the suite, keeping the
    /// shortest counterexample).
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// The variant.
    #[arg(long)]
    pub variant: String,
    /// The property.
    #[arg(long)]
    pub property: String,
    /// loom, shuttle-random or shuttle-pct (default: loom, then shuttle-pct).
    #[arg(long)]
    pub backend: Option<String>,
    /// Largest loom preemption bound to try, or "unbounded".
    #[arg(long, default_value = "3", value_parser = parse_bound)]
    pub max_preemptions: Bound,
    /// Seeded shuttle searches whose shortest failure is kept.
    #[arg(long, default_value_t = 10)]
    pub runs: u64,
    /// Schedules per shuttle search.
    #[arg(long, default_value_t = 20_000)]
    pub shuttle_iterations: usize,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3)]
    pub pct_depth: usize,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
    /// Only this entry of the suite (default: every entry on which the
    /// property is judged).
    #[arg(long)]
    pub entry: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Trace width in columns.
    #[arg(long, default_value_t = 80)]
    pub width: usize,
}

/// `flushcheck replay`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The token printed by `explain` (starts with "fc2.").
    pub token: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Trace width in columns.
    #[arg(long, default_value_t = 80)]
    pub width: usize,
}

/// A counterexample in `format`.
pub fn render(c: &Counterexample, format: Format, width: usize) -> Result<String, String> {
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::to_value(c).map_err(|e| e.to_string())?;
            let (litmus, note) = match c.litmus() {
                Ok(l) => (Some(l), None),
                Err(n) => (None, Some(n)),
            };
            v["litmus"] = serde_json::json!(litmus);
            v["litmus_note"] = serde_json::json!(note);
            super::args::json_doc("counterexample", &v)? + "\n"
        }
        Format::Text => format!(
            "{} / {} / {}\nconfig: {}\nfound by: {}\nsteps: {}\n\n{}\nreplay: {}\n\n{}",
            c.variant,
            c.property,
            c.backend,
            c.cfg,
            c.search,
            c.steps.len(),
            c.diagram(width),
            c.replay_command(),
            match c.litmus() {
                Ok(l) => format!("LKMM litmus test of this trace (herd7):\n\n{l}"),
                Err(n) => format!("{n}\n"),
            }
        ),
        Format::Markdown => {
            let mut out = format!("### {}: {} ({})\n\n", c.variant, c.property, c.backend);
            for line in [
                format!("Configuration: `{}`.", c.cfg),
                format!("Found by: {}.", c.search),
                format!("{} steps.", c.steps.len()),
            ] {
                for l in crate::observe::record::wrap(&line, 98) {
                    let _ = writeln!(out, "{l}");
                }
            }
            let _ = writeln!(out, "\n```text\n{}```\n", c.diagram(width));
            let _ = writeln!(out, "Replay:\n\n```text\n{}\n```\n", c.replay_command());
            match c.litmus() {
                Ok(l) => {
                    let _ = writeln!(
                        out,
                        "LKMM litmus test of this trace (herd7):\n\n```text\n{l}```\n"
                    );
                }
                Err(n) => {
                    let _ = writeln!(out, "{n}.\n");
                }
            }
            out
        }
    })
}

/// The searches `explain` runs for these flags.
fn searches(a: &ExplainArgs) -> Result<Vec<Search>, String> {
    let shuttle = |name: BackendName| match name {
        BackendName::ShuttleRandom => Some(Backend::ShuttleRandom {
            iterations: a.shuttle_iterations,
            seed: a.seed,
        }),
        BackendName::ShuttlePct => Some(Backend::ShuttlePct {
            iterations: a.shuttle_iterations,
            depth: a.pct_depth,
            seed: a.seed,
        }),
        _ => None,
    };
    let bad = |name: &str| {
        format!("--backend {name}: explain searches with loom, shuttle-random or shuttle-pct")
    };
    let loom = Search::Loom {
        max_bound: a.max_preemptions.0,
    };
    let chosen = match a.backend.as_deref() {
        None => None,
        Some(name) => Some(BackendName::parse(name).map_err(|_| bad(name))?),
    };
    Ok(match chosen {
        None => vec![
            loom,
            Search::Shuttle {
                backend: shuttle(BackendName::ShuttlePct).expect("a sampling backend"),
                runs: a.runs,
            },
        ],
        Some(BackendName::Loom) => vec![loom],
        Some(name) => vec![Search::Shuttle {
            backend: shuttle(name).ok_or_else(|| bad(name.name()))?,
            runs: a.runs,
        }],
    })
}

/// The configurations to try: the one the flags give, or every entry of
/// the suite on which `property` is judged, smallest first.
pub fn configs(
    cfg: &ConfigArgs,
    entry: Option<&str>,
    variant: &Variant,
    property: Property,
    loom: bool,
) -> Vec<(String, Config)> {
    if cfg.given() {
        return vec![("custom".into(), cfg.config())];
    }
    let suite = Suite::standard(&Sizes::default());
    if let Some(name) = entry {
        return suite
            .entry(name)
            .map(|e| vec![(e.name.clone(), e.cfg.clone())])
            .unwrap_or_default();
    }
    let mut out: Vec<(String, Config)> = suite
        .entries
        .iter()
        // Flush variants are tried on every flush entry, lifetime forms on
        // the lifetime entries.
        .filter(|e| e.applies_to(Family::Lifetime) == (variant.family == Family::Lifetime))
        .filter(|e| {
            e.backends.iter().any(|b| {
                judged(variant, &e.cfg, b).contains(&property)
                    && (!loom || matches!(b, Backend::Loom { .. }))
            })
        })
        .map(|e| (e.name.clone(), e.cfg.clone()))
        .collect();
    out.sort_by_key(|(_, c)| c.cpus * c.updates + c.readers * c.reads + usize::from(c.periodic));
    out
}

/// `flushcheck explain`.
pub fn explain_cmd(a: &ExplainArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let variant = Variant::find(registry, &a.variant)?;
    let property = Property::by_name(&a.property)?;
    if a.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    if a.runs == 0 || a.shuttle_iterations == 0 || a.pct_depth == 0 {
        return Err("--runs/--shuttle-iterations/--pct-depth 0: need at least 1".into());
    }
    let searches = searches(a)?;
    if let Some(name) = &a.entry {
        let suite = Suite::standard(&Sizes::default());
        if suite.entry(name).is_none() {
            let names: Vec<&str> = suite.entries.iter().map(|e| e.name.as_str()).collect();
            return Err(format!(
                "--entry {name}: no such entry; the suite has {}",
                names.join(", ")
            ));
        }
        if a.cfg.given() {
            return Err(format!(
                "--entry {name}: give an entry or configuration flags, not both"
            ));
        }
    }
    if a.cfg.given() {
        let cfg = a.cfg.config();
        let max = if searches.iter().any(|s| matches!(s, Search::Loom { .. })) {
            MAX_LOOM_THREADS
        } else {
            usize::MAX
        };
        let by = if max == usize::MAX {
            BackendName::ShuttlePct
        } else {
            BackendName::Loom
        };
        cfg.validate(max, by.name())?;
    }
    quiet_panics();
    let budget = Duration::from_secs(a.budget);
    let start = Instant::now();
    let mut tried = Vec::new();
    let mut best: Option<Box<Counterexample>> = None;
    for search in &searches {
        let loom = matches!(search, Search::Loom { .. });
        let cfgs = configs(&a.cfg, a.entry.as_deref(), &variant, property, loom);
        let share = budget / (cfgs.len().max(1) as u32);
        for (name, cfg) in &cfgs {
            if loom
                && cfg
                    .validate(MAX_LOOM_THREADS, BackendName::Loom.name())
                    .is_err()
            {
                continue;
            }
            if start.elapsed() > budget {
                break;
            }
            eprintln!("explain: {} on {name} ...", search_name(search));
            let t = Target {
                cfg,
                variant: &variant,
                registry,
                property,
                rcu: None,
            };
            match explain::explain(&t, search, share) {
                Explained::Found(c) => {
                    if best.as_ref().is_none_or(|b| c.steps.len() < b.steps.len()) {
                        best = Some(c);
                    }
                }
                Explained::NotFound {
                    search,
                    finished,
                    note,
                } => tried.push(format!(
                    "{name}: {search}: {}{}",
                    if finished {
                        "finished, none found"
                    } else {
                        "cut short"
                    },
                    note.map(|n| format!(" ({n})")).unwrap_or_default()
                )),
            }
        }
        if best.is_some() {
            break;
        }
    }
    if let Some(c) = best {
        print!("{}", render(&c, a.format, a.width)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "no counterexample of {property} for {} within the searches:",
        variant.name
    );
    for t in tried {
        println!("  {t}");
    }
    Ok(ExitCode::from(1))
}

fn search_name(s: &Search) -> String {
    match s {
        Search::Loom { .. } => BackendName::Loom.name().into(),
        Search::Shuttle { backend, .. } => backend.name().into(),
    }
}

/// `flushcheck replay`.
pub fn replay_cmd(a: &ReplayArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let r = Replay::from_token(&a.token)?;
    Variant::find(registry, &r.variant)?;
    quiet_panics();
    match explain::replay(&a.token, registry) {
        Ok(c) => {
            print!("{}", render(&c, a.format, a.width)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("not reproduced: {why}");
            Ok(ExitCode::from(1))
        }
    }
}
