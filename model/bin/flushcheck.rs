//! `flushcheck`: run the (variant x property x backend) matrix of the memcg
//! flush model, explain violations as kernel-style traces, replay them.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use memcg_flush_model::check::{matrix_ok, run_matrix, Cell, CellSpec, Executor, Expect, Plan};
use memcg_flush_model::explain::{self, Counterexample, Explained, Search};
use memcg_flush_model::platform::{quiet_panics, Backend, Shard};
use memcg_flush_model::{Config, Property, Variant, Verdict};

/// Model-check the memcg stats flush protocol (v5.19 vs v6.0, 873f64b791a2)
/// under loom, shuttle and real threads, and print the verdict matrix.
#[derive(Parser, Debug)]
#[command(name = "flushcheck", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    matrix: MatrixArgs,
}

/// The scenario configuration, shared by every subcommand.
#[derive(clap::Args, Debug, Clone)]
struct ConfigArgs {
    /// num_online_cpus(): updater threads.
    #[arg(long, default_value_t = Config::default().cpus)]
    cpus: usize,
    /// MEMCG_CHARGE_BATCH (32 in the kernel; small so that loom finishes).
    #[arg(long, default_value_t = Config::default().batch, allow_negative_numbers = true)]
    batch: i64,
    /// __mod_memcg_state() calls per CPU.
    #[arg(long, default_value_t = Config::default().updates)]
    updates: usize,
    /// Update values, comma-separated, cycled over all updates in CPU order;
    /// |val| > batch is a huge page.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true,
          default_values_t = Config::default().vals)]
    val: Vec<i64>,
    /// Reader threads (memory.stat-style).
    #[arg(long, default_value_t = Config::default().readers)]
    readers: usize,
    /// Reads per reader thread.
    #[arg(long, default_value_t = Config::default().reads)]
    reads: usize,
    /// Run the periodic flusher thread (the default).
    #[arg(long, overrides_with = "no_periodic")]
    periodic: bool,
    /// Do not run the periodic flusher thread.
    #[arg(long = "no-periodic")]
    no_periodic: bool,
    /// Abstract time: jiffies_64 runs from 0 to N and the periodic work is
    /// re-queued every FLUSH_TIME (2) ticks (0: time not modelled; shuttle
    /// only).
    #[arg(long, default_value_t = 0)]
    ticks: usize,
    /// Ticks the periodic work may run after it is due (deferrable timer).
    #[arg(long, default_value_t = 0)]
    late: usize,
}

impl ConfigArgs {
    fn config(&self) -> Config {
        Config {
            cpus: self.cpus,
            batch: self.batch,
            updates: self.updates,
            vals: self.val.clone(),
            readers: self.readers,
            reads: self.reads,
            periodic: if self.no_periodic {
                false
            } else {
                self.periodic || Config::default().periodic
            },
            ticks: self.ticks,
            late: self.late,
        }
    }
}

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// Plain text (80 columns where the threads allow).
    Text,
    /// Markdown for a review thread (reads as plain text; no HTML).
    Markdown,
    /// JSON.
    Json,
}

