//! What a twin gate is: the ghost of a no-skip twin's reader gate, and
//! where its skipped adds land.

use crate::observe::ghost::G_TWIN;
use crate::vocab::footprint::{self, GhostKind};
use crate::vocab::obs::{Actor, Obs};

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
