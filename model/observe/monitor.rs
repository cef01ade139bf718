//! The monitor of one execution: every observation goes through
//! [`Monitor::observe`], which updates the ghost state and the twin gates,
//! counts coverage, takes measures, records the trace, and checks the
//! properties.
//!
//! A violation is recorded (the first message per property) and the
//! execution goes on, so that one exploration decides every property; the
//! property *armed* by `explain` and `replay` panics at once instead, so
//! that the backend reports that execution.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Config;
use crate::explore::ghost::{Arc, Mutex, MutexGuard, Ordering};
use crate::observe::coverage::{Coverage, Event, Measures};
use crate::observe::eventual::Eventual;
use crate::observe::ghost::{Ghost, Happened};
use crate::observe::obs::{Access, Actor, Obs, Op, Sink, Tp, Var};
use crate::observe::property::{self, Property};
use crate::observe::record::{step_text, Step};
use crate::observe::twin::{GateFactory, Placement, TwinGate};
use crate::protocol::Family;

/// What one reader observed in one execution, in reader order and then
/// main's quiescent read: each read's flush decision and value.
pub type ReaderOutcome = Vec<(bool, i64)>;

/// `FLUSH_TIME` in ticks (2 s, a tick standing for a second).
pub const FLUSH_TIME: i64 = 2;

/// What an exploration checks and collects (the same for all its
/// executions).
#[derive(Clone)]
pub struct MonitorPlan {
    /// The configuration.
    pub cfg: Config,
    /// Whether the backend is sequentially consistent, so that checks made
    /// in execution order are exact (shuttle, std).
    pub sc: bool,
    /// Panic at the first violation of this property.
    pub armed: Option<Property>,
    /// The gate of the variant's no-skip twin, if it has one.
    pub twin: Option<GateFactory>,
    /// The twin's name, for messages.
    pub twin_name: String,
    /// v5.19's derived worst case behind the gate (`no_worse_than_baseline`).
    pub baseline_since_reset: Option<i64>,
    /// Record each execution's trace.
    pub trace: bool,
    /// Collect every distinct [`ReaderOutcome`].
    pub collect_outcomes: bool,
    /// Fail the execution whose outcome is this one (to explain a loom
    /// `no_lost_flush` found by comparing outcomes).
    pub target: Option<ReaderOutcome>,
    /// The variant's protocol family.
    pub family: Family,
    /// The reader's trigger: the value a threshold must exceed.
    pub trigger: i64,
}

