//! `flushcheck exhaustive`: the stateful exhaustive search (by default up
//! to CPU symmetry, on every core) beside the stateless one and the plain
//! stateful one, on one configuration or over a growth table; one shard of
//! it (`--shard I/N`), merged by `flushcheck merge`.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::explore::{quiet_panics, Shard};
use crate::measure::exhaustive::{
    growth_config, side_by_side, Options, Reductions, SideBySide, Summary, MEASURES,
};
use crate::protocol::{catalogue, Kind, Variant};

use super::args::{print_doc, ConfigArgs};
use crate::publish::table::truncate;

/// `flushcheck exhaustive`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExhaustiveArgs {
    /// The configuration (default: 2 CPUs, batch 2, three 3-page updates
    /// each, one reader, no periodic work).
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// Variants (default: v5.19, v6.0 and the off-by-one mutant; `all` for
    /// every variant of the catalogue).
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Also run the stateless DFS (sleep sets only) and check that both
    /// report the same verdicts, maxima, witness splits and coverage
    /// events; exit 1 if they differ.
    #[arg(long)]
    pub compare: bool,
    /// Also run the plain stateful DFS (no symmetry, one worker) and check
    /// that the reduced search reports the same; exit 1 if not.
    #[arg(long)]
    pub compare_plain: bool,
    /// Store states as they are, not up to permutations of interchangeable
    /// CPUs.
    #[arg(long)]
    pub no_symmetry: bool,
    /// Worker threads [default: one per core].
    #[arg(long)]
    pub workers: Option<usize>,
    /// Search only shard I of N of the tree (`--json` output; `flushcheck
    /// merge` combines the shards' files).
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Print the growth table instead: v6.0 on `growth_config(cpus,
    /// updates)` for 2..=`--max-cpus` CPUs and 1..=6 updates, the reduced
    /// search beside the plain stateful one (and the stateless one with
    /// `--compare`), until each search stops finishing within its budget.
    #[arg(long)]
    pub growth: bool,
    /// The largest CPU count of `--growth`.
    #[arg(long, default_value_t = 5)]
    pub max_cpus: usize,
    /// Cap on the schedules of one search.
    #[arg(long, default_value_t = 100_000_000)]
    pub max_schedules: usize,
    /// Time budget per search, in seconds.
    #[arg(long, default_value_t = 600)]
    pub budget: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn variants(a: &ExhaustiveArgs, registry: &[Variant]) -> Result<Vec<Variant>, String> {
    if a.variant.iter().any(|v| v == "all") {
        return Ok(registry
            .iter()
            .filter(|v| v.kind != Kind::Bound)
            .cloned()
            .collect());
    }
    if a.variant.is_empty() {
        // The default configuration is a global-threshold one.
        return Ok(super::bounds::default_variants(registry)
            .into_iter()
            .filter(|v| v.family == crate::protocol::Family::Global)
            .collect());
    }
    let names: Vec<String> = a.variant.clone();
    names.iter().map(|n| Variant::find(registry, n)).collect()
}

