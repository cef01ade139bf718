//! The early break's loss as a real kernel showed it (finding
//! `c12-lost-flush`; docs/real-kernels.md, section 5): how many pages a
//! parent's memory.stat missed and for how long, read off a boot's
//! `c12-decisive` scenario.

use serde::Serialize;

use super::spec::ReadRecord;
use super::Observation;

/// The scenario the loss is read from.
pub const DECISIVE: &str = "c12-decisive";

/// One boot's loss.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// `uname -r`.
    pub release: String,
    /// vCPUs.
    pub cpus: usize,
    /// The child's `anon` at its read after its further charges (pages).
    pub child: u64,
    /// The parent's `anon` at its last read before the child's (pages).
    pub parent: u64,
    /// Reads of the parent that showed less than the child's pages by more
    /// than `MEMCG_CHARGE_BATCH * nr_cpus` pages.
    pub short_reads: usize,
    /// Milliseconds from the parent's first read after the skew to its
    /// first read that shows the child's pages (the periodic flush), if it
    /// came within the scenario's poll.
    pub lasted_ms: Option<u64>,
    /// Milliseconds from the parent's first read after the skew to the
    /// scenario's last read: when `lasted_ms` is `None`, the loss lasted
    /// longer than this (the periodic work is deferrable and ran late).
    pub watched_ms: u64,
}

impl Loss {
    /// Pages the parent missed.
    pub fn missed(&self) -> u64 {
        self.child.saturating_sub(self.parent)
    }
}

/// The loss of one boot, if it ran `c12-decisive` and the parent fell
/// short there; `None` if it did not run it or the parent kept up.
pub fn loss(obs: &Observation) -> Option<Loss> {
    let reads: Vec<&ReadRecord> = obs.reads.iter().filter(|r| r.s == DECISIVE).collect();
    let child_at = reads.iter().rposition(|r| r.cg == "p/a")?;
    let child = reads[child_at].anon;
    let parent = reads[..child_at].iter().rev().find(|r| r.cg == "p")?.anon;
    if parent >= child {
        return None;
    }
    let bound = 64 * obs.hello.cpus as u64;
    let short_reads = reads[..child_at]
        .iter()
        .filter(|r| r.cg == "p" && r.anon + bound < child)
        .count();
    let first = reads.iter().find(|r| r.cg == "p")?;
    let caught = reads[child_at..]
        .iter()
        .find(|r| r.cg == "p" && r.anon >= child);
    Some(Loss {
        release: obs.hello.release.clone(),
        cpus: obs.hello.cpus,
        child,
        parent,
        short_reads,
        lasted_ms: caught.map(|c| c.t.saturating_sub(first.t) / 1000),
        watched_ms: reads
            .last()
            .map_or(0, |l| l.t.saturating_sub(first.t) / 1000),
    })
}
