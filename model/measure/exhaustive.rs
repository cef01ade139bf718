//! The exhaustive sequentially consistent searches side by side: the
//! stateful DFS (sleep sets and state caching) beside the stateless one
//! (sleep sets only), what each reports, whether they agree, and how both
//! grow with the configuration. `flushcheck exhaustive` prints these.
//!
//! Two searches *agree* when every property gets the same verdict, every
//! measure the same maximum with the same split (the witness's values:
//! residue, counted, skipped, lost), and the same coverage events happen at
//! least once. The stateful search is sound exactly when it agrees with the
//! stateless one wherever both finish; `tests/suite/stateful.rs` checks that on
//! every catalogue variant.

use std::time::Duration;

use serde::Serialize;

use crate::check::run::{explore_variant, judge, judged, monitor_plan, subject};
use crate::config::Config;
use crate::explore::{Backend, Outcome, Progress, Shard};
use crate::observe::coverage::{Event, Max, Split};
use crate::protocol::Variant;

/// What one exhaustive search of one variant reported.
#[derive(Clone, Debug, Serialize)]
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
/// `max_schedules`.
pub fn stateful(max_schedules: usize) -> Backend {
    Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: true,
    }
}

/// The stateless DFS with sleep sets, capped at `max_schedules`.
pub fn stateless(max_schedules: usize) -> Backend {
    Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: false,
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
    let judged = judged(variant, cfg, backend);
    let plan = monitor_plan(variant, registry, cfg, backend, judged.clone())?;
    let progress = progress.map(|l| Progress::new(l, Duration::from_secs(5)));
    let (e, shared) = explore_variant(
        variant,
        plan,
        backend,
        Shard::default(),
        budget,
        progress,
        None,
    );
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
    })
}

/// One variant on one configuration under both searches.
#[derive(Clone, Debug, Serialize)]
pub struct SideBySide {
    /// The stateful search.
    pub stateful: Summary,
    /// The stateless search, if run.
    pub stateless: Option<Summary>,
    /// How they differ, when both finished (empty: they agree).
    pub differences: Vec<String>,
}

impl SideBySide {
    /// Whether both finished and agree.
    pub fn agree(&self) -> Option<bool> {
        let s = self.stateless.as_ref()?;
        (self.stateful.finished && s.finished).then_some(self.differences.is_empty())
    }
}

/// `variant` on `cfg` under the stateful search and, if `compare`, the
/// stateless one, each capped at `max_schedules` and `budget`.
pub fn side_by_side(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    compare: bool,
    max_schedules: usize,
    budget: Duration,
) -> Result<SideBySide, String> {
    let label = |what: &str| format!("{} {cfg} {what}", variant.name);
    let mine = summarize(
        cfg,
        variant,
        registry,
        &stateful(max_schedules),
        budget,
        Some(&label("stateful")),
    )?;
    let theirs = if compare {
        Some(summarize(
            cfg,
            variant,
            registry,
            &stateless(max_schedules),
            budget,
            Some(&label("stateless")),
        )?)
    } else {
        None
    };
    let differences = match &theirs {
        Some(t) if mine.finished && t.finished => mine.differences(t),
        _ => Vec::new(),
    };
    Ok(SideBySide {
        stateful: mine,
        stateless: theirs,
        differences,
    })
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
