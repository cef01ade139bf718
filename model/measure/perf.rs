//! How fast the checkers reach verdicts: throughput per backend, time to
//! the first counterexample per mutant, and how searches grow with the
//! configuration. `flushcheck perf` prints these tables.
//!
//! A run judges every property from one exploration, which goes on after a
//! violation; to time a kill, the property is *armed*
//! ([`crate::observe::plan::MonitorPlan::armed`]) so that the search
//! stops at its first violation and its execution count says how far it
//! got.

use std::time::Duration;

use serde::Serialize;

use crate::check::run::{
    explore_variant, judge, judged, monitor_plan, run, subject, RunSpec, Verdict,
};
use crate::check::{Sizes, Suite};
use crate::config::Config;
use crate::explore::{Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::{catalogue, Kind, Variant};
use crate::vocab::BackendName;

/// Executions per second of one backend on one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Backend name.
    pub backend: String,
    /// The search run.
    pub search: String,
    /// Executions run.
    pub executions: u64,
    /// Seconds taken.
    pub seconds: f64,
    /// Executions per second.
    pub per_sec: f64,
    /// Whether the planned search finished (else the budget or the cap
    /// cut it short; the rate still stands).
    pub finished: bool,
}

/// The backends [`throughput`] measures: the suite's searches at their
/// default sizes, loom at preemption bound 2.
pub fn throughput_backends() -> Vec<Backend> {
    Sizes::default().all_backends(Some(2))
}

/// v6.0 on `cfg` under each of `backends`, every property judged, each
/// search capped at `budget`.
pub fn throughput(
    cfg: &Config,
    registry: &[Variant],
    backends: &[Backend],
    budget: Duration,
    progress: &dyn Fn(&str),
) -> Result<Vec<Throughput>, String> {
    let v6_0 = Variant::find(registry, catalogue::MEASURED)?;
    let mut rows = Vec::new();
    for b in backends {
        cfg.validate(b.max_threads(), b.name())?;
        let spec = RunSpec::new(
            &v6_0.name,
            "throughput",
            cfg,
            b.clone(),
            budget.as_secs_f64(),
        );
        let r = run(&spec, registry)?;
        progress(&format!(
            "throughput {}: {} executions in {:.2} s",
            b.name(),
            r.executions,
            r.seconds
        ));
        rows.push(Throughput {
            backend: b.name().to_string(),
            search: r.search,
            executions: r.executions,
            seconds: r.seconds,
            per_sec: r.executions as f64 / r.seconds.max(1e-9),
            finished: r.finished,
        });
    }
    Ok(rows)
}

/// Time to the first counterexample of one designated kill, over seeds.
#[derive(Clone, Debug, Serialize)]
pub struct TimeToKill {
    /// Mutant name.
    pub variant: String,
    /// Killing property.
    pub property: Property,
    /// Backend name.
    pub backend: String,
    /// Seeds run (loom and the DFS are deterministic: one run).
    pub seeds: usize,
    /// Seeds whose searches found the violation.
    pub killed: usize,
    /// The suite entry whose search found it, per killing seed (entries
    /// are searched in suite order until one violates).
    pub entries: Vec<String>,
    /// Median, minimum and maximum executions of the violating entry's
    /// search, up to and including the violating execution.
    pub executions: Option<[u64; 3]>,
    /// Median, minimum and maximum seconds of that search.
    pub seconds: Option<[f64; 3]>,
}

fn spread<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<[T; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    Some([v[v.len() / 2], v[0], v[v.len() - 1]])
}

/// Whether searches under `backend` depend on the seed.
fn seeded(backend: BackendName) -> bool {
    !matches!(backend, BackendName::Loom | BackendName::ShuttleDfs)
}

/// The first violation of `p` by `variant` with seed `seed`: the suite
/// entries that search under `backend` and judge `p`, in order, each with
/// `p` armed; returns the entry, executions and seconds of the first that
/// violates it.
pub fn first_kill(
    variant: &Variant,
    p: Property,
    backend: BackendName,
    seed: u64,
    registry: &[Variant],
    budget: Duration,
) -> Result<Option<(String, u64, f64)>, String> {
    let suite = Suite::standard(&Sizes {
        seed,
        ..Sizes::default()
    });
    for e in &suite.entries {
        for b in e
            .backends
            .iter()
            .filter(|b| b.id() == backend && e.applies_to(variant.family))
        {
            let checks = judged(variant, &e.cfg, b);
            if !checks.contains(&p) {
                continue;
            }
            let mut plan = monitor_plan(variant, registry, &e.cfg, b, checks)?;
            plan.armed = vec![p];
            let (x, shared) =
                explore_variant(variant, plan, b, Shard::default(), budget, None, None);
            let subject = subject(variant, &e.cfg, b);
            if judge(p, &subject, &x.outcome, &shared).verdict == Verdict::Violated {
                return Ok(Some((
                    e.name.clone(),
                    x.executions,
                    x.elapsed.as_secs_f64(),
                )));
            }
        }
    }
    Ok(None)
}

