//! `flushcheck perf`: how fast the checkers reach verdicts.

use std::process::ExitCode;

use crate::protocol::Variant;

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
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Measure the checkers.
pub fn perf(_a: &PerfArgs, _registry: &[Variant]) -> Result<ExitCode, String> {
    Err("perf: not yet ported".into())
}
