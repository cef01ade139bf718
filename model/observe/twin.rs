//! The no-skip twin's gate, computed over the variant's history.
//!
//! A protocol that skips work to save RMWs has a *twin* that does not skip
//! (v6.0's twin is v5.19). `no_lost_flush` asks, at every reader decision
//! of the variant: would the twin's gate, fed the same history (the same
//! updates in the same order, the same flushes), flush? A [`TwinGate`] is a
//! ghost of that gate, driven by observations alone. It re-derives the
//! twin's bookkeeping from the updates' values rather than trusting the
//! variant's own counters, so a variant whose bug is in its counting is
//! compared with what the twin would have counted.
//!
//! Where a twin's step lands in the variant's schedule ([`Placement`]):
//!
//! - The twin's `atomic_add` for a batch lands at the step where the
//!   variant writes the threshold for that update; if the variant does not
//!   write it (a skip), at the step where the update ends, which for v6.0 is
//!   the step of its `atomic_read`: in v5.19 that add is a step of its own,
//!   so this is a legal v5.19 schedule ([`Placement::Outcome`]).
//!   [`Placement::SameSchedule`] instead lands a skipped add at the
//!   skipping CPU's next step, where v5.19 would have run it had the CPU
//!   been preempted after the test (docs/protocol.md, 3.1 (a2)).
//! - The twin resets its threshold when a flush section that walked the
//!   counters ends, as v5.19 does after its walk; a reset by a flusher
//!   that did not walk is not the twin's.
//! - The twin's reader flushes only if no flush section is open: otherwise
//!   its trylock would fail and it would not flush either.

use crate::observe::ghost::{G_TWIN, G_TWIN_CPU};
use crate::vocab::footprint::{self, GhostKind};
use crate::vocab::obs::{renamed, Access, Actor, Obs, Op, Tp, Var};

/// Where the twin's skipped adds land.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// At the skipping step (a legal twin schedule; the outcome sense).
    Outcome,
    /// At the skipping CPU's next step (the same-schedule sense).
    SameSchedule,
}

/// A ghost of a twin's reader gate.
pub trait TwinGate: Send {
    /// Feed one observation of the variant.
    fn observe(&mut self, actor: Actor, obs: &Obs);
    /// Whether the twin's reader of `memcg` would flush now, without
    /// declaring the read to the search (for coverage and for a gate's read
    /// window, which the steps that change the gate declare themselves).
    fn flushable(&self, memcg: u8) -> bool;
    /// [`TwinGate::flushable`], as a read of the twin by the running step.
    fn would_flush(&self, memcg: u8) -> bool {
        footprint::footprint(G_TWIN, GhostKind::Read);
        self.flushable(memcg)
    }
    /// What the twin's gate sees now, for messages ("v5.19's threshold
    /// would be 3 > 2").
    fn describe(&self) -> String;
    /// Feed the gate's state into `state` for the stateful search; `false`
    /// if it cannot (the default: that search then never prunes).
    fn digest(&self, _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }
    /// The part of [`TwinGate::digest`] that belongs to CPU `cpu`, for the
    /// symmetry reduction (see [`crate::vocab::obs::Sink::digest_cpu`]);
    /// `false` (the default) if the gate cannot split its state.
    fn digest_cpu(&self, _cpu: usize, _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }
    /// The rest, CPU `c` written as `rename[c]`.
    fn digest_renamed(&self, _rename: &[usize], _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }
    /// A copy of the gate as it stands, for [`crate::vocab::obs::Sink::save`];
    /// `None` (the default) if it cannot be copied: the exhaustive search
    /// then replays every observation.
    fn boxed_clone(&self) -> Option<Box<dyn TwinGate>> {
        None
    }
}

/// A variant's own reader gate, as data: what a twin gate is built from
/// when another variant names this one as its twin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// v5.19's: one global threshold in batches ([`GlobalGate`]).
    Global,
    /// The per-memcg lineage's without its optimisation ([`PerMemcgGate`]):
    /// a fold adds the sum the per-CPU counter reached (`local_sum`, v6.8)
    /// or what the updater's `this_cpu_xchg()` finds (v6.17 on).
    PerMemcg {
        /// v6.8's fold; otherwise v6.17's.
        local_sum: bool,
    },
}

