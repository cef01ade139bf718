//! `flushcheck report`: the matrix and every violation explained, as one
//! markdown file for a review thread.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;

use crate::check::run::Verdict;
use crate::drive::explain::{self, Explained, Search, Target};
use crate::drive::matrix_ok;
use crate::explore::{quiet_panics, Backend};
use crate::protocol::Variant;
use crate::vocab::BackendName;

use super::args::Format;
use super::explain::render;
use super::matrix::{build_plan, run_with_progress, MatrixArgs};
use super::table::markdown;

/// `flushcheck report`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Where to write the report.
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// The matrix to run.
    #[command(flatten)]
    pub matrix: MatrixArgs,
}

/// Run the matrix, explain each violated (variant, property) once, write
/// the report.
pub fn report(a: &ReportArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let plan = build_plan(&a.matrix, registry)?;
    quiet_panics();
    let (m, elapsed) = run_with_progress(&plan, a.matrix.in_process);
    let mut md = String::new();
    let _ = writeln!(md, "# flushcheck report\n");
    let _ = writeln!(
        md,
        "memcg-flush-model {} (loom 0.7.3, shuttle 0.9.10); model of mm/memcontrol.c v5.19 and\nv6.0 (873f64b791a2).\n",
        env!("CARGO_PKG_VERSION")
    );
    md.push_str(&markdown(&plan, &m.cells, elapsed));
    let _ = writeln!(md, "## Counterexamples\n");
    let mut seen = BTreeSet::new();
    for c in m.cells.iter().filter(|c| c.verdict == Verdict::Violated) {
        if !seen.insert((c.variant.clone(), c.property)) {
            continue;
        }
        let Some(entry) = c
            .configs
            .iter()
            .find(|x| x.verdict == Verdict::Violated)
            .and_then(|x| plan.suite.entry(&x.entry))
        else {
            continue;
        };
        let variant = Variant::find(registry, &c.variant)?;
        let search = match c.backend {
            BackendName::Loom => Search::Loom { max_bound: Some(3) },
            _ => Search::Shuttle {
                backend: Backend::ShuttlePct {
                    iterations: a.matrix.shuttle_iterations,
                    depth: a.matrix.pct_depth,
                    seed: a.matrix.seed,
                },
                runs: 5,
            },
        };
        eprintln!(
            "explaining {} / {} on {} ...",
            c.variant, c.property, entry.name
        );
        let t = Target {
            cfg: &entry.cfg,
            variant: &variant,
            registry,
            property: c.property,
            rcu: None,
        };
        match explain::explain(&t, &search, plan.budget) {
            Explained::Found(x) => md.push_str(&render(&x, Format::Markdown, 80)?),
            Explained::NotFound { search, note, .. } => {
                let _ = writeln!(
                    md,
                    "### {}: {}\n\nNo trace: {search}{}.\n",
                    c.variant,
                    c.property,
                    note.map(|n| format!(" ({n})")).unwrap_or_default()
                );
            }
        }
    }
    std::fs::write(&a.out, md).map_err(|e| format!("cannot write {}: {e}", a.out.display()))?;
    println!("wrote {}", a.out.display());
    Ok(if matrix_ok(&m.cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
