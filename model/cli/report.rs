//! `flushcheck report`: the matrix and every violation explained, as one
//! markdown file for a review thread; with `--finding ID` (or `--all`) a
//! finding's mail ([`crate::publish::mail`]), or with `--full` the model's
//! whole report on it. Argument parsing and dispatch only: the texts are
//! made in [`crate::report`].

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;

use crate::check::run::Verdict;
use crate::drive::explain::{self, Explained, Search, Target};
use crate::drive::matrix_ok;
use crate::explore::{quiet_panics, Backend};
use crate::protocol::Variant;
use crate::vocab::BackendName;

use crate::publish::mail::{self, full};

use super::args::Format;
use super::explain::render;
use super::matrix::{build_plan, run_with_progress, MatrixArgs};
use crate::publish::table::markdown;

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
    /// The model's whole report on the finding (witnesses, traces,
    /// candidates, what a reader observes, the price) instead of the mail.
    #[arg(long = "model-report")]
    pub model_report: bool,
    /// A kernel source tree (or a directory of unpacked trees) to make a
    /// patch's diff from [default: $FLUSHCHECK_KERNEL_SOURCE, the kernel
    /// cache's src/, /usr/src].
    #[arg(long, value_name = "DIR")]
    pub source: Option<std::path::PathBuf>,
    /// The recorded consoles of real kernels the c12 mail reads its
    /// evidence from [default: tests/consoles of the source tree].
    #[arg(long, value_name = "DIR")]
    pub consoles: Option<std::path::PathBuf>,
    /// The patch mails' `Signed-off-by:` (`"Name <address>"`).
    #[arg(long, value_name = "WHO")]
    pub signed_off_by: Option<String>,
    /// With --model-report: the trace as the model's column diagram with its short
    /// names (`U.1[0] += 2`) instead of the kernel's statements
    /// (`this_cpu_add_return(statc->stats_updates, 2) = 2`).
    #[arg(long = "model-names", requires = "model_report")]
    pub model_names: bool,
    /// With --model-report: also run each fix candidate's default suite (as
    /// `flushcheck --variant NAME`).
    #[arg(long, requires = "model_report", conflicts_with = "no_check")]
    pub suite: bool,
    /// With --model-report: list the fix candidates without checking them.
    #[arg(long = "no-check", requires = "model_report")]
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

/// The default suite run for one variant, as `flushcheck --variant NAME`
/// runs it, in a line saying whether every cell is as the catalogue
/// expects.
pub fn default_suite(name: &str, registry: &[Variant]) -> Result<String, String> {
    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        m: MatrixArgs,
    }
    let w =
        <Wrap as clap::Parser>::try_parse_from(["flushcheck", "--variant", name, "--in-process"])
            .map_err(|e| e.to_string())?;
    let plan = build_plan(&w.m, registry)?;
    let (m, elapsed) = run_with_progress(&plan, true);
    Ok(full::suite_line(&m.cells, elapsed))
}

/// `report --finding ID` (to standard output, or --out FILE) and
/// `report --all --out DIR`.
fn finding_reports(a: &ReportArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let budget = std::time::Duration::from_secs(a.matrix.budget.max(1));
    let ctx = mail::Ctx {
        source: a.source.clone(),
        consoles: a.consoles.clone(),
        signed_off_by: a.signed_off_by.clone(),
    };
    let suite = |name: &str| default_suite(name, registry);
    let opts = full::Full {
        model_names: a.model_names,
        depth: if a.no_check {
            full::Depth::NoCheck
        } else {
            full::Depth::Full
        },
        suite: if a.suite { Some(&suite) } else { None },
    };
    if a.model_report {
        quiet_panics();
    }
    let one = |f: &crate::protocol::findings::Finding| -> Result<String, String> {
        if a.model_report {
            full::full(f, registry, budget, &opts)
        } else {
            Ok(mail::for_finding(f, &ctx)?.render())
        }
    };
    if a.all {
        let dir = a.out.as_ref().expect("clap requires --out");
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for f in crate::protocol::findings::all() {
            eprintln!("report {} ...", f.id);
            let p = dir.join(format!("{}.txt", f.id));
            std::fs::write(&p, one(&f)?).map_err(|e| format!("{}: {e}", p.display()))?;
            println!("wrote {}", p.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let id = a.finding.as_deref().expect("checked by the caller");
    let f = crate::protocol::findings::by_id(id)?;
    let text = one(&f)?;
    match &a.out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            println!("wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
