//! A reader's window: from its call of `mem_cgroup_flush_stats()`
//! ([`crate::vocab::Obs::FlushCall`]) to its gate's decision. The twin's
//! reader may read its own gate at any point of that call, so each point is
//! a legal twin schedule, and a skip loses a flush only if the twin would
//! have flushed at every point of the window (docs/properties.md).
//!
//! The window opens at the call, not at the gate's first read of a
//! threshold: where, and how often, a variant reads cannot move it (a read
//! that changes nothing changes no verdict; tests/suite/unused_reads.rs).
//! It closes at the decision: the `memcg_flush_stats` tracepoint, or a
//! ratelimited gate that found the flush not due. A ratelimited gate that
//! found it due goes on to the threshold gate in the same window.
//!
//! The window also keeps the least staleness the gate answers for
//! ([`crate::observe::ghost::Ghost::gated`]) at any point of it with no
//! flush section open, for `no_worse_than_baseline`: a twin reader placed
//! at that point would have answered for no more.

use crate::observe::ghost::Ghost;
use crate::observe::twin::TwinGate;
use crate::vocab::{Actor, Obs};

/// One reader's open window.
#[derive(Clone, Debug, Hash)]
struct Window {
    actor: Actor,
    memcg: u8,
    /// Per twin gate (the outcome twin, then the same-schedule one), the
    /// memcgs whose twin reader would have flushed at every point so far.
    masks: [u64; 2],
    /// The least gated staleness of `memcg` at a point with no flush
    /// section open; `None` if every point so far had one open.
    least_gated: Option<i64>,
}

/// Per reader inside its call: its window (masks and least staleness).
#[derive(Clone, Debug, Default, Hash)]
pub struct Windows {
    open: Vec<Window>,
}

fn mask(twin: Option<&dyn TwinGate>, memcgs: usize, declare: bool) -> u64 {
    let Some(t) = twin else {
        return 0;
    };
    // The window's first point is a read of the twin by the reader's step;
    // later points change only at steps that write the twin, which
    // declare that themselves.
    if declare {
        t.would_flush(0);
    }
    (0..memcgs.min(64))
        .filter(|m| t.flushable(*m as u8))
        .fold(0, |acc, m| acc | 1 << m)
}

fn least(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

impl Windows {
    /// After every observation (`obs` by `actor`): narrow the open windows
    /// and open `actor`'s at its call. The least gated staleness is kept
    /// only if `keep` (the plan checks `no_worse_than_baseline`): otherwise
    /// it would be state the exhaustive search tells apart for nothing.
    pub fn observe(
        &mut self,
        actor: Actor,
        obs: &Obs,
        twins: [Option<&dyn TwinGate>; 2],
        memcgs: usize,
        ghost: &Ghost,
        keep: bool,
    ) {
        let gated = |m: u8| (keep && ghost.open.is_empty()).then(|| ghost.gated(m));
        self.narrow(twins, memcgs, &gated);
        if let Obs::FlushCall { memcg } = *obs {
            self.open(actor, memcg, twins, memcgs, gated(memcg));
        }
    }

    /// `actor` called the flush of `memcg`: its window opens. `gated` is
    /// the gated staleness of `memcg` now, `None` while a flush section is
    /// open.
    pub fn open(
        &mut self,
        actor: Actor,
        memcg: u8,
        twins: [Option<&dyn TwinGate>; 2],
        memcgs: usize,
        gated: Option<i64>,
    ) {
        self.close(actor);
        self.open.push(Window {
            actor,
            memcg,
            masks: twins.map(|t| mask(t, memcgs, true)),
            least_gated: gated,
        });
    }

    /// After every observation: narrow each open window to the memcgs
    /// whose twin reader still would flush, and keep the least gated
    /// staleness (`gated(m)`: `None` while a flush section is open).
    pub fn narrow(
        &mut self,
        twins: [Option<&dyn TwinGate>; 2],
        memcgs: usize,
        gated: &dyn Fn(u8) -> Option<i64>,
    ) {
        if self.open.is_empty() {
            return;
        }
        let now = twins.map(|t| mask(t, memcgs, false));
        for w in &mut self.open {
            w.masks[0] &= now[0];
            w.masks[1] &= now[1];
            w.least_gated = least(w.least_gated, gated(w.memcg));
        }
    }

    /// Whether twin `k`'s reader of `memcg` would have flushed at every
    /// point of `actor`'s window (`true` if no window is open: a gate
    /// reached without a call is judged at its decision alone).
    pub fn flushed_throughout(&self, actor: Actor, k: usize, memcg: u8) -> bool {
        self.open
            .iter()
            .find(|w| w.actor == actor)
            .is_none_or(|w| w.masks[k] >> memcg.min(63) & 1 == 1)
    }

    /// The least gated staleness over `actor`'s window: `None` if no
    /// window is open, `Some(None)` if a flush section was open at every
    /// point of it.
    pub fn least_gated(&self, actor: Actor) -> Option<Option<i64>> {
        self.open
            .iter()
            .find(|w| w.actor == actor)
            .map(|w| w.least_gated)
    }

    /// `actor` decided: its window closes.
    pub fn close(&mut self, actor: Actor) {
        self.open.retain(|w| w.actor != actor);
    }
}
