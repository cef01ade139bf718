//! `flushcheck bench`: the hot path on real threads.

use std::process::ExitCode;

use crate::protocol::Variant;

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
}

/// Run the benchmark.
pub fn bench(_a: &BenchArgs, _registry: &[Variant]) -> Result<ExitCode, String> {
    Err("bench: not yet ported".into())
}
