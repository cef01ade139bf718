//! Named properties: what each claims, where the claim comes from, and the
//! one-line violation messages, each starting with the property's name so
//! that tests and reports can attribute a failure.
//!
//! Every property is a monitor over observations ([`crate::observe::
//! monitor`]); none reads a protocol's fields.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::observe::coverage::{Event, Split};

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
    /// [`no_lost_flush`] with the twin on the same schedule (a finding, not
    /// a claim the kernel makes).
    NoLostFlushSameSchedule,
    /// See [`per_memcg_error_bound`] (C10).
    PerMemcgErrorBound,
    /// See [`ancestors_flushable`] (C12).
    AncestorsFlushable,
    /// See [`stats_updates_bound`] (C14).
    StatsUpdatesBound,
    /// See [`quiescent_read_exact`] (B9).
    QuiescentReadExact,
    /// See [`ratelimited_skip_justified`] (C9).
    RatelimitedSkipJustified,
    /// See [`eventual_conservation`] (C13, issue 11).
    EventualConservation,
    /// Lifetime (issue 12): no access to a memcg after it is freed.
    NoUseAfterFree,
    /// Lifetime: a dying memcg's pages reach its parent.
    StatsSurviveDeath,
    /// Lifetime: the free path finds the memcg on no updated tree.
    NoLeak,
}

impl Property {
    /// All properties, in report order.
    pub const ALL: [Property; 14] = [
        Property::NoLostFlush,
        Property::Conservation,
        Property::MonotonicReads,
        Property::FlushExclusion,
        Property::DocumentedErrorBound,
        Property::NoWorseThanBaseline,
        Property::FlushTimeBound,
        Property::NoLostFlushSameSchedule,
        Property::PerMemcgErrorBound,
        Property::AncestorsFlushable,
        Property::StatsUpdatesBound,
        Property::QuiescentReadExact,
        Property::RatelimitedSkipJustified,
        Property::EventualConservation,
    ];

    /// The lifetime model's properties (issue 12), checked by the lifetime
    /// scenarios ([`crate::check::lifetime`]), not by the flush matrix.
    pub const LIFETIME: [Property; 3] = [
        Property::NoUseAfterFree,
        Property::StatsSurviveDeath,
        Property::NoLeak,
    ];