impl Gate {
    /// The ghost of this gate for one execution on `cfg`: `trigger` is the
    /// twin's reader trigger there, `name` the twin's name (for messages).
    pub fn build(
        self,
        cfg: &crate::config::Config,
        placement: Placement,
        trigger: i64,
        name: &str,
    ) -> Box<dyn TwinGate> {
        match self {
            Gate::Global => Box::new(GlobalGate::new(cfg, placement)),
            Gate::PerMemcg { local_sum } => {
                Box::new(PerMemcgGate::new(cfg, trigger, local_sum, name))
            }
        }
    }
}

/// The gate of v5.19 (v5.16-v6.3 without 873f64b791a2): one global
/// threshold counting batches of `MEMCG_CHARGE_BATCH` pages per CPU, a
/// reader that flushes when it is above `num_online_cpus()`.
#[derive(Clone, Hash)]
pub struct GlobalGate {
    n: i64,
    batch: i64,
    placement: Placement,
    /// The twin's `stats_updates` per CPU.
    su: Vec<i64>,
    /// Units crossed but not yet placed, per CPU.
    pending: Vec<i64>,
    /// Whether the CPU's current update wrote the threshold.
    wrote: Vec<bool>,
    /// Skipped units waiting for the CPU's next step (same schedule).
    deferred: Vec<bool>,
    /// The twin's `stats_flush_threshold`.
    thr: i64,
    /// Flush sections open, with whether each has walked.
    open: Vec<(Actor, bool)>,
}

impl GlobalGate {
    /// A gate for `cfg`.
    pub fn new(cfg: &crate::config::Config, placement: Placement) -> Self {
        GlobalGate {
            n: cfg.cpus as i64,
            batch: cfg.batch,
            placement,
            su: vec![0; cfg.cpus],
            pending: vec![0; cfg.cpus],
            wrote: vec![false; cfg.cpus],
            deferred: vec![false; cfg.cpus],
            thr: 0,
            open: Vec::new(),
        }
    }

    fn place(&mut self, c: usize) {
        if self.pending[c] != 0 {
            self.thr += self.pending[c];
            self.pending[c] = 0;
            footprint::footprint(G_TWIN, GhostKind::Add);
        }
        self.deferred[c] = false;
    }
}

impl TwinGate for GlobalGate {
    fn boxed_clone(&self) -> Option<Box<dyn TwinGate>> {
        Some(Box::new(self.clone()))
    }
    fn observe(&mut self, actor: Actor, obs: &Obs) {
        if let Actor::Cpu(c) = actor {
            if c >= self.su.len() {
                return;
            }
            footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
            if self.deferred[c] && !matches!(obs, Obs::UpdateDone { .. }) {
                self.place(c);
            }
            match *obs {
                Obs::Access(Access {
                    var: Var::State { .. },
                    op: Op::Add { val, .. },
                    ..
                }) => {
                    self.su[c] += val.abs();
                    if self.su[c] > self.batch {
                        self.pending[c] += self.su[c] / self.batch;
                        self.su[c] = 0;
                    }
                }
                Obs::Access(Access {
                    var: Var::Threshold { memcg: None },
                    op,
                    ..
                }) if op.written().is_some() => {
                    self.wrote[c] = true;
                    self.place(c);
                }
                Obs::UpdateDone { .. } => {
                    let skipped = !std::mem::take(&mut self.wrote[c]);
                    if skipped && self.pending[c] != 0 && self.placement == Placement::SameSchedule
                    {
                        self.deferred[c] = true;
                    } else {
                        self.place(c);
                    }
                }
                _ => {}
            }
            return;
        }
        match *obs {
            Obs::Trace(Tp::FlushBegin { .. }) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                self.open.push((actor, false));
            }
            Obs::Access(Access {
                var: Var::State { .. },
                op: Op::Read(_),
                ..
            }) => {
                if let Some(s) = self.open.iter_mut().find(|(a, _)| *a == actor) {
                    if !s.1 {
                        footprint::footprint(G_TWIN, GhostKind::Write);
                        s.1 = true;
                    }
                }
            }
            Obs::Trace(Tp::FlushEnd) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|(a, _)| *a == actor) {
                    if self.open.remove(i).1 {
                        self.thr = 0;
                    }
                }
            }
            _ => {}
        }
    }

    fn flushable(&self, _memcg: u8) -> bool {
        self.thr > self.n && self.open.is_empty()
    }

    fn digest(&self, mut state: &mut dyn std::hash::Hasher) -> bool {
        std::hash::Hash::hash(self, &mut state);
        true
    }

    fn digest_cpu(&self, c: usize, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        (self.su[c], self.pending[c], self.wrote[c], self.deferred[c]).hash(&mut state);
        true
    }

    fn digest_renamed(&self, rename: &[usize], mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        (self.n, self.batch, self.placement, self.thr).hash(&mut state);
        self.open.len().hash(&mut state);
        for (a, walked) in &self.open {
            (renamed(*a, rename), walked).hash(&mut state);
        }
        true
    }

    fn describe(&self) -> String {
        format!(
            "v5.19's gate over the same history reads stats_flush_threshold = {} > {}",
            self.thr, self.n
        )
    }
}

