//! The monitor of one execution: every observation goes through
//! [`Monitor::observe`], which updates the ghost state and the twin gates,
//! counts coverage, takes measures, records the trace, and checks the
//! properties.
//!
//! A violation is recorded (the first message per property) and the
//! execution goes on, so that one exploration decides every property; the
//! property *armed* by `explain` and `replay` panics at once instead, so
//! that the backend reports that execution.

use std::collections::BTreeMap;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::observe::coverage::Event;
use crate::observe::eventual::Eventual;
use crate::observe::ghost::{Ghost, Happened};
use crate::observe::plan::{fmt_outcome, ReaderOutcome, Shared};
use crate::observe::properties::hooks::{At, Ctx};
use crate::observe::property::{Check, Property};
use crate::observe::record::{step_text, Step};
use crate::observe::twin::{Placement, TwinGate};
use crate::observe::window::Windows;
use crate::vocab::obs::{renamed, Access, Actor, Obs, Op, Sink, Tp, Var};
use crate::vocab::Family;

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
    windows: Windows,
}

impl ExecState {
    /// A copy, if both twin gates can be copied.
    fn copy(&self) -> Option<ExecState> {
        let gate = |g: &Option<Box<dyn TwinGate>>| match g {
            Some(g) => g.boxed_clone().map(Some),
            None => Some(None),
        };
        Some(ExecState {
            ghost: self.ghost.clone(),
            twin: gate(&self.twin)?,
            same_schedule: gate(&self.same_schedule)?,
            outcome: self.outcome.clone(),
            decision: self.decision.clone(),
            began: self.began.clone(),
            last_read: self.last_read.clone(),
            violated: self.violated.clone(),
            quiescent: self.quiescent,
            eventual: self.eventual,
            windows: self.windows.clone(),
        })
    }
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
        let gate = |p| {
            plan.twin
                .as_ref()
                .map(|t| t.gate.build(&plan.cfg, p, t.trigger, &t.name))
        };
        let (twin, same_schedule) = (gate(Placement::Outcome), gate(Placement::SameSchedule));
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
            windows: Windows::default(),
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
        if !crate::vocab::footprint::silent() {
            m.rmws.fetch_add(rmws, Ordering::Relaxed);
            m.updates
                .fetch_add((plan.cfg.cpus * plan.cfg.updates) as u64, Ordering::Relaxed);
        }
        if plan.target.as_ref() == Some(&outcome) {
            match &plan.target_why {
                Some(why) => panic!("{why}: readers observed {}", fmt_outcome(&outcome)),
                None => panic!(
                    "no_lost_flush: readers observed {}, which no execution of {} produces",
                    fmt_outcome(&outcome),
                    plan.twin_name()
                ),
            }
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
                text: if h.broke {
                    "-> break"
                } else {
                    "-> skip the add"
                }
                .into(),
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

    /// Run every check of the plan at hook point `at`.
    fn check(&self, s: &ExecState, at: At) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
        let ctx = Ctx {
            cfg: &plan.cfg,
            sc: plan.sc,
            family: plan.family,
            trigger: plan.trigger,
            baseline_since_reset: plan.baseline_since_reset,
            ghost: &s.ghost,
            twin: s.twin.as_deref(),
            same_schedule: s.same_schedule.as_deref(),
            windows: &s.windows,
            quiescent: s.quiescent,
        };
        plan.checks
            .iter()
            .filter_map(|p| match p.def().check {
                Check::Flush(f) => f(&ctx, &at).map(|msg| (*p, msg)),
                Check::Life(_) => None,
            })
            .collect()
    }