    /// Every property: the flush matrix's, then the lifetime model's.
    pub fn every() -> impl Iterator<Item = Property> {
        Property::ALL.into_iter().chain(Property::LIFETIME)
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
            Property::NoLostFlushSameSchedule => "no_lost_flush_same_schedule",
            Property::PerMemcgErrorBound => "per_memcg_error_bound",
            Property::AncestorsFlushable => "ancestors_flushable",
            Property::StatsUpdatesBound => "stats_updates_bound",
            Property::QuiescentReadExact => "quiescent_read_exact",
            Property::RatelimitedSkipJustified => "ratelimited_skip_justified",
            Property::EventualConservation => "eventual_conservation",
            Property::NoUseAfterFree => "no_use_after_free",
            Property::StatsSurviveDeath => "stats_survive_death",
            Property::NoLeak => "no_leak",
        }
    }

    /// Look a property up by name; the error lists the names allowed.
    pub fn by_name(name: &str) -> Result<Property, String> {
        Property::every().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Property::every().map(|p| p.name()).collect();
            format!(
                "unknown property {name:?}: expected one of {}",
                names.join(", ")
            )
        })
    }

    /// Whether the property bounds a measured quantity (staleness in pages
    /// or ticks), measured in execution order: decided by the sequentially
    /// consistent backends only.
    pub fn quantitative(self) -> bool {
        matches!(
            self,
            Property::DocumentedErrorBound
                | Property::NoWorseThanBaseline
                | Property::FlushTimeBound
                | Property::PerMemcgErrorBound
        )
    }

    /// Whether the property compares a variant with its no-skip twin.
    pub fn needs_twin(self) -> bool {
        matches!(
            self,
            Property::NoLostFlush | Property::NoLostFlushSameSchedule
        )
    }

    /// Whether loom decides the property (weak memory). The others are
    /// decided in execution order, which under loom is not the order in
    /// which loads observe stores.
    pub fn decided_by_loom(self) -> bool {
        matches!(
            self,
            Property::NoLostFlush
                | Property::Conservation
                | Property::MonotonicReads
                | Property::FlushExclusion
                | Property::StatsUpdatesBound
                | Property::QuiescentReadExact
                | Property::EventualConservation
        )
    }

    /// Whether the property states a claim that the model refutes for the
    /// kernel itself, so that a violation of a kernel variant is a finding,
    /// not a failure of the run (C1, and the same-schedule sense of
    /// 873f64b791a2's claim; see docs/findings.md).
    pub fn refutable_claim(self) -> bool {
        matches!(
            self,
            Property::DocumentedErrorBound
                | Property::NoLostFlushSameSchedule
                | Property::PerMemcgErrorBound
                | Property::AncestorsFlushable
                | Property::StatsUpdatesBound
                | Property::QuiescentReadExact
        )
    }

    /// Whether the property is about the per-memcg protocol (v6.8 on): its
    /// claims were made for it, and it reads per-memcg atomics.
    pub fn per_memcg_only(self) -> bool {
        matches!(
            self,
            Property::PerMemcgErrorBound
                | Property::AncestorsFlushable
                | Property::StatsUpdatesBound
        )
    }

    /// The coverage event that shows the racy interleaving this property is
    /// about actually happened.
    pub fn coverage_event(self) -> Event {
        match self {
            Property::NoLostFlush => Event::SkipRacedReset,
            Property::Conservation => Event::UpdateBehindFlusher,
            Property::MonotonicReads => Event::ReadDuringFlush,
            Property::FlushExclusion => Event::TrylockContended,
            Property::DocumentedErrorBound => Event::StaleNoFlush,
            Property::NoWorseThanBaseline => Event::Skip,
            Property::FlushTimeBound => Event::UpdateBehindFlusher,
            Property::NoLostFlushSameSchedule => Event::SkipRacedReset,
            Property::PerMemcgErrorBound => Event::StaleNoFlush,
            Property::AncestorsFlushable => Event::AddErasedByReset,
            Property::StatsUpdatesBound => Event::Skip,
            Property::QuiescentReadExact => Event::StaleNoFlush,
            Property::RatelimitedSkipJustified => Event::RatelimitedRacedStamp,
            Property::EventualConservation => Event::UpdateBehindFlusher,
            Property::NoUseAfterFree => Event::ReaderAcrossRelease,
            Property::StatsSurviveDeath | Property::NoLeak => Event::UpdateAfterRelease,
        }
    }

    /// The claim, in one line, with where it comes from.
    pub fn claim(self) -> &'static str {
        match self {
            Property::NoLostFlush => {
                "at every reader decision, if the no-skip twin's gate over the same history would flush, the variant flushes (873f64b791a2: \"Increasing this var further is redundant\")"
            }
            Property::Conservation => {
                "after all updates and one more flush, the aggregate equals the sum of the updates (rstat: \"After this function returns, all cgroups in the subtree have up-to-date ->stat\")"
            }
            Property::MonotonicReads => {
                "with non-negative updates, a reader never sees a statistic go down"
            }
            Property::FlushExclusion => {
                "at most one flusher is inside the flush section, and flush sections are ordered by happens-before (aa48e47e3906: \"let only one flusher active at a time\")"
            }
            Property::DocumentedErrorBound => {
                "a reader that skips the flush misses at most MEMCG_CHARGE_BATCH * nr_cpus pages (mm/memcontrol.c, C1)"
            }
            Property::NoWorseThanBaseline => {
                "the pages the threshold gate answers for never exceed v5.19's derived worst case"
            }
            Property::FlushTimeBound => {
                "with abstract time, no read misses an update older than FLUSH_TIME (\"flush the stats every 2 seconds\", C2/C16)"
            }
            Property::NoLostFlushSameSchedule => {
                "as no_lost_flush, with the twin's skipped add landing at the skipping CPU's next step: the twin on the same schedule"
            }
            Property::PerMemcgErrorBound => {
                "a reader that skips the flush misses at most NR_CPUS * MEMCG_CHARGE_BATCH * NR_MEMCGS pages (8d59d2214c23, C10)"
            }
            Property::AncestorsFlushable => {
                "when an updater finds a memcg flushable (v6.17's break, v6.8's skip), each of its ancestors is flushable too (v6.17: \"If @memcg is already flushable then all its ancestors are flushable as well\", C12)"
            }
            Property::StatsUpdatesBound => {
                "a memcg's vmstats->stats_updates stays below nr_cpus * MEMCG_CHARGE_BATCH (v6.17 nmi-safe series, C14)"
            }
            Property::QuiescentReadExact => {
                "a reader that runs after every update has completed reads them all (what LTP memcg_stat_rss expects, B9)"
            }
            Property::RatelimitedSkipJustified => {
                "a ratelimited reader skips the flush only if a flush of the whole tree really ran at most 2 * FLUSH_TIME ticks before, so a race on flush_next_time can only make it flush earlier (3cd9992b9302: the races are \"actually harmless, all we might get is the occasional earlier flush\", C9)"
            }
            Property::EventualConservation => {
                "after the updates stop, the final flush and --settle more flushes, the aggregate equals the sum of the updates (rstat, 2025: \"the subsequent flusher will flush those stats\", C13)"
            }
            Property::NoUseAfterFree => {
                "no access to a memcg or its per-CPU data after it is freed (RCU: readers of objcg->memcg and flushers finish before css_free_rwork_fn runs)"
            }
            Property::StatsSurviveDeath => {
                "after quiescence and a final flush, every page charged to a memcg that died is in its parent's aggregate (the root's if the parent died too)"
            }
            Property::NoLeak => {
                "when css_rstat_exit() runs, the memcg is on no CPU's updated tree (its WARN_ON_ONCE, which leaks the per-CPU rstat data)"
            }
        }
    }

    /// What a "holds" verdict of each backend means for this property.
    pub fn decided_by(self) -> &'static str {
        match self {
            Property::NoLostFlush => {
                "shuttle/std: the twin's gate over the same history; loom: every outcome dominated by one of the twin's"
            }
            Property::Conservation => "all backends; loom also under weak memory",
            Property::MonotonicReads => "all backends; loom also under weak memory",
            Property::FlushExclusion => {
                "occupancy of flush sections everywhere; happens-before between them only under loom"
            }
            Property::DocumentedErrorBound | Property::NoWorseThanBaseline => {
                "shuttle/std: staleness in execution order; not run under loom, where a relaxed \
                 atomic_read may return an older threshold than execution order shows"
            }
            Property::FlushTimeBound => {
                "shuttle: age in ticks, in execution order; abstract time runs under shuttle only"
            }
            Property::NoLostFlushSameSchedule => {
                "shuttle/std only: a schedule-for-schedule comparison, meaningless under weak memory"
            }
            Property::PerMemcgErrorBound => {
                "shuttle/std: staleness in execution order, per memcg; not run under loom"
            }
            Property::AncestorsFlushable => {
                "shuttle/std: the ancestors' atomics in execution order at the updater's read; not run under loom, where no single instant orders them"
            }
            Property::StatsUpdatesBound => {
                "all backends: every value written to a memcg's atomic (RMW results are exact under loom)"
            }
            Property::QuiescentReadExact => {
                "all backends: main's read after joining every thread"
            }
            Property::RatelimitedSkipJustified => {
                "shuttle: the jiffies a skipping reader compared against the ticks at which flush sections of the whole tree were open, in execution order; ratelimited readers need abstract time, which runs under shuttle only; global family"
            }
            Property::EventualConservation => {
                "all backends, on entries with --settle; loom also under weak memory, the only backend that can show the tree's store-buffering loss"
            }
            Property::NoUseAfterFree => {
                "all backends: an access after the free in execution order (the free poisons the memcg's atomics, so loom orders it against every access)"
            }
            Property::StatsSurviveDeath => {
                "all backends: main's read after joining every thread and a final flush; loom also under weak memory"
            }
            Property::NoLeak => "all backends: the exit check's reads of the tree",
        }
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `no_lost_flush` (and its same-schedule form): a reader decided not to
/// flush although the twin's gate over the same history would have.
pub fn no_lost_flush(
    p: Property,
    who: &str,
    read: Option<(Option<u8>, i64)>,
    n: i64,
    twin: &str,
) -> String {
    let saw = read.map_or(String::new(), |(k, t)| match k {
        None => format!(" (its gate read stats_flush_threshold = {t}; num_online_cpus() = {n})"),
        Some(m) => format!(" (its gate read memcg {m}'s vmstats->stats_updates = {t})"),
    });
    format!(
        "{}: {who} decided not to flush{saw}, but {twin} and would flush",
        p.name()
    )
}

