//! `flushcheck exhaustive`: the stateful exhaustive search beside the
//! stateless one, on one configuration or over a growth table.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::explore::quiet_panics;
use crate::measure::exhaustive::{growth_config, side_by_side, SideBySide, Summary, MEASURES};
use crate::protocol::{catalogue, Kind, Variant};

use super::args::{print_json, truncate, ConfigArgs};

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
    /// Print the growth table instead: v6.0 on `growth_config(cpus,
    /// updates)` for 2..=4 CPUs and 1..=6 updates, stateful beside
    /// stateless, until each search stops finishing within its budget.
    #[arg(long)]
    pub growth: bool,
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
    let start = Instant::now();
    let mut rows = Vec::new();
    for v in variants(a, registry)? {
        let r = side_by_side(&cfg, &v, registry, a.compare, a.max_schedules, budget)?;
        eprintln!(
            "[{:.0}s] {} {cfg}: stateful {}",
            start.elapsed().as_secs_f64(),
            v.name,
            brief(&r.stateful)
        );
        if let Some(s) = &r.stateless {
            eprintln!("      stateless {}", brief(s));
        }
        rows.push(r);
    }
    let bad = rows.iter().any(|r| r.agree() == Some(false));
    if a.json {
        print_json(&rows)?;
    } else {
        print!("{}", table(&cfg, &rows));
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
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
        "agree = same verdicts, maxima and witness splits ({}) and coverage events",
        MEASURES.join(", ")
    );
    out
}

fn growth(a: &ExhaustiveArgs, registry: &[Variant], budget: Duration) -> Result<ExitCode, String> {
    let v = Variant::find(registry, catalogue::MEASURED)?;
    let mut rows: Vec<SideBySide> = Vec::new();
    // Once a search does not finish, it is not tried on configurations at
    // least as large in both CPUs and updates.
    let mut gave_up: [Vec<(usize, usize)>; 2] = [Vec::new(), Vec::new()];
    for cpus in 2..=4 {
        for updates in 1..=6 {
            let cfg = growth_config(cpus, updates);
            let skip = |g: &Vec<(usize, usize)>| g.iter().any(|&(c, u)| c <= cpus && u <= updates);
            if skip(&gave_up[0]) {
                continue;
            }
            let compare = !skip(&gave_up[1]);
            let r = side_by_side(&cfg, &v, registry, compare, a.max_schedules, budget)?;
            eprintln!(
                "growth {cpus} CPUs x {updates}: stateful {}{}",
                brief(&r.stateful),
                r.stateless
                    .as_ref()
                    .map_or(String::new(), |s| format!("; stateless {}", brief(s)))
            );
            if !r.stateful.finished {
                gave_up[0].push((cpus, updates));
            }
            if r.stateless.as_ref().is_some_and(|s| !s.finished) {
                gave_up[1].push((cpus, updates));
            }
            rows.push(r);
        }
    }
    let bad = rows.iter().any(|r| r.agree() == Some(false));
    if a.json {
        print_json(&rows)?;
    } else {
        println!(
            "Growth: v6.0, one reader, no periodic work, batch 2, 3-page updates; every property judged"
        );
        println!(
            "{:>4} {:>7}  {:>10} {:>9} {:>8}  {:>10} {:>8}  {:>7}  agree",
            "cpus", "updates", "schedules", "states", "seconds", "schedules", "seconds", "speedup"
        );
        println!(
            "{:>4} {:>7}  {:>29}  {:>19}",
            "", "", "---- stateful ----", "--- stateless ---"
        );
        for r in &rows {
            let s = &r.stateful;
            let cut = |x: &Summary| if x.finished { "" } else { "+" };
            let (theirs, speedup) = match &r.stateless {
                Some(t) => (
                    format!("{:>9}{} {:>8.2}", t.schedules, cut(t), t.seconds),
                    if t.finished && s.finished {
                        format!("{:.0}x", t.seconds / s.seconds.max(1e-3))
                    } else {
                        "-".into()
                    },
                ),
                None => (format!("{:>19}", "not run"), "-".into()),
            };
            println!(
                "{:>4} {:>7}  {:>9}{} {:>9} {:>8.2}  {theirs}  {:>7}  {}",
                s.cfg.cpus,
                s.cfg.updates,
                s.schedules,
                cut(s),
                s.states,
                s.seconds,
                speedup,
                match r.agree() {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                }
            );
        }
        println!("+ = cut short by the budget or the cap (the figure is how far it got)");
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