    /// Measure at a reader's flush decision, and check it.
    fn decision(
        &self,
        s: &mut ExecState,
        actor: Actor,
        memcg: u8,
        needs_flush: bool,
    ) -> Vec<(Property, String)> {
        s.ghost.read_all();
        set_for(&mut s.decision, actor, needs_flush);
        if s.twin.as_ref().is_some_and(|t| t.flushable(memcg)) {
            self.shared.coverage.hit(Event::TwinFlushed);
        }
        if needs_flush {
            set_for(&mut s.began, actor, false);
            return self.check(s, At::Flushing { actor, memcg });
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
        let out = self.check(s, At::Skipped { actor, memcg });
        let m = &self.shared.measures;
        let steps = || self.shared.steps();
        m.stale_at_no_flush.offer_split(stale, split, steps);
        m.stale_since_reset
            .offer_split(split[0] + split[1] + split[2], split, steps);
        out
    }

    /// Measure and check at a reader's read of the statistic.
    fn read(
        &self,
        s: &mut ExecState,
        actor: Actor,
        memcg: u8,
        value: i64,
    ) -> Vec<(Property, String)> {
        let plan = &self.shared.plan;
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
        // Main's read is compared with everything any reader read before.
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
        if floor.is_some() {
            self.shared.coverage.hit(Event::ReadAgain);
        }
        let out = self.check(
            s,
            At::Read {
                actor,
                memcg,
                value,
                decided,
                floor,
            },
        );
        match s.last_read.iter_mut().find(|(k, _)| *k == (actor, memcg)) {
            Some(r) => r.1 = value,
            None => s.last_read.push(((actor, memcg), value)),
        }
        if plan.cfg.ticks > 0 {
            m.stale_ticks.offer(s.ghost.stale_ticks(), steps);
        }
        out
    }

    /// Count and check at a ratelimited reader's time gate.
    fn ratelimited(
        &self,
        s: &mut ExecState,
        actor: Actor,
        jiffies: i64,
        due: bool,
    ) -> Vec<(Property, String)> {
        s.ghost.read_all();
        if due {
            // The race C9 is about: the flush time read before an open
            // flush of the whole tree stamped it, so the reader goes on to
            // the threshold gate early.
            if s.ghost.open.iter().any(|x| x.root == 0 && !x.stamped) {
                self.shared.coverage.hit(Event::RatelimitedRacedStamp);
            }
            return Vec::new();
        }
        // The read that follows is a read without a flush.
        set_for(&mut s.decision, actor, false);
        self.shared.coverage.hit(Event::RatelimitedSkip);
        self.check(s, At::RatelimitSkipped { actor, jiffies })
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
            &s.windows,
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

    /// The execution state, unless the plan records a trace (whose steps
    /// a skipped prefix would leave out).
    fn save(&self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        if self.shared.plan.trace {
            return None;
        }
        let s = lock(&self.state).copy()?;
        Some(Box::new(Mutex::new(s)))
    }

    fn restore(&self, saved: &(dyn std::any::Any + Send + Sync)) {
        let saved = saved
            .downcast_ref::<Mutex<ExecState>>()
            .and_then(|s| lock(s).copy());
        match saved {
            Some(s) => *lock(&self.state) = s,
            None => panic!("flushcheck: Monitor::restore was given a state it did not save"),
        }
    }

    /// The ghost state's and the twin gates' parts of CPU `cpu`.
    fn digest_cpu(&self, cpu: usize, h: &mut dyn std::hash::Hasher) -> bool {
        let s = lock(&self.state);
        s.ghost.digest_cpu(cpu, h);
        for twin in [&s.twin, &s.same_schedule].into_iter().flatten() {
            if !twin.digest_cpu(cpu, h) {
                return false;
            }
        }
        true
    }

    /// As [`Monitor::digest`], with the ghost state's and the twin gates'
    /// per-CPU parts left to [`Monitor::digest_cpu`] and every actor
    /// renamed.
    fn digest_renamed(&self, rename: &[usize], mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        let s = lock(&self.state);
        s.ghost.digest_renamed(rename, h);
        for twin in [&s.twin, &s.same_schedule] {
            match twin {
                Some(t) if !t.digest_renamed(rename, h) => return false,
                Some(_) => 1u8.hash(&mut h),
                None => 0u8.hash(&mut h),
            }
        }
        let r = |a: Actor| renamed(a, rename);
        let decision: Vec<_> = s.decision.iter().map(|(a, d)| (r(*a), *d)).collect();
        let last_read: Vec<_> = s
            .last_read
            .iter()
            .map(|((a, m), v)| ((r(*a), *m), *v))
            .collect();
        let began: Vec<_> = s.began.iter().map(|(a, b)| (r(*a), *b)).collect();
        // Windows are the readers', which renaming CPUs leaves alone.
        (
            decision,
            last_read,
            s.quiescent,
            began,
            &s.eventual,
            &s.windows,
        )
            .hash(&mut h);
        for (p, _) in &s.violated {
            p.hash(&mut h);
        }
        let plan = &self.shared.plan;
        if plan.collect_outcomes || plan.target.is_some() {
            let mut outcome: Vec<_> = s.outcome.iter().map(|(a, o)| (r(*a), o)).collect();
            outcome.sort();
            outcome.hash(&mut h);
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
        let twins = [s.twin.as_deref(), s.same_schedule.as_deref()];
        let plan = &self.shared.plan;
        let keep = plan.checks.contains(&Property::NoWorseThanBaseline);
        s.windows
            .observe(actor, &obs, twins, plan.cfg.memcgs(), &s.ghost, keep);
        self.cover(&h);
        let premise = (actor, &obs, &s.ghost, s.quiescent);
        crate::observe::premise::hit(&self.shared.coverage, plan, premise);
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
            Obs::Trace(Tp::FlushBegin { .. }) => self.check(
                s,
                At::FlushBegan {
                    open: s.ghost.open.len(),
                },
            ),
            Obs::Settled {
                flushes,
                memcg,
                value,
            } => {
                let expected = s.ghost.written_total(memcg);
                s.eventual.settled(flushes, value != expected);
                self.check(
                    s,
                    At::Settled {
                        flushes,
                        memcg,
                        value,
                    },
                )
            }
            Obs::Final { memcg, value } => {
                let expected = s.ghost.written_total(memcg);
                s.eventual.at_final(value != expected);
                self.check(s, At::Final { memcg, value })
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
                    out.extend(self.check(s, At::ThresholdWritten { memcg, new }));
                }
                if let (Op::Read(value), Actor::Cpu(_)) = (op, actor) {
                    out.extend(self.check(s, At::ThresholdRead { memcg, value }));
                }
                out
            }
            _ => Vec::new(),
        };
        // A ratelimited gate that found the flush due goes on to the
        // threshold gate in the same window.
        if let Obs::Trace(Tp::FlushStats { .. } | Tp::FlushRatelimited { due: false, .. }) = obs {
            s.windows.close(actor);
        }
        let mut armed_hit = None;
        for (p, msg) in found {
            if s.violated.iter().any(|(q, _)| *q == p) {
                continue;
            }
            if self.shared.plan.armed.contains(&p) {
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