/// `conservation`: the final aggregate differs from the sum of the updates.
pub fn conservation(memcg: u8, aggregate: i64, expected: i64) -> String {
    let (which, below) = if memcg == 0 {
        ("memcg->vmstats.state".to_string(), "")
    } else {
        (
            format!("memcg {memcg}'s vmstats.state"),
            " charged to its subtree",
        )
    };
    format!(
        "conservation: after all updates and a final flush, {which} = {aggregate}, \
         but the updates{below} sum to {expected}"
    )
}

/// `eventual_conservation`: after `k` more flushes than the final one, an
/// aggregate still differs from the sum of the updates.
pub fn eventual_conservation(memcg: u8, k: usize, aggregate: i64, expected: i64) -> String {
    format!(
        "eventual_conservation: after all updates, the final flush and {k} more, \
         memcg {memcg}'s vmstats.state = {aggregate}, but the updates sum to {expected}"
    )
}

/// `monotonic_reads`: a reader's read went down.
pub fn monotonic_reads(who: &str, previous: i64, now: i64) -> String {
    format!("monotonic_reads: {who} read memcg->vmstats.state = {previous}, then {now}")
}

/// `flush_exclusion`: two flushers inside flush sections at once.
pub fn flush_exclusion(inside: usize) -> String {
    format!("flush_exclusion: {inside} flushers inside the flush section at once")
}

