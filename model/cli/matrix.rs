//! The default command: the (variant x property x backend) matrix over the
//! scenario suite.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::check::run::{judged, RunResult, Verdict};
use crate::check::{Sizes, Suite};
use crate::drive::{matrix_ok, run_matrix, Cell, Executor, Expect, Matrix, Plan};
use crate::explore::{quiet_panics, Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::vocab::{BackendName, Family};

use super::args::{parse_bound, print_json, truncate, Bound, ConfigArgs, Format};

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
    /// Schedules per shuttle random or PCT search.
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
    #[arg(long)]
    pub json: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also print one line per run (variant, entry, backend).
    #[arg(long)]
    pub runs: bool,
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
        Suite::single("custom", args.cfg.config(), s.all_backends(Some(2)))
    } else {
        Suite::standard(&s)
    };
    pct_depth(&mut suite, args.pct_depth);
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
    if args.full {
        // Twins too, as variants of their own.
        plan.variants = registry
            .iter()
            .filter(|v| v.kind != Kind::Bound)
            .cloned()
            .collect();
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
    plan.validate()?;
    Ok(plan)
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
            "[{done}/{total} {:.0}s] {} {} {}: {} executions{}",
            start.elapsed().as_secs_f64(),
            r.spec.variant,
            r.spec.entry,
            r.spec.backend.name(),
            r.executions,
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
    let (m, elapsed) = run_with_progress(&plan, args.in_process);
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Json => print_json(&m.cells)?,
        Format::Text => {
            print!("{}", suite_text(&plan));
            if args.cells {
                print!("{}", table(&plan, &m.cells, true));
            } else {
                print!("{}", variant_lines(&plan, &m.cells));
            }
            if args.runs {
                print!("{}", runs_table(&m.runs));
            }
            print!("{}", summary(&plan, &m.cells, elapsed));
        }
        Format::Markdown => print!("{}", markdown(&plan, &m.cells, elapsed)),
    }
    Ok(if matrix_ok(&m.cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One line per variant: its kind, whether it held every property it must
/// (or which it did not, where, and the command that explains it), which
/// designated killers killed a mutant, which findings and refuted claims a
/// kernel version shows.
pub fn variant_lines(plan: &Plan, cells: &[Cell]) -> String {
    let w = plan
        .variants
        .iter()
        .map(|v| v.name.len())
        .max()
        .unwrap_or(8);
    let mut out = String::from("\nverdicts, one line per variant (--cells: every cell):\n");
    for v in &plan.variants {
        let mine: Vec<&Cell> = cells.iter().filter(|c| c.variant == v.name).collect();
        if mine.is_empty() {
            continue;
        }
        let list = |pick: &dyn Fn(&Cell) -> bool| -> Vec<String> {
            let mut by: Vec<(Property, Vec<&str>)> = Vec::new();
            for c in mine.iter().filter(|c| pick(c)) {
                match by.iter_mut().find(|(p, _)| *p == c.property) {
                    Some((_, bs)) => bs.push(c.backend.name()),
                    None => by.push((c.property, vec![c.backend.name()])),
                }
            }
            by.iter()
                .map(|(p, bs)| format!("{p} ({})", bs.join(", ")))
                .collect()
        };
        let bad: Vec<&Cell> = mine.iter().copied().filter(|c| !c.ok).collect();
        let text = match v.kind {
            Kind::Mutant => {
                let killed = list(&|c| c.expect == Expect::Killed && c.ok);
                if bad.is_empty() {
                    format!("killed by {}", killed.join("; "))
                } else {
                    format!(
                        "SURVIVED {}",
                        list(&|c| c.expect == Expect::Killed && !c.ok).join("; ")
                    )
                }
            }
            _ => {
                let mut t = if bad.is_empty() {
                    "holds every property it must".to_string()
                } else {
                    let c = bad[0];
                    let entry = c
                        .configs
                        .iter()
                        .find(|x| x.verdict != Verdict::Holds)
                        .map_or("", |x| x.entry.as_str());
                    // explain searches with loom or shuttle's samplers.
                    let by = match c.backend {
                        BackendName::Loom | BackendName::ShuttleRandom => c.backend,
                        _ => BackendName::ShuttlePct,
                    };
                    format!(
                        "NOT AS EXPECTED: {}; explain: flushcheck explain --variant {} --property {} --backend {by} --entry {entry}",
                        list(&|c| !c.ok).join("; "),
                        v.name,
                        c.property,
                    )
                };
                let findings = list(&|c| c.expect == Expect::Finding && c.ok);
                if !findings.is_empty() {
                    t += &format!("; findings: {}", findings.join("; "));
                }
                let mut refuted: Vec<String> = mine
                    .iter()
                    .filter(|c| {
                        c.property.refutable_claim()
                            && c.expect != Expect::Finding
                            && c.verdict == Verdict::Violated
                    })
                    .map(|c| c.property.name().to_string())
                    .collect();
                refuted.dedup();
                if !refuted.is_empty() {
                    t += &format!("; refutes {}", refuted.join(", "));
                }
                t
            }
        };
        let _ = writeln!(out, "  {:<9} {:<w$}  {text}", v.kind.name(), v.name);
    }
    out
}

/// The suite, one line per entry.
pub fn suite_text(plan: &Plan) -> String {
    let mut out = String::from("flushcheck: the scenario suite\n");
    let w = plan
        .suite
        .entries
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(4);
    for e in &plan.suite.entries {
        if !plan.variants.iter().any(|v| e.applies_to(v.family)) {
            continue;
        }
        let backends: Vec<&str> = e
            .backends
            .iter()
            .filter(|b| plan.runs_backend(b))
            .map(|b| b.name())
            .collect();
        let _ = writeln!(out, "  {:<w$}  {}  [{}]", e.name, e.cfg, backends.join(" "));
    }
    out
}

/// The matrix as a table; `notes` adds the note column (text output).
pub fn table(plan: &Plan, cells: &[Cell], notes: bool) -> String {
    let mut out = cell_rows(cells, notes);
    let _ = writeln!(out, "searches:");
    let mut seen = std::collections::BTreeSet::new();
    for e in &plan.suite.entries {
        if !plan.variants.iter().any(|v| e.applies_to(v.family)) {
            continue;
        }
        for b in e.backends.iter().filter(|b| plan.runs_backend(b)) {
            if seen.insert(b.search()) {
                let _ = writeln!(out, "  {:<15} {}", b.name(), b.search());
            }
        }
    }
    let _ = writeln!(
        out,
        "  * = exhaustive on every configuration. configs = configurations with this verdict / run.\n  coverage = times the property's race happened; epoch2 = times a CPU accounted a batch\n  again after a skip and a reset (recross_after_reset). Races:"
    );
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<28} {}", p.name(), p.coverage_event().name());
    }
    let _ = writeln!(out, "  who decides what:");
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<28} {}", p.name(), p.decided_by());
    }
    out
}

