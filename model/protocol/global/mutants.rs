//! Deliberately broken variants of v6.0, each a small code difference: one
//! kernel function of [`Memcontrol`] overridden, with the changed line
//! marked `MUTANT:`. They show that every property can fail, and where in
//! the protocol a bug can live: the updater, the reader's gate, the
//! flusher, the reset, later epochs, and orderings only weak memory shows.
//!
//! Every override that is not the mutant's own change delegates to v6.0
//! ([`v6_0::memcg_rstat_updated`]).

use std::sync::atomic::Ordering;

use crate::explore::BackendName;
use crate::kernel::{
    atomic_add, atomic_read, atomic_set, spin_lock, spin_trylock, spin_trylock_with, spin_unlock,
    spin_unlock_with, this_cpu_add_return, this_cpu_read, this_cpu_write, trace_flush_begin,
    trace_flush_end, trace_memcg_flush_stats, write_once,
};
use crate::observe::Property;
use crate::protocol::global::v5_19::{Memcontrol, State, FLUSH_TIME};
use crate::protocol::global::{v5_19, v6_0};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::variant::{Kind, Variant};
use crate::protocol::variant::{ALL_CHECKERS, LOOM, SAMPLED, SC};
use crate::vocab::Platform;

/// Delegate `memcg_rstat_updated` to v6.0's.
macro_rules! v6_0_updater {
    () => {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            v6_0::memcg_rstat_updated(self, mm, memcg, val);
        }
    };
}

/// Updater: the skip test off by one, `>=` where v6.0 has `>`: a reader
/// (which needs `>`) can then wait forever at exactly the trigger.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkipOffByOne;

