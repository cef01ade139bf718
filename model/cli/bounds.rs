//! `flushcheck bounds`: staleness maxima beside the documented bound.

use std::process::ExitCode;

use crate::protocol::Variant;

use super::args::ConfigArgs;

/// `flushcheck bounds`.
#[derive(clap::Args, Debug, Clone)]
pub struct BoundsArgs {
    /// Measure the configuration given by the flags below instead of the
    /// standard list.
    #[arg(long)]
    pub custom: bool,
    /// The configuration measured with `--custom`.
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// Variants (default: v5.19, v6.0 and the off-by-one mutant).
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// shuttle schedules per scheduler (random and PCT are both run).
    #[arg(long, default_value_t = 20_000)]
    pub shuttle_iterations: usize,
    /// Search every sequentially consistent interleaving (shuttle, depth
    /// first) instead of sampling, on the small configurations where that
    /// finishes, and compare the maxima with the derived worst case.
    #[arg(long)]
    pub exhaustive: bool,
    /// Measure the abstract-time configurations (periodic work every
    /// FLUSH_TIME ticks, on time or late) instead of the standard list.
    #[arg(long)]
    pub time: bool,
    /// Cap on the schedules of one exhaustive search.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_schedules: usize,
    /// Time budget per search, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
    /// Also print witness traces: of every C1 violation, of every positive
    /// staleness after a flush call, and of the largest age in ticks.
    #[arg(long)]
    pub witness: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Measure and print the bounds.
pub fn bounds(_a: &BoundsArgs, _registry: &[Variant]) -> Result<ExitCode, String> {
    Err("bounds: not yet ported".into())
}
