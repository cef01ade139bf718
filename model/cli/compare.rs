//! `flushcheck compare`: two `--json` matrices, cell by cell, by verdict
//! class (holds, holds* = holds exhaustively, violated, inconclusive, not
//! run): what a change to the model or the plan did to the verdicts.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde::Deserialize;

use crate::vocab::BackendName;

/// `flushcheck compare`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// The matrix before (a `flushcheck --json` output).
    pub before: std::path::PathBuf,
    /// The matrix after.
    pub after: std::path::PathBuf,
}

/// The part of a cell the comparison reads: every `--json` output since
/// the first has these fields.
#[derive(Deserialize)]
struct Cell {
    variant: String,
    property: String,
    backend: String,
    verdict: String,
    #[serde(default)]
    exhaustive: bool,
}

type Key = (String, String, String);

/// The verdict class of a cell.
fn class(c: &Cell) -> String {
    match (c.verdict.as_str(), c.exhaustive) {
        ("holds", true) => "holds*".into(),
        (v, _) => v.into(),
    }
}

fn read(path: &std::path::Path) -> Result<BTreeMap<Key, String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let cells: Vec<Cell> = super::args::doc_data(&text, &["matrix"])
        .and_then(|d| serde_json::from_value(d).map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: not a flushcheck --json matrix: {e}", path.display()))?;
    Ok(cells
        .iter()
        .map(|c| {
            (
                (c.variant.clone(), c.property.clone(), c.backend.clone()),
                class(c),
            )
        })
        .collect())
}

/// Print every cell whose class differs (a cell in one matrix only counts
/// as "not run" in the other) and the counts; exit 1 if any cell of a
/// deterministic search differs. std runs real threads, whose schedules
/// differ from run to run: its differences are listed apart and do not
/// fail the comparison.
pub fn compare(a: &CompareArgs) -> Result<ExitCode, String> {
    let (before, after) = (read(&a.before)?, read(&a.after)?);
    let not_run = "not run".to_string();
    let mut keys: Vec<&Key> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let (mut changed, mut std) = (0, Vec::new());
    for k in &keys {
        let (b, n) = (
            before.get(*k).unwrap_or(&not_run),
            after.get(*k).unwrap_or(&not_run),
        );
        if b == n {
            continue;
        }
        let line = format!("{} {} {}: {b} -> {n}", k.0, k.1, k.2);
        if k.2 == BackendName::Std.name() {
            std.push(line);
        } else {
            changed += 1;
            println!("{line}");
        }
    }
    if !std.is_empty() {
        println!("std (real threads: schedules differ from run to run):");
        for l in &std {
            println!("  {l}");
        }
    }
    println!(
        "{} cells before, {} after; {changed} of {} differ in verdict class on the \
         deterministic searches, {} on std",
        before.len(),
        after.len(),
        keys.len(),
        std.len()
    );
    Ok(if changed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
