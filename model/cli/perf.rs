//! `flushcheck perf`: how fast the checkers reach verdicts.

use std::process::ExitCode;
use std::time::Duration;

use crate::check::Sizes;
use crate::config::Config;
use crate::explore::quiet_panics;
use crate::measure::perf;
use crate::protocol::Variant;

use super::args::print_doc;
use crate::publish::table::truncate;

/// `flushcheck perf`.
#[derive(clap::Args, Debug, Clone)]
pub struct PerfArgs {
    /// Seeds per shuttle kill measurement.
    #[arg(long, default_value_t = 10)]
    pub seeds: u64,
    /// Time cap per growth-table search, in seconds.
    #[arg(long, default_value_t = 20)]
    pub growth_budget: u64,
    /// Leave out the growth table (it takes minutes).
    #[arg(long)]
    pub no_growth: bool,
    /// Time cap per throughput and time-to-kill search, in seconds.
    #[arg(long, default_value_t = 60)]
    pub budget: u64,
    /// Cap on the schedules of a growth-table DFS.
    #[arg(long, default_value_t = Sizes::default().dfs_cap)]
    pub dfs_cap: usize,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Measure the checkers.
pub fn perf(a: &PerfArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    for (flag, v) in [
        ("--seeds", a.seeds),
        ("--growth-budget", a.growth_budget),
        ("--budget", a.budget),
        ("--dfs-cap", a.dfs_cap as u64),
    ] {
        if v == 0 {
            return Err(format!("{flag} 0: need at least 1"));
        }
    }
    quiet_panics();
    let progress = |line: &str| eprintln!("{line}");
    let budget = Duration::from_secs(a.budget);
    let cfg = Config::default();
    eprintln!("measuring throughput ...");
    let through = perf::throughput(
        &cfg,
        registry,
        &perf::throughput_backends(),
        budget,
        &progress,
    )?;
    eprintln!("measuring time to first counterexample ...");
    let kills = perf::time_to_kill(registry, a.seeds, budget, &progress)?;
    let growth = if a.no_growth {
        Vec::new()
    } else {
        eprintln!(
            "measuring growth (up to {} s per search) ...",
            a.growth_budget
        );
        perf::growth(
            registry,
            Duration::from_secs(a.growth_budget),
            a.dfs_cap,
            &progress,
        )?
    };
    if a.json {
        let v = serde_json::json!({"throughput": through, "time_to_kill": kills, "growth": growth});
        print_doc("perf", &v)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("Checker throughput, v6.0, every property judged, default configuration ({cfg})");
    println!(
        "{:<15} {:>10} {:>8} {:>10}  search",
        "backend", "executions", "seconds", "exec/s"
    );
    for t in &through {
        println!(
            "{:<15} {:>10} {:>8.2} {:>10.0}  {}{}",
            t.backend,
            t.executions,
            t.seconds,
            t.per_sec,
            t.search,
            if t.finished { "" } else { " [cut short]" }
        );
    }
    println!();
    println!(
        "Time to the first counterexample (median [min, max] over seeds; loom and the DFS are deterministic)"
    );
    let vw = kills
        .iter()
        .map(|k| k.variant.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let pw = kills
        .iter()
        .map(|k| k.property.name().len())
        .max()
        .unwrap_or(8)
        .max(8);
    println!(
        "{:<vw$} {:<pw$} {:<14} {:>6} {:>22} {:>26}  entry",
        "mutant", "property", "backend", "killed", "executions", "seconds"
    );
    for k in &kills {
        let mut entries: Vec<&str> = Vec::new();
        for e in &k.entries {
            if !entries.contains(&e.as_str()) {
                entries.push(e);
            }
        }
        println!(
            "{:<vw$} {:<pw$} {:<14} {:>6} {:>22} {:>26}  {}",
            k.variant,
            k.property.name(),
            k.backend,
            format!("{}/{}", k.killed, k.seeds),
            k.executions
                .map_or("-".into(), |e| format!("{} [{}, {}]", e[0], e[1], e[2])),
            k.seconds.map_or("-".into(), |s| format!(
                "{:.4} [{:.4}, {:.4}]",
                s[0], s[1], s[2]
            )),
            entries.join(","),
        );
    }
    if !growth.is_empty() {
        println!();
        println!(
            "Growth: v6.0, every property judged, one reader, no periodic flusher, val=2,3, batch 1"
        );
        let sw = growth.iter().map(|g| g.search.len()).max().unwrap_or(6);
        println!(
            "{:>4} {:>7}  {:<sw$} {:>10} {:>8}  done",
            "cpus", "updates", "search", "executions", "seconds"
        );
        for g in &growth {
            println!(
                "{:>4} {:>7}  {:<sw$} {:>10} {:>8.2}  {}",
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