/// The matrix run (the default command).
#[derive(clap::Args, Debug, Clone)]
struct MatrixArgs {
    #[command(flatten)]
    cfg: ConfigArgs,
    /// Only these variants (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    variant: Vec<String>,
    /// Only these properties (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    property: Vec<String>,
    /// Only these backends: loom, shuttle-random, shuttle-pct, std.
    #[arg(long, value_delimiter = ',')]
    backend: Vec<String>,
    /// loom preemption bound: a number, or "unbounded" for an exhaustive search.
    #[arg(long, default_value = "2", value_parser = parse_bound)]
    loom_preemptions: Bound,
    /// Schedules per shuttle search.
    #[arg(long, default_value_t = 20_000)]
    shuttle_iterations: usize,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3)]
    pct_depth: usize,
    /// Runs of the std backend.
    #[arg(long, default_value_t = 2_000)]
    std_iterations: usize,
    /// Seed for the shuttle schedulers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time budget per search, in seconds; a search cut short is inconclusive.
    #[arg(long, default_value_t = 60)]
    budget: u64,
    /// Worker processes (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the matrix as JSON (the same as --format json).
    #[arg(long)]
    json: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Run cells on threads of this process instead of worker processes.
    #[arg(long)]
    in_process: bool,
    /// Run only part I of N of every shuttle search (see `merge`).
    #[arg(long, value_parser = Shard::parse)]
    shard: Option<Shard>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Find the shortest counterexample of one property for one variant and
    /// print it as a CPU-column trace with its replay command.
    Explain(Box<ExplainArgs>),
    /// Re-run the execution a replay token describes and print its trace.
    Replay {
        /// The token printed by `explain` (starts with "fc1.").
        token: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Trace width in columns.
        #[arg(long, default_value_t = 80)]
        width: usize,
    },
    /// Run the matrix, explain every violation, and write a markdown report.
    Report {
        /// Where to write the report.
        #[arg(long)]
        out: std::path::PathBuf,
        #[command(flatten)]
        matrix: Box<MatrixArgs>,
    },
    /// Benchmark the hot path on real threads: v5.19, v6.0 and a
    /// no-global-accounting ceiling, side by side.
    Bench {
        /// Thread counts (updater threads standing for CPUs).
        #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4, 8, 16, 32])]
        threads: Vec<usize>,
        /// __mod_memcg_state() calls per thread per run.
        #[arg(long, default_value_t = 2_000_000)]
        updates: usize,
        /// Rounds; each runs the three variants back to back.
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Measure the checkers: executions per second per backend, time to
    /// the first counterexample per mutant over seeds, and search growth.
    Perf {
        /// Seeds per shuttle kill measurement.
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Time cap per growth-table search, in seconds.
        #[arg(long, default_value_t = 20)]
        growth_budget: u64,
        /// Leave out the growth table (it takes minutes).
        #[arg(long)]
        no_growth: bool,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Staleness and threshold maxima per variant beside the documented
    /// bound MEMCG_CHARGE_BATCH * nr_cpus, with witness traces.
    Bounds(BoundsArgs),
    /// Combine the `--json` outputs of shard runs (`--shard I/N`) into one
    /// matrix.
    Merge {
        /// JSON files, one per shard.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Internal: run one cell given as JSON and print the result as JSON.
    #[command(name = "__cell", hide = true)]
    Cell {
        /// The cell, as JSON.
        spec: String,
    },
}

/// `flushcheck bounds`.
#[derive(clap::Args, Debug, Clone)]
struct BoundsArgs {
    /// Measure the configuration given by the flags below instead of the
    /// standard list.
    #[arg(long)]
    custom: bool,
    #[command(flatten)]
    cfg: ConfigArgs,
    /// Variants (default: v5.19, v6.0 and the off-by-one mutant).
    #[arg(long, value_delimiter = ',')]
    variant: Vec<String>,
    /// shuttle schedules per scheduler (random and PCT are both run).
    #[arg(long, default_value_t = 20_000)]
    shuttle_iterations: usize,
    /// Search every sequentially consistent interleaving (shuttle, depth
    /// first) instead of sampling, on the small configurations where that
    /// finishes, and compare the maxima with the derived worst case.
    #[arg(long)]
    exhaustive: bool,
    /// Measure the abstract-time configurations (periodic work every
    /// FLUSH_TIME ticks, on time or late) instead of the standard list.
    #[arg(long)]
    time: bool,
    /// Cap on the schedules of one exhaustive search.
    #[arg(long, default_value_t = 2_000_000)]
    max_schedules: usize,
    /// Time budget per search, in seconds.
    #[arg(long, default_value_t = 120)]
    budget: u64,
    /// Also print witness traces: of every C1 violation, of every positive
    /// staleness after a flush call, and of the largest age in ticks.
    #[arg(long)]
    witness: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug, Clone)]
struct ExplainArgs {
    #[command(flatten)]
    cfg: ConfigArgs,
    /// The variant.
    #[arg(long)]
    variant: String,
    /// The property.
    #[arg(long)]
    property: String,
    /// loom, shuttle-random or shuttle-pct (default: loom, then shuttle-pct).
    #[arg(long)]
    backend: Option<String>,
    /// Largest loom preemption bound to try, or "unbounded".
    #[arg(long, default_value = "3", value_parser = parse_bound)]
    max_preemptions: Bound,
    /// Seeded shuttle searches whose shortest failure is kept.
    #[arg(long, default_value_t = 20)]
    runs: u64,
    /// Schedules per shuttle search.
    #[arg(long, default_value_t = 20_000)]
    shuttle_iterations: usize,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3)]
    pct_depth: usize,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 120)]
    budget: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Trace width in columns.
    #[arg(long, default_value_t = 80)]
    width: usize,
}

