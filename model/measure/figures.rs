//! The figures of docs/findings.md, "Worst-case staleness by version":
//! their data and their SVG rendering (plotters' SVG backend), written by
//! `flushcheck plot`.
//!
//! Every kernel version of the catalogue ([`Kind::Kernel`]) gets a series,
//! in catalogue order, so that a version added to the catalogue joins the
//! figures without a change here:
//!
//! - [`staleness_vs_cpus`]: the derived worst staleness at a reader's
//!   decision not to flush, racing resets aside (residue + counted +
//!   skipped, the part the reader's gate answers for), against the CPU
//!   count, at the kernel's `MEMCG_CHARGE_BATCH` and 1-page updates. The
//!   derivations ([`crate::check::derived`]) are the ones `flushcheck
//!   bounds --exhaustive` confirms on small configurations; a version
//!   without a derivation is listed as missing, not guessed.
//! - [`rmws_per_update`]: shared-atomic RMWs per `__mod_memcg_state()` on
//!   the deterministic round-robin schedule of the benchmark
//!   ([`crate::measure::bench::count_rmws_batch`]), counted by a monitor:
//!   the same on every machine.
//!
//! Versions whose series are equal share one line and one legend entry.

use std::fmt::Write as _;

use plotters::prelude::*;
use serde::Serialize;

use crate::config::Config;
use crate::measure::bench::count_rmws_batch;
use crate::measure::bounds::derived_for;
use crate::protocol::per_memcg::proposal_2026::ilog2;
use crate::protocol::{Kind, Variant};
use crate::vocab::Family;

/// `MEMCG_CHARGE_BATCH` of the figures: 64, its value from v6.1 on (v5.19
/// and v6.0 had 32; one value for every version compares the protocols,
/// not the constant).
pub const FIGURE_BATCH: i64 = 64;

/// The CPU counts of the staleness figure.
pub const STALENESS_CPUS: std::ops::RangeInclusive<usize> = 1..=32;

/// The CPU counts of the RMW figure.
pub const RMW_CPUS: [usize; 5] = [1, 2, 4, 8, 16];

/// Updates per CPU of each point of the RMW figure.
pub const RMW_UPDATES_PER_CPU: usize = 1 << 13;

/// The RMW figure's reader period, in updates (all CPUs).
pub const RMW_READ_EVERY: usize = 1 << 11;

/// The RMW figure's periodic-flush period, in updates.
pub const RMW_FLUSH_EVERY: usize = 1 << 14;

/// One line of a figure.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// The versions it stands for (more than one when their data agree).
    pub variants: Vec<String>,
    /// (x, y) points.
    pub points: Vec<(usize, f64)>,
    /// A claim's bound rather than a version's maximum (drawn dashed).
    pub claim: bool,
}

/// One figure's data.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// File name under the output directory.
    pub file: String,
    /// Caption.
    pub title: String,
    /// X axis.
    pub x_desc: String,
    /// Y axis.
    pub y_desc: String,
    /// Digits after the point on the y axis and in the table.
    pub y_decimals: usize,
    /// Lines.
    pub series: Vec<Series>,
    /// Kernel versions with no data (no derivation applies).
    pub missing: Vec<String>,
    /// The x axis in log2 scale (CPU counts that double).
    pub x_log2: bool,
}

/// The flush protocol's kernel versions of `registry`, in catalogue
/// order.
pub fn kernel_versions(registry: &[Variant]) -> Vec<&Variant> {
    registry
        .iter()
        .filter(|v| v.kind == Kind::Kernel && v.family != Family::Lifetime)
        .collect()
}

/// The configuration a staleness point is derived on: `n` CPUs, 1-page
/// updates, enough of them for every state the maximum needs, one reader
/// thread, no periodic flusher.
pub fn staleness_config(n: usize, batch: i64) -> Config {
    Config {
        cpus: n,
        batch,
        updates: 2 * (batch as usize + 1),
        vals: vec![1],
        ..Config::bounds()
    }
}

/// Add `points` for `name`, merged into an earlier series with the same
/// points.
fn push(series: &mut Vec<Series>, name: &str, points: Vec<(usize, f64)>, claim: bool) {
    match series
        .iter_mut()
        .find(|s| s.points == points && s.claim == claim)
    {
        Some(s) => {
            s.variants.push(name.to_string());
            s.label = s.variants.join(", ");
        }
        None => series.push(Series {
            label: name.to_string(),
            variants: vec![name.to_string()],
            points,
            claim,
        }),
    }
}

/// Worst staleness at a no-flush decision (racing resets aside) against
/// the CPU count, derived, with the documented bound (C1) and the 2026
/// reviewers' bound (C18) beside it.
pub fn staleness_vs_cpus(registry: &[Variant]) -> Figure {
    let b = FIGURE_BATCH;
    let mut series = Vec::new();
    let mut missing = Vec::new();
    for v in kernel_versions(registry) {
        let points: Option<Vec<(usize, f64)>> = STALENESS_CPUS
            .map(|n| derived_for(&staleness_config(n, b), v).map(|d| (n, d.since_reset as f64)))
            .collect();
        match points {
            Some(p) => push(&mut series, &v.name, p, false),
            None => missing.push(v.name.clone()),
        }
    }
    let claim = |f: &dyn Fn(i64) -> i64| -> Vec<(usize, f64)> {
        STALENESS_CPUS.map(|n| (n, f(n as i64) as f64)).collect()
    };
    push(
        &mut series,
        "C1 claim: MEMCG_CHARGE_BATCH * nr_cpus",
        claim(&|n| b * n),
        true,
    );
    push(
        &mut series,
        "C18 claim: N * (BATCH - 1) + BATCH * (ilog2(N) + 1)",
        claim(&|n| n * (b - 1) + b * (ilog2(n) + 1)),
        true,
    );
    Figure {
        file: "staleness-vs-cpus.svg".into(),
        title: format!("Worst staleness at a no-flush decision, racing resets aside (BATCH = {b}, 1-page updates)"),
        x_desc: "CPUs (num_online_cpus)".into(),
        y_desc: "pages not in the aggregate".into(),
        y_decimals: 0,
        series,
        missing,
        x_log2: false,
    }
}