impl Memcontrol for SkipOffByOne {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            // MUTANT: `<` for `<=`: skip at exactly num_online_cpus().
            if atomic_read(&mm.stats_flush_threshold) < mm.num_online_cpus() {
                atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// Updater: the threshold bumped by a separate load and store, which loses
/// concurrent increments.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadStoreBump;

impl Memcontrol for LoadStoreBump {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            let t = atomic_read(&mm.stats_flush_threshold);
            if t <= mm.num_online_cpus() {
                // MUTANT: atomic_set(t + units) for atomic_add(units).
                atomic_set(
                    &mm.stats_flush_threshold,
                    atomic_read(&mm.stats_flush_threshold) + x / mm.MEMCG_CHARGE_BATCH(),
                );
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// Updater, later epochs: a per-CPU cache of "already flushable" that saves
/// even the shared read, but that the flusher's reset never invalidates.
/// The first epoch is right; after a reset the CPU keeps skipping.
#[derive(Clone, Copy, Debug, Default)]
pub struct CachedFlushable;

impl Memcontrol for CachedFlushable {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            // MUTANT: a per-CPU hint (scratch) set once the threshold is seen
            // above the trigger, and never cleared.
            let flushable = this_cpu_read(&mm.scratch.percpu) != 0
                || atomic_read(&mm.stats_flush_threshold) > mm.num_online_cpus();
            if flushable {
                this_cpu_write(&mm.scratch.percpu, 1);
            } else {
                atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// Updater: the per-CPU count is zeroed only when it was added; a skipped
/// batch stays in `stats_updates` and is added with the next one. It counts
/// more, not less, overall, yet a merged batch that a racing reset erases
/// takes pages v5.19 would still have counted after that reset.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeepResidueOnSkip;

impl Memcontrol for KeepResidueOnSkip {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH()
            && atomic_read(&mm.stats_flush_threshold) <= mm.num_online_cpus()
        {
            atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
            // MUTANT: the reset moved inside the add branch.
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// Reader: the gate off by one, `> n + 1` where v5.19 and v6.0 have `> n`.
/// The threshold itself is counted right; only a reader's decision
/// differs, which the old threshold-comparing form of `no_lost_flush` could
/// not see.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReaderGateOffByOne;

impl Memcontrol for ReaderGateOffByOne {
    v6_0_updater!();
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, _memcg: u8) -> bool {
        // MUTANT: `> n + 1` for `> n`.
        let needs_flush = atomic_read(&mm.stats_flush_threshold) > mm.num_online_cpus() + 1;
        trace_memcg_flush_stats(mm.root_mem_cgroup(), needs_flush);
        if needs_flush {
            self.__mem_cgroup_flush_stats(mm);
        }
        needs_flush
    }
}

/// Reader: the gate compares the threshold, counted in batches, with a
/// trigger in pages (`MEMCG_CHARGE_BATCH * n`, v6.8's unit), as a port of
/// v6.8's gate to v6.0's counter would. Identical at a batch of 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReaderGateInPages;

impl Memcontrol for ReaderGateInPages {
    v6_0_updater!();
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, _memcg: u8) -> bool {
        // MUTANT: pages for batches.
        let needs_flush =
            atomic_read(&mm.stats_flush_threshold) > mm.MEMCG_CHARGE_BATCH() * mm.num_online_cpus();
        trace_memcg_flush_stats(mm.root_mem_cgroup(), needs_flush);
        if needs_flush {
            self.__mem_cgroup_flush_stats(mm);
        }
        needs_flush
    }
}

/// Flusher: no `stats_flush_lock` (`cgroup_rstat_lock` still serialises
/// the walk), so two flushers run at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrylock;

impl Memcontrol for NoTrylock {
    v6_0_updater!();
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        flush_without_trylock(self, mm)
    }
}

/// `__mem_cgroup_flush_stats()` without `stats_flush_lock`.
fn flush_without_trylock<P: Platform, M: Memcontrol>(code: &M, mm: &State<P>) -> bool {
    // MUTANT: no spin_trylock(&stats_flush_lock).
    trace_flush_begin(mm.root_mem_cgroup());
    mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
    code.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
    atomic_set(&mm.stats_flush_threshold, 0);
    trace_flush_end(mm.root_mem_cgroup());
    true
}

/// Flusher: neither `stats_flush_lock` nor `cgroup_rstat_lock`, so two
/// walks interleave and lose or reorder deltas.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoLocks;

impl Memcontrol for NoLocks {
    v6_0_updater!();
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        flush_without_trylock(self, mm)
    }
    fn cgroup_rstat_flush_irqsafe<P: Platform>(&self, mm: &State<P>, root: u8) {
        // MUTANT: no spin_lock(&cgroup_rstat_lock).
        for cpu in mm.stats_updates.cpus() {
            for memcg in (root..mm.memcgs.len() as u8).rev() {
                self.mem_cgroup_css_rstat_flush(mm, memcg, cpu);
            }
        }
    }
}

/// Flusher: a walk that stops one CPU short (`for cpu < n - 1`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WalkSkipsLastCpu;

impl Memcontrol for WalkSkipsLastCpu {
    v6_0_updater!();
    fn cgroup_rstat_flush_irqsafe<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        // MUTANT: the last CPU is never visited.
        for cpu in 0..mm.stats_updates.cpus().end.saturating_sub(1) {
            for memcg in (root..mm.memcgs.len() as u8).rev() {
                self.mem_cgroup_css_rstat_flush(mm, memcg, cpu);
            }
        }
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// Flusher: the walk rebuilds the aggregate from the per-CPU counters,
/// starting from zero, instead of adding each CPU's delta. The final value
/// is right; a reader during the walk sees a partial sum below what it read
/// before.
#[derive(Clone, Copy, Debug, Default)]
pub struct AggregateRebuilt;

impl Memcontrol for AggregateRebuilt {
    v6_0_updater!();
    fn cgroup_rstat_flush_irqsafe<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        // MUTANT: start from zero and fold every CPU's whole counter.
        for memcg in root..mm.memcgs.len() as u8 {
            let m = mm.memcg(memcg);
            write_once(&m.vmstats.state, 0);
            for cpu in mm.stats_updates.cpus() {
                m.vmstats_percpu.per_cpu(cpu).state_prev.set(0);
            }
        }
        for cpu in mm.stats_updates.cpus() {
            for memcg in (root..mm.memcgs.len() as u8).rev() {
                self.mem_cgroup_css_rstat_flush(mm, memcg, cpu);
            }
        }
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// Reset: a flusher that loses the trylock resets the threshold on its way
/// out. The reset can land after the winner's flush, erasing adds the
/// winner's walk did not see.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoserResets;

impl Memcontrol for LoserResets {
    v6_0_updater!();
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if !spin_trylock(&mm.stats_flush_lock) {
            // MUTANT: "someone is flushing; the threshold is theirs to reset".
            atomic_set(&mm.stats_flush_threshold, 0);
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
        atomic_set(&mm.stats_flush_threshold, 0);
        trace_flush_end(mm.root_mem_cgroup());
        spin_unlock(&mm.stats_flush_lock);
        true
    }
}

/// Periodic work: the dwork goes through the reader's gate, as
/// `flush_memcg_stats_dwork()` did in 11192d9c124d before 5b3be698a872 made
/// it unconditional; updates that never raise the threshold above the
/// trigger are never flushed.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeriodicGated;

impl Memcontrol for PeriodicGated {
    v6_0_updater!();
    fn flush_memcg_stats_dwork<P: Platform>(&self, mm: &State<P>) {
        // MUTANT: mem_cgroup_flush_stats() for __mem_cgroup_flush_stats().
        if atomic_read(&mm.stats_flush_threshold) > mm.num_online_cpus() {
            self.__mem_cgroup_flush_stats(mm);
        }
    }
}

/// Weak memory: `stats_flush_lock` acquired `Relaxed`, so the next flusher
/// does not synchronise with the previous one's unlock. Only loom can see
/// this (shuttle runs everything SeqCst).
#[derive(Clone, Copy, Debug, Default)]
pub struct RelaxedTrylock;

impl Memcontrol for RelaxedTrylock {
    v6_0_updater!();
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        // MUTANT: Relaxed for Acquire.
        if !spin_trylock_with(&mm.stats_flush_lock, Ordering::Relaxed) {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
        atomic_set(&mm.stats_flush_threshold, 0);
        trace_flush_end(mm.root_mem_cgroup());
        spin_unlock(&mm.stats_flush_lock);
        true
    }
}

/// Weak memory: `stats_flush_lock` released with a `Relaxed` store, so the
/// next flusher's acquire synchronises with nothing. Only loom can see it.
#[derive(Clone, Copy, Debug, Default)]
pub struct RelaxedUnlock;

impl Memcontrol for RelaxedUnlock {
    v6_0_updater!();
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if !spin_trylock(&mm.stats_flush_lock) {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        mm.flush_next_time.set(mm.env.jiffies_64() + 2 * FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
        atomic_set(&mm.stats_flush_threshold, 0);
        trace_flush_end(mm.root_mem_cgroup());
        // MUTANT: Relaxed for Release.
        spin_unlock_with(&mm.stats_flush_lock, Ordering::Relaxed);
        true
    }
}

/// The catalogue's entries for these mutants, each with the properties
/// that must kill it and on which backends.
pub fn variants() -> Vec<Variant> {
    let mutant = |name: &str, summary: &str, model| {
        Variant::new(name, Kind::Mutant, summary, model).twin("v5.19")
    };
    vec![
        mutant(
            "mutant-skip-off-by-one",
            "updater: v6.0 skipping when threshold >= num_online_cpus()",
            v5_19::model(SkipOffByOne),
        )
        .killed_by(Property::NoLostFlush, SC)
        .killed_by(Property::NoWorseThanBaseline, SC),
        mutant(
            "mutant-load-store-bump",
            "updater: v6.0 bumping the threshold with a separate load and store",
            v5_19::model(LoadStoreBump),
        )
        .killed_by(Property::NoLostFlush, SAMPLED),
        mutant(
            "mutant-cached-flushable",
            "updater, later epochs: a per-CPU 'flushable' hint the reset never clears",
            v5_19::model(CachedFlushable),
        )
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-keep-residue-on-skip",
            "updater: stats_updates zeroed only when added, so skipped batches pile up",
            v5_19::model(KeepResidueOnSkip),
        )
        .killed_by(Property::NoLostFlush, &[BackendName::ShuttleRandom]),
        mutant(
            "mutant-reader-gate-off-by-one",
            "reader: mem_cgroup_flush_stats() flushes only above num_online_cpus() + 1",
            v5_19::model(ReaderGateOffByOne),
        )
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-reader-gate-in-pages",
            "reader: the gate compares batches with MEMCG_CHARGE_BATCH * n pages",
            v5_19::model(ReaderGateInPages),
        )
        .killed_by(Property::NoLostFlush, SAMPLED),
        mutant(
            "mutant-no-trylock",
            "flusher: no stats_flush_lock (cgroup_rstat_lock still serialises the walk)",
            v5_19::model(NoTrylock),
        )
        .killed_by(Property::FlushExclusion, ALL_CHECKERS),
        mutant(
            "mutant-no-locks",
            "flusher: neither stats_flush_lock nor cgroup_rstat_lock",
            v5_19::model(NoLocks),
        )
        .killed_by(Property::FlushExclusion, ALL_CHECKERS)
        .killed_by(Property::Conservation, SC)
        .killed_by(Property::MonotonicReads, SAMPLED),
        mutant(
            "mutant-walk-skips-last-cpu",
            "flusher: the walk stops one CPU short",
            v5_19::model(WalkSkipsLastCpu),
        )
        .killed_by(Property::Conservation, ALL_CHECKERS),
        mutant(
            "mutant-aggregate-rebuilt",
            "flusher: the walk rebuilds the aggregate from zero instead of adding deltas",
            v5_19::model(AggregateRebuilt),
        )
        .killed_by(
            Property::MonotonicReads,
            &[
                BackendName::Loom,
                BackendName::ShuttleRandom,
                BackendName::ShuttlePct,
            ],
        ),
        mutant(
            "mutant-loser-resets",
            "reset: a flusher that loses the trylock resets the threshold",
            v5_19::model(LoserResets),
        )
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-periodic-gated",
            "periodic work: the dwork goes through the reader's gate (before 5b3be698a872)",
            v5_19::model(PeriodicGated),
        )
        .killed_by(Property::FlushTimeBound, SAMPLED),
        mutant(
            "mutant-relaxed-trylock",
            "weak memory: stats_flush_lock acquired Relaxed (only loom can see it)",
            v5_19::model(RelaxedTrylock),
        )
        .killed_by(Property::FlushExclusion, LOOM),
        mutant(
            "mutant-relaxed-unlock",
            "weak memory: stats_flush_lock released Relaxed (only loom can see it)",
            v5_19::model(RelaxedUnlock),
        )
        .killed_by(Property::FlushExclusion, LOOM),
    ]
}
