//! `flushcheck plot`: the figures of docs/findings.md ("Worst-case
//! staleness by version") as SVG files, and their data as Markdown tables.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::measure::figures::{
    render_svg, rmws_per_update, staleness_vs_cpus, table_md, Figure, RMW_UPDATES_PER_CPU,
};
use crate::protocol::Variant;

/// `flushcheck plot`.
#[derive(clap::Args, Debug, Clone)]
pub struct PlotArgs {
    /// Directory the SVG files are written to (created if missing)
    /// [default: a fresh directory, ./flushcheck-figures or
    /// ./flushcheck-figures-N; `--out docs/figures` replaces the committed
    /// figures].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Updates per CPU of each point of the RMW figure.
    #[arg(long, default_value_t = RMW_UPDATES_PER_CPU)]
    pub rmw_updates: usize,
}

/// The CPU counts the staleness table shows (the figure has every count).
pub const TABLE_CPUS: [usize; 7] = [1, 2, 3, 4, 8, 16, 32];

/// The figures and their tables, as `flushcheck plot` prints them.
pub fn figures(registry: &[Variant], rmw_updates: usize) -> Vec<(Figure, String)> {
    let staleness = staleness_vs_cpus(registry);
    let t1 = table_md(&staleness, &TABLE_CPUS, "CPUs");
    let rmws = rmws_per_update(registry, rmw_updates);
    let t2 = table_md(&rmws, &[], "CPUs");
    vec![(staleness, t1), (rmws, t2)]
}

/// Write the figures and print their tables.
pub fn plot(a: &PlotArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.rmw_updates == 0 {
        return Err("--rmw-updates 0: need at least 1 update per CPU".into());
    }
    let out = match &a.out {
        Some(dir) => dir.clone(),
        None => fresh_dir("flushcheck-figures"),
    };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    // Progress: the figures' searches take a few seconds.
    eprintln!("plot: measuring staleness against CPUs and RMWs per update ...");
    for (fig, table) in figures(registry, a.rmw_updates) {
        let path = out.join(&fig.file);
        let svg = render_svg(&fig)?;
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}\n{}\n{table}", path.display(), fig.title);
    }
    Ok(ExitCode::SUCCESS)
}

/// `base`, or `base-2`, `base-3`, ...: the first that does not exist.
fn fresh_dir(base: &str) -> PathBuf {
    let mut dir = PathBuf::from(base);
    let mut n = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    dir
}
