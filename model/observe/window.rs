//! A reader gate's read window: from its first read of a threshold to its
//! decision. `no_lost_flush` judges a skip against the twin over the whole
//! window (docs/properties.md): a gate that reads more than one counter
//! decides over several steps, and a twin reader placed at any one of them
//! is a legal twin schedule, so a skip loses a flush only if the twin
//! would have flushed at every point of the window.

use crate::observe::twin::TwinGate;
use crate::vocab::Actor;

/// Per reader inside its gate: per twin gate (the outcome twin, then the
/// same-schedule one), a mask of the memcgs whose twin reader would have
/// flushed at every point of the window so far.
#[derive(Clone, Debug, Default, Hash)]
pub struct Windows {
    open: Vec<(Actor, [u64; 2])>,
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

impl Windows {
    /// `actor`'s gate read a threshold: opens its window if not open.
    pub fn read(&mut self, actor: Actor, twins: [Option<&dyn TwinGate>; 2], memcgs: usize) {
        if self.open.iter().any(|(a, _)| *a == actor) {
            return;
        }
        let m = twins.map(|t| mask(t, memcgs, true));
        self.open.push((actor, m));
    }

    /// After every observation: narrow each open window to the memcgs
    /// whose twin reader still would flush.
    pub fn narrow(&mut self, twins: [Option<&dyn TwinGate>; 2], memcgs: usize) {
        if self.open.is_empty() {
            return;
        }
        let now = twins.map(|t| mask(t, memcgs, false));
        for (_, w) in &mut self.open {
            w[0] &= now[0];
            w[1] &= now[1];
        }
    }

    /// Whether twin `k`'s reader of `memcg` would have flushed at every
    /// point of `actor`'s window (`true` if no window is open: a gate that
    /// read no threshold is judged at its decision alone).
    pub fn flushed_throughout(&self, actor: Actor, k: usize, memcg: u8) -> bool {
        self.open
            .iter()
            .find(|(a, _)| *a == actor)
            .is_none_or(|(_, w)| w[k] >> memcg.min(63) & 1 == 1)
    }

    /// `actor` decided: its window closes.
    pub fn close(&mut self, actor: Actor) {
        self.open.retain(|(a, _)| *a != actor);
    }
}
