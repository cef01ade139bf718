//! What an exploration's monitors share: the plan they check against (the
//! same for every execution) and the results every execution reports into.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::Config;
use crate::observe::coverage::{Coverage, Measures};
use crate::observe::property::Property;
use crate::observe::record::Step;
use crate::observe::twin::Gate;
use crate::vocab::Family;

/// What one reader observed in one execution, in reader order and then
/// main's quiescent read: each read's flush decision and value.
pub type ReaderOutcome = Vec<(bool, i64)>;

/// `FLUSH_TIME` in ticks (2 s, a tick standing for a second).
pub const FLUSH_TIME: i64 = 2;

/// The twin a monitor compares with: its gate, its trigger on the
/// configuration, its name.
#[derive(Clone, Debug)]
pub struct TwinPlan {
    /// The twin's gate.
    pub gate: Gate,
    /// Its reader trigger on the configuration.
    pub trigger: i64,
    /// Its name, for messages.
    pub name: String,
}

/// What an exploration checks and collects (the same for all its
/// executions).
#[derive(Clone)]
pub struct MonitorPlan {
    /// The configuration.
    pub cfg: Arc<Config>,
    /// The properties checked (those the run judges, and the armed one).
    pub checks: Vec<Property>,
    /// Whether the backend is sequentially consistent, so that checks made
    /// in execution order are exact (shuttle, std).
    pub sc: bool,
    /// Panic at the first violation of any of these properties (so that the
    /// backend reports that execution and the search stops there).
    pub armed: Vec<Property>,
    /// The variant's no-skip twin, if it has one.
    pub twin: Option<TwinPlan>,
    /// v5.19's derived worst case behind the gate (`no_worse_than_baseline`).
    pub baseline_since_reset: Option<i64>,
    /// Record each execution's trace.
    pub trace: bool,
    /// Collect every distinct [`ReaderOutcome`].
    pub collect_outcomes: bool,
    /// Fail the execution whose outcome is this one (to explain a loom
    /// `no_lost_flush` found by comparing outcomes).
    pub target: Option<ReaderOutcome>,
    /// The message the target outcome fails with (default: the loom
    /// `no_lost_flush` message); it must start with a property's name for
    /// a search to attribute it, unless the caller matches it itself.
    pub target_why: Option<String>,
    /// The variant's protocol family.
    pub family: Family,
    /// The reader's trigger: the value a threshold must exceed.
    pub trigger: i64,
    /// Show the monitor unused reads of every atomic at every point
    /// ([`crate::observe::noise`]); execution-order backends only.
    pub unused_reads: bool,
}

impl MonitorPlan {
    /// Check `checks` on `cfg`, record nothing extra.
    pub fn new(cfg: Arc<Config>, sc: bool, checks: Vec<Property>) -> Self {
        let trigger = cfg.cpus as i64;
        MonitorPlan {
            cfg,
            checks,
            sc,
            armed: Vec::new(),
            twin: None,
            baseline_since_reset: None,
            trace: false,
            collect_outcomes: false,
            target: None,
            target_why: None,
            family: Family::Global,
            trigger,
            unused_reads: false,
        }
    }

    /// The twin's name, for messages.
    pub fn twin_name(&self) -> &str {
        self.twin.as_ref().map_or("", |t| t.name.as_str())
    }
}

/// Results shared by every execution of one exploration.
pub struct Shared {
    /// The plan.
    pub plan: MonitorPlan,
    /// Coverage counts.
    pub coverage: Coverage,
    /// Maxima.
    pub measures: Measures,
    /// The first violation message of each property.
    pub violations: Mutex<BTreeMap<Property, String>>,
    /// Every distinct reader outcome (if collected).
    pub outcomes: Mutex<BTreeSet<ReaderOutcome>>,
    /// The steps of the current (or last) execution (if traced).
    pub trace: Mutex<Vec<Step>>,
}

impl Shared {
    /// Fresh results for `plan`.
    pub fn new(plan: MonitorPlan) -> Arc<Self> {
        Arc::new(Shared {
            plan,
            coverage: Coverage::default(),
            measures: Measures::default(),
            violations: Mutex::new(BTreeMap::new()),
            outcomes: Mutex::new(BTreeSet::new()),
            trace: Mutex::new(Vec::new()),
        })
    }

    /// The first violation of `p`, if any execution violated it.
    pub fn violation(&self, p: Property) -> Option<String> {
        lock(&self.violations).get(&p).cloned()
    }

    /// The steps of the last execution.
    pub fn steps(&self) -> Vec<Step> {
        lock(&self.trace).clone()
    }

    /// Every distinct reader outcome collected.
    pub fn outcomes(&self) -> BTreeSet<ReaderOutcome> {
        lock(&self.outcomes).clone()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `[(false, 0), (true, 4)]` as `read0:no-flush=0 read1:flush=4`.
pub fn fmt_outcome(o: &ReaderOutcome) -> String {
    o.iter()
        .enumerate()
        .map(|(i, (f, v))| format!("read{i}:{}={v}", if *f { "flush" } else { "no-flush" }))
        .collect::<Vec<_>>()
        .join(" ")
}