/// The matrix's rows: a header, one line per cell, a blank line.
pub fn cell_rows(cells: &[Cell], notes: bool) -> String {
    let vw = cells
        .iter()
        .map(|c| c.variant.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let pw = cells
        .iter()
        .map(|c| c.property.name().len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<vw$} {:<pw$} {:<14} {:<13} {:>7} {:>10} {:>7} {:>8} {:>6}{}",
        "variant",
        "property",
        "backend",
        "verdict",
        "configs",
        "executions",
        "seconds",
        "coverage",
        "epoch2",
        if notes { "  note" } else { "" }
    );
    for c in cells {
        let mark = match (c.expect, c.ok) {
            (_, false) => " !!",
            (Expect::Killed, true) => " (killed)",
            (Expect::Finding, true) => " (finding)",
            _ => "",
        };
        let verdict = format!(
            "{}{}",
            c.verdict.name(),
            if c.exhaustive { "*" } else { "" }
        );
        let held = c.configs.iter().filter(|x| x.verdict == c.verdict).count();
        let mut row = format!(
            "{:<vw$} {:<pw$} {:<14} {:<13} {:>7} {:>10} {:>7.2} {:>8} {:>6}",
            c.variant,
            c.property.name(),
            c.backend,
            verdict,
            format!("{held}/{}", c.configs.len()),
            c.executions,
            c.seconds,
            c.coverage,
            c.later_epoch,
        );
        if notes {
            let _ = write!(
                row,
                "  {}{mark}",
                truncate(c.note.as_deref().unwrap_or(""), 100)
            );
        }
        let _ = writeln!(out, "{}", row.trim_end());
    }
    let _ = writeln!(out);
    out
}

/// One line per run.
pub fn runs_table(runs: &[RunResult]) -> String {
    let mut out = String::from("\nruns:\n");
    for r in runs {
        let violated: Vec<&str> = r
            .verdicts
            .iter()
            .filter(|v| v.verdict == Verdict::Violated)
            .map(|v| v.property.name())
            .collect();
        let _ = writeln!(
            out,
            "  {:<30} {:<12} {:<14} {:>9} {:>7.2}s {}{}",
            r.spec.variant,
            r.spec.entry,
            r.spec.backend.name(),
            r.executions,
            r.seconds,
            if r.exhaustive { "exhaustive " } else { "" },
            if violated.is_empty() {
                r.stopped.clone().unwrap_or_default()
            } else {
                format!("violated {}", violated.join(","))
            }
        );
    }
    out
}

