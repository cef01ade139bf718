//! `flushcheck`: the command line, one subcommand per file.
//!
//! [`main_with`] runs it with variants of the caller's own added to the
//! catalogue: a researcher's binary calls it with its candidates and gets
//! the whole tool (matrix, explain, replay, bounds, fuzz) for them.

pub mod args;
pub mod bench;
pub mod bounds;
pub mod compare;
pub mod exhaustive;
pub mod explain;
pub mod findings;
pub mod fuzz;
pub mod kernels;
pub mod kernels_judge;
pub mod lifetime;
pub mod litmus;
pub mod matrix;
pub mod merge;
pub mod perf;
pub mod plot;
pub mod report;
pub mod run;
pub mod variants;

use std::process::ExitCode;

use clap::Parser;

use crate::protocol::{catalogue, Variant};

/// Model-check the memcg stats flush protocol (v5.19 to v7.1, the 2026
/// proposal, the rstat updated tree and a memcg's death) under loom,
/// shuttle and real threads, and print the verdicts.
#[derive(Parser, Debug)]
#[command(
    name = "flushcheck",
    version,
    args_conflicts_with_subcommands = true,
    after_help = crate::publish::answer::COUNTS
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    matrix: matrix::MatrixArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Find the shortest counterexample of one property for one variant and
    /// print it as a CPU-column trace with its replay command.
    Explain(Box<explain::ExplainArgs>),
    /// Re-run the execution a replay token describes and print its trace.
    Replay(explain::ReplayArgs),
    /// Run the matrix, explain every violation, and write a markdown report;
    /// or, with --finding ID (--all), a plain-text report for linux-mm.
    Report(Box<report::ReportArgs>),
    /// The findings (identifier, class, affected releases, what shows them,
    /// status); --check replays every witness and checks the fix
    /// candidates, --replay ID prints one witness's trace.
    Findings(findings::FindingsArgs),
    /// Staleness and threshold maxima per variant beside the documented
    /// bound MEMCG_CHARGE_BATCH * nr_cpus, with witness traces.
    Bounds(bounds::BoundsArgs),
    /// The stateful exhaustive SC search beside the stateless one: states,
    /// schedules, time, and whether both report the same verdicts and
    /// maxima; or how both grow with the configuration (`--growth`).
    Exhaustive(exhaustive::ExhaustiveArgs),
    /// Write the figures of docs/findings.md (worst-case staleness against
    /// CPUs, RMWs per update, one line per kernel version) as SVG files and
    /// print their data.
    Plot(plot::PlotArgs),
    /// Benchmark the hot path on real threads: v5.19, v6.0 and a
    /// no-global-accounting ceiling, side by side.
    Bench(bench::BenchArgs),
    /// Measure the checkers: executions per second per backend, time to
    /// the first counterexample per mutant over seeds, and search growth.
    Perf(perf::PerfArgs),
    /// Search seeded random configurations within stated bounds for a time
    /// budget; shrink every violation to the smallest configuration and
    /// schedule.
    Fuzz(fuzz::FuzzArgs),
    /// A memcg's death under RCU: no_use_after_free,
    /// stats_survive_death and no_leak for each lifetime form and mutant
    /// on every backend, or one witness trace (`--witness`).
    Lifetime(lifetime::LifetimeArgs),
    /// Real kernels as the oracle: boot Debian's kernels under qemu with the
    /// probe as /init at 1, 2 and 4 vCPUs, and compare what each shows with
    /// the model's prediction, one row per scenario and boot.
    Kernels(Box<kernels::KernelsArgs>),
    /// The litmus corpus (docs/litmus/): write it (`--out DIR`), or run
    /// herd7 with the Linux-kernel memory model on it (`--check`).
    Litmus(litmus::LitmusArgs),
    /// Combine the `--json` outputs of shard runs (`--shard I/N`) into one
    /// matrix.
    Merge(merge::MergeArgs),
    /// Compare two `--json` matrices by verdict class (holds, holds*,
    /// violated, inconclusive, not run); exit 1 if any cell differs.
    Compare(compare::CompareArgs),
    /// Every registered variant with its lineage, kind and twin (`--json`).
    Variants(variants::VariantsArgs),
    /// Internal: run one exploration given as JSON and print the result as
    /// JSON.
    #[command(name = "__run", hide = true)]
    Run {
        /// The run, as JSON.
        spec: String,
    },
}

/// Every variant known to this process: the catalogue, the benchmark
/// bound, and `extra`, each registration checked
/// ([`crate::protocol::catalogue::registry`]): one line naming the bad
/// variant.
pub fn registry(extra: Vec<Variant>) -> Result<Vec<Variant>, String> {
    catalogue::registry(extra)
}

fn parse_cli() -> Result<Cli, ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let args: Vec<String> = std::env::args().collect();
    // An extension binary's --version and usage name it, not flushcheck.
    let name = crate::report::program::program();
    Cli::command()
        .name(name)
        .bin_name(name)
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m))
        .map_err(|e| {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => {
                    eprintln!("{name}: {}", one_line(&e, &args));
                    ExitCode::from(2)
                }
            }
        })
}