impl MonitorPlan {
    /// Check everything, record nothing extra.
    pub fn new(cfg: &Config, sc: bool) -> Self {
        MonitorPlan {
            cfg: cfg.clone(),
            sc,
            armed: None,
            twin: None,
            twin_name: String::new(),
            baseline_since_reset: None,
            trace: false,
            collect_outcomes: false,
            target: None,
            family: Family::Global,
            trigger: cfg.cpus as i64,
        }
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

/// Set `actor`'s entry of `v` to `x`.
fn set_for<T>(v: &mut Vec<(Actor, T)>, actor: Actor, x: T) {
    match v.iter_mut().find(|(a, _)| *a == actor) {
        Some(e) => e.1 = x,
        None => v.push((actor, x)),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct ExecState {
    ghost: Ghost,
    twin: Option<Box<dyn TwinGate>>,
    same_schedule: Option<Box<dyn TwinGate>>,
    outcome: BTreeMap<Actor, ReaderOutcome>,
    decision: Vec<(Actor, bool)>,
    /// Per reader whose gate last decided to flush: whether it has begun a
    /// flush section since (`false`: its flush was skipped so far).
    began: Vec<(Actor, bool)>,
    last_read: Vec<((Actor, u8), i64)>,
    violated: Vec<(Property, String)>,
    quiescent: bool,
    eventual: Eventual,
}

/// The monitor of one execution.
pub struct Monitor {
    shared: Arc<Shared>,
    state: Mutex<ExecState>,
}

impl Monitor {
    /// A monitor for a new execution reporting into `shared`.
    pub fn new(shared: Arc<Shared>) -> Arc<Self> {
        let plan = &shared.plan;
        let twin = plan.twin.map(|f| f(&plan.cfg, Placement::Outcome));
        let same_schedule = plan.twin.map(|f| f(&plan.cfg, Placement::SameSchedule));
        if plan.trace {
            lock(&shared.trace).clear();
        }
        let mut ghost = Ghost::new(&plan.cfg);
        if plan.family == Family::PerMemcg {
            ghost.trigger = Some(plan.trigger);
        }
        let state = ExecState {
            ghost,
            twin,
            same_schedule,
            outcome: BTreeMap::new(),
            decision: Vec::new(),
            began: Vec::new(),
            last_read: Vec::new(),
            violated: Vec::new(),
            quiescent: false,
            eventual: Eventual::default(),
        };
        Arc::new(Monitor {
            shared,
            state: Mutex::new(state),
        })
    }

    /// The results this monitor reports into.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// End of the execution: file violations, the outcome and the counts.
    /// Panics if the outcome is the plan's target.
    pub fn finish(&self) {
        let (outcome, violated, rmws, eventual) = {
            let mut s = lock(&self.state);
            let outcome: ReaderOutcome = std::mem::take(&mut s.outcome)
                .into_values()
                .flatten()
                .collect();
            (
                outcome,
                std::mem::take(&mut s.violated),
                s.ghost.threshold_rmws,
                s.eventual,
            )
        };
        let plan = &self.shared.plan;
        {
            let mut v = lock(&self.shared.violations);
            for (p, msg) in violated {
                v.entry(p).or_insert(msg);
            }
        }
        for e in eventual.events(plan.cfg.settle, plan.cfg.settle_update) {
            self.shared.coverage.hit(e);
        }
        let m = &self.shared.measures;
        // A schedule the exhaustive search pruned ran on unobserved: its
        // RMWs were not counted, so neither are its updates.
        if !crate::explore::dfs::silent() {
            m.rmws.fetch_add(rmws, Ordering::Relaxed);
            m.updates
                .fetch_add((plan.cfg.cpus * plan.cfg.updates) as u64, Ordering::Relaxed);
        }
        if plan.target.as_ref() == Some(&outcome) {
            panic!(
                "no_lost_flush: readers observed {}, which no execution of {} produces",
                fmt_outcome(&outcome),
                plan.twin_name
            );
        }
        if plan.collect_outcomes {
            lock(&self.shared.outcomes).insert(outcome);
        }
    }

    fn record(&self, s: &mut ExecState, actor: Actor, obs: &Obs, h: &Happened) {
        if !self.shared.plan.trace {
            return;
        }
        let mut t = lock(&self.shared.trace);
        let in_section = s.ghost.in_section(actor);
        if let Some(text) = step_text(obs, in_section) {
            let access = match obs {
                Obs::Access(a) => Some(*a),
                _ => None,
            };
            t.push(Step {
                actor,
                text,
                access,
            });
        }
        if h.skip {
            t.push(Step {
                actor,
                text: "-> skip the add".into(),
                access: None,
            });
        }
    }

    fn cover(&self, h: &Happened) {
        let c = &self.shared.coverage;
        let pairs = [
            (h.skip, Event::Skip),
            (h.skip_raced_reset, Event::SkipRacedReset),
            (h.update_behind_flusher, Event::UpdateBehindFlusher),
            (h.add_erased_by_reset, Event::AddErasedByReset),
            (h.trylock_contended, Event::TrylockContended),
            (h.periodic_skipped, Event::PeriodicSkipped),
            (h.recross_after_reset, Event::RecrossAfterReset),
            (h.second_reset, Event::SecondReset),
        ];
        for (happened, e) in pairs {
            if happened {
                c.hit(e);
            }
        }
    }

    /// Check and measure at a reader's flush decision.
    fn decision(
        &self,
        s: &mut ExecState,
        actor: Actor,
        memcg: u8,
        needs_flush: bool,
    ) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let mut out = Vec::new();
        s.ghost.read_all();
        set_for(&mut s.decision, actor, needs_flush);
        if needs_flush {
            set_for(&mut s.began, actor, false);
            return out;
        }
        let read = s.ghost.gate_read(actor);
        let stale = s.ghost.staleness(memcg);
        let split = s.ghost.split(read.and_then(|(k, _)| k), memcg);
        let cov = &self.shared.coverage;
        if stale > 0 {
            cov.hit(Event::StaleNoFlush);
        }
        if s.ghost.skipped() > 0 {
            cov.hit(Event::ReaderSawSkippedUnits);
        }
        let n = plan.cfg.cpus as i64;
        let who = if plan.cfg.memcgs() > 1 {
            format!("{actor} of memcg {memcg}")
        } else {
            actor.to_string()
        };
        if plan.sc {
            for (p, twin) in [
                (Property::NoLostFlush, &s.twin),
                (Property::NoLostFlushSameSchedule, &s.same_schedule),
            ] {
                if let Some(t) = twin {
                    if t.would_flush(memcg) {
                        out.push((p, property::no_lost_flush(p, &who, read, n, &t.describe())));
                    }
                }
            }
            let documented = plan.cfg.batch * n;
            if stale > documented {
                out.push((
                    Property::DocumentedErrorBound,
                    property::documented_error_bound(stale, split, documented),
                ));
            }
            let c10 = documented * plan.cfg.memcgs() as i64;
            if plan.family == Family::PerMemcg && stale > c10 {
                out.push((
                    Property::PerMemcgErrorBound,
                    property::per_memcg_error_bound(memcg, stale, split, c10),
                ));
            }
            // With a flush section open, v5.19's reader would lose the
            // trylock and read stale data whatever its gate said: only
            // decisions with no flush running are comparable.
            if let (Some(b), true) = (plan.baseline_since_reset, s.ghost.open.is_empty()) {
                let gated = s.ghost.gated(memcg);
                if gated > b {
                    out.push((
                        Property::NoWorseThanBaseline,
                        property::no_worse_than_baseline(gated, split, b),
                    ));
                }
            }
        }
        let m = &self.shared.measures;
        let steps = || self.shared.steps();
        m.stale_at_no_flush.offer_split(stale, split, steps);
        m.stale_since_reset
            .offer_split(split[0] + split[1] + split[2], split, steps);
        out
    }

    /// Check and measure at a reader's read of the statistic.
    fn read(
        &self,
        s: &mut ExecState,
        actor: Actor,
        memcg: u8,
        value: i64,
    ) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let mut out = Vec::new();
        s.ghost.read_all();
        if !s.ghost.open.is_empty() {
            self.shared.coverage.hit(Event::ReadDuringFlush);
        }
        let decided = s
            .decision
            .iter()
            .find(|(a, _)| *a == actor)
            .map(|(_, d)| *d);
        s.outcome
            .entry(actor)
            .or_default()
            .push((decided.unwrap_or(false), value));
        let m = &self.shared.measures;
        let steps = || self.shared.steps();
        let began = s.began.iter().find(|(a, _)| *a == actor).map(|(_, b)| *b);
        if decided == Some(true) {
            let written = s.ghost.written_total(memcg);
            m.stale_after_flush_call.offer(written - value, steps);
            if began == Some(false) {
                // B7: its flush was skipped for another in progress.
                m.stale_after_skipped_flush.offer(written - value, steps);
                if plan.cfg.ticks > 0 {
                    m.ticks_after_skipped_flush
                        .offer(s.ghost.stale_ticks(), steps);
                }
            }
        }
        if plan.cfg.non_negative() {
            let floor = if actor == Actor::Main {
                s.last_read
                    .iter()
                    .filter(|((_, m), _)| *m == memcg)
                    .map(|(_, v)| *v)
                    .max()
            } else {
                s.last_read
                    .iter()
                    .find(|(k, _)| *k == (actor, memcg))
                    .map(|(_, v)| *v)
            };
            if let Some(prev) = floor {
                if value < prev {
                    out.push((
                        Property::MonotonicReads,
                        property::monotonic_reads(&actor.to_string(), prev, value),
                    ));
                }
            }
        }
        if actor == Actor::Main && s.quiescent {
            let expected = s.ghost.written_total(memcg);
            if value != expected {
                out.push((
                    Property::QuiescentReadExact,
                    property::quiescent_read_exact(memcg, value, expected, decided == Some(true)),
                ));
            }
        }
        match s.last_read.iter_mut().find(|(k, _)| *k == (actor, memcg)) {
            Some(r) => r.1 = value,
            None => s.last_read.push(((actor, memcg), value)),
        }
        if plan.cfg.ticks > 0 {
            let age = s.ghost.stale_ticks();
            m.stale_ticks.offer(age, steps);
            if plan.sc && age > FLUSH_TIME {
                out.push((
                    Property::FlushTimeBound,
                    property::flush_time_bound(age, FLUSH_TIME),
                ));
            }
        }
        out
    }
}

impl Monitor {
    /// Check at a ratelimited reader's time gate: a skip must be justified
    /// by a flush of the whole tree at most `2 * FLUSH_TIME` ticks before
    /// (C9).
    fn ratelimited(
        &self,
        s: &mut ExecState,
        actor: Actor,
        jiffies: i64,
        due: bool,
    ) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let mut out = Vec::new();
        s.ghost.read_all();
        if due {
            // The race C9 is about: the flush time read before an open
            // flush of the whole tree stamped it, so the reader goes on to
            // the threshold gate early.
            if s.ghost.open.iter().any(|x| x.root == 0 && !x.stamped) {
                self.shared.coverage.hit(Event::RatelimitedRacedStamp);
            }
            return out;
        }
        // The read that follows is a read without a flush.
        set_for(&mut s.decision, actor, false);
        self.shared.coverage.hit(Event::RatelimitedSkip);
        let last = s.ghost.root_flush_at;
        let justified = last.is_some_and(|t| jiffies <= t + 2 * FLUSH_TIME);
        if plan.sc && plan.cfg.ticks > 0 && !justified {
            out.push((
                Property::RatelimitedSkipJustified,
                property::ratelimited_skip_justified(&actor.to_string(), jiffies, last),
            ));
        }
        out
    }
}

impl Sink for Monitor {
    /// The ghost state, both twin gates, the reader decisions and last
    /// reads, which properties this execution violated, and the reader
    /// outcomes when the plan collects or targets them.
    fn digest(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        let s = lock(&self.state);
        s.ghost.hash(&mut h);
        for twin in [&s.twin, &s.same_schedule] {
            match twin {
                Some(t) if !t.digest(h) => return false,
                Some(_) => 1u8.hash(&mut h),
                None => 0u8.hash(&mut h),
            }
        }
        (
            &s.decision,
            &s.last_read,
            s.quiescent,
            &s.began,
            &s.eventual,
        )
            .hash(&mut h);
        for (p, _) in &s.violated {
            p.hash(&mut h);
        }
        let plan = &self.shared.plan;
        if plan.collect_outcomes || plan.target.is_some() {
            s.outcome.hash(&mut h);
        }
        true
    }

