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

use crate::explore::dfs::{self, GhostKind};
use crate::observe::ghost::{G_TWIN, G_TWIN_CPU};
use crate::observe::obs::{Access, Actor, Obs, Op, Tp, Var};

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
    /// Whether the twin's reader of `memcg` would flush now.
    fn would_flush(&self, memcg: u8) -> bool;
    /// What the twin's gate sees now, for messages ("v5.19's threshold
    /// would be 3 > 2").
    fn describe(&self) -> String;
    /// Feed the gate's state into `state` for the stateful search; `false`
    /// if it cannot (the default: that search then never prunes).
    fn digest(&self, _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }
}

/// Builds a twin gate for one execution.
pub type GateFactory = fn(&crate::config::Config, Placement) -> Box<dyn TwinGate>;

/// The gate of v5.19 (v5.16-v6.3 without 873f64b791a2): one global
/// threshold counting batches of `MEMCG_CHARGE_BATCH` pages per CPU, a
/// reader that flushes when it is above `num_online_cpus()`.
#[derive(Hash)]
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

    /// The factory for [`crate::protocol::Variant::gate`].
    pub fn factory(cfg: &crate::config::Config, placement: Placement) -> Box<dyn TwinGate> {
        Box::new(GlobalGate::new(cfg, placement))
    }

    fn place(&mut self, c: usize) {
        if self.pending[c] != 0 {
            self.thr += self.pending[c];
            self.pending[c] = 0;
            dfs::ghost(G_TWIN, GhostKind::Add);
        }
        self.deferred[c] = false;
    }
}

impl TwinGate for GlobalGate {
    fn observe(&mut self, actor: Actor, obs: &Obs) {
        if let Actor::Cpu(c) = actor {
            if c >= self.su.len() {
                return;
            }
            dfs::ghost(G_TWIN_CPU + c as u32, GhostKind::Write);
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
                dfs::ghost(G_TWIN, GhostKind::Write);
                self.open.push((actor, false));
            }
            Obs::Access(Access {
                var: Var::State { .. },
                op: Op::Read(_),
                ..
            }) => {
                if let Some(s) = self.open.iter_mut().find(|(a, _)| *a == actor) {
                    if !s.1 {
                        dfs::ghost(G_TWIN, GhostKind::Write);
                        s.1 = true;
                    }
                }
            }
            Obs::Trace(Tp::FlushEnd) => {
                dfs::ghost(G_TWIN, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|(a, _)| *a == actor) {
                    if self.open.remove(i).1 {
                        self.thr = 0;
                    }
                }
            }
            _ => {}
        }
    }

    fn would_flush(&self, _memcg: u8) -> bool {
        dfs::ghost(G_TWIN, GhostKind::Read);
        self.thr > self.n && self.open.is_empty()
    }

    fn digest(&self, mut state: &mut dyn std::hash::Hasher) -> bool {
        std::hash::Hash::hash(self, &mut state);
        true
    }

    fn describe(&self) -> String {
        format!(
            "v5.19's gate over the same history reads stats_flush_threshold = {} > {}",
            self.thr, self.n
        )
    }
}