/// The fold a CPU's update has pending at one level of a [`PerMemcgGate`].
#[derive(Clone, Copy, Debug, Hash)]
struct Fold {
    level: u8,
    /// The sum the fold adds, if taken when the counter crossed (v6.8's
    /// local `s`); `None` takes the counter when the fold lands (v6.17's
    /// `this_cpu_xchg()`).
    sum: Option<i64>,
}

/// A CPU's update in progress, as the twin counts it.
#[derive(Clone, Debug, Hash)]
struct TwinUpdate {
    /// The updated memcg and its ancestors, bottom-up.
    levels: Vec<u8>,
    /// Levels counted so far (`levels[..counted]`).
    counted: usize,
    /// The update's magnitude.
    inc: i64,
    /// A fold waiting for the variant's own fold step.
    fold: Option<Fold>,
}

/// The gate of a per-memcg twin (v6.8 on): per (memcg, CPU) counters that
/// every update counts at every level, folded into the memcg's atomic once
/// they reach `MEMCG_CHARGE_BATCH`, never skipped; a reader of a memcg
/// flushes when its atomic is above the trigger.
///
/// Placement, so that the twin's steps form a legal schedule of the twin
/// (docs/protocol.md): a level is counted at the variant's first write of
/// that level's per-CPU counter in the update, or its first access to that
/// level's atomic (or when the update ends, for levels
/// the variant never reached, such as those above v6.17's `break`); a fold
/// lands at the variant's `atomic_add` at that level, at its read of an
/// already flushable atomic (v6.8's skip), or when the update moves on or
/// ends. The flusher's remote reset of a per-CPU counter and its reset of
/// an atomic (at the callback's read of it) reset the twin's too, when its
/// walk has read that counter (that memcg): the twin resets what its own
/// callbacks would.
#[derive(Clone)]
pub struct PerMemcgGate {
    cfg: crate::config::Config,
    trigger: i64,
    /// v6.8's fold adds the sum the counter reached; v6.17's adds what its
    /// `this_cpu_xchg()` finds.
    local_sum: bool,
    name: String,
    /// Per memcg, per CPU: the twin's `statc->stats_updates`.
    pc: Vec<Vec<i64>>,
    /// Per memcg: the twin's `vmstats->stats_updates`.
    atomic: Vec<i64>,
    /// Per CPU: the update in progress.
    cur: Vec<Option<TwinUpdate>>,
    /// Flushers inside a flush section, with the (memcg, CPU) counters
    /// their walk has read (bit `memcg * cpus + cpu`).
    open: Vec<(Actor, u64)>,
}

impl PerMemcgGate {
    /// A gate for `cfg` with reader trigger `trigger`.
    pub fn new(cfg: &crate::config::Config, trigger: i64, local_sum: bool, name: &str) -> Self {
        PerMemcgGate {
            cfg: cfg.clone(),
            trigger,
            local_sum,
            name: name.to_string(),
            pc: vec![vec![0; cfg.cpus]; cfg.memcgs()],
            atomic: vec![0; cfg.memcgs()],
            cur: vec![None; cfg.cpus],
            open: Vec::new(),
        }
    }

