//! The exhaustive sequentially consistent searches side by side: the
//! stateful DFS (sleep sets and state caching, with its reductions:
//! symmetry and workers) beside the stateless one (sleep sets only) and
//! the plain stateful one, what each reports, whether they agree, and how
//! they grow with the configuration. `flushcheck exhaustive` prints these;
//! the shards of a search split over machines merge here ([`merge`]).
//!
//! Two searches *agree* when every property gets the same verdict, every
//! measure the same maximum with the same split (the witness's values:
//! residue, counted, skipped, lost), and the same coverage events happen at
//! least once. The stateful search is sound exactly when it agrees with the
//! stateless one wherever both finish (`tests/suite/stateful.rs`, every
//! catalogue variant); its reductions, when they agree with the plain
//! stateful search (`tests/suite/symmetry.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::check::run::{explore_variant, judge, judged, monitor_plan, subject};
use crate::config::Config;
use crate::explore::{Backend, Outcome, Progress, Shard};
use crate::observe::coverage::{Event, Max, Split};
use crate::protocol::Variant;

/// What one exhaustive search of one variant reported.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// The configuration.
    pub cfg: Config,
    /// The variant.
    pub variant: String,
    /// The search.
    pub search: String,
    /// Whether it covered every interleaving (finished below its caps).
    pub finished: bool,
    /// Why it did not, if so.
    pub stopped: Option<String>,
    /// Schedules run (each from the start of the scenario).
    pub schedules: u64,
    /// Distinct states stored (stateful search; 0 otherwise).
    pub states: u64,
    /// Schedules stopped at a state already explored.
    pub revisits: u64,
    /// Schedules stopped because every runnable thread was asleep.
    pub pruned: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// `property=verdict` for every property judged.
    pub verdicts: Vec<String>,
    /// Each measure's maximum and its split: `stale_at_no_flush`,
    /// `stale_since_reset`, `stale_after_flush_call`, `max_threshold`,
    /// `stale_ticks`.
    pub maxima: [(i64, Split); 5],
    /// The coverage events that happened at least once.
    pub events: Vec<String>,
    /// The part of a search split over machines this is (`0/1`: all).
    #[serde(default)]
    pub shard: Shard,
}

/// The names of [`Summary::maxima`], in order.
pub const MEASURES: [&str; 5] = [
    "stale_at_no_flush",
    "stale_since_reset",
    "stale_after_flush_call",
    "max_threshold",
    "stale_ticks",
];

impl Summary {
    /// How this summary differs from `other` (verdicts, maxima with their
    /// splits, events); empty when they agree.
    pub fn differences(&self, other: &Summary) -> Vec<String> {
        let mut out = Vec::new();
        if self.verdicts != other.verdicts {
            out.push(format!(
                "verdicts {:?} vs {:?}",
                self.verdicts, other.verdicts
            ));
        }
        for (i, name) in MEASURES.iter().enumerate() {
            if self.maxima[i] != other.maxima[i] {
                out.push(format!(
                    "{name} {:?} vs {:?}",
                    self.maxima[i], other.maxima[i]
                ));
            }
        }
        if self.events != other.events {
            out.push(format!("events {:?} vs {:?}", self.events, other.events));
        }
        out
    }
}

/// The stateful DFS (sleep sets and state caching), capped at
/// `max_schedules`, without further reductions.
pub fn stateful(max_schedules: usize) -> Backend {
    Backend::stateful_dfs(max_schedules)
}

/// What the stateful search adds to sleep sets and state caching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reductions {
    /// States stored up to permutations of interchangeable CPUs.
    pub symmetry: bool,
    /// Worker threads.
    pub workers: usize,
}

impl Reductions {
    /// Neither: the plain stateful search.
    pub const NONE: Reductions = Reductions {
        symmetry: false,
        workers: 1,
    };

