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
    /// See [`documented_error_bound`].
    DocumentedErrorBound,
    /// See [`no_worse_than_baseline`].
    NoWorseThanBaseline,
    /// See [`flush_time_bound`].
    FlushTimeBound,
}

impl Property {
    /// All properties, in report order.
    pub const ALL: [Property; 7] = [
        Property::NoLostFlush,
        Property::Conservation,
        Property::MonotonicReads,
        Property::FlushExclusion,
        Property::DocumentedErrorBound,
        Property::NoWorseThanBaseline,
        Property::FlushTimeBound,
    ];

    /// Whether the property bounds a measured quantity (staleness in pages
    /// or ticks). These are not run under loom (see
    /// [`Property::decided_by`]).
    pub fn quantitative(self) -> bool {
        matches!(
            self,
            Property::DocumentedErrorBound
                | Property::NoWorseThanBaseline
                | Property::FlushTimeBound
        )
    }

    /// The configuration the property runs on when `given` is the default
    /// one (no configuration flags): its [`Property::default_config`], if
    /// any; otherwise `given`.
    pub fn config_for(self, given: &crate::Config) -> crate::Config {
        match self.default_config() {
            Some(c) if *given == crate::Config::default() => c,
            _ => given.clone(),
        }
    }

    /// The configuration the property is checked on when none is given:
    /// the smallest that exercises it.
    pub fn default_config(self) -> Option<crate::Config> {
        match self {
            Property::DocumentedErrorBound | Property::NoWorseThanBaseline => {
                Some(crate::Config::bounds())
            }
            Property::FlushTimeBound => Some(crate::Config::timed()),
            _ => None,
        }
    }

    /// Whether the property states a claim from the kernel's comments that
    /// the model is expected to refute for the kernel itself, so a
    /// violation of a kernel variant is a finding, not a failure of the
    /// run (C1: the kernel violates it; see docs/findings.md).
    pub fn refutable_claim(self) -> bool {
        self == Property::DocumentedErrorBound
    }

    /// The name used in messages, reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Property::NoLostFlush => "no_lost_flush",
            Property::Conservation => "conservation",
            Property::MonotonicReads => "monotonic_reads",
            Property::FlushExclusion => "flush_exclusion",
            Property::DocumentedErrorBound => "documented_error_bound",
            Property::NoWorseThanBaseline => "no_worse_than_baseline",
            Property::FlushTimeBound => "flush_time_bound",
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
            Property::DocumentedErrorBound => Event::StaleNoFlush,
            Property::NoWorseThanBaseline => Event::Skip,
            Property::FlushTimeBound => Event::UpdateBehindFlusher,
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
            Property::DocumentedErrorBound | Property::NoWorseThanBaseline => {
                "shuttle/std: staleness in execution order; not run under loom, where a relaxed \
                 atomic_read may return an older threshold than execution order shows"
            }
            Property::FlushTimeBound => {
                "shuttle: age in ticks, in execution order; abstract time runs under shuttle only"
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

/// `documented_error_bound` (claim C1): at a reader's decision not to
/// flush, the aggregate misses at most `MEMCG_CHARGE_BATCH * nr_cpus`
/// pages.
///
/// mm/memcontrol.c (since 11192d9c124d): stats "will be out of sync by
/// atmost (MEMCG_CHARGE_BATCH * nr_cpus) but only for 2 seconds". `split`
/// is residue / counted / skipped / lost ([`crate::ghost::Split`]).
pub fn documented_error_bound(stale: i64, split: crate::ghost::Split, documented: i64) {
    if stale > documented {
        panic!(
            "documented_error_bound: a reader skipped the flush with {stale} pages missing from \
             memcg->vmstats.state (residue {}, counted {}, skipped {}, lost {}) > \
             MEMCG_CHARGE_BATCH * nr_cpus = {documented}",
            split[0], split[1], split[2], split[3]
        );
    }
}

/// `no_worse_than_baseline`: skipping never makes the error worse. At a
/// reader's decision not to flush, the pages the threshold gate answers for
/// (residue + counted + skipped since the last reset) are at most the most
/// v5.19 can leave on this configuration, `baseline`, derived from the
/// arithmetic ([`crate::derived`]) and confirmed by exhaustive search.
///
/// The quantitative form of [`no_lost_flush`]. Pages lost to a reset that
/// raced with a flush are left out: both versions lose them alike.
pub fn no_worse_than_baseline(split: crate::ghost::Split, baseline: i64) {
    let gated = split[0] + split[1] + split[2];
    if gated > baseline {
        panic!(
            "no_worse_than_baseline: a reader skipped the flush with {gated} pages behind the \
             threshold gate (residue {}, counted {}, skipped {}), more than the {baseline} \
             v5.19 can leave on this configuration",
            split[0], split[1], split[2]
        );
    }
}

/// `flush_time_bound` (claims C2, C16): with the periodic work running every
/// `FLUSH_TIME`, a read never misses an update written more than
/// `FLUSH_TIME` ticks earlier.
///
/// mm/memcontrol.c: "Periodically and asynchronously flush the stats every
/// 2 seconds"; Michal Koutný (2022): "Assuming the periodic flush is
/// working, the reader won't see data older than 2 seconds".
pub fn flush_time_bound(age: i64, flush_time: i64) {
    if age > flush_time {
        panic!(
            "flush_time_bound: a read of memcg->vmstats.state misses an update written {age} ticks \
             earlier, more than FLUSH_TIME = {flush_time}"
        );
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