/// The summary lines: one for the flush protocol's cells and, when the
/// run has any, one for the lifetime wing's; each with its counts and
/// what was not as expected; then the configurations per property.
pub fn summary(plan: &Plan, cells: &[Cell], elapsed: Duration) -> String {
    let life = |c: &&Cell| plan_family(plan, &c.variant) == Some(Family::Lifetime);
    let flush: Vec<Cell> = cells.iter().filter(|c| !life(c)).cloned().collect();
    let lifetime: Vec<Cell> = cells.iter().filter(life).cloned().collect();
    let mut out = String::new();
    if !flush.is_empty() || lifetime.is_empty() {
        out += &family_summary(
            plan,
            &flush,
            &format!("{} cells in {:.1} s", flush.len(), elapsed.as_secs_f64()),
            true,
        );
    }
    if !lifetime.is_empty() {
        out += &family_summary(
            plan,
            &lifetime,
            &format!("lifetime: {} cells", lifetime.len()),
            false,
        );
    }
    let mut per: Vec<String> = Vec::new();
    for p in &plan.properties {
        let n = plan
            .suite
            .entries
            .iter()
            .filter(|e| {
                e.backends.iter().filter(|b| plan.runs_backend(b)).any(|b| {
                    plan.variants
                        .iter()
                        .any(|v| e.applies_to(v.family) && judged(v, &e.cfg, b).contains(p))
                })
            })
            .count();
        if n > 0 {
            per.push(format!("{} {n}", p.name()));
        }
    }
    let _ = writeln!(out, "configurations per property: {}", per.join(", "));
    out
}

fn plan_family(plan: &Plan, variant: &str) -> Option<Family> {
    plan.variants
        .iter()
        .find(|v| v.name == variant)
        .map(|v| v.family)
}

/// One summary line over `cells`, starting with `head`, and a line per
/// cell not as expected. `weak` adds the weak-holds counts.
fn family_summary(plan: &Plan, cells: &[Cell], head: &str, weak: bool) -> String {
    let must_hold_bad: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Holds && !c.ok)
        .map(|c| {
            format!(
                "{} {} ({} on {}): {}",
                c.kind.name(),
                c.variant,
                c.property.name(),
                c.backend,
                c.verdict.name()
            )
        })
        .collect();
    let inconclusive = cells
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .count();
    let survived: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Killed && !c.ok)
        .map(|c| format!("{} ({} on {})", c.variant, c.property.name(), c.backend))
        .collect();
    let findings_missed: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Finding && !c.ok)
        .map(|c| format!("{} ({} on {})", c.variant, c.property.name(), c.backend))
        .collect();
    let findings_shown = cells
        .iter()
        .filter(|c| c.expect == Expect::Finding && c.ok)
        .count();
    let mutants: Vec<&Variant> = plan
        .variants
        .iter()
        .filter(|v| v.kind == Kind::Mutant && cells.iter().any(|c| c.variant == v.name))
        .collect();
    let killed = mutants
        .iter()
        .filter(|v| {
            cells
                .iter()
                .filter(|c| c.variant == v.name && c.expect == Expect::Killed)
                .all(|c| c.ok)
        })
        .count();
    let mut out = format!(
        "{head}: must-hold violations {}, mutants killed {killed}/{}, \
         mutant survivals {}, findings shown {findings_shown}, findings missed {}, \
         inconclusive {inconclusive}",
        must_hold_bad.len(),
        mutants.len(),
        survived.len(),
        findings_missed.len(),
    );
    if weak {
        let unseen = cells.iter().filter(|c| c.race_not_seen()).count();
        let epoch = cells.iter().filter(|c| c.epoch_not_reached()).count();
        let _ = write!(
            out,
            ", race not seen {unseen}, later epoch not reached {epoch}"
        );
    }
    out.push('\n');
    for s in must_hold_bad {
        let _ = writeln!(out, "  not held: {s}");
    }
    for s in survived {
        let _ = writeln!(out, "  survived: {s}");
    }
    for s in findings_missed {
        let _ = writeln!(out, "  finding not shown: {s}");
    }
    out
}

/// The matrix as markdown for a review thread.
pub fn markdown(plan: &Plan, cells: &[Cell], elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Verdicts\n");
    let _ = writeln!(
        out,
        "```text\n{}{}{}```\n",
        suite_text(plan),
        table(plan, cells, false),
        summary(plan, cells, elapsed)
    );
    let noted: Vec<&Cell> = cells.iter().filter(|c| c.note.is_some()).collect();
    if !noted.is_empty() {
        let _ = writeln!(out, "Notes:\n");
        for c in noted {
            let line = format!(
                "- {} / {} / {}: {}",
                c.variant,
                c.property.name(),
                c.backend,
                c.note.as_deref().unwrap_or("")
            );
            for (i, l) in crate::observe::record::wrap(&line, 98)
                .into_iter()
                .enumerate()
            {
                let _ = writeln!(out, "{}{l}", if i == 0 { "" } else { "  " });
            }
        }
        let _ = writeln!(out);
    }
    out
}
