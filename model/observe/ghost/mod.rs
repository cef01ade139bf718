//! Ghost state: what the monitors know about one execution, built from
//! observations only.
//!
//! The interpretation of variables follows [`crate::vocab::obs::Var`]:
//! `State` adds by a CPU are updates, `State` reads inside a flush section
//! are the walk, `Aggregate` writes are the flushed value. A threshold and
//! its per-CPU counters form a *domain*: the global `stats_flush_threshold`
//! with `stats_updates` (v5.16-v6.7, `memcg: None`), or one memcg's
//! `vmstats->stats_updates` with its per-CPU `stats_updates` (v6.8 on).
//! Each domain keeps the per-CPU residue, the magnitude counted in the
//! threshold and the magnitude skipped since the threshold's last reset.
//!
//! Every update of ghost state declares its footprint to the exhaustive
//! search (`explore::dfs`) under one of the locations below, so
//! that the sleep-set reduction never swaps two steps whose ghost effects
//! do not commute.
//!
//! # What is stable
//!
//! A property's check reads ghost state through [`crate::observe::
//! properties::Ctx::ghost`], a shared reference. Its read side is stable:
//! the public fields of [`Ghost`], [`Domain`] and [`Section`], and the
//! methods [`Ghost::written_total`], [`Ghost::staleness`],
//! [`Ghost::gated`], [`Ghost::split`], [`Ghost::skipped`],
//! [`Ghost::resets`], [`Ghost::stale_ticks`], [`Ghost::in_section`],
//! [`Ghost::gate_read`] and [`Ghost::read_all`] (which a check reading
//! per-CPU ghost data calls, docs/extending.md section 6). The update side
//! (building the state from observations, the footprint locations, the
//! exhaustive search's digests) is the monitors' own, hidden from these
//! docs and unstable.

mod domain;
mod sym;
mod update;

use std::collections::BTreeMap;

use crate::config::Config;
use crate::observe::coverage::Split;
use crate::vocab::footprint::{self, GhostKind, GhostLoc};
use crate::vocab::obs::Actor;

pub use domain::{Domain, Happened, Section};

/// Every update's running sum (commutative adds).
#[doc(hidden)]
pub const G_WRITTEN: GhostLoc = 1;
/// The aggregates as flushers write them.
#[doc(hidden)]
pub const G_AGG: GhostLoc = 2;
/// The threshold domains' split: counted and skipped since the last reset.
#[doc(hidden)]
pub const G_THR: GhostLoc = 3;
/// Flush sections: who is inside, who has walked.
#[doc(hidden)]
pub const G_SECTION: GhostLoc = 4;
/// Abstract time: now, stamps and what the aggregate accounts for.
#[doc(hidden)]
pub const G_TIME: GhostLoc = 5;
/// A twin gate's thresholds.
#[doc(hidden)]
pub const G_TWIN: GhostLoc = 6;
/// Per CPU: the residues (`+ cpu`).
#[doc(hidden)]
pub const G_RESIDUE: GhostLoc = 100;
/// Per CPU: a twin gate's per-CPU counters (`+ cpu`).
#[doc(hidden)]
pub const G_TWIN_CPU: GhostLoc = 200;

/// Per-execution ghost state.
#[derive(Clone, Debug)]
pub struct Ghost {
    /// Parents of memcgs 1.. (the configuration's tree).
    tree: Vec<u8>,
    /// Per memcg, per CPU: the running sum of the updates charged to it.
    pub written: Vec<Vec<i64>>,
    /// Per memcg: the aggregate as last written by a flusher.
    pub agg: Vec<i64>,
    /// The flush sections open.
    pub open: Vec<Section>,
    /// Per memcg, per CPU: the value the latest walk read from the counter.
    pub seen: Vec<Vec<i64>>,
    /// Per memcg, per CPU: pages written after the latest completed walk
    /// read the counter and before that flush section ended: a flush
    /// declared them flushed without having seen them.
    pub lost: Vec<Vec<i64>>,
    /// Per CPU: the running sum of its root-level updates the root
    /// aggregate accounts for (flat trees).
    pub folded: Vec<i64>,
    /// A walk's read not yet folded into the aggregate: (flusher, cpu, v).
    pending_fold: Vec<(Actor, usize, i64)>,
    /// `jiffies_64` as it stands.
    pub now: i64,
    /// Per CPU: (running sum after the update, tick of its return) for
    /// every root-level update that returned.
    pub stamps: Vec<Vec<(i64, i64)>>,
    /// The latest tick at which a flush section of the whole tree was open
    /// (abstract time only): when one began, or a tick that passed while
    /// one was open.
    pub root_flush_at: Option<i64>,
    /// The threshold domains seen so far.
    pub domains: BTreeMap<Option<u8>, Domain>,
    /// Threshold RMWs by updaters.
    pub threshold_rmws: u64,
    /// Per actor: the domain and value its gate last read.
    pub gate_read: Vec<(Actor, Option<u8>, i64)>,
    /// The reader's trigger of per-memcg domains (v6.8 on), so that an
    /// updater's read of a memcg's atomic counts as a skip only when it
    /// found it flushable (v6.17 reads it before counting).
    pub trigger: Option<i64>,
    cpus: usize,
}

