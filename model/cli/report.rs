//! `flushcheck report`: the matrix and every violation explained, as one
//! markdown file for a review thread; with `--finding ID` (or `--all`) a
//! finding's plain-text report for a mail ([`super::mail`]).

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
use super::mail;
use super::matrix::{build_plan, run_with_progress, MatrixArgs};
use super::table::markdown;

/// `flushcheck report`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Where to write the report (with --all: the directory, one ID.txt
    /// per finding).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Print finding ID's plain-text report (`flushcheck findings` lists
    /// the identifiers) instead of running the matrix.
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub finding: Option<String>,
    /// Write every finding's report into --out DIR.
    #[arg(long, requires = "out")]
    pub all: bool,
    /// The finding's trace as the model's column diagram with its short
    /// names (`U.1[0] += 2`) instead of the kernel's statements
    /// (`this_cpu_add_return(statc->stats_updates, 2) = 2`).
    #[arg(long = "model-names")]
    pub model_names: bool,
    /// Also run each fix candidate's default suite (as
    /// `flushcheck --variant NAME`) in a finding's report.
    #[arg(long, conflicts_with = "no_check")]
    pub suite: bool,
    /// In a finding's report, list the fix candidates without checking
    /// them: the witness searches only (seconds; the checks take most of
    /// a report's minute or two).
    #[arg(long = "no-check")]
    pub no_check: bool,
    /// The matrix to run.
    #[command(flatten)]
    pub matrix: MatrixArgs,
}

/// Run the matrix, explain each violated (variant, property) once, write
/// the report.
pub fn report(a: &ReportArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.finding.is_some() || a.all {
        return finding_reports(a, registry);
    }
    let Some(out) = &a.out else {
        return Err("report: --out FILE (or --finding ID, or --all --out DIR)".into());
    };
    let plan = build_plan(&a.matrix, registry)?;
    quiet_panics();
    let (mut m, elapsed) = run_with_progress(&plan, a.matrix.in_process);
    super::matrix::unpin(&plan, &mut m.cells);
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
    std::fs::write(out, md).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(if matrix_ok(&m.cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `report --finding ID` (to standard output, or --out FILE) and
/// `report --all --out DIR`.
fn finding_reports(a: &ReportArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let budget = std::time::Duration::from_secs(a.matrix.budget.max(1));
    quiet_panics();
    if a.all {
        let dir = a.out.as_ref().expect("clap requires --out");
        let all = crate::protocol::findings::all();
        for p in mail::write_all(&all, dir, registry, budget, a.model_names, a.suite)? {
            println!("wrote {}", p.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let id = a.finding.as_deref().expect("checked by the caller");
    let f = crate::protocol::findings::by_id(id)?;
    let depth = if a.no_check {
        mail::Depth::NoCheck
    } else {
        mail::Depth::Full
    };
    let text = mail::mail_at(&f, registry, budget, a.model_names, a.suite, depth)?;
    match &a.out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            println!("wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