    /// Count `inc` at level `l` on CPU `c`; the fold it calls for, if any.
    fn count_level(&mut self, c: usize, l: u8, inc: i64) -> Option<Fold> {
        let pc = &mut self.pc[l as usize][c];
        *pc += inc;
        (*pc >= self.cfg.batch).then_some(Fold {
            level: l,
            sum: self.local_sum.then_some(*pc),
        })
    }

    fn fold_now(&mut self, c: usize, f: Fold) {
        let l = f.level as usize;
        let s = f.sum.unwrap_or(self.pc[l][c]);
        self.pc[l][c] = 0;
        if s != 0 {
            footprint::footprint(G_TWIN, GhostKind::Add);
            self.atomic[l] += s;
        }
    }

    fn settle(&mut self, c: usize) {
        if let Some(f) = self.cur[c].as_mut().and_then(|u| u.fold.take()) {
            self.fold_now(c, f);
        }
    }

    /// Count CPU `c`'s update at the levels from the first not yet counted
    /// up to `upto` (an index into its levels); levels below `upto` fold at
    /// once (the variant passed them without a step), the fold at `upto`
    /// waits for the variant's own fold step unless `fold_all`.
    fn count_up_to(&mut self, c: usize, upto: usize, fold_all: bool) {
        self.settle(c);
        let Some(u) = self.cur[c].clone() else {
            return;
        };
        for k in u.counted..=upto.min(u.levels.len().saturating_sub(1)) {
            if let Some(f) = self.count_level(c, u.levels[k], u.inc) {
                if k < upto || fold_all {
                    self.fold_now(c, f);
                } else if let Some(cur) = self.cur[c].as_mut() {
                    cur.fold = Some(f);
                }
            }
        }
        if let Some(cur) = self.cur[c].as_mut() {
            cur.counted = cur.counted.max(upto + 1);
        }
    }

    /// The variant's update on CPU `c` touched level `l`.
    fn reach(&mut self, c: usize, l: u8) {
        let Some(u) = self.cur[c].as_ref() else {
            return;
        };
        match u.levels.iter().position(|x| *x == l) {
            Some(i) if i >= u.counted => self.count_up_to(c, i, false),
            _ => {}
        }
    }

    /// CPU `c`'s update ended (or the next one began): land every count
    /// and fold still owed.
    fn finish(&mut self, c: usize) {
        if let Some(n) = self.cur[c].as_ref().map(|u| u.levels.len()) {
            if n > 0 {
                self.count_up_to(c, n - 1, true);
            }
        }
        self.settle(c);
        self.cur[c] = None;
    }
}

impl TwinGate for PerMemcgGate {
    fn boxed_clone(&self) -> Option<Box<dyn TwinGate>> {
        Some(Box::new(self.clone()))
    }
    /// The counters, the updates in progress and the open sections; the
    /// configuration and the trigger are fixed for the execution.
    fn digest(&self, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        (&self.pc, &self.atomic, &self.cur, &self.open).hash(&mut state);
        true
    }

    fn digest_cpu(&self, c: usize, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        for pc in &self.pc {
            pc[c].hash(&mut state);
        }
        self.cur[c].hash(&mut state);
        let cpus = self.cfg.cpus;
        for (_, walked) in &self.open {
            let bits = (0..self.pc.len())
                .map(|m| (walked >> (m * cpus + c)) & 1)
                .fold(0u64, |acc, b| acc << 1 | b);
            bits.hash(&mut state);
        }
        true
    }

    fn digest_renamed(&self, rename: &[usize], mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        self.atomic.hash(&mut state);
        self.open.len().hash(&mut state);
        for (a, _) in &self.open {
            renamed(*a, rename).hash(&mut state);
        }
        true
    }

