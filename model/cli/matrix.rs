//! The default command: the (variant x property x backend) matrix over the
//! scenario suite.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::check::run::{judged, RunResult, Verdict};
use crate::check::{Sizes, Suite};
use crate::drive::{mark_not_checked, matrix_ok, run_matrix, Cell, Executor, Expect, Matrix, Plan};
use crate::explore::{quiet_panics, Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::vocab::BackendName;

use super::args::{parse_bound, print_doc, Bound, ConfigArgs, Format};
use crate::publish::answer::{findings_lines, seed_answer};
use crate::publish::summary::summary;
use crate::publish::table::truncate;
use crate::publish::table::{markdown, runs_table, suite_text, table, variant_lines, CUSTOM};

/// The matrix run (the default command).
#[derive(clap::Args, Debug, Clone)]
pub struct MatrixArgs {
    /// The configuration, if one is given instead of the suite.
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// Only these variants (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Only these properties (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    pub property: Vec<String>,
    /// Only these backends: loom, shuttle-random, shuttle-pct, shuttle-dfs,
    /// std.
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// Only these entries of the suite (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    pub entry: Vec<String>,
    /// loom preemption bound for every entry: a number, or "unbounded"
    /// [default: each entry's own, 1 or 2 or unbounded].
    #[arg(long, value_parser = parse_bound)]
    pub loom_preemptions: Option<Bound>,
    /// Schedules per shuttle random or PCT search (without --full,
    /// --variant or a configuration of your own, a kernel version, benign
    /// rewrite or fix candidate gets a quarter: its verdicts are pinned by
    /// the tests).
    #[arg(long, default_value_t = Sizes::default().shuttle)]
    pub shuttle_iterations: usize,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3)]
    pub pct_depth: usize,
    /// Runs of the std backend.
    #[arg(long, default_value_t = Sizes::default().std)]
    pub std_iterations: usize,
    /// Cap on the schedules of one exhaustive (DFS) search.
    #[arg(long, default_value_t = Sizes::default().dfs_cap)]
    pub dfs_cap: usize,
    /// Seed for the shuttle schedulers.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time budget per search, in seconds; a search cut short is
    /// inconclusive.
    #[arg(long, default_value_t = 60)]
    pub budget: u64,
    /// Worker processes (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print the matrix as JSON (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also print one line per run (variant, entry, backend).
    #[arg(long)]
    pub runs: bool,
    /// Also print the scenario suite: each entry's configuration and the
    /// backends that search it.
    #[arg(long = "suite-table")]
    pub suite_table: bool,
    /// Print the full cell table: one row per (variant, property,
    /// backend), with notes (the default output is one line per variant).
    #[arg(long)]
    pub cells: bool,
    /// Search every (variant, entry, backend): twins as variants of their
    /// own, mutants by every backend to the end, and the sampled SC
    /// searches where the exhaustive DFS already settled the verdict
    /// (default: only where a verdict depends on it).
    #[arg(long)]
    pub full: bool,
    /// Run searches on threads of this process instead of worker processes.
    #[arg(long)]
    pub in_process: bool,
    /// Run only part I of N of every shuttle search (see `merge`).
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
}

/// The search sizes the flags ask for.
pub fn sizes(args: &MatrixArgs) -> Sizes {
    Sizes {
        shuttle: args.shuttle_iterations,
        std: args.std_iterations,
        loom_bound: args.loom_preemptions.map(|b| b.0),
        dfs_cap: args.dfs_cap,
        seed: args.seed,
    }
}

fn pct_depth(suite: &mut Suite, depth: usize) {
    for e in &mut suite.entries {
        for b in &mut e.backends {
            if let Backend::ShuttlePct { depth: d, .. } = b {
                *d = depth;
            }
        }
    }
}

