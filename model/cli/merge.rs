//! `flushcheck merge`: combine shard runs into one matrix, or the shards
//! of one exhaustive search (`flushcheck exhaustive --shard I/N --json`)
//! into its table.

use std::process::ExitCode;
use std::time::Duration;

use crate::check::Suite;
use crate::drive::{matrix_ok, merge_shards, Cell, Plan};
use crate::measure::exhaustive::{self, SideBySide};
use crate::protocol::Variant;

use super::args::{doc_data, print_doc};
use crate::publish::summary::summary;
use crate::publish::table::table;

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
    let mut searches: Vec<SideBySide> = Vec::new();
    for f in &a.files {
        let text =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let bad = |e: String| format!("{}: not a flushcheck --json matrix: {e}", f.display());
        let data = doc_data(&text, &["matrix", "exhaustive"]).map_err(bad)?;
        match serde_json::from_value::<Vec<Cell>>(data.clone()) {
            Ok(part) => cells.extend(part),
            Err(e) => match serde_json::from_value::<Vec<SideBySide>>(data) {
                Ok(part) => searches.extend(part),
                Err(_) => return Err(bad(e.to_string())),
            },
        }
    }
    if !searches.is_empty() {
        if !cells.is_empty() {
            return Err("merge: matrix shards and exhaustive shards mixed".into());
        }
        return merge_exhaustive(a, &searches);
    }
    let merged = merge_shards(&cells);
    if a.json {
        print_doc("matrix", &merged)?;
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

/// The shards of exhaustive searches: one row per variant and
/// configuration ([`exhaustive::merge`]); exit 1 unless every row finished.
fn merge_exhaustive(a: &MergeArgs, parts: &[SideBySide]) -> Result<ExitCode, String> {
    let summaries: Vec<_> = parts.iter().map(|p| p.stateful.clone()).collect();
    let merged: Vec<SideBySide> = exhaustive::merge(&summaries)
        .into_iter()
        .map(|s| SideBySide {
            stateful: s,
            stateless: None,
            plain: None,
            differences: Vec::new(),
        })
        .collect();
    if a.json {
        print_doc("exhaustive", &merged)?;
    } else if let Some(first) = merged.first() {
        print!("{}", super::exhaustive::table(&first.stateful.cfg, &merged));
    }
    Ok(if merged.iter().all(|r| r.stateful.finished) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
