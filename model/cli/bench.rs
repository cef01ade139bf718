//! `flushcheck bench`: the hot path on real threads.

use std::process::ExitCode;

use crate::measure::bench::{
    self, FLUSH_EVERY, HUGE_EVERY, HUGE_VAL, MEMCG_CHARGE_BATCH, READ_EVERY,
};
use crate::protocol::Variant;

use super::args::print_doc;

/// `flushcheck bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Thread counts (updater threads standing for CPUs).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4, 8, 16, 32])]
    pub threads: Vec<usize>,
    /// __mod_memcg_state() calls per thread per run.
    #[arg(long, default_value_t = 2_000_000)]
    pub updates: usize,
    /// Rounds; each runs the variants back to back.
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Measure the rstat tree variants with and without the smp_mb() pair
    /// (v6.8-tree, v6.8-tree-mb, v6.17-tree, v6.17-tree-mb) instead: the
    /// price of the barrier reverted in d8ef4b38cb69 (B1).
    #[arg(long)]
    pub barrier: bool,
    /// Price the findings' fix candidates instead: each beside the unfixed
    /// version and its no-skip twin, in one run (`--finding` picks some).
    #[arg(long, conflicts_with = "barrier")]
    pub fixes: bool,
    /// With --fixes: only these findings (comma-separated identifiers).
    #[arg(long, value_delimiter = ',', requires = "fixes")]
    pub finding: Vec<String>,
}

/// Run the benchmark.
pub fn bench(a: &BenchArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.threads.is_empty() {
        return Err("--threads: give at least one thread count, e.g. 1,2,4".into());
    }
    if let Some(t) = a.threads.iter().find(|t| **t == 0 || **t > 1024) {
        return Err(format!(
            "--threads {t}: thread counts must be between 1 and 1024"
        ));
    }
    if a.updates < 1024 {
        return Err(format!(
            "--updates {}: need at least 1024 updates per thread",
            a.updates
        ));
    }
    if a.reps == 0 {
        return Err("--reps 0: need at least 1 round".into());
    }
    let progress = |line: &str| eprintln!("{line}");
    if a.fixes {
        return prices(a, registry, &progress);
    }
    if a.barrier {
        let rows = bench::compare_barriers(&a.threads, a.updates, a.reps, &progress);
        if a.json {
            print_doc("bench-barrier", &rows)?;
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "hot path with the rstat updated tree: {} __mod_memcg_state() per thread, batch {MEMCG_CHARGE_BATCH};",
            a.updates
        );
        println!(
            "flusher every 2 ms, reader every 100 us; medians of {} interleaved rounds",
            a.reps
        );
        println!(
            "{:>7} {:>13} {:>13} {:>9} {:>13} {:>13} {:>9}",
            "threads",
            "6.8-tree M/s",
            "+smp_mb M/s",
            "ratio",
            "6.17-tree M/s",
            "+smp_mb M/s",
            "ratio"
        );
        for r in &rows {
            println!(
                "{:>7} {:>13.2} {:>13.2} {:>9.3} {:>13.2} {:>13.2} {:>9.3}",
                r.threads,
                r.v6_8_tree / 1e6,
                r.v6_8_tree_mb / 1e6,
                r.ratio_v6_8,
                r.v6_17_tree / 1e6,
                r.v6_17_tree_mb / 1e6,
                r.ratio_v6_17
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rows = bench::compare(&a.threads, a.updates, a.reps, &progress);
    if a.json {
        print_doc("bench", &rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "hot path: {} __mod_memcg_state() per thread, batch {MEMCG_CHARGE_BATCH}, every {HUGE_EVERY}th update {HUGE_VAL} pages;",
        a.updates
    );
    println!(
        "flusher every 2 ms, reader every 100 us; medians of {} interleaved rounds",
        a.reps
    );
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
         (reader every {READ_EVERY} updates, periodic flush every {FLUSH_EVERY}); the same on every machine."
    );
    Ok(ExitCode::SUCCESS)
}

/// `bench --fixes`: a table per finding, every row measured in the same
/// run as the finding's unfixed version.
fn prices(
    a: &BenchArgs,
    registry: &[Variant],
    progress: &dyn Fn(&str),
) -> Result<ExitCode, String> {
    let list = super::findings::selected(&a.finding)?;
    let mut all = Vec::new();
    for f in &list {
        all.extend(crate::measure::price::price(
            f, registry, &a.threads, a.updates, a.reps, progress,
        )?);
    }
    if a.json {
        print_doc("bench-fixes", &all)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "MEMCG_CHARGE_BATCH = {MEMCG_CHARGE_BATCH}; median of {} rounds of {} updates per \
         thread; per-memcg versions charge a grandchild of the root; ratio: over the \
         unfixed version in the same run; RMWs: threshold atomics per update on the \
         deterministic schedule",
        a.reps, a.updates
    );
    for f in &list {
        let rows: Vec<_> = all.iter().filter(|r| r.finding == f.id).collect();
        if rows.is_empty() {
            println!("\n{}: no hot-path change to price (lifetime form)", f.id);
            continue;
        }
        println!("\n{}", f.id);
        println!(
            "  {:<30} {:<8} {:>7} {:>9} {:>6} {:>9}",
            "variant", "role", "threads", "M upd/s", "ratio", "RMW/upd"
        );
        for r in rows {
            println!(
                "  {:<30} {:<8} {:>7} {:>9.1} {:>6.2} {:>9.5}",
                r.variant,
                r.role.name(),
                r.threads,
                r.updates_per_sec / 1e6,
                r.ratio_to_unfixed,
                r.rmws_per_update
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