/// The state of a stateful search: every field that can change what a
/// later observation does. Left out: `threshold_rmws` (a count summed over
/// executions, which decides nothing), `gate_read` (only violation messages
/// quote it), and the configuration (`tree`, `trigger`, `cpus`).
impl std::hash::Hash for Ghost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Ghost {
            tree: _,
            written,
            agg,
            open,
            seen,
            lost,
            folded,
            pending_fold,
            now,
            stamps,
            domains,
            root_flush_at,
            threshold_rmws: _,
            gate_read: _,
            trigger: _,
            cpus: _,
        } = self;
        (written, agg, open, seen, lost, folded, pending_fold).hash(h);
        (now, stamps, domains, root_flush_at).hash(h);
    }
}

impl Ghost {
    /// Fresh ghost state for `cfg`.
    #[doc(hidden)]
    pub fn new(cfg: &Config) -> Self {
        let (cpus, memcgs) = (cfg.cpus, cfg.memcgs());
        let grid = || vec![vec![0; cpus]; memcgs];
        Ghost {
            tree: cfg.tree.clone(),
            written: grid(),
            agg: vec![0; memcgs],
            open: Vec::new(),
            seen: grid(),
            lost: grid(),
            folded: vec![0; cpus],
            pending_fold: Vec::new(),
            now: 0,
            stamps: vec![Vec::new(); cpus],
            root_flush_at: None,
            domains: BTreeMap::new(),
            threshold_rmws: 0,
            gate_read: Vec::new(),
            trigger: None,
            cpus,
        }
    }

    fn in_subtree(&self, d: usize, m: usize) -> bool {
        let mut x = d;
        loop {
            if x == m {
                return true;
            }
            if x == 0 {
                return false;
            }
            x = self.tree[x - 1] as usize;
        }
    }

    fn subtree_sum(&self, grid: &[Vec<i64>], m: u8) -> i64 {
        (0..grid.len())
            .filter(|d| self.in_subtree(*d, m as usize))
            .map(|d| grid[d].iter().sum::<i64>())
            .sum()
    }

    /// Whether some memcg is flushable now: its atomic, as last written,
    /// above the per-memcg trigger (v6.8 on; `false` for the global
    /// lineage, which has no per-memcg atomic).
    pub fn any_flushable(&self) -> bool {
        let Some(t) = self.trigger else {
            return false;
        };
        self.domains
            .iter()
            .any(|(k, d)| k.is_some() && d.threshold > t)
    }

    /// The updates charged to `m`'s subtree so far: what its hierarchical
    /// aggregate must reach once flushed.
    pub fn written_total(&self, m: u8) -> i64 {
        self.subtree_sum(&self.written, m)
    }

    /// Updates charged to `m`'s subtree so far minus `m`'s aggregate, in
    /// execution order.
    pub fn staleness(&self, m: u8) -> i64 {
        self.subtree_sum(&self.written, m) - self.agg.get(m as usize).copied().unwrap_or(0)
    }

    /// The staleness a reader's gate on `m` answers for: all but the pages
    /// of [`Ghost::lost`]. Unlike the [`Split`], this takes nothing from how
    /// a protocol counts: only updates, walks and flush sections.
    pub fn gated(&self, m: u8) -> i64 {
        self.staleness(m) - self.subtree_sum(&self.lost, m)
    }

    /// The domain a threshold variable belongs to.
    fn domain(&mut self, key: Option<u8>) -> &mut Domain {
        let cpus = self.cpus;
        self.domains.entry(key).or_insert_with(|| Domain::new(cpus))
    }

    /// The [`Split`] of `m`'s staleness by the counters of domain `key`.
    pub fn split(&self, key: Option<u8>, m: u8) -> Split {
        let (residue, counted, skipped) = self.domains.get(&key).map_or((0, 0, 0), |d| {
            let held = d.residue.iter().chain(&d.flight).sum::<i64>();
            (held, d.counted, d.skipped)
        });
        [
            residue,
            counted,
            skipped,
            self.staleness(m) - residue - counted - skipped,
        ]
    }

    /// Magnitude skipped in any domain since its last reset.
    pub fn skipped(&self) -> i64 {
        self.domains.values().map(|d| d.skipped).sum()
    }

    /// Resets of any threshold so far.
    pub fn resets(&self) -> u32 {
        self.domains.values().map(|d| d.resets).sum()
    }

    /// Ticks since the oldest root-level update the root aggregate does not
    /// account for returned (0 if it accounts for all); non-negative
    /// updates, flat trees.
    pub fn stale_ticks(&self) -> i64 {
        self.stamps
            .iter()
            .zip(&self.folded)
            .filter_map(|(s, f)| {
                s.iter()
                    .find(|(sum, _)| *sum > *f)
                    .map(|(_, t)| self.now - t)
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether `actor` is inside a flush section.
    pub fn in_section(&self, actor: Actor) -> bool {
        self.open.iter().any(|s| s.actor == actor)
    }

    /// The threshold domain and value `actor`'s gate read last.
    pub fn gate_read(&self, actor: Actor) -> Option<(Option<u8>, i64)> {
        self.gate_read
            .iter()
            .find(|(a, _, _)| *a == actor)
            .map(|(_, k, v)| (*k, *v))
    }

    /// Declare that the running step reads all ghost state (a check).
    pub fn read_all(&self) {
        for loc in [G_WRITTEN, G_AGG, G_THR, G_SECTION, G_TIME] {
            footprint::footprint(loc, GhostKind::Read);
        }
        for c in 0..self.cpus {
            footprint::footprint(G_RESIDUE + c as u32, GhostKind::Read);
        }
    }
}
