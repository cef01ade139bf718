//! `flushcheck bounds`: staleness maxima beside the documented bound.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::explore::quiet_panics;
use crate::measure::bounds::{
    all_exhaustive_configs, compare_with_baseline, exhaustive_configs_per_memcg,
    measure_exhaustive, measure_sampled, standard_configs, timed_configs, Bound,
};
use crate::observe::record::{render_columns, Step};
use crate::protocol::{catalogue, Family, Kind, Variant};

use super::args::{print_doc, ConfigArgs};

/// `flushcheck bounds`.
#[derive(clap::Args, Debug, Clone)]
pub struct BoundsArgs {
    /// Measure the configuration given by the flags below instead of the
    /// standard list.
    #[arg(long)]
    pub custom: bool,
    /// The configuration measured with `--custom`.
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// Variants (default: every kernel version of the catalogue and the
    /// off-by-one mutant).
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// shuttle schedules per scheduler (random and PCT are both run).
    #[arg(long, default_value_t = 20_000)]
    pub shuttle_iterations: usize,
    /// Search every sequentially consistent interleaving (shuttle, depth
    /// first, with state caching) instead of sampling, on four small
    /// configurations and every standard one, and compare the maxima with
    /// the derived worst case.
    #[arg(long)]
    pub exhaustive: bool,
    /// Measure the abstract-time configurations (periodic work every
    /// FLUSH_TIME ticks, on time or late) instead of the standard list.
    #[arg(long)]
    pub time: bool,
    /// Cap on the schedules of one exhaustive search.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_schedules: usize,
    /// Time budget per search, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
    /// Also print witness traces: of every C1 violation (and, per-memcg
    /// family, staleness above C18's N * (BATCH - 1) + trigger), of every
    /// positive staleness after a flush call, and of the largest age in
    /// ticks.
    #[arg(long)]
    pub witness: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Searches run at once, one thread each (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// The (configuration, variant) searches `a` asks for, checked: each
/// variant on the configuration list its family runs (the exhaustive
/// lists differ), one block per configuration.
fn plan(a: &BoundsArgs, registry: &[Variant]) -> Result<Vec<(Config, Variant)>, String> {
    // As in the matrix, any configuration flag replaces the list.
    let custom = a.custom || a.cfg.given();
    if custom && a.time {
        return Err(
            "--time: the abstract-time list cannot be combined with --custom or configuration \
             flags; give --ticks and --late with --custom instead"
                .into(),
        );
    }
    if a.max_schedules == 0 {
        return Err("--max-schedules 0: an exhaustive search needs at least 1 schedule".into());
    }
    if a.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    if a.shuttle_iterations == 0 {
        return Err("--shuttle-iterations 0: need at least 1".into());
    }
    let variants: Vec<Variant> = if a.variant.is_empty() {
        default_variants(registry)
    } else {
        a.variant
            .iter()
            .map(|v| Variant::find(registry, v))
            .collect::<Result<_, _>>()?
    };
    let configs = |family: Family| {
        if custom {
            vec![a.cfg.config()]
        } else if a.time {
            timed_configs()
        } else if a.exhaustive && family == Family::PerMemcg {
            exhaustive_configs_per_memcg()
        } else if a.exhaustive {
            all_exhaustive_configs()
        } else {
            standard_configs()
        }
    };
    let lists: Vec<(Family, Vec<Config>)> = [Family::Global, Family::PerMemcg]
        .into_iter()
        .filter(|f| variants.iter().any(|v| v.family == *f))
        .map(|f| (f, configs(f)))
        .collect();
    // One block per configuration, in first-seen order; a variant runs on
    // the configurations of its family's list.
    let mut order: Vec<&Config> = Vec::new();
    for c in lists.iter().flat_map(|(_, l)| l) {
        if !order.contains(&c) {
            c.validate(usize::MAX, "shuttle")?;
            order.push(c);
        }
    }
    let mut jobs = Vec::new();
    for c in order {
        for v in &variants {
            if lists.iter().any(|(f, l)| *f == v.family && l.contains(c)) {
                jobs.push((c.clone(), v.clone()));
            }
        }
    }
    Ok(jobs)
}

/// The variants measured when none is named: every kernel version of the
/// flush protocol in the catalogue, in its order, and the mutants of
/// [`catalogue::BOUNDS_MUTANTS`].
pub fn default_variants(registry: &[Variant]) -> Vec<Variant> {
    registry
        .iter()
        .filter(|v| v.family != Family::Lifetime)
        .filter(|v| v.kind == Kind::Kernel || catalogue::BOUNDS_MUTANTS.contains(&v.name.as_str()))
        .cloned()
        .collect()
}

/// Measure and print the bounds: the searches on `--jobs` threads (each
/// search is independent), a progress line per search on stderr, the rows
/// in the plan's order.
pub fn bounds(a: &BoundsArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    let jobs = plan(a, registry)?;
    if a.jobs == Some(0) {
        return Err("--jobs 0: need at least 1 thread".into());
    }
    quiet_panics();
    let start = Instant::now();
    let total = jobs.len();
    let threads = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, total.max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<(usize, Vec<Option<Bound>>)> =
        std::sync::Mutex::new((0, vec![None; total]));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((c, v)) = jobs.get(i) else {
                    break;
                };
                let r = if a.exhaustive {
                    measure_exhaustive(
                        c,
                        v,
                        registry,
                        a.max_schedules,
                        Duration::from_secs(a.budget),
                    )
                } else {
                    measure_sampled(c, v, registry, a.shuttle_iterations)
                };
                let states = if r.states > 0 {
                    format!(", {} states", r.states)
                } else {
                    String::new()
                };
                let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                d.0 += 1;
                eprintln!(
                    "[{}/{total} {:.0}s] {c} {}: stale {}, {} executions{states}{}",
                    d.0,
                    start.elapsed().as_secs_f64(),
                    v.name,
                    r.stale_at_no_flush,
                    r.executions,
                    if r.finished { "" } else { " (cut short)" }
                );
                d.1[i] = Some(r);
            });
        }
    });
    let mut rows: Vec<Bound> = done
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .1
        .into_iter()
        .flatten()
        .collect();
    compare_with_baseline(&mut rows);
    if a.json {
        print_doc("bounds", &rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&rows));
    if a.witness {
        print!("{}", witnesses(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// The rows as a table, one block per configuration, with the legend.
pub fn table(rows: &[Bound]) -> String {
    let mut out = String::new();
    let Some(first) = rows.first() else {
        return out;
    };
    let sampled = !first.search.contains("(exhaustive)");
    let _ = writeln!(
        out,
        "Maxima over {}{}.",
        first.search,
        if sampled {
            " (lower bounds of the true maxima)"
        } else {
            ""
        }
    );
    for line in [
        "stale = sum of updates written - aggregate, in pages, at a reader decision not to flush;",
        "split = per-CPU residue / counted in the threshold / skipped (v6.0) / lost to a racing reset;",
        "since = residue + counted + skipped (stale without the lost pages);",
        "derived = worst case from the arithmetic (docs/findings.md), as stale/since;",
        "<=v5.19 = no_worse_than_baseline: stale is at most v5.19's on the same configuration;",
        "after = the same when a reader that decided to flush reads; C1 = MEMCG_CHARGE_BATCH * nr_cpus;",
        "skip = the same when that reader's flush was skipped for another in progress (B7);",
        "age = ticks since the oldest update missing from the aggregate at a read, at any read / at a",
        "      read after a skipped flush (time modelled only).",
    ] {
        let _ = writeln!(out, "{line}");
    }
    let vw = rows
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(7)
        .max(23);
    let mut last = String::new();
    for r in rows {
        let cfg = r.cfg.to_string();
        if cfg != last {
            let _ = writeln!(out, "\n{cfg}");
            let _ = writeln!(
                out,
                "  {:<vw$} {:>5} {:>13} {:>5} {:>8} {:>4} {:>3} {:>7} {:>5} {:>4} {:>7} {:>7} {:>5} {:>9} {:>8}",
                "variant",
                "stale",
                "split r/c/s/l",
                "since",
                "derived",
                "C1",
                "ok",
                "<=v5.19",
                "after",
                "skip",
                "max thr",
                "RMW/upd",
                "age",
                "execs",
                "states"
            );
            last = cfg;
        }
        let s = r.split;
        let split = format!("{}/{}/{}/{}", s[0], s[1], s[2], s[3]);
        let yes_no = |b: bool| if b { "yes" } else { "NO" };
        let derived = r.derived.as_ref().map_or("-".to_string(), |d| {
            let mark = match r.matches_derived() {
                Some(true) => "=",
                Some(false) => "!",
                None => "",
            };
            format!(
                "{mark}{}/{}",
                d.worst.map_or("-".into(), |w| w.to_string()),
                d.since_reset
            )
        });
        let execs = if r.finished {
            r.executions.to_string()
        } else {
            format!("{}+cut", r.executions)
        };
        let age = if r.cfg.ticks > 0 {
            format!("{}/{}", r.stale_ticks, r.skip_age)
        } else {
            "-".into()
        };
        let _ = writeln!(
            out,
            "  {:<vw$} {:>5} {:>13} {:>5} {:>8} {:>4} {:>3} {:>7} {:>5} {:>4} {:>7} {:>7.3} {:>5} {:>9} {:>8}",
            r.variant,
            r.stale_at_no_flush,
            split,
            r.since_reset,
            derived,
            r.documented,
            yes_no(r.documented_bound_holds()),
            r.no_worse_than_baseline.map_or("-", yes_no),
            r.stale_after_flush_call,
            r.stale_after_skip,
            r.max_threshold,
            r.rmws_per_update,
            age,
            execs,
            if r.states > 0 {
                r.states.to_string()
            } else {
                "-".into()
            }
        );
    }
    if !sampled {
        let _ = writeln!(
            out,
            "\n  derived: = the exhaustive maxima equal it, ! they differ; +cut = search cut short;\n  RMW/upd is over the schedules the search observed to their end."
        );
    }
    out
}

/// The witness traces: of every staleness above C1 (or, for the
/// per-memcg family, above C18's form), of every positive staleness after
/// a flush call, and of the largest age in ticks.
pub fn witnesses(rows: &[Bound]) -> String {
    let mut out = String::new();
    let mut show = |r: &Bound, steps: &[Step], head: String| {
        let trace = render_columns(
            &crate::report::initial_state(&r.cfg, &r.variant, r.family),
            steps,
            &head,
            80,
        );
        let _ = write!(out, "\n{trace}");
    };
    for r in rows {
        let c18 = crate::check::derived::c18_claim(&r.cfg, r.trigger);
        let mut over = Vec::new();
        if !r.documented_bound_holds() {
            over.push(format!("C1 = {}", r.documented));
        }
        // C18's form, N * (MEMCG_CHARGE_BATCH - 1) + the trigger, for
        // every version whose trigger counts pages.
        if r.family == Family::PerMemcg && r.stale_at_no_flush > c18 {
            over.push(format!("C18's N * (BATCH - 1) + trigger = {c18}"));
        }
        if over.is_empty() {
            continue;
        }
        let head = format!(
            "staleness {} > {} for {} at {}",
            r.stale_at_no_flush,
            over.join(", > "),
            r.variant,
            r.cfg
        );
        show(r, &r.witness, head);
    }
    for r in rows.iter().filter(|r| r.stale_after_flush_call > 0) {
        let head = format!(
            "a reader that decided to flush read {} pages stale, for {} at {}",
            r.stale_after_flush_call, r.variant, r.cfg
        );
        show(r, &r.after_witness, head);
    }
    for r in rows.iter().filter(|r| r.stale_after_skip > 0) {
        let head = format!(
            "a reader whose flush was skipped for another in progress read {} pages stale (B7), for {} at {}",
            r.stale_after_skip, r.variant, r.cfg
        );
        show(r, &r.skip_witness, head);
    }
    for r in rows.iter().filter(|r| !r.ticks_witness.is_empty()) {
        let head = format!(
            "a read misses an update that returned {} ticks earlier, for {} at {}",
            r.stale_ticks, r.variant, r.cfg
        );
        show(r, &r.ticks_witness, head);
    }
    out
}