    /// Symmetry, and one worker per core of this machine.
    pub fn all() -> Reductions {
        Reductions {
            symmetry: true,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The stateful DFS with `r`, capped at `max_schedules`.
pub fn reduced(max_schedules: usize, r: Reductions) -> Backend {
    Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: true,
        symmetry: r.symmetry,
        workers: r.workers.max(1),
    }
}

/// The stateless DFS with sleep sets, capped at `max_schedules`.
pub fn stateless(max_schedules: usize) -> Backend {
    Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: false,
        symmetry: false,
        workers: 1,
    }
}

/// Run the exhaustive search `backend` on `variant` and summarise it;
/// `progress` labels a progress line every 5 s on stderr.
pub fn summarize(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    backend: &Backend,
    budget: Duration,
    progress: Option<&str>,
) -> Result<Summary, String> {
    summarize_shard(
        cfg,
        variant,
        registry,
        backend,
        Shard::default(),
        budget,
        progress,
    )
}

/// [`summarize`] for one shard of a search split over machines.
pub fn summarize_shard(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    backend: &Backend,
    shard: Shard,
    budget: Duration,
    progress: Option<&str>,
) -> Result<Summary, String> {
    let judged = judged(variant, cfg, backend);
    let plan = monitor_plan(variant, registry, cfg, backend, judged.clone())?;
    let progress = progress.map(|l| Progress::new(l, Duration::from_secs(5)));
    let (e, shared) = explore_variant(variant, plan, backend, shard, budget, progress, None);
    let subject = subject(variant, cfg, backend);
    let m = &shared.measures;
    let max = |x: &Max| x.get().map_or((0, [0; 4]), |(v, s, _)| (v, s));
    Ok(Summary {
        cfg: cfg.clone(),
        variant: variant.name.clone(),
        search: backend.search(),
        finished: e.outcome == Outcome::Finished,
        stopped: match &e.outcome {
            Outcome::Finished => None,
            Outcome::CutShort(why) => Some(why.clone()),
            Outcome::Failed(msg) => Some(msg.lines().next().unwrap_or("").to_string()),
        },
        schedules: e.executions,
        states: e.states,
        revisits: e.revisits,
        pruned: e.pruned,
        seconds: e.elapsed.as_secs_f64(),
        verdicts: judged
            .into_iter()
            .map(|p| {
                let j = judge(p, &subject, &e.outcome, &shared);
                format!("{}={}", p.name(), j.verdict.name())
            })
            .collect(),
        maxima: [
            max(&m.stale_at_no_flush),
            max(&m.stale_since_reset),
            max(&m.stale_after_flush_call),
            max(&m.max_threshold),
            max(&m.stale_ticks),
        ],
        events: Event::ALL
            .into_iter()
            .filter(|e| shared.coverage.count(*e) > 0)
            .map(|e| e.name().to_string())
            .collect(),
        shard,
    })
}

/// One variant on one configuration under the stateful search and its
/// references.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SideBySide {
    /// The stateful search, with the reductions asked for.
    pub stateful: Summary,
    /// The stateless search, if run.
    pub stateless: Option<Summary>,
    /// The plain stateful search (no symmetry, one worker), if run.
    #[serde(default)]
    pub plain: Option<Summary>,
    /// How they differ, where both finished (empty: they agree).
    pub differences: Vec<String>,
}

impl SideBySide {
    /// Whether every reference run finished with the stateful search and
    /// agrees with it (`None`: no reference, or one did not finish).
    pub fn agree(&self) -> Option<bool> {
        let refs: Vec<&Summary> = self.stateless.iter().chain(&self.plain).collect();
        if refs.is_empty() || !self.stateful.finished || refs.iter().any(|r| !r.finished) {
            return None;
        }
        Some(self.differences.is_empty())
    }
}

/// How `flushcheck exhaustive` runs one variant.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Also run the stateless search and compare.
    pub stateless: bool,
    /// Also run the plain stateful search and compare.
    pub plain: bool,
    /// Cap on each search's schedules.
    pub max_schedules: usize,
    /// Time budget of each search.
    pub budget: Duration,
    /// The stateful search's reductions.
    pub reductions: Reductions,
    /// The part of the search this machine runs.
    pub shard: Shard,
}

