//! Named properties. Each check function panics with a message that starts
//! with the property's name, so tests can match on it and reports can
//! attribute a failure.
//!
//! A property is only checked when it is *armed* for an exploration: a run
//! stops at its first violation, so each (variant, property, backend) cell of
//! the matrix is its own exploration.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The properties the model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// See [`no_lost_flush`].
    NoLostFlush,
    /// See [`conservation`].
    Conservation,
    /// See [`monotonic_reads`].
    MonotonicReads,
    /// See [`flush_exclusion`].
    FlushExclusion,
}

impl Property {
    /// All properties, in report order.
    pub const ALL: [Property; 4] = [
        Property::NoLostFlush,
        Property::Conservation,
        Property::MonotonicReads,
        Property::FlushExclusion,
    ];

    /// The name used in messages, reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Property::NoLostFlush => "no_lost_flush",
            Property::Conservation => "conservation",
            Property::MonotonicReads => "monotonic_reads",
            Property::FlushExclusion => "flush_exclusion",
        }
    }

    /// Look a property up by name; the error lists the names allowed.
    pub fn by_name(name: &str) -> Result<Property, String> {
        Property::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Property::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown property {name:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// The coverage event that shows the racy interleaving this property is
    /// about actually happened (see [`crate::ghost::Event`]).
    pub fn coverage_event(self) -> crate::ghost::Event {
        use crate::ghost::Event;
        match self {
            Property::NoLostFlush => Event::SkipRacedReset,
            Property::Conservation => Event::UpdateBehindFlusher,
            Property::MonotonicReads => Event::ReadDuringFlush,
            Property::FlushExclusion => Event::TrylockContended,
        }
    }

    /// What a "holds" verdict of each backend means for this property.
    pub fn decided_by(self) -> &'static str {
        match self {
            Property::NoLostFlush => {
                "shuttle/std: ghost v5.19 threshold; loom: outcomes within v5.19's"
            }
            Property::Conservation => "all backends; loom also under weak memory",
            Property::MonotonicReads => "all backends; loom also under weak memory",
            Property::FlushExclusion => {
                "occupancy probe everywhere; happens-before between flushes only under loom"
            }
        }
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `no_lost_flush`: skipping an increment never hides a flush the baseline
/// would have triggered.
///
/// 873f64b791a2's comment: "If stats_flush_threshold exceeds the threshold
/// (>num_online_cpus()), cgroup stats update will be triggered in
/// __mem_cgroup_flush_stats(). Increasing this var further is redundant and
/// simply adds overhead in atomic update."
///
/// Ghost form (sequentially consistent backends): at every reader decision,
/// if `baseline` (the threshold v5.19 would hold in the same schedule, its
/// skipped adds placed at the skip decision) is above
/// `num_online_cpus`, the variant's `threshold` must be too.
pub fn no_lost_flush(threshold: i64, baseline: i64, num_online_cpus: i64) {
    if baseline > num_online_cpus && threshold <= num_online_cpus {
        panic!(
            "no_lost_flush: reader saw stats_flush_threshold = {threshold} <= num_online_cpus() = {num_online_cpus} \
             and skipped the flush, but v5.19 would have seen {baseline} and flushed"
        );
    }
}

/// `conservation`: after every updater has finished and one more flush has
/// completed, the aggregate equals the sum of all updates.
///
/// Encodes the rstat contract "After this function returns, all cgroups in
/// the subtree have up-to-date ->stat" (kernel/cgroup/rstat.c,
/// `cgroup_rstat_flush`) for a flush that runs after the updates.
pub fn conservation(aggregate: i64, expected: i64) {
    if aggregate != expected {
        panic!(
            "conservation: after all updates and a final flush, memcg->vmstats.state = {aggregate}, \
             but the updates sum to {expected}"
        );
    }
}

/// `monotonic_reads`: with non-negative updates, successive reads of a
/// statistic by one reader never go down.
///
/// Readers use `READ_ONCE(memcg->vmstats.state[idx])` without a lock
/// (`memcg_page_state()`); only the flusher writes it, adding deltas.
pub fn monotonic_reads(reader: usize, previous: i64, now: i64) {
    if now < previous {
        panic!(
            "monotonic_reads: reader {reader} read memcg->vmstats.state = {previous}, then {now}"
        );
    }
}

/// `flush_exclusion`: at most one flusher is inside the flush section.
///
/// aa48e47e3906: "introduce memcg local spinlock and let only one flusher
/// active at a time"; 3cd9992b9302: "We always flush the entire tree, so
/// concurrent flushers can just skip." Checked two ways: an occupancy probe
/// (every backend), and under loom, happens-before between consecutive
/// flush sections, which a race on the flusher's plain fields reveals.
pub fn flush_exclusion(inside: i64) {
    if inside > 1 {
        panic!("flush_exclusion: {inside} flushers inside __mem_cgroup_flush_stats() at once");
    }
}

/// The name of the property a panic message reports, if any. loom's data
/// race reports on the flusher's lock-protected fields count as
/// `flush_exclusion`: the lock failed to order two flush sections.
pub fn attribute(message: &str) -> Option<Property> {
    if let Some(p) = Property::ALL
        .into_iter()
        .find(|p| message.starts_with(&format!("{}:", p.name())))
    {
        return Some(p);
    }
    if message.contains("Causality violation") {
        return Some(Property::FlushExclusion);
    }
    None
}

/// A one-line violation message that starts with the property's name.
pub fn explain(p: Property, message: &str) -> String {
    // loom starts some messages with a newline (LOOM_LOCATION).
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.starts_with(&format!("{}:", p.name())) {
        line.to_string()
    } else if line.contains("Causality violation") {
        format!(
            "{}: two flush sections not ordered by happens-before (loom: {line})",
            p.name()
        )
    } else {
        format!("{}: {line}", p.name())
    }
}