/// `documented_error_bound` (claim C1): a reader skipped the flush with
/// more pages missing than `MEMCG_CHARGE_BATCH * nr_cpus`.
///
/// mm/memcontrol.c (since 11192d9c124d): stats "will be out of sync by
/// atmost (MEMCG_CHARGE_BATCH * nr_cpus) but only for 2 seconds".
pub fn documented_error_bound(stale: i64, split: Split, documented: i64) -> String {
    format!(
        "documented_error_bound: a reader skipped the flush with {stale} pages missing from \
         memcg->vmstats.state (residue {}, counted {}, skipped {}, lost {}) > \
         MEMCG_CHARGE_BATCH * nr_cpus = {documented}",
        split[0], split[1], split[2], split[3]
    )
}

/// `no_worse_than_baseline`: skipping made the error worse than v5.19 can
/// leave on this configuration (its derived worst case). `gated` is the
/// staleness without the pages a racing flush declared flushed unseen.
pub fn no_worse_than_baseline(gated: i64, split: Split, baseline: i64) -> String {
    format!(
        "no_worse_than_baseline: a reader skipped the flush with {gated} pages behind the \
         threshold gate (residue {}, counted {}, skipped {}), more than the {baseline} \
         v5.19 can leave on this configuration",
        split[0], split[1], split[2]
    )
}

/// `per_memcg_error_bound` (C10): a reader of `memcg` skipped the flush
/// with more pages missing than `NR_CPUS * MEMCG_CHARGE_BATCH * NR_MEMCGS`.
pub fn per_memcg_error_bound(memcg: u8, stale: i64, split: Split, bound: i64) -> String {
    format!(
        "per_memcg_error_bound: a reader of memcg {memcg} skipped the flush with {stale} pages \
         missing (residue {}, counted {}, skipped {}, other {}) > NR_CPUS * MEMCG_CHARGE_BATCH \
         * NR_MEMCGS = {bound}",
        split[0], split[1], split[2], split[3]
    )
}

