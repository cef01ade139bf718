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
//!   skipping CPU's next step that writes, where v5.19 would have run it
//!   had the CPU been preempted after the test (docs/protocol.md, 3.1
//!   (a2)); a read is not that step, so that no read moves the twin.
//! - The twin resets its threshold when a flush section that walked the
//!   counters ends, as v5.19 does after its walk; a reset by a flusher
//!   that did not walk is not the twin's.
//! - The twin's reader flushes only if no flush section is open: otherwise
//!   its trylock would fail and it would not flush either.

mod global;
mod per_memcg;

mod gate;

pub use gate::{Placement, TwinGate};
pub use global::GlobalGate;
pub use per_memcg::PerMemcgGate;

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