/// The plan the flags describe, against the variants of `registry`.
pub fn build_plan(args: &MatrixArgs, registry: &[Variant]) -> Result<Plan, String> {
    if args.shuttle_iterations == 0 || args.std_iterations == 0 || args.dfs_cap == 0 {
        return Err("--shuttle-iterations/--std-iterations/--dfs-cap 0: need at least 1".into());
    }
    if args.pct_depth == 0 {
        return Err("--pct-depth 0: PCT needs a depth of at least 1".into());
    }
    if args.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    let s = sizes(args);
    let mut suite = if args.cfg.given() {
        Suite::single(CUSTOM, args.cfg.config(), s.all_backends(Some(2)))
    } else {
        Suite::standard(&s)
    };
    pct_depth(&mut suite, args.pct_depth);
    let whole = suite.clone();
    if !args.entry.is_empty() {
        for name in &args.entry {
            if suite.entry(name).is_none() {
                let names: Vec<&str> = suite.entries.iter().map(|e| e.name.as_str()).collect();
                return Err(format!(
                    "unknown entry {name:?}: expected one of {}",
                    names.join(", ")
                ));
            }
        }
        suite.entries.retain(|e| args.entry.contains(&e.name));
    }
    let mut plan = Plan::new(suite, registry.to_vec());
    plan.selected_from = Some(whole.clone());
    if args.full {
        // Twins too, as variants of their own.
        plan.variants = registry
            .iter()
            .filter(|v| v.kind != Kind::Bound)
            .cloned()
            .collect();
    }
    if args.cfg.given() {
        // A mutant's kills are pinned on the suite: on a configuration of
        // the user's own only the variants that must hold are judged.
        plan.variants.retain(|v| v.kind != Kind::Mutant);
    }
    if !args.variant.is_empty() {
        plan.variants = args
            .variant
            .iter()
            .map(|v| Variant::find(registry, v))
            .collect::<Result<_, _>>()?;
    }
    if !args.property.is_empty() {
        plan.properties = args
            .property
            .iter()
            .map(|p| Property::by_name(p))
            .collect::<Result<_, _>>()?;
    }
    plan.backends = args
        .backend
        .iter()
        .map(|b| BackendName::parse(b))
        .collect::<Result<_, _>>()?;
    plan.budget = Duration::from_secs(args.budget);
    if let Some(j) = args.jobs {
        if j == 0 {
            return Err("--jobs 0: need at least 1 worker".into());
        }
        plan.jobs = j;
    }
    plan.shard = args.shard.unwrap_or_default();
    plan.focused = !args.full;
    if args.full || !args.variant.is_empty() || args.cfg.given() {
        plan.catalogue_share = 1;
    }
    plan.validate()?;
    if let Some(why) = runs_nothing(&plan, &whole) {
        return Err(why);
    }
    Ok(plan)
}