/// Every designated kill of every mutant in `registry`, `seeds` seeds for
/// the sampling backends, each search capped at `budget`.
pub fn time_to_kill(
    registry: &[Variant],
    seeds: u64,
    budget: Duration,
    progress: &dyn Fn(&str),
) -> Result<Vec<TimeToKill>, String> {
    let mut rows = Vec::new();
    for v in registry.iter().filter(|v| v.kind == Kind::Mutant) {
        for d in &v.killed_by {
            let p = &d.property;
            for name in &d.backends {
                let runs = if seeded(*name) { seeds } else { 1 };
                let mut hits = Vec::new();
                for seed in 1..=runs {
                    if let Some(hit) = first_kill(v, *p, *name, seed, registry, budget)? {
                        hits.push(hit);
                    }
                }
                progress(&format!(
                    "time to kill {} {} {}: killed {}/{runs}",
                    v.name,
                    p.name(),
                    name,
                    hits.len()
                ));
                rows.push(TimeToKill {
                    variant: v.name.clone(),
                    property: *p,
                    backend: name.name().to_string(),
                    seeds: runs as usize,
                    killed: hits.len(),
                    entries: hits.iter().map(|h| h.0.clone()).collect(),
                    executions: spread(hits.iter().map(|h| h.1).collect()),
                    seconds: spread(hits.iter().map(|h| h.2).collect()),
                });
            }
        }
    }
    Ok(rows)
}

/// One cell of the growth table.
#[derive(Clone, Debug, Serialize)]
pub struct Growth {
    /// Updater CPUs.
    pub cpus: usize,
    /// Updates per CPU.
    pub updates: usize,
    /// The search.
    pub search: String,
    /// Executions explored (schedules for shuttle).
    pub executions: u64,
    /// Seconds.
    pub seconds: f64,
    /// Whether the planned search finished (else the budget or the cap cut
    /// it short).
    pub finished: bool,
    /// Why there is no figure or the search did not finish, if so.
    pub note: Option<String>,
}

/// The configurations of the growth table: one reader, no periodic
/// flusher, val=2,3, batch 1.
pub fn growth_config(cpus: usize, updates: usize) -> Config {
    Config {
        cpus,
        updates,
        vals: vec![2, 3],
        readers: 1,
        periodic: false,
        ..Config::default()
    }
}

/// v6.0 with every property judged, for CPUs 2..=4 and updates 1..=4,
/// under loom at bounds 2 and 3, shuttle PCT (20,000 schedules) and the
/// DFS with sleep sets, stateful and stateless (capped at `dfs_cap`
/// schedules), each search capped at `budget`. Once the DFS does not finish on a configuration, it is not
/// tried on configurations at least as large in both CPUs and updates.
pub fn growth(
    registry: &[Variant],
    budget: Duration,
    dfs_cap: usize,
    progress: &dyn Fn(&str),
) -> Result<Vec<Growth>, String> {
    let v6_0 = Variant::find(registry, catalogue::MEASURED)?;
    let backends = [
        Backend::Loom {
            preemption_bound: Some(2),
        },
        Backend::Loom {
            preemption_bound: Some(3),
        },
        Backend::ShuttlePct {
            iterations: 20_000,
            depth: 3,
            seed: 1,
        },
        Backend::ShuttleDfs {
            max_schedules: dfs_cap,
            sleep_sets: true,
            stateful: true,
            symmetry: false,
            workers: 1,
        },
        Backend::ShuttleDfs {
            max_schedules: dfs_cap,
            sleep_sets: true,
            stateful: false,
            symmetry: false,
            workers: 1,
        },
    ];
    let mut rows = Vec::new();
    // Per backend, the configurations its DFS did not finish.
    let mut dfs_gave_up: Vec<Vec<(usize, usize)>> = vec![Vec::new(); backends.len()];
    for cpus in 2..=4 {
        for updates in 1..=4 {
            let cfg = growth_config(cpus, updates);
            for (i, b) in backends.iter().enumerate() {
                let dfs = matches!(b, Backend::ShuttleDfs { .. });
                let skip = if let Err(why) = cfg.validate(b.max_threads(), b.name()) {
                    Some(why)
                } else if dfs
                    && dfs_gave_up[i]
                        .iter()
                        .any(|&(c, u)| c <= cpus && u <= updates)
                {
                    Some("not run: a smaller configuration did not finish".to_string())
                } else {
                    None
                };
                if let Some(why) = skip {
                    rows.push(Growth {
                        cpus,
                        updates,
                        search: b.search(),
                        executions: 0,
                        seconds: 0.0,
                        finished: false,
                        note: Some(why),
                    });
                    continue;
                }
                let spec = RunSpec::new(
                    &v6_0.name,
                    &format!("growth-{cpus}x{updates}"),
                    &cfg,
                    b.clone(),
                    budget.as_secs_f64(),
                );
                let r = run(&spec, registry)?;
                progress(&format!(
                    "growth cpus {cpus} updates {updates} {}: {} executions in {:.2} s{}",
                    b.name(),
                    r.executions,
                    r.seconds,
                    if r.finished { "" } else { ", cut short" }
                ));
                if dfs && !r.finished {
                    dfs_gave_up[i].push((cpus, updates));
                }
                rows.push(Growth {
                    cpus,
                    updates,
                    search: r.search,
                    executions: r.executions,
                    seconds: r.seconds,
                    finished: r.finished,
                    note: r.stopped,
                });
            }
        }
    }
    Ok(rows)
}