/// Whether `args` (without the program's name) parse as a `flushcheck`
/// command line; the error as [`main`] prints it. Every command the tool
/// prints must pass.
pub fn parses(args: &[&str]) -> Result<(), String> {
    let mut all = vec!["flushcheck".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    use clap::error::ErrorKind;
    match Cli::try_parse_from(&all) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => Err(one_line(&e, &all)),
    }
}

/// clap's error in one line that keeps what names the problem: the
/// missing arguments, the similar flag, the allowed values, and for a
/// negative number clap took for a flag, the flag it was given to.
fn one_line(e: &clap::Error, args: &[String]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.to_string();
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) {
            let flag = args
                .iter()
                .position(|a| a == bad)
                .and_then(|i| i.checked_sub(1))
                .map(|i| &args[i])
                .filter(|f| f.starts_with("--"));
            if let (Some(flag), Ok(n)) = (flag, bad.parse::<i64>()) {
                // A non-negative number after a flag is unexpected only when
                // that flag takes no value (`--keep-going 20`).
                return if n < 0 {
                    format!(
                        "error: invalid value '{bad}' for '{flag}': a negative number, where a count (0 or more) is expected"
                    )
                } else {
                    format!(
                        "error: unexpected value '{bad}' after '{flag}': that flag takes no value"
                    )
                };
            }
        }
    }
    // clap's lines before its usage: the message, what it names on the
    // lines below, and its tips.
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix("tip: ").unwrap_or(line);
        let line = line.trim_start_matches('[').trim_end_matches(']');
        if !out.is_empty() {
            out.push_str(if out.ends_with(':') { " " } else { "; " });
        }
        out.push_str(line);
    }
    if out.is_empty() {
        "error: bad arguments (flushcheck --help lists them)".into()
    } else {
        out
    }
}

/// Die quietly on a closed pipe, as Unix tools do (`flushcheck variants |
/// head`): Rust ignores SIGPIPE, so a print to a closed pipe would panic
/// instead.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread is spawned;
    // SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `flushcheck` with the catalogue's variants.
pub fn main() -> ExitCode {
    main_with(Vec::new())
}

/// `flushcheck` with `extra` variants added to the catalogue: they run in
/// the default matrix (a [`crate::protocol::Kind::Candidate`] must hold
/// every property, or the exit code is 1) and can be named in every
/// subcommand.
pub fn main_with(extra: Vec<Variant>) -> ExitCode {
    main_with_properties(extra, Vec::new())
}

/// [`main_with`], with `properties` of the caller's own added to the
/// crate's: each one definition ([`crate::observe::property::Def`]),
/// judged in every run it applies to, like the crate's (docs/extending.md,
/// section 6).
pub fn main_with_properties(
    extra: Vec<Variant>,
    properties: Vec<&'static crate::observe::property::Def>,
) -> ExitCode {
    restore_sigpipe();
    if let Err(e) = crate::observe::properties::register(properties) {
        eprintln!("flushcheck: error: {e}");
        return ExitCode::from(2);
    }
    if let Some(name) = crate::report::program::from_argv0() {
        crate::report::program::set_program(&name);
    }
    let cli = match parse_cli() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let registry = match registry(extra) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("flushcheck: error: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match &cli.command {
        None => matrix::matrix(&cli.matrix, &registry),
        Some(Command::Run { spec }) => return run::run_spec(spec, &registry),
        Some(Command::Merge(a)) => merge::merge(a, &registry),
        Some(Command::Compare(a)) => compare::compare(a),
        Some(Command::Explain(a)) => explain::explain_cmd(a, &registry),
        Some(Command::Replay(a)) => explain::replay_cmd(a, &registry),
        Some(Command::Report(a)) => report::report(a, &registry),
        Some(Command::Findings(a)) => findings::findings_cmd(a, &registry),
        Some(Command::Bounds(a)) => bounds::bounds(a, &registry),
        Some(Command::Bench(a)) => bench::bench(a, &registry),
        Some(Command::Exhaustive(a)) => exhaustive::exhaustive(a, &registry),
        Some(Command::Plot(a)) => plot::plot(a, &registry),
        Some(Command::Perf(a)) => perf::perf(a, &registry),
        Some(Command::Fuzz(a)) => fuzz::fuzz_cmd(a, &registry),
        Some(Command::Lifetime(a)) => lifetime::lifetime(a, &registry),
        Some(Command::Litmus(a)) => litmus::litmus(a),
        Some(Command::Kernels(a)) => kernels::kernels(a),
        Some(Command::Variants(a)) => variants::variants(a, &registry),
    };
    result.unwrap_or_else(|e| {
        eprintln!("flushcheck: error: {e}");
        ExitCode::from(2)
    })
}
