//! The scenario every backend runs: updaters, readers and the periodic
//! flusher race; then the main thread reads once more and flushes once more.

use std::collections::BTreeSet;

use crate::config::Config;
use crate::ghost::Coverage;
use crate::memcontrol::{MemcgSystem, ROOT_MEM_CGROUP};
use crate::platform::ghost::{Arc, Mutex};
use crate::platform::{ModelJoinHandle, Platform, Scenario, StartGate};
use crate::property::{self, Property};
use crate::trace::{Actor, Tracer};
use crate::variant::Variant;

/// What the readers of one execution observed: for every read, in reader
/// order and then the quiescent read by the main thread, the flush decision
/// and the statistic read after it.
pub type Observation = Vec<(bool, i64)>;

/// One scenario for one (variant, armed property) pair.
#[derive(Debug)]
pub struct FlushScenario {
    /// Configuration.
    pub cfg: Config,
    /// Variant under test.
    pub variant: Variant,
    /// The property whose check is armed.
    pub armed: Option<Property>,
    /// Coverage counters over all executions.
    pub coverage: Arc<Coverage>,
    /// Every distinct observation, when collected (the differential check).
    pub observations: Option<Mutex<BTreeSet<Observation>>>,
    /// The step log of the latest execution.
    pub tracer: Arc<Tracer>,
    /// Fail the execution whose observation is this one (to explain a
    /// differential `no_lost_flush` violation found under loom).
    pub target: Option<Observation>,
    /// v5.19's derived worst case (`no_worse_than_baseline`), computed once.
    pub baseline_since_reset: Option<i64>,
}

impl FlushScenario {
    /// A scenario; `collect` keeps every distinct [`Observation`].
    pub fn new(cfg: Config, variant: Variant, armed: Option<Property>, collect: bool) -> Self {
        FlushScenario {
            variant,
            armed,
            coverage: Arc::new(Coverage::default()),
            observations: collect.then(|| Mutex::new(BTreeSet::new())),
            tracer: Arc::new(Tracer::new(false)),
            target: None,
            baseline_since_reset: (armed == Some(Property::NoWorseThanBaseline))
                .then(|| crate::derived::derive(&cfg).ok().map(|d| d.since_reset))
                .flatten(),
            cfg,
        }
    }

    /// Record kernel-level steps of every execution (the latest is kept).
    pub fn traced(mut self) -> Self {
        self.tracer = Arc::new(Tracer::new(true));
        self
    }

    /// The distinct observations collected so far.
    pub fn observed(&self) -> BTreeSet<Observation> {
        self.observations
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }
}

impl Scenario for FlushScenario {
    fn run<P: Platform>(&self) {
        self.tracer.clear();
        let mut sys = MemcgSystem::<P>::new(
            self.cfg.clone(),
            self.variant.clone(),
            self.armed,
            self.coverage.clone(),
            self.tracer.clone(),
        );
        sys.baseline_since_reset = self.baseline_since_reset;
        let sys = Arc::new(sys);
        let gate = Arc::new(StartGate::new::<P>(self.cfg.threads() - 1));
        let updaters: Vec<_> = (0..self.cfg.cpus)
            .map(|cpu| spawn(&sys, &gate, move |s| s.updater(cpu)))
            .collect();
        let readers: Vec<_> = (0..self.cfg.readers)
            .map(|r| spawn(&sys, &gate, move |s| s.reader(r)))
            .collect();
        let timed = self.cfg.ticks > 0;
        let periodic = self.cfg.periodic.then(|| {
            spawn(&sys, &gate, move |s| {
                if timed {
                    s.stats_flush_dwork_worker()
                } else {
                    s.flush_memcg_stats_dwork()
                }
            })
        });
        let clock = timed.then(|| spawn(&sys, &gate, |s| s.jiffies_clock()));
        for h in updaters {
            h.join();
        }
        if let Some(h) = periodic {
            h.join();
        }
        if let Some(h) = clock {
            h.join();
        }
        let mut observation: Observation = Vec::new();
        for (r, h) in readers.into_iter().enumerate() {
            let seen = h.join();
            if let (Some(&(_, last)), true) =
                (seen.last(), self.armed == Some(Property::MonotonicReads))
            {
                // The quiescent read below happens after this reader's last
                // read (join), so it must not be lower either.
                let now = sys.memcg_page_state(Actor::Main, ROOT_MEM_CGROUP, 0);
                if self.cfg.non_negative() {
                    property::monotonic_reads(r, last, now);
                }
            }
            observation.extend(seen);
        }
        // The quiescent reader: every update is done and every thread joined.
        observation.push(sys.memory_stat_read(Actor::Main, ROOT_MEM_CGROUP, 0));
        // One more flush; nothing else runs, so the trylock must succeed.
        assert!(
            sys.__mem_cgroup_flush_stats(Actor::Main),
            "model: the final flush could not take stats_flush_lock"
        );
        if self.armed == Some(Property::Conservation) {
            property::conservation(
                sys.memcg_page_state(Actor::Main, ROOT_MEM_CGROUP, 0),
                self.cfg.total(),
            );
        }
        if self.target.as_ref() == Some(&observation) {
            panic!(
                "no_lost_flush: readers observed {}, which no execution of v5.19 produces",
                crate::check::fmt_observation(&observation)
            );
        }
        if let Some(m) = &self.observations {
            m.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(observation);
        }
    }
}

/// Spawn a model thread that waits at the start gate, then runs `f`.
fn spawn<P: Platform, T: Send + 'static>(
    sys: &Arc<MemcgSystem<P>>,
    gate: &Arc<StartGate>,
    f: impl FnOnce(&MemcgSystem<P>) -> T + Send + 'static,
) -> P::JoinHandle<T> {
    let (s, g) = (sys.clone(), gate.clone());
    P::spawn(move || {
        g.wait();
        f(&s)
    })
}