/// Run the searches and print them.
pub fn exhaustive(a: &ExhaustiveArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.max_schedules == 0 || a.budget == 0 {
        return Err("--max-schedules and --budget must be at least 1".into());
    }
    let budget = Duration::from_secs(a.budget);
    quiet_panics();
    if a.growth {
        return growth(a, registry, budget);
    }
    let cfg = a.cfg.over(&growth_config(2, 3));
    cfg.validate(usize::MAX, "shuttle")?;
    if cfg.ticks > 0 {
        return Err("--ticks: abstract time runs under shuttle-random and shuttle-pct only".into());
    }
    if a.shard.is_some_and(|s| s.count > 1) && !a.json {
        return Err(
            "--shard: add --json, and merge the shards' files with flushcheck merge".into(),
        );
    }
    let o = options(a, budget, a.compare, a.compare_plain);
    let start = Instant::now();
    let mut rows = Vec::new();
    for v in variants(a, registry)? {
        let r = side_by_side(&cfg, &v, registry, &o)?;
        eprintln!(
            "[{:.0}s] {} {cfg}: stateful {}",
            start.elapsed().as_secs_f64(),
            v.name,
            brief(&r.stateful)
        );
        for (what, s) in [("stateless", &r.stateless), ("plain", &r.plain)] {
            if let Some(s) = s {
                eprintln!("      {what} {}", brief(s));
            }
        }
        rows.push(r);
    }
    let bad = rows.iter().any(|r| r.agree() == Some(false));
    if a.json {
        print_doc("exhaustive", &rows)?;
    } else {
        print!("{}", table(&cfg, &rows));
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn options(a: &ExhaustiveArgs, budget: Duration, stateless: bool, plain: bool) -> Options {
    let all = Reductions::all();
    Options {
        stateless,
        plain,
        max_schedules: a.max_schedules,
        budget,
        reductions: Reductions {
            symmetry: !a.no_symmetry,
            workers: a.workers.unwrap_or(all.workers).max(1),
        },
        shard: a.shard.unwrap_or_default(),
    }
}

fn brief(s: &Summary) -> String {
    let states = if s.states > 0 {
        format!(", {} states", s.states)
    } else {
        String::new()
    };
    format!(
        "{} schedules{states} in {:.2} s{}",
        s.schedules,
        s.seconds,
        if s.finished { "" } else { " (cut short)" }
    )
}

/// The side-by-side table of one configuration.
pub fn table(cfg: &Config, rows: &[SideBySide]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Exhaustive SC searches of {cfg}");
    let vw = rows
        .iter()
        .map(|r| r.stateful.variant.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let _ = writeln!(
        out,
        "{:<vw$} {:<9} {:>10} {:>9} {:>9} {:>8}  {:<7} maxima (stale/since/after/thr)",
        "variant", "search", "schedules", "states", "revisits", "seconds", "agree"
    );
    for r in rows {
        let agree = match r.agree() {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let mut line = |what: &str, s: &Summary, agree: &str| {
            let m = &s.maxima;
            let _ = writeln!(
                out,
                "{:<vw$} {:<9} {:>10} {:>9} {:>9} {:>8.2}  {:<7} {}/{}/{}/{}{}",
                s.variant,
                what,
                s.schedules,
                s.states,
                s.revisits,
                s.seconds,
                agree,
                m[0].0,
                m[1].0,
                m[2].0,
                m[3].0,
                if s.finished { "" } else { " (cut short)" }
            );
        };
        line("stateful", &r.stateful, agree);
        if let Some(s) = &r.stateless {
            line("stateless", s, "");
        }
        if let Some(s) = &r.plain {
            line("plain", s, "");
        }
        for d in &r.differences {
            let _ = writeln!(out, "  DIFFERS: {}", truncate(d, 150));
        }
    }
    let violated: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r.stateful
                .verdicts
                .iter()
                .filter(|v| v.ends_with("=violated"))
                .map(|v| format!("{} {}", r.stateful.variant, v.trim_end_matches("=violated")))
                .collect::<Vec<_>>()
        })
        .collect();
    if !violated.is_empty() {
        let _ = writeln!(out, "violated: {}", violated.join(", "));
    }
    let _ = writeln!(
        out,
        "stateful = {}; agree = same verdicts, maxima and witness splits ({}) and coverage events",
        rows.first().map_or("", |r| r.stateful.search.as_str()),
        MEASURES.join(", ")
    );
    out
}

fn growth(a: &ExhaustiveArgs, registry: &[Variant], budget: Duration) -> Result<ExitCode, String> {
    let v = Variant::find(registry, catalogue::MEASURED)?;
    let mut rows: Vec<SideBySide> = Vec::new();
    // Once a search does not finish, it is not tried on configurations at
    // least as large in both CPUs and updates: [reduced, plain, stateless].
    let mut gave_up: [Vec<(usize, usize)>; 3] = Default::default();
    for cpus in 2..=a.max_cpus.max(2) {
        for updates in 1..=6 {
            let cfg = growth_config(cpus, updates);
            let skip = |g: &Vec<(usize, usize)>| g.iter().any(|&(c, u)| c <= cpus && u <= updates);
            if skip(&gave_up[0]) {
                continue;
            }
            let o = options(
                a,
                budget,
                a.compare && !skip(&gave_up[2]),
                !skip(&gave_up[1]),
            );
            let r = side_by_side(&cfg, &v, registry, &o)?;
            let refs = [&r.plain, &r.stateless]
                .into_iter()
                .flatten()
                .map(|s| {
                    format!(
                        "; {} {}",
                        if s.states > 0 { "plain" } else { "stateless" },
                        brief(s)
                    )
                })
                .collect::<String>();
            eprintln!(
                "growth {cpus} CPUs x {updates}: reduced {}{refs}",
                brief(&r.stateful)
            );
            if !r.stateful.finished {
                gave_up[0].push((cpus, updates));
            }
            if r.plain.as_ref().is_some_and(|s| !s.finished) {
                gave_up[1].push((cpus, updates));
            }
            if r.stateless.as_ref().is_some_and(|s| !s.finished) {
                gave_up[2].push((cpus, updates));
            }
            rows.push(r);
        }
    }
    let bad = rows.iter().any(|r| r.agree() == Some(false));
    if a.json {
        print_doc("exhaustive-growth", &rows)?;
    } else {
        print!("{}", growth_table(&rows));
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The growth table: per configuration, the reduced search, the plain
/// stateful one and (if run) the stateless one.
fn growth_table(rows: &[SideBySide]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Growth: v6.0, one reader, no periodic work, batch 2, 3-page updates; every property judged"
    );
    if let Some(r) = rows.first() {
        let _ = writeln!(out, "reduced = {}", r.stateful.search);
    }
    let _ = writeln!(
        out,
        "{:>4} {:>7}  {:>10} {:>9} {:>8}  {:>10} {:>9} {:>8}  {:>10} {:>8}  {:>7}  agree",
        "cpus",
        "updates",
        "schedules",
        "states",
        "seconds",
        "schedules",
        "states",
        "seconds",
        "schedules",
        "seconds",
        "speedup"
    );
    let _ = writeln!(
        out,
        "{:>4} {:>7}  {:>29}  {:>29}  {:>19}",
        "", "", "------ reduced ------", "---- plain stateful ----", "--- stateless ---"
    );
    let cut = |x: &Summary| if x.finished { "" } else { "+" };
    for r in rows {
        let s = &r.stateful;
        let plain = match &r.plain {
            Some(p) => format!(
                "{:>9}{} {:>9} {:>8.2}",
                p.schedules,
                cut(p),
                p.states,
                p.seconds
            ),
            None => format!("{:>29}", "not run"),
        };
        let stateless = match &r.stateless {
            Some(t) => format!("{:>9}{} {:>8.2}", t.schedules, cut(t), t.seconds),
            None => format!("{:>19}", "not run"),
        };
        let speedup = match &r.plain {
            Some(p) if p.finished && s.finished => {
                format!("{:.1}x", p.seconds / s.seconds.max(1e-3))
            }
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:>4} {:>7}  {:>9}{} {:>9} {:>8.2}  {plain}  {stateless}  {speedup:>7}  {}",
            s.cfg.cpus,
            s.cfg.updates,
            s.schedules,
            cut(s),
            s.states,
            s.seconds,
            match r.agree() {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        );
    }
    let _ = writeln!(
        out,
        "+ = cut short by the budget or the cap (the figure is how far it got); speedup = plain / reduced seconds"
    );
    out
}