    fn observe(&mut self, actor: Actor, obs: &Obs) {
        let cpus = self.cfg.cpus;
        match (*obs, actor) {
            (
                Obs::Access(Access {
                    var: Var::State { memcg, cpu },
                    op: Op::Add { val, .. },
                    ..
                }),
                Actor::Cpu(c),
            ) if c == cpu as usize && c < cpus && (memcg as usize) < self.atomic.len() => {
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.finish(c);
                self.cur[c] = Some(TwinUpdate {
                    levels: self.cfg.ancestry(memcg),
                    counted: 0,
                    inc: val.abs(),
                    fold: None,
                });
            }
            (Obs::UpdateDone { .. }, Actor::Cpu(c)) if c < cpus => {
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.finish(c);
            }
            (
                Obs::Access(Access {
                    var:
                        Var::StatsUpdates {
                            memcg: Some(l),
                            cpu,
                        },
                    op,
                    ..
                }),
                _,
            ) if (cpu as usize) < cpus && (l as usize) < self.atomic.len() => {
                let c = cpu as usize;
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                let bit = 1u64 << (l as usize * cpus + c);
                footprint::footprint(G_TWIN, GhostKind::Read);
                let walked = self.open.iter().any(|(a, w)| *a == actor && w & bit != 0);
                if actor == Actor::Cpu(c) {
                    // Counted at the owner's write, not its read: a flusher's
                    // remote reset between the two would otherwise erase a
                    // count the variant's write then restores.
                    if op.written().is_some() {
                        self.reach(c, l);
                    }
                } else if op.written() == Some(0) && walked {
                    // The flusher's remote reset, in the callback of (l, c).
                    self.pc[l as usize][c] = 0;
                }
            }
            (
                Obs::Access(Access {
                    var: Var::Threshold { memcg: Some(l) },
                    op,
                    ..
                }),
                Actor::Cpu(c),
            ) if c < cpus && (l as usize) < self.atomic.len() => {
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.reach(c, l);
                let pending_here = self.cur[c]
                    .as_ref()
                    .and_then(|u| u.fold)
                    .is_some_and(|f| f.level == l);
                let lands = match op {
                    Op::Add { .. } => true,
                    Op::Read(t) => t > self.trigger,
                    _ => op.written().is_some(),
                };
                if pending_here && lands {
                    self.settle(c);
                }
            }
            (
                Obs::Access(Access {
                    var: Var::Threshold { memcg: Some(l) },
                    op,
                    ..
                }),
                _,
            ) if (l as usize) < self.atomic.len() => {
                // The callback's `if (atomic_read()) atomic_set(0)`, in a
                // section whose walk read memcg `l`: the twin's code resets
                // its own atomic there.
                let mask = ((1u64 << self.cfg.cpus) - 1) << (l as usize * self.cfg.cpus);
                let walked = self.open.iter().any(|(a, w)| *a == actor && w & mask != 0);
                if walked && (op.read().is_some() || op.written() == Some(0)) {
                    footprint::footprint(G_TWIN, GhostKind::Write);
                    self.atomic[l as usize] = 0;
                }
            }
            (
                Obs::Access(Access {
                    var: Var::State { memcg, cpu },
                    op: Op::Read(_),
                    ..
                }),
                _,
            ) if (cpu as usize) < cpus => {
                let bit = 1u64 << (memcg as usize * cpus + cpu as usize);
                if let Some(s) = self.open.iter_mut().find(|(a, _)| *a == actor) {
                    if s.1 & bit == 0 {
                        footprint::footprint(G_TWIN, GhostKind::Write);
                        s.1 |= bit;
                    }
                }
            }
            (Obs::Trace(Tp::FlushBegin { .. }), _) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                self.open.push((actor, 0));
            }
            (Obs::Trace(Tp::FlushEnd), _) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|(a, _)| *a == actor) {
                    self.open.remove(i);
                }
            }
            _ => {}
        }
    }

    fn flushable(&self, memcg: u8) -> bool {
        self.atomic
            .get(memcg as usize)
            .is_some_and(|a| *a > self.trigger)
    }

    fn describe(&self) -> String {
        let atomics: Vec<String> = self.atomic.iter().map(|a| a.to_string()).collect();
        format!(
            "{}'s gate over the same history has vmstats->stats_updates = [{}] (per memcg), \
             trigger {}",
            self.name,
            atomics.join(", "),
            self.trigger
        )
    }
}