/// `ancestors_flushable` (C12): an updater found `memcg` flushable while
/// its ancestor was not.
pub fn ancestors_flushable(
    memcg: u8,
    value: i64,
    ancestor: u8,
    ancestor_value: i64,
    trigger: i64,
) -> String {
    format!(
        "ancestors_flushable: an updater found memcg {memcg}'s vmstats->stats_updates = {value} \
         > {trigger} (flushable) while its ancestor memcg {ancestor}'s = {ancestor_value} <= \
         {trigger}"
    )
}

/// `stats_updates_bound` (C14): a memcg's atomic reached
/// `nr_cpus * MEMCG_CHARGE_BATCH`.
pub fn stats_updates_bound(memcg: u8, value: i64, bound: i64) -> String {
    format!(
        "stats_updates_bound: memcg {memcg}'s vmstats->stats_updates = {value} >= nr_cpus * \
         MEMCG_CHARGE_BATCH = {bound}"
    )
}

/// `quiescent_read_exact` (B9): after every update completed, a read of
/// `memcg` returned `value`, not `expected`.
pub fn quiescent_read_exact(memcg: u8, value: i64, expected: i64, flushed: bool) -> String {
    let gate = if flushed {
        "its flush ran"
    } else {
        "its gate did not flush"
    };
    format!(
        "quiescent_read_exact: after every update completed, a read of memcg {memcg} returned \
         {value} where the updates charged to its subtree sum to {expected} ({gate})"
    )
}

/// `flush_time_bound` (claims C2, C16): a read missed an update older than
/// `FLUSH_TIME`.
pub fn flush_time_bound(age: i64, flush_time: i64) -> String {
    format!(
        "flush_time_bound: a read of memcg->vmstats.state misses an update written {age} ticks \
         earlier, more than FLUSH_TIME = {flush_time}"
    )
}

/// `ratelimited_skip_justified` (C9): a ratelimited reader skipped at
/// `jiffies` although no flush of the whole tree ran at or after
/// `jiffies - 2 * FLUSH_TIME` (`last` is the latest tick one ran, if any).
pub fn ratelimited_skip_justified(who: &str, jiffies: i64, last: Option<i64>) -> String {
    let last = last.map_or("no flush of the whole tree has run".to_string(), |t| {
        format!("the last flush of the whole tree ran at tick {t}")
    });
    format!(
        "ratelimited_skip_justified: {who} skipped the flush at jiffies_64 = {jiffies}, but {last}, \
         more than 2 * FLUSH_TIME earlier"
    )
}

/// The property a panic message reports, if any. A data race loom reports
/// on a flusher's lock-protected field counts as `flush_exclusion`: the
/// lock failed to order two flush sections.
pub fn attribute(message: &str) -> Option<Property> {
    let line = first_line(message);
    if let Some(p) = Property::every().find(|p| line.starts_with(&format!("{}:", p.name()))) {
        return Some(p);
    }
    if line.starts_with("data race on ") {
        let flusher_field = ["P[", "P.", "pend", "agg", "flush_time"]
            .iter()
            .any(|f| line["data race on ".len()..].starts_with(f));
        if flusher_field {
            return Some(Property::FlushExclusion);
        }
    }
    None
}

/// A one-line violation message that starts with the property's name.
pub fn explain(p: Property, message: &str) -> String {
    let line = first_line(message);
    if line.starts_with(&format!("{}:", p.name())) {
        line
    } else if line.starts_with("data race") {
        format!(
            "{}: two flush sections not ordered by happens-before ({line})",
            p.name()
        )
    } else {
        format!("{}: {line}", p.name())
    }
}

fn first_line(message: &str) -> String {
    // loom starts some messages with a newline (LOOM_LOCATION).
    message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}