/// Shared-atomic RMWs per update by version against the CPU count, on the
/// deterministic schedule with `updates_per_cpu` updates per CPU.
pub fn rmws_per_update(registry: &[Variant], updates_per_cpu: usize) -> Figure {
    let mut series = Vec::new();
    for v in kernel_versions(registry) {
        let points = RMW_CPUS
            .iter()
            .map(|&n| {
                let (rmws, updates) = count_rmws_batch(
                    v,
                    n,
                    FIGURE_BATCH,
                    updates_per_cpu * n,
                    RMW_READ_EVERY,
                    RMW_FLUSH_EVERY,
                );
                (n, rmws as f64 / updates.max(1) as f64)
            })
            .collect();
        push(&mut series, &v.name, points, false);
    }
    Figure {
        file: "rmws-per-update.svg".into(),
        title: format!(
            "Shared-atomic RMWs per update (BATCH = {FIGURE_BATCH}, a read every {RMW_READ_EVERY} updates, a periodic flush every {RMW_FLUSH_EVERY})"
        ),
        x_desc: "CPUs (updater threads, round-robin; log scale)".into(),
        y_desc: "RMWs per __mod_memcg_state()".into(),
        y_decimals: 4,
        series,
        missing: Vec::new(),
        x_log2: true,
    }
}

/// A colour per series index.
fn colour(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

/// `fig` as an SVG document.
pub fn render_svg(fig: &Figure) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", fig.file);
    // A log2 axis is drawn as a linear one over log2(x), labelled 2^t.
    let at = |x: usize| {
        if fig.x_log2 {
            (x.max(1) as f64).log2()
        } else {
            x as f64
        }
    };
    let xs = fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = (xs.clone().min().unwrap_or(0), xs.max().unwrap_or(1));
    let y_max = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    // Headroom above the data for the legend, so that it covers no line:
    // each entry takes about LEGEND_ROW of the PLOT_HEIGHT pixels.
    const PLOT_HEIGHT: f64 = 440.0;
    const LEGEND_ROW: f64 = 21.0;
    let legend = (fig.series.len() as f64 * LEGEND_ROW + 16.0).min(PLOT_HEIGHT / 2.0);
    let y1 = y_max * 1.04 * PLOT_HEIGHT / (PLOT_HEIGHT - legend);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&fig.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(at(x0)..at(x1), 0.0..y1.max(1e-9))
            .map_err(|e| err(&e))?;
        let x_label = |x: &f64| {
            if fig.x_log2 {
                format!("{:.0}", x.exp2())
            } else {
                format!("{x:.0}")
            }
        };
        let mut mesh = chart.configure_mesh();
        if fig.x_log2 {
            mesh.x_labels((at(x1) - at(x0)).round() as usize + 1);
        }
        mesh.x_desc(&fig.x_desc)
            .y_desc(&fig.y_desc)
            .light_line_style(RGBColor(238, 238, 238))
            .x_label_formatter(&x_label)
            .y_label_formatter(&|y| format!("{y:.*}", fig.y_decimals.saturating_sub(1)))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, s) in fig.series.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (at(x), y)).collect();
            let anno = if s.claim {
                chart
                    .draw_series(DashedLineSeries::new(pts, 6, 4, c.stroke_width(2)))
                    .map_err(|e| err(&e))?
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(|e| err(&e))?
            };
            anno.label(&s.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(out)
}

/// `fig`'s data as a Markdown table: one row per series, one column per x
/// in `xs` (every x if empty).
pub fn table_md(fig: &Figure, xs: &[usize], x_name: &str) -> String {
    let decimals = fig.y_decimals;
    let all: Vec<usize> = fig
        .series
        .first()
        .map_or(Vec::new(), |s| s.points.iter().map(|p| p.0).collect());
    let xs: Vec<usize> = if xs.is_empty() { all } else { xs.to_vec() };
    let mut out = String::new();
    let _ = write!(out, "| {x_name} |");
    for x in &xs {
        let _ = write!(out, " {x} |");
    }
    let _ = write!(out, "\n|---|");
    for _ in &xs {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    for s in &fig.series {
        let _ = write!(out, "| {} |", s.label);
        for x in &xs {
            match s.points.iter().find(|p| p.0 == *x) {
                Some(p) => {
                    let _ = write!(out, " {:.*} |", decimals, p.1);
                }
                None => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
    for m in &fig.missing {
        let _ = write!(out, "| {m} |");
        for _ in &xs {
            out.push_str(" not derived |");
        }
        out.push('\n');
    }
    out
}
