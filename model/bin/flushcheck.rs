//! `flushcheck`: run the (variant x property x backend) matrix of the memcg
//! flush model and print verdicts.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use memcg_flush_model::check::{matrix_ok, run_matrix, Cell, CellSpec, Executor, Expect, Plan};
use memcg_flush_model::platform::{quiet_panics, Backend};
use memcg_flush_model::{Config, Property, Variant, Verdict};

/// Model-check the memcg stats flush protocol (v5.19 vs v6.0, 873f64b791a2)
/// under loom, shuttle and real threads, and print the verdict matrix.
#[derive(Parser, Debug)]
#[command(name = "flushcheck", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// num_online_cpus(): updater threads.
    #[arg(long, default_value_t = Config::default().cpus)]
    cpus: usize,
    /// MEMCG_CHARGE_BATCH (32 in the kernel; small so that loom finishes).
    #[arg(long, default_value_t = Config::default().batch, allow_negative_numbers = true)]
    batch: i64,
    /// __mod_memcg_state() calls per CPU.
    #[arg(long, default_value_t = Config::default().updates)]
    updates: usize,
    /// Update values, comma-separated and cycled; |val| > batch is a huge page.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, default_values_t = Config::default().vals)]
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
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the matrix as JSON (one object per cell) instead of a table.
    #[arg(long)]
    json: bool,
    /// Run cells on threads of this process instead of worker processes.
    #[arg(long)]
    in_process: bool,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Internal: run one cell given as JSON and print the result as JSON.
    #[command(name = "__cell", hide = true)]
    Cell {
        /// The cell, as JSON.
        spec: String,
    },
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

fn build_plan(cli: &Cli) -> Result<Plan, String> {
    let cfg = Config {
        cpus: cli.cpus,
        batch: cli.batch,
        updates: cli.updates,
        vals: cli.val.clone(),
        readers: cli.readers,
        reads: cli.reads,
        periodic: if cli.no_periodic {
            false
        } else {
            cli.periodic || Config::default().periodic
        },
    };
    let mut plan = Plan::new(cfg);
    if !cli.variant.is_empty() {
        plan.variants = cli
            .variant
            .iter()
            .map(|v| Variant::by_name(v))
            .collect::<Result<_, _>>()?;
    }
    if !cli.property.is_empty() {
        plan.properties = cli
            .property
            .iter()
            .map(|p| Property::by_name(p))
            .collect::<Result<_, _>>()?;
    }
    if cli.shuttle_iterations == 0 || cli.std_iterations == 0 {
        return Err("--shuttle-iterations/--std-iterations 0: need at least 1".into());
    }
    if cli.pct_depth == 0 {
        return Err("--pct-depth 0: PCT needs a depth of at least 1".into());
    }
    plan.backends = vec![
        Backend::Loom {
            preemption_bound: cli.loom_preemptions.0,
        },
        Backend::ShuttleRandom {
            iterations: cli.shuttle_iterations,
            seed: cli.seed,
        },
        Backend::ShuttlePct {
            iterations: cli.shuttle_iterations,
            depth: cli.pct_depth,
            seed: cli.seed,
        },
        Backend::Std {
            iterations: cli.std_iterations,
        },
    ];
    if !cli.backend.is_empty() {
        let names: Vec<&str> = plan.backends.iter().map(|b| b.name()).collect();
        for b in &cli.backend {
            if !names.contains(&b.as_str()) {
                return Err(format!(
                    "unknown backend {b:?}: expected one of {}",
                    names.join(", ")
                ));
            }
        }
        plan.backends
            .retain(|b| cli.backend.iter().any(|n| n == b.name()));
    }
    if cli.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    plan.budget = Duration::from_secs(cli.budget);
    if let Some(j) = cli.jobs {
        if j == 0 {
            return Err("--jobs 0: need at least 1 worker".into());
        }
        plan.jobs = j;
    }
    plan.validate()?;
    Ok(plan)
}

fn print_table(plan: &Plan, cells: &[Cell], elapsed: Duration) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "flushcheck: {}", plan.cfg);
    let _ = writeln!(
        out,
        "{:<24} {:<16} {:<15} {:<13} {:>10} {:>8} {:>9}  note",
        "variant", "property", "backend", "verdict", "executions", "seconds", "coverage"
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
        let note = c.note.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "{:<24} {:<16} {:<15} {:<13} {:>10} {:>8.2} {:>9}  {}{}",
            c.variant,
            c.property.name(),
            c.backend,
            verdict,
            c.executions,
            c.seconds,
            c.coverage,
            truncate(note, 110),
            mark
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "searches:");
    for b in &plan.backends {
        let _ = writeln!(out, "  {:<15} {}", b.name(), b.search());
    }
    let _ = writeln!(
        out,
        "  * = exhaustive. coverage = occurrences of the property's racy interleaving:"
    );
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<16} {}", p.name(), p.coverage_event().name());
    }
    let _ = writeln!(out, "  who decides what:");
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<16} {}", p.name(), p.decided_by());
    }
    summary(&mut out, cells, elapsed);
}

fn summary(out: &mut impl Write, cells: &[Cell], elapsed: Duration) {
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
    let _ = writeln!(
        out,
        "{} cells in {:.1} s: kernel-variant violations {}, mutant survivals {}, inconclusive {}",
        cells.len(),
        elapsed.as_secs_f64(),
        kernel_bad,
        survived.len(),
        inconclusive
    );
    for s in survived {
        let _ = writeln!(out, "  survived: {s}");
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
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
    if let Some(Command::Cell { spec }) = &cli.command {
        return run_cell(spec);
    }
    let plan = match build_plan(&cli) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flushcheck: error: {e}");
            return ExitCode::from(2);
        }
    };
    quiet_panics();
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
        Ok(exe) if !cli.in_process => Executor::Subprocess(exe),
        _ => Executor::InProcess,
    };
    let cells = run_matrix(&plan, &executor, &progress);
    let elapsed = start.elapsed();
    if cli.json {
        match serde_json::to_string_pretty(&cells) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("flushcheck: error: cannot encode JSON: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print_table(&plan, &cells, elapsed);
    }
    if matrix_ok(&cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