    fn observe(&self, actor: Actor, obs: Obs) {
        let timed = self.shared.plan.cfg.ticks > 0;
        let mut guard = lock(&self.state);
        let s: &mut ExecState = &mut guard;
        let h = s.ghost.observe(actor, &obs, timed);
        for t in [&mut s.twin, &mut s.same_schedule].into_iter().flatten() {
            t.observe(actor, &obs);
        }
        self.cover(&h);
        self.record(s, actor, &obs, &h);
        if let Obs::Trace(Tp::FlushBegin { .. }) = obs {
            if let Some(b) = s.began.iter_mut().find(|(a, _)| *a == actor) {
                b.1 = true;
            }
        }
        let found = match obs {
            Obs::Trace(Tp::FlushRatelimited { jiffies, due, .. }) if actor.is_reader() => {
                self.ratelimited(s, actor, jiffies, due)
            }
            Obs::Trace(Tp::FlushStats { memcg, needs_flush }) if actor.is_reader() => {
                self.decision(s, actor, memcg, needs_flush)
            }
            Obs::Read { memcg, value } if actor.is_reader() => self.read(s, actor, memcg, value),
            Obs::Trace(Tp::FlushBegin { .. }) if s.ghost.open.len() > 1 => vec![(
                Property::FlushExclusion,
                property::flush_exclusion(s.ghost.open.len()),
            )],
            Obs::Settled {
                flushes,
                memcg,
                value,
            } => {
                let expected = s.ghost.written_total(memcg);
                s.eventual.settled(flushes, value != expected);
                if flushes == self.shared.plan.cfg.settle && value != expected {
                    vec![(
                        Property::EventualConservation,
                        property::eventual_conservation(memcg, flushes, value, expected),
                    )]
                } else {
                    Vec::new()
                }
            }
            Obs::Final { memcg, value } => {
                let expected = s.ghost.written_total(memcg);
                s.eventual.at_final(value != expected);
                if value != expected {
                    vec![(
                        Property::Conservation,
                        property::conservation(memcg, value, expected),
                    )]
                } else {
                    Vec::new()
                }
            }
            Obs::Quiescent => {
                s.quiescent = true;
                Vec::new()
            }
            Obs::Access(Access {
                var: Var::Threshold { memcg },
                op,
                ..
            }) => {
                let mut out = Vec::new();
                if let Some(new) = op.written() {
                    if !matches!(op, Op::Write(0)) {
                        let steps = || self.shared.steps();
                        self.shared.measures.max_threshold.offer(new, steps);
                    }
                    if let Some(m) = memcg {
                        out.extend(self.c14(m, new));
                    }
                }
                if let (Some(m), Op::Read(t), Actor::Cpu(_)) = (memcg, op, actor) {
                    out.extend(self.c12(s, m, t));
                }
                out
            }
            _ => Vec::new(),
        };
        let mut armed_hit = None;
        for (p, msg) in found {
            if s.violated.iter().any(|(q, _)| *q == p) {
                continue;
            }
            if self.shared.plan.armed == Some(p) {
                armed_hit = Some(msg.clone());
            }
            s.violated.push((p, msg));
        }
        drop(guard);
        if let Some(msg) = armed_hit {
            panic!("{msg}");
        }
    }
}

impl Monitor {
    /// C14 at a write of memcg `m`'s atomic (v6.8 on): its value stays
    /// below `nr_cpus * MEMCG_CHARGE_BATCH`.
    fn c14(&self, m: u8, new: i64) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let c14 = plan.cfg.batch * plan.cfg.cpus as i64;
        if plan.family != Family::PerMemcg || new < c14 {
            return Vec::new();
        }
        vec![(
            Property::StatsUpdatesBound,
            property::stats_updates_bound(m, new, c14),
        )]
    }

    /// C12 where the updater relies on it: an updater read memcg `m`'s
    /// atomic and found it flushable (v6.17's `break`, v6.8's skip); are
    /// all its ancestors flushable at that instant?
    fn c12(&self, s: &ExecState, m: u8, read: i64) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let t = plan.trigger;
        if plan.family != Family::PerMemcg || !plan.sc || read <= t {
            return Vec::new();
        }
        s.ghost.read_all();
        let value = |x: u8| s.ghost.domains.get(&Some(x)).map_or(0, |d| d.threshold);
        plan.cfg
            .ancestry(m)
            .into_iter()
            .skip(1)
            .find(|a| value(*a) <= t)
            .map(|a| {
                (
                    Property::AncestorsFlushable,
                    property::ancestors_flushable(m, read, a, value(a), t),
                )
            })
            .into_iter()
            .collect()
    }
}

/// `[(false, 0), (true, 4)]` as `read0:no-flush=0 read1:flush=4`.
pub fn fmt_outcome(o: &ReaderOutcome) -> String {
    o.iter()
        .enumerate()
        .map(|(i, (f, v))| format!("read{i}:{}={v}", if *f { "flush" } else { "no-flush" }))
        .collect::<Vec<_>>()
        .join(" ")
}