/// A loom preemption bound; `None` is unbounded.
#[derive(Clone, Copy, Debug)]
struct Bound(Option<usize>);

fn parse_bound(s: &str) -> Result<Bound, String> {
    match s {
        "unbounded" | "none" => Ok(Bound(None)),
        _ => s.parse::<usize>().map(|b| Bound(Some(b))).map_err(|_| {
            format!("{s:?} is not a preemption bound: expected a number or \"unbounded\"")
        }),
    }
}

fn build_plan(args: &MatrixArgs) -> Result<Plan, String> {
    let mut plan = Plan::new(args.cfg.config());
    if !args.variant.is_empty() {
        plan.variants = args
            .variant
            .iter()
            .map(|v| Variant::by_name(v))
            .collect::<Result<_, _>>()?;
    }
    if !args.property.is_empty() {
        plan.properties = args
            .property
            .iter()
            .map(|p| Property::by_name(p))
            .collect::<Result<_, _>>()?;
    }
    if args.shuttle_iterations == 0 || args.std_iterations == 0 {
        return Err("--shuttle-iterations/--std-iterations 0: need at least 1".into());
    }
    if args.pct_depth == 0 {
        return Err("--pct-depth 0: PCT needs a depth of at least 1".into());
    }
    plan.backends = vec![
        Backend::Loom {
            preemption_bound: args.loom_preemptions.0,
        },
        Backend::ShuttleRandom {
            iterations: args.shuttle_iterations,
            seed: args.seed,
        },
        Backend::ShuttlePct {
            iterations: args.shuttle_iterations,
            depth: args.pct_depth,
            seed: args.seed,
        },
        Backend::Std {
            iterations: args.std_iterations,
        },
    ];
    if !args.backend.is_empty() {
        let names: Vec<&str> = plan.backends.iter().map(|b| b.name()).collect();
        for b in &args.backend {
            if !names.contains(&b.as_str()) {
                return Err(format!(
                    "unknown backend {b:?}: expected one of {}",
                    names.join(", ")
                ));
            }
        }
        plan.backends
            .retain(|b| args.backend.iter().any(|n| n == b.name()));
    }
    if args.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    plan.budget = Duration::from_secs(args.budget);
    if let Some(j) = args.jobs {
        if j == 0 {
            return Err("--jobs 0: need at least 1 worker".into());
        }
        plan.jobs = j;
    }
    plan.shard = args.shard.unwrap_or_default();
    plan.validate()?;
    Ok(plan)
}

/// The matrix as a table; `notes` adds the note column (text output).
fn table(plan: &Plan, cells: &[Cell], notes: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<23} {:<15} {:<14} {:<13} {:>10} {:>7} {:>8}{}",
        "variant",
        "property",
        "backend",
        "verdict",
        "executions",
        "seconds",
        "coverage",
        if notes { "  note" } else { "" }
    );
    for c in cells {
        let mark = match (c.expect, c.ok) {
            (_, false) => " !!",
            (Expect::Killed, true) => " (killed)",
            _ => "",
        };
        let verdict = format!(
            "{}{}",
            c.verdict.name(),
            if c.exhaustive { "*" } else { "" }
        );
        let mut row = format!(
            "{:<23} {:<15} {:<14} {:<13} {:>10} {:>7.2} {:>8}",
            c.variant,
            c.property.name(),
            c.backend,
            verdict,
            c.executions,
            c.seconds,
            c.coverage,
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
    let _ = writeln!(out, "searches:");
    for b in &plan.backends {
        let _ = writeln!(out, "  {:<15} {}", b.name(), b.search());
    }
    let _ = writeln!(
        out,
        "  * = exhaustive. coverage = times the property's race happened:"
    );
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<16} {}", p.name(), p.coverage_event().name());
    }
    let _ = writeln!(out, "  who decides what:");
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<16} {}", p.name(), p.decided_by());
    }
    out
}