/// `variant` on `cfg` under the stateful search with `o.reductions` and
/// the references `o` asks for.
pub fn side_by_side(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    o: &Options,
) -> Result<SideBySide, String> {
    let label = |what: &str| format!("{} {cfg} {what}", variant.name);
    let run = |b: &Backend, shard: Shard, what: &str| {
        summarize_shard(
            cfg,
            variant,
            registry,
            b,
            shard,
            o.budget,
            Some(&label(what)),
        )
    };
    let mine = run(&reduced(o.max_schedules, o.reductions), o.shard, "stateful")?;
    let stateless = if o.stateless {
        Some(run(
            &stateless(o.max_schedules),
            Shard::default(),
            "stateless",
        )?)
    } else {
        None
    };
    let plain = if o.plain {
        Some(run(&stateful(o.max_schedules), Shard::default(), "plain")?)
    } else {
        None
    };
    let mut differences = Vec::new();
    for (what, r) in [("stateless", &stateless), ("plain", &plain)] {
        if let Some(r) = r.as_ref().filter(|r| r.finished && mine.finished) {
            differences.extend(
                mine.differences(r)
                    .into_iter()
                    .map(|d| format!("{what}: {d}")),
            );
        }
    }
    Ok(SideBySide {
        stateful: mine,
        stateless,
        plain,
        differences,
    })
}

/// Merge the shards of split searches (`flushcheck exhaustive --shard I/N
/// --json`, one file per shard) into one row per variant and
/// configuration: a property is violated if any shard found it violated,
/// holds if every shard `0..N` finished and found it holds, and is
/// inconclusive otherwise; each maximum is the largest of the shards' (of
/// equal values, the split [`Max`] keeps); events are the union; counts
/// and seconds add up (seconds: the machines' time, not the wall time).
pub fn merge(parts: &[Summary]) -> Vec<Summary> {
    let mut groups: BTreeMap<(String, String), Vec<&Summary>> = BTreeMap::new();
    for p in parts {
        groups
            .entry((p.variant.clone(), p.cfg.to_string()))
            .or_default()
            .push(p);
    }
    groups.into_values().map(merge_group).collect()
}

fn merge_group(parts: Vec<&Summary>) -> Summary {
    let mut m = parts[0].clone();
    let count = parts[0].shard.count;
    let mut present: Vec<u64> = parts.iter().map(|p| p.shard.index).collect();
    present.sort_unstable();
    present.dedup();
    let complete = present.len() as u64 == count && parts.iter().all(|p| p.shard.count == count);
    let finished = complete && parts.iter().all(|p| p.finished);
    for p in &parts[1..] {
        m.schedules += p.schedules;
        m.states += p.states;
        m.revisits += p.revisits;
        m.pruned += p.pruned;
        m.seconds += p.seconds;
        let key = |(v, s): &(i64, Split)| (*v, s[3], s[2], s[1], s[0]);
        for (mine, theirs) in m.maxima.iter_mut().zip(&p.maxima) {
            if key(theirs) > key(mine) {
                *mine = *theirs;
            }
        }
        for e in &p.events {
            if !m.events.contains(e) {
                m.events.push(e.clone());
            }
        }
    }
    let union = std::mem::take(&mut m.events);
    m.events = Event::ALL
        .into_iter()
        .map(|e| e.name().to_string())
        .filter(|n| union.contains(n))
        .collect();
    m.verdicts = m
        .verdicts
        .iter()
        .map(|v| {
            let name = v.split('=').next().unwrap_or("");
            let all = parts.iter().filter_map(|p| {
                p.verdicts
                    .iter()
                    .find(|w| w.split('=').next() == Some(name))
                    .map(|w| w.rsplit('=').next().unwrap_or(""))
            });
            let all: Vec<&str> = all.collect();
            let verdict = if all.contains(&"violated") {
                "violated"
            } else if finished && all.len() == parts.len() && all.iter().all(|w| *w == "holds") {
                "holds"
            } else {
                "inconclusive"
            };
            format!("{name}={verdict}")
        })
        .collect();
    m.finished = finished;
    m.stopped = (!finished).then(|| match complete {
        true => "a shard was cut short".to_string(),
        false => format!("shards present: {present:?} of {count}"),
    });
    m.shard = Shard::default();
    m.search = format!(
        "{} (merged from {} of {count} shards)",
        m.search,
        parts.len()
    );
    m
}

/// The configurations of the exhaustive growth table: one reader, no
/// periodic flusher, batch 2, 3-page updates (every update crosses the
/// batch), `cpus` CPUs with `updates` updates each. `(2, 3)` is the
/// configuration the issue measured SPIN on.
pub fn growth_config(cpus: usize, updates: usize) -> Config {
    Config {
        cpus,
        batch: 2,
        updates,
        vals: vec![3],
        readers: 1,
        reads: 1,
        periodic: false,
        ticks: 0,
        late: 0,
        ..Config::default()
    }
}
