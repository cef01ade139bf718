//! `flushcheck merge`: combine shard runs into one matrix.

use std::process::ExitCode;
use std::time::Duration;

use crate::check::Suite;
use crate::drive::{matrix_ok, merge_shards, Cell, Plan};
use crate::protocol::Variant;

use super::args::print_json;
use super::table::{summary, table};

/// `flushcheck merge`.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// JSON files, one per shard.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Read the shard files, merge, print.
pub fn merge(a: &MergeArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let mut cells: Vec<Cell> = Vec::new();
    for f in &a.files {
        let text =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let part: Vec<Cell> = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a flushcheck --json matrix: {e}", f.display()))?;
        cells.extend(part);
    }
    let merged = merge_shards(&cells);
    if a.json {
        print_json(&merged)?;
    } else {
        let mut plan = Plan::new(
            Suite {
                entries: Vec::new(),
            },
            registry.to_vec(),
        );
        plan.variants
            .retain(|v| merged.iter().any(|c| c.variant == v.name));
        print!("{}", table(&plan, &merged, true));
        print!("{}", summary(&plan, &merged, Duration::ZERO));
    }
    Ok(if matrix_ok(&merged) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