fn summary(cells: &[Cell], elapsed: Duration) -> String {
    let kernel_bad = cells
        .iter()
        .filter(|c| c.expect == Expect::Holds && c.verdict == Verdict::Violated)
        .count();
    let inconclusive = cells
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .count();
    let survived: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Killed && !c.ok)
        .map(|c| format!("{} ({} on {})", c.variant, c.property.name(), c.backend))
        .collect();
    let unseen = cells
        .iter()
        .filter(|c| {
            c.note
                .as_deref()
                .is_some_and(|n| n.starts_with("race not seen"))
        })
        .count();
    let mut out = format!(
        "{} cells in {:.1} s: kernel violations {}, mutant survivals {}, inconclusive {}, \
         race not seen {}\n",
        cells.len(),
        elapsed.as_secs_f64(),
        kernel_bad,
        survived.len(),
        inconclusive,
        unseen
    );
    for s in survived {
        let _ = writeln!(out, "  survived: {s}");
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

fn run_matrix_with_progress(plan: &Plan, in_process: bool) -> (Vec<Cell>, Duration) {
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let progress = |done: usize, total: usize, c: &Cell| {
        let line = format!(
            "[{done}/{total} {:.0}s] {} {} {}: {}",
            start.elapsed().as_secs_f64(),
            c.variant,
            c.property.name(),
            c.backend,
            c.verdict.name()
        );
        if tty {
            eprint!("\r\x1b[2K{line}");
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
    let cells = run_matrix(plan, &executor, &progress);
    (cells, start.elapsed())
}

fn matrix(args: &MatrixArgs) -> Result<ExitCode, String> {
    let plan = build_plan(args)?;
    quiet_panics();
    let (cells, elapsed) = run_matrix_with_progress(&plan, args.in_process);
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Json => print_json(&cells)?,
        Format::Text => {
            println!("flushcheck: {}", plan.cfg);
            for p in &plan.properties {
                if plan.cfg_for(*p) != plan.cfg {
                    println!("  {p}: {}", plan.cfg_for(*p));
                }
            }
            print!("{}", table(&plan, &cells, true));
            print!("{}", summary(&cells, elapsed));
        }
        Format::Markdown => print!("{}", markdown_matrix(&plan, &cells, elapsed)),
    }
    Ok(if matrix_ok(&cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn markdown_matrix(plan: &Plan, cells: &[Cell], elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Verdicts\n\nConfiguration: `{}`\n", plan.cfg);
    for p in &plan.properties {
        if plan.cfg_for(*p) != plan.cfg {
            let _ = writeln!(out, "`{p}` runs on `{}`\n", plan.cfg_for(*p));
        }
    }
    let _ = writeln!(
        out,
        "```text\n{}{}```\n",
        table(plan, cells, false),
        summary(cells, elapsed)
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
            for (i, l) in memcg_flush_model::trace::wrap(&line, 98)
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

fn render(c: &Counterexample, format: Format, width: usize) -> Result<String, String> {
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::to_value(c).map_err(|e| e.to_string())?;
            let (litmus, note) = match c.litmus() {
                Ok(l) => (Some(l), None),
                Err(n) => (None, Some(n)),
            };
            v["litmus"] = serde_json::json!(litmus);
            v["litmus_note"] = serde_json::json!(note);
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
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
                for l in memcg_flush_model::trace::wrap(&line, 98) {
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

fn explain_cmd(a: &ExplainArgs) -> Result<ExitCode, String> {
    let variant = Variant::by_name(&a.variant)?;
    let property = Property::by_name(&a.property)?;
    let cfg = property.config_for(&a.cfg.config());
    if a.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    if a.runs == 0 || a.shuttle_iterations == 0 || a.pct_depth == 0 {
        return Err("--runs/--shuttle-iterations/--pct-depth 0: need at least 1".into());
    }
    let shuttle = |name: &str| match name {
        "shuttle-random" => Some(Backend::ShuttleRandom {
            iterations: a.shuttle_iterations,
            seed: a.seed,
        }),
        "shuttle-pct" => Some(Backend::ShuttlePct {
            iterations: a.shuttle_iterations,
            depth: a.pct_depth,
            seed: a.seed,
        }),
        _ => None,
    };
    let loom = Search::Loom {
        max_bound: a.max_preemptions.0,
    };
    let searches: Vec<Search> = match a.backend.as_deref() {
        None => vec![
            loom,
            Search::Shuttle {
                backend: shuttle("shuttle-pct").expect("known"),
                runs: a.runs,
            },
        ],
        Some("loom") => vec![loom],
        Some(name) => vec![Search::Shuttle {
            backend: shuttle(name).ok_or_else(|| {
                format!(
                    "unknown backend {name:?}: expected one of loom, shuttle-random, shuttle-pct"
                )
            })?,
            runs: a.runs,
        }],
    };
    let max = if searches.iter().any(|s| matches!(s, Search::Loom { .. })) {
        memcg_flush_model::platform::MAX_LOOM_THREADS
    } else {
        usize::MAX
    };
    cfg.validate(max, if max == usize::MAX { "shuttle" } else { "loom" })?;
    quiet_panics();
    let budget = Duration::from_secs(a.budget);
    let mut tried = Vec::new();
    for search in &searches {
        match explain::explain(&cfg, &variant, property, search, budget) {
            Explained::Found(c) => {
                print!("{}", render(&c, a.format, a.width)?);
                return Ok(ExitCode::SUCCESS);
            }
            Explained::NotFound {
                search,
                finished,
                note,
            } => tried.push(format!(
                "{search}: {}{}",
                if finished {
                    "finished, none found"
                } else {
                    "cut short"
                },
                note.map(|n| format!(" ({n})")).unwrap_or_default()
            )),
        }
    }
    println!(
        "no counterexample of {property} for {} within the bounds searched:",
        variant.name
    );
    for t in tried {
        println!("  {t}");
    }
    Ok(ExitCode::from(1))
}

fn replay_cmd(token: &str, format: Format, width: usize) -> Result<ExitCode, String> {
    let r = explain::Replay::from_token(token)?;
    Variant::by_name(&r.variant)?;
    quiet_panics();
    match explain::replay(token) {
        Ok(c) => {
            print!("{}", render(&c, format, width)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("not reproduced: {why}");
            Ok(ExitCode::from(1))
        }
    }
}

fn report_cmd(out: &std::path::Path, args: &MatrixArgs) -> Result<ExitCode, String> {
    let plan = build_plan(args)?;
    quiet_panics();
    let (cells, elapsed) = run_matrix_with_progress(&plan, args.in_process);
    let mut md = String::new();
    let _ = writeln!(md, "# flushcheck report\n");
    let _ = writeln!(
        md,
        "memcg-flush-model {} (loom 0.7.3, shuttle 0.9.10); model of mm/memcontrol.c v5.19 and\nv6.0 (873f64b791a2).\n",
        env!("CARGO_PKG_VERSION")
    );
    md.push_str(&markdown_matrix(&plan, &cells, elapsed));
    let _ = writeln!(md, "## Counterexamples\n");
    let mut seen = std::collections::BTreeSet::new();
    for c in cells.iter().filter(|c| c.verdict == Verdict::Violated) {
        if !seen.insert((c.variant.clone(), c.property)) {
            continue;
        }
        let variant = Variant::by_name(&c.variant)?;
        let search = match c.backend.as_str() {
            "loom" => Search::Loom { max_bound: Some(3) },
            _ => Search::Shuttle {
                backend: Backend::ShuttlePct {
                    iterations: args.shuttle_iterations,
                    depth: args.pct_depth,
                    seed: args.seed,
                },
                runs: 10,
            },
        };
        eprintln!("explaining {} / {} ...", c.variant, c.property);
        match explain::explain(
            &plan.cfg_for(c.property),
            &variant,
            c.property,
            &search,
            plan.budget,
        ) {
            Explained::Found(x) => md.push_str(&render(&x, Format::Markdown, 80)?),
            Explained::NotFound { search, note, .. } => {
                let _ = writeln!(
                    md,
                    "### {}: {}\n\nNo trace: {search}{}.\n",
                    c.variant,
                    c.property,
                    note.map(|n| format!(" ({n})")).unwrap_or_default()
                );
            }
        }
    }
    std::fs::write(out, md).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(if matrix_ok(&cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn bench_cmd(
    threads: &[usize],
    updates: usize,
    reps: usize,
    json: bool,
) -> Result<ExitCode, String> {
    if let Some(t) = threads.iter().find(|t| **t == 0 || **t > 1024) {
        return Err(format!(
            "--threads {t}: thread counts must be between 1 and 1024"
        ));
    }
    if updates < 1024 {
        return Err(format!(
            "--updates {updates}: need at least 1024 updates per thread"
        ));
    }
    let progress = |line: &str| eprintln!("{line}");
    let rows = memcg_flush_model::bench::compare(threads, updates, reps, &progress);
    if json {
        print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "hot path: {updates} __mod_memcg_state() per thread, batch {}, every {}th update {} pages;",
        memcg_flush_model::bench::MEMCG_CHARGE_BATCH,
        memcg_flush_model::bench::HUGE_EVERY,
        memcg_flush_model::bench::HUGE_VAL
    );
    println!("flusher every 2 ms, reader every 100 us; medians of {reps} interleaved rounds");
    println!(
        "{:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>11} {:>11} {:>7}",
        "threads",
        "v5.19 M/s",
        "v6.0 M/s",
        "ceiling M/s",
        "v6.0/5.19",
        "v6.0/ceil",
        "RMW/M 5.19",
        "RMW/M 6.0",
        "cut"
    );
    for r in &rows {
        println!(
            "{:>7} {:>12.2} {:>12.2} {:>12.2} {:>9.3} {:>9.3} {:>11.0} {:>11.0} {:>6.1}%",
            r.threads,
            r.v5_19 / 1e6,
            r.v6_0 / 1e6,
            r.ceiling / 1e6,
            r.ratio_v6_0_over_v5_19,
            r.v6_0_of_ceiling,
            r.rmws_per_million_v5_19,
            r.rmws_per_million_v6_0,
            r.rmw_cut * 100.0
        );
    }
    println!(
        "RMW/M: threshold RMWs per million updates on a deterministic round-robin schedule\n\
         (reader every {} updates, periodic flush every {}); the same on every machine.",
        memcg_flush_model::bench::READ_EVERY,
        memcg_flush_model::bench::FLUSH_EVERY
    );
    Ok(ExitCode::SUCCESS)
}

fn perf_cmd(
    seeds: u64,
    growth_budget: u64,
    no_growth: bool,
    json: bool,
) -> Result<ExitCode, String> {
    use memcg_flush_model::perf;
    if seeds == 0 || growth_budget == 0 {
        return Err("--seeds/--growth-budget 0: need at least 1".into());
    }
    quiet_panics();
    let cfg = Config::default();
    eprintln!("measuring throughput ...");
    let through = perf::throughput(&cfg);
    eprintln!("measuring time to first counterexample ...");
    let kills = perf::time_to_kill(&cfg, seeds);
    let growth = if no_growth {
        Vec::new()
    } else {
        eprintln!("measuring growth (up to {growth_budget} s per search) ...");
        perf::growth(Duration::from_secs(growth_budget))
    };
    if json {
        let v = serde_json::json!({"throughput": through, "time_to_kill": kills, "growth": growth});
        print_json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("Checker throughput, v6.0 / conservation, default configuration ({cfg})");
    println!(
        "{:<15} {:>10} {:>8} {:>10}  search",
        "backend", "executions", "seconds", "exec/s"
    );
    for t in &through {
        println!(
            "{:<15} {:>10} {:>8.2} {:>10.0}  {}",
            t.backend, t.executions, t.seconds, t.per_sec, t.search
        );
    }
    println!();
    println!(
        "Time to the first counterexample (median [min, max] over seeds; loom is deterministic)"
    );
    println!(
        "{:<23} {:<15} {:<14} {:>6} {:>22} {:>26}",
        "mutant", "property", "backend", "killed", "executions", "seconds"
    );
    for k in &kills {
        println!(
            "{:<23} {:<15} {:<14} {:>6} {:>22} {:>26}",
            k.variant,
            k.property.name(),
            k.backend,
            format!("{}/{}", k.killed, k.seeds),
            format!(
                "{} [{}, {}]",
                k.executions[0], k.executions[1], k.executions[2]
            ),
            format!(
                "{:.4} [{:.4}, {:.4}]",
                k.seconds[0], k.seconds[1], k.seconds[2]
            ),
        );
    }
    if !growth.is_empty() {
        println!();
        println!("Growth: v6.0 / conservation, one reader, no periodic flusher, val=2,3, batch 1");
        println!(
            "{:>4} {:>7}  {:<58} {:>10} {:>8}  done",
            "cpus", "updates", "search", "executions", "seconds"
        );
        for g in &growth {
            println!(
                "{:>4} {:>7}  {:<58} {:>10} {:>8.2}  {}",
                g.cpus,
                g.updates,
                g.search,
                g.executions,
                g.seconds,
                match (&g.note, g.finished) {
                    (_, true) => "yes".to_string(),
                    (Some(n), false) => truncate(n, 60),
                    (None, false) => "no".to_string(),
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn bounds_cmd(a: &BoundsArgs) -> Result<ExitCode, String> {
    use memcg_flush_model::bounds::{
        compare_with_baseline, exhaustive_configs, measure_exhaustive, measure_sampled,
        standard_configs, Bound,
    };
    let (variants, iterations, witness, json) =
        (&a.variant, a.shuttle_iterations, a.witness, a.json);
    let configs = if a.custom {
        vec![a.cfg.config()]
    } else if a.time {
        memcg_flush_model::bounds::timed_configs()
    } else if a.exhaustive {
        exhaustive_configs()
    } else {
        standard_configs()
    };
    if a.max_schedules == 0 || a.budget == 0 {
        return Err(format!(
            "--max-schedules {} --budget {}: both must be at least 1",
            a.max_schedules, a.budget
        ));
    }
    for c in &configs {
        c.validate(usize::MAX, "shuttle")?;
    }
    let variants: Vec<Variant> = if variants.is_empty() {
        ["v5.19", "v6.0", "mutant-skip-off-by-one"]
            .iter()
            .map(|v| Variant::by_name(v))
            .collect::<Result<_, _>>()?
    } else {
        variants
            .iter()
            .map(|v| Variant::by_name(v))
            .collect::<Result<_, _>>()?
    };
    if iterations == 0 {
        return Err("--shuttle-iterations 0: need at least 1".into());
    }
    quiet_panics();
    let mut rows: Vec<Bound> = Vec::new();
    for c in &configs {
        for v in &variants {
            let best = if a.exhaustive {
                measure_exhaustive(c, v, a.max_schedules, Duration::from_secs(a.budget))
            } else {
                measure_sampled(c, v, iterations)
            };
            eprintln!("{} {}: stale {}", c, v.name, best.stale_at_no_flush);
            rows.push(best);
        }
    }
    compare_with_baseline(&mut rows);
    if json {
        print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    let sampled = !rows[0].search.contains("exhaustive");
    println!(
        "Maxima over {}{}.",
        rows[0].search,
        if sampled {
            " (lower bounds of the true maxima)"
        } else {
            ""
        }
    );
    println!(
        "stale = sum of updates written - aggregate, in pages, at a reader decision not to flush;"
    );
    println!("split = per-CPU residue / counted in the threshold / skipped (v6.0) / lost to a racing reset;");
    println!("since = residue + counted + skipped (stale without the lost pages);");
    println!("derived = worst case from the arithmetic (docs/findings.md), as stale/since;");
    println!(
        "<=v5.19 = no_worse_than_baseline: stale is at most v5.19's on the same configuration;"
    );
    println!("after = the same when a reader that decided to flush reads; C1 = MEMCG_CHARGE_BATCH * nr_cpus;");
    println!("age = ticks since the oldest update missing from the aggregate at a read (time modelled only).");
    let mut last = String::new();
    for r in &rows {
        let cfg = r.cfg.to_string();
        if cfg != last {
            println!();
            println!("{cfg}");
            println!(
                "  {:<23} {:>5} {:>13} {:>5} {:>8} {:>4} {:>3} {:>7} {:>5} {:>7} {:>7} {:>3} {:>9}",
                "variant",
                "stale",
                "split r/c/s/l",
                "since",
                "derived",
                "C1",
                "ok",
                "<=v5.19",
                "after",
                "max thr",
                "RMW/upd",
                "age",
                "execs"
            );
            last = cfg;
        }
        let split = format!(
            "{}/{}/{}/{}",
            r.split[0], r.split[1], r.split[2], r.split[3]
        );
        let yes_no = |b: bool| if b { "yes" } else { "NO" };
        let derived = r.derived.as_ref().map_or("-".to_string(), |d| {
            let mark = match r.matches_derived() {
                Some(true) => "=",
                Some(false) => "!",
                None => "",
            };
            format!(
                "{}{}/{}",
                mark,
                d.worst.map_or("-".into(), |w| w.to_string()),
                d.since_reset
            )
        });
        let execs = if r.finished {
            r.executions.to_string()
        } else {
            format!("{}+cut", r.executions)
        };
        println!(
            "  {:<23} {:>5} {:>13} {:>5} {:>8} {:>4} {:>3} {:>7} {:>5} {:>7} {:>7.3} {:>3} {:>9}",
            r.variant,
            r.stale_at_no_flush,
            split,
            r.since_reset,
            derived,
            r.documented,
            yes_no(r.documented_bound_holds()),
            r.no_worse_than_baseline.map_or("-", yes_no),
            r.stale_after_flush_call,
            r.max_threshold,
            r.rmws_per_update,
            if r.cfg.ticks > 0 {
                r.stale_ticks.to_string()
            } else {
                "-".into()
            },
            execs
        );
    }
    if !sampled {
        println!();
        println!(
            "  derived: = the exhaustive maxima equal it, ! they differ; +cut = search cut short."
        );
    }
    if witness {
        let show = |r: &Bound, steps: &[memcg_flush_model::trace::Step], head: String| {
            let initial = memcg_flush_model::explain::initial_state(&r.cfg, &r.variant);
            let trace = memcg_flush_model::trace::render_columns(&initial, steps, &head, 80);
            println!("\n{trace}");
        };
        for r in rows.iter().filter(|r| !r.documented_bound_holds()) {
            let head = format!(
                "staleness {} > C1 = {} for {} at {}",
                r.stale_at_no_flush, r.documented, r.variant, r.cfg
            );
            show(r, &r.witness, head);
        }
        for r in rows.iter().filter(|r| r.stale_after_flush_call > 0) {
            let head = format!(
                "a reader that decided to flush read {} pages stale, for {} at {}",
                r.stale_after_flush_call, r.variant, r.cfg
            );
            show(r, &r.after_witness, head);
        }
        for r in rows.iter().filter(|r| !r.ticks_witness.is_empty()) {
            let head = format!(
                "a read misses an update written {} ticks earlier, for {} at {}",
                r.stale_ticks, r.variant, r.cfg
            );
            show(r, &r.ticks_witness, head);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn merge_cmd(files: &[std::path::PathBuf], json: bool) -> Result<ExitCode, String> {
    let mut cells: Vec<Cell> = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let part: Vec<Cell> = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a flushcheck --json matrix: {e}", f.display()))?;
        cells.extend(part);
    }
    let merged = memcg_flush_model::check::merge_shards(&cells);
    if json {
        print_json(&merged)?;
    } else {
        let mut plan = Plan::new(Config::default());
        plan.backends.clear();
        plan.properties = Property::ALL.to_vec();
        print!("{}", table(&plan, &merged, true));
        print!("{}", summary(&merged, Duration::ZERO));
    }
    Ok(if matrix_ok(&merged) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_json(v: &impl serde::Serialize) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string_pretty(v).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn run_cell(spec: &str) -> ExitCode {
    quiet_panics();
    let cell = serde_json::from_str::<CellSpec>(spec)
        .map_err(|e| format!("bad cell spec: {e}"))
        .and_then(|s| s.run())
        .and_then(|c| serde_json::to_string(&c).map_err(|e| e.to_string()));
    match cell {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("flushcheck: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn parse_cli() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                // clap adds usage and a "try --help" line; keep the one
                // line that names the bad value.
                let text = e.to_string();
                let line = text.lines().next().unwrap_or("bad arguments");
                eprintln!("flushcheck: {line}");
                ExitCode::from(2)
            }
        }
    })
}

fn main() -> ExitCode {
    let cli = match parse_cli() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result = match &cli.command {
        None => matrix(&cli.matrix),
        Some(Command::Cell { spec }) => return run_cell(spec),
        Some(Command::Explain(a)) => explain_cmd(a),
        Some(Command::Replay {
            token,
            format,
            width,
        }) => replay_cmd(token, *format, *width),
        Some(Command::Report { out, matrix }) => report_cmd(out, matrix),
        Some(Command::Perf {
            seeds,
            growth_budget,
            no_growth,
            json,
        }) => perf_cmd(*seeds, *growth_budget, *no_growth, *json),
        Some(Command::Merge { files, json }) => merge_cmd(files, *json),
        Some(Command::Bounds(a)) => bounds_cmd(a),
        Some(Command::Bench {
            threads,
            updates,
            reps,
            json,
        }) => bench_cmd(threads, *updates, *reps, *json),
    };
    result.unwrap_or_else(|e| {
        eprintln!("flushcheck: error: {e}");
        ExitCode::from(2)
    })
}
