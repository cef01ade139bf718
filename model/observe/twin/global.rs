//! The twin gate of the global lineage: v5.19's.

use super::gate::{Placement, TwinGate};
use crate::observe::ghost::{G_TWIN, G_TWIN_CPU};
use crate::vocab::footprint::{self, GhostKind};
use crate::vocab::obs::{renamed, Access, Actor, Obs, Op, Tp, Var};

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
            // A read is not the step that lands the deferred add: where a
            // variant reads must not move the twin (issue 41).
            let read_only = matches!(obs, Obs::Access(a) if a.op.written().is_none());
            if self.deferred[c] && !read_only && !matches!(obs, Obs::UpdateDone { .. }) {
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
