//! How fast the checkers reach verdicts: throughput per backend, time to
//! the first counterexample per mutant, and how searches grow with the
//! configuration. `flushcheck perf` prints these tables.

use std::time::Duration;

use serde::Serialize;

use crate::check::{check_cell, Plan};
use crate::config::Config;
use crate::platform::Backend;
use crate::property::Property;
use crate::variant::{Kind, Variant};
use crate::Verdict;

/// Executions per second of one backend on the default configuration.
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
}

/// v6.0 / conservation on `cfg` under each default backend.
pub fn throughput(cfg: &Config) -> Vec<Throughput> {
    Plan::default_backends(1)
        .into_iter()
        .map(|b| {
            let c = check_cell(
                cfg,
                &Variant::V6_0,
                Property::Conservation,
                &b,
                Duration::from_secs(120),
            );
            Throughput {
                backend: b.name().to_string(),
                search: b.search(),
                executions: c.executions,
                seconds: c.seconds,
                per_sec: c.executions as f64 / c.seconds.max(1e-9),
            }
        })
        .collect()
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
    /// Seeds run (loom is deterministic: one run).
    pub seeds: usize,
    /// Runs that found the violation.
    pub killed: usize,
    /// Median, minimum and maximum executions to the violation.
    pub executions: [u64; 3],
    /// Median, minimum and maximum seconds to the violation.
    pub seconds: [f64; 3],
}

fn spread<T: Copy + PartialOrd>(mut v: Vec<T>) -> [T; 3] {
    v.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    [v[v.len() / 2], v[0], v[v.len() - 1]]
}

/// Every designated kill of every mutant, `seeds` seeds for shuttle.
pub fn time_to_kill(cfg: &Config, seeds: u64) -> Vec<TimeToKill> {
    let mut rows = Vec::new();
    for v in Variant::all()
        .into_iter()
        .filter(|v| v.kind == Kind::Mutant)
    {
        for (p, backends) in v.killed_by {
            for name in *backends {
                let runs: Vec<Backend> = (1..=seeds)
                    .filter_map(|seed| {
                        Plan::default_backends(seed)
                            .into_iter()
                            .find(|b| b.name() == *name)
                            .filter(|b| seed == 1 || !matches!(b, Backend::Loom { .. }))
                    })
                    .collect();
                let cells: Vec<_> = runs
                    .iter()
                    .map(|b| check_cell(cfg, &v, *p, b, Duration::from_secs(60)))
                    .collect();
                let hits: Vec<_> = cells
                    .iter()
                    .filter(|c| c.verdict == Verdict::Violated)
                    .collect();
                if hits.is_empty() {
                    continue;
                }
                rows.push(TimeToKill {
                    variant: v.name.to_string(),
                    property: *p,
                    backend: name.to_string(),
                    seeds: runs.len(),
                    killed: hits.len(),
                    executions: spread(hits.iter().map(|c| c.executions).collect()),
                    seconds: spread(hits.iter().map(|c| c.seconds).collect()),
                });
            }
        }
    }
    rows
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
    /// Whether the planned search finished (else the budget cut it short).
    pub finished: bool,
    /// Why there is no figure (loom's thread limit), if there is none.
    pub note: Option<String>,
}

/// v6.0 / conservation with one reader and no periodic flusher, for CPUs
/// 2..=4 and updates 1..=4, under loom at bounds 2 and 3 and under shuttle
/// PCT (20,000 schedules), each search capped at `budget`.
pub fn growth(budget: Duration) -> Vec<Growth> {
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
    ];
    let mut rows = Vec::new();
    for cpus in 2..=4 {
        for updates in 1..=4 {
            let cfg = Config {
                cpus,
                updates,
                vals: vec![2, 3],
                readers: 1,
                periodic: false,
                ..Config::default()
            };
            for b in &backends {
                if let Err(why) = cfg.validate(b.max_threads(), b.name()) {
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
                let c = check_cell(&cfg, &Variant::V6_0, Property::Conservation, b, budget);
                rows.push(Growth {
                    cpus,
                    updates,
                    search: b.search(),
                    executions: c.executions,
                    seconds: c.seconds,
                    finished: c.verdict == Verdict::Holds,
                    note: c.note,
                });
            }
        }
    }
    rows
}
