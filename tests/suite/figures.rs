//! Pins the figures and tables of docs/findings.md, "Worst-case staleness
//! by version": `flushcheck plot` regenerated into a temporary directory
//! must give the committed SVG files byte for byte, and the tables it
//! prints must be in the document verbatim. Also pins what the figures
//! claim: every kernel version of the catalogue is in them (or listed as
//! not derived), and the derived curves agree with the closed forms.

use std::path::PathBuf;

use memcg_flush_model::cli::plot::{figures, TABLE_CPUS};
use memcg_flush_model::measure::figures::{
    kernel_versions, render_svg, staleness_vs_cpus, FIGURE_BATCH, RMW_UPDATES_PER_CPU,
};
use memcg_flush_model::protocol::per_memcg::proposal_2026::{ilog2, int_sqrt};

use crate::common::reg;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `flushcheck plot --out DIR` writes the committed figures, and its tables
/// are the ones docs/findings.md shows.
#[test]
fn committed_figures_and_tables_are_regenerated_exactly() {
    let _figures = crate::common::figures_lock();
    let reg = reg();
    let scratch = tempfile::tempdir().expect("dir");
    let dir = scratch.path().to_path_buf();
    let args = memcg_flush_model::cli::plot::PlotArgs {
        out: Some(dir.clone()),
        rmw_updates: RMW_UPDATES_PER_CPU,
    };
    memcg_flush_model::cli::plot::plot(&args, reg).expect("plot");
    let findings = std::fs::read_to_string(root().join("docs/findings.md")).expect("findings");
    for (fig, table) in figures(reg, RMW_UPDATES_PER_CPU) {
        let fresh = std::fs::read_to_string(dir.join(&fig.file)).expect("written");
        assert_eq!(fresh, render_svg(&fig).expect("svg"), "{}", fig.file);
        let committed = std::fs::read_to_string(root().join("docs/figures").join(&fig.file))
            .unwrap_or_else(|e| panic!("docs/figures/{}: {e}", fig.file));
        assert!(
            committed == fresh,
            "docs/figures/{} is stale: run `flushcheck plot --out docs/figures`",
            fig.file
        );
        assert!(
            findings.contains(&format!("![{}](figures/{})", fig.title, fig.file)),
            "docs/findings.md does not embed {}",
            fig.file
        );
        assert!(
            findings.contains(&table),
            "docs/findings.md lacks the table of {}:\n{table}",
            fig.file
        );
        // Every kernel version has a line or is listed as not derived.
        for v in kernel_versions(reg) {
            assert!(
                fig.series.iter().any(|s| s.variants.contains(&v.name))
                    || fig.missing.contains(&v.name),
                "{} missing from {}",
                v.name,
                fig.file
            );
        }
    }
}

/// The staleness curves are the closed forms of docs/findings.md:
/// 2n(B + 1) for v5.19 and v6.0, T + nB for the per-memcg versions with
/// their own trigger T; and the 2026 proposal exceeds C18 by exactly N.
#[test]
fn staleness_curves_are_the_closed_forms() {
    let reg = reg();
    let fig = staleness_vs_cpus(reg);
    let b = FIGURE_BATCH;
    let line = |name: &str| {
        fig.series
            .iter()
            .find(|s| s.variants.iter().any(|v| v == name))
            .unwrap_or_else(|| panic!("{name}"))
    };
    let forms: [(&str, &dyn Fn(i64) -> i64); 6] = [
        ("v5.19", &|n| 2 * n * (b + 1)),
        ("v6.0", &|n| 2 * n * (b + 1)),
        ("v6.8", &|n| n * b + n * b),
        ("v6.17", &|n| n * b + n * b),
        ("scaled-2026", &|n| b * (ilog2(n) + 1) + n * b),
        ("scaled-2026-sqrt", &|n| b * int_sqrt(n + 2) + n * b),
    ];
    for (name, f) in forms {
        for &(n, y) in &line(name).points {
            assert_eq!(y, f(n as i64) as f64, "{name} at {n} CPUs");
        }
    }
    let claim = line("C18 claim: N * (BATCH - 1) + BATCH * (ilog2(N) + 1)");
    for (&(n, y), &(_, c)) in line("scaled-2026").points.iter().zip(&claim.points) {
        assert_eq!(y - c, n as f64, "{n} CPUs");
    }
    assert!(TABLE_CPUS
        .iter()
        .all(|n| line("v5.19").points.iter().any(|p| p.0 == *n)));
}