/// Why the plan judges no cell, if it judges none: no selected entry
/// applies to a selected variant's lineage, or no selected property is
/// judged on what is left.
fn runs_nothing(plan: &Plan, whole: &Suite) -> Option<String> {
    let names = |v: &[Variant]| {
        v.iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let entries: Vec<&str> = plan.suite.entries.iter().map(|e| e.name.as_str()).collect();
    let applying = plan.suite.entries.iter().any(|e| {
        plan.variants.iter().any(|v| e.applies_to(v.family))
            && e.backends.iter().any(|b| plan.runs_backend(b))
    });
    if !applying {
        let theirs: Vec<&str> = whole
            .entries
            .iter()
            .filter(|e| plan.variants.iter().any(|v| e.applies_to(v.family)))
            .filter(|e| e.backends.iter().any(|b| plan.runs_backend(b)))
            .map(|e| e.name.as_str())
            .collect();
        return Some(format!(
            "nothing to run: no selected entry ({}) applies to {} under the selected backends; its entries: {}",
            entries.join(", "),
            names(&plan.variants),
            if theirs.is_empty() { "none".to_string() } else { theirs.join(", ") }
        ));
    }
    let judged_any = plan.suite.entries.iter().any(|e| {
        e.backends.iter().filter(|b| plan.runs_backend(b)).any(|b| {
            plan.variants.iter().any(|v| {
                e.applies_to(v.family)
                    && judged(v, &e.cfg, b)
                        .iter()
                        .any(|p| plan.properties.contains(p))
            })
        })
    });
    if judged_any {
        return None;
    }
    let props: Vec<&str> = plan.properties.iter().map(|p| p.name()).collect();
    Some(format!(
        "nothing to run: {} is judged for none of {} on the selected entries and backends \
         (docs/properties.md says where each property applies)",
        props.join(", "),
        names(&plan.variants)
    ))
}

/// On a configuration of the user's own, no kill or finding is pinned:
/// their cells are reported, not judged ("not checked on this
/// configuration"). On part of the suite (`--entry`) or one shard of the
/// schedules (`--shard`), the kills and findings the selection cannot show
/// are "not checked here" ([`mark_not_checked`]).
pub fn unpin(plan: &Plan, cells: &mut [Cell]) {
    if !custom(plan) {
        if let Some(whole) = &plan.selected_from {
            mark_not_checked(cells, &plan.registry, &plan.suite, whole, plan.shard);
        }
        return;
    }
    for c in cells {
        if matches!(c.expect, Expect::Killed | Expect::Finding) {
            c.expect = Expect::Any;
            c.ok = true;
        }
    }
}

/// Whether the plan runs a configuration given by flags.
pub fn custom(plan: &Plan) -> bool {
    plan.suite.entries.len() == 1 && plan.suite.entries[0].name == CUSTOM
}

/// Run the plan's matrix with a progress line per run on stderr.
pub fn run_with_progress(plan: &Plan, in_process: bool) -> (Matrix, Duration) {
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let progress = |done: usize, total: usize, r: &RunResult| {
        let violated: Vec<&str> = r
            .verdicts
            .iter()
            .filter(|v| v.verdict == Verdict::Violated)
            .map(|v| v.property.name())
            .collect();
        let line = format!(
            "[{done}/{total} {:.0}s] {} {} {}: {} executions in {:.2} s{}",
            start.elapsed().as_secs_f64(),
            r.spec.variant,
            r.spec.entry,
            r.spec.backend.name(),
            r.executions,
            r.seconds,
            if violated.is_empty() {
                String::new()
            } else {
                format!(", violated {}", violated.join(","))
            }
        );
        if tty {
            eprint!("\r\x1b[2K{}", truncate(&line, 150));
            if done == total {
                eprintln!();
            }
        } else {
            eprintln!("{line}");
        }
    };
    let executor = match std::env::current_exe() {
        Ok(exe) if !in_process => Executor::Subprocess(exe),
        _ => Executor::InProcess,
    };
    let m = run_matrix(plan, &executor, &progress);
    (m, start.elapsed())
}

/// The default command.
pub fn matrix(args: &MatrixArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let plan = build_plan(args, registry)?;
    quiet_panics();
    let (mut m, elapsed) = run_with_progress(&plan, args.in_process);
    unpin(&plan, &mut m.cells);
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Json => print_doc("matrix", &m.cells)?,
        Format::Text => {
            print!("{}", seed_answer(&plan, &m.cells));
            print!("{}", findings_lines(&plan, &m.cells, custom(&plan)));
            if args.suite_table {
                print!("\n{}", suite_text(&plan));
            }
            if args.cells {
                print!("{}", table(&plan, &m.cells, true));
            } else {
                print!("{}", variant_lines(&plan, &m.cells, custom(&plan)));
            }
            if args.runs {
                print!("{}", runs_table(&m.runs));
            }
            print!("{}", summary(&plan, &m.cells, elapsed));
            if custom(&plan) {
                println!(
                    "mutant kills and findings are pinned on the suite: not checked on this configuration"
                );
            }
        }
        Format::Markdown => print!("{}", markdown(&plan, &m.cells, elapsed)),
    }
    Ok(if matrix_ok(&m.cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
