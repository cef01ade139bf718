//! v6.8 to v6.15 (vivo50kff/linux-6.8@bc4fae0d3fa3; v6.12's annotations
//! from shilei-massclouds/linux-6.12@e02d6450498d), with the rstat tree of
//! v5.7-v6.14 as v6.8 has it, and the tree's fix candidate.

use super::site::By::{Flusher, Updater};
use super::site::Kind::{Load, Rmw, Store};
use super::site::Mark::*;
use super::site::VarKind::*;
use super::site::{locked, said, ON_LIST_RACE};
use super::site::{m, Marking, Release};

use crate::vocab::obs::Idiom;

/// v6.8's memcontrol.c sites, and the rstat tree of v5.7-v6.14 as v6.8
/// has it.
const V6_8_MARKINGS: &[Marking] = &[
    // v6.8 mm/memcontrol.c:822 (v6.12 :686 the same).
    m(
        State,
        Updater,
        Rmw,
        Some(Idiom::ThisCpuAdd),
        PerCpu,
        "__this_cpu_add()",
        "__mod_memcg_state()",
        "v6.8 mm/memcontrol.c:822",
    ),
    // v6.8 mm/memcontrol.c:5771.
    m(
        State,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_css_rstat_flush()",
        "v6.8 mm/memcontrol.c:5771",
    ),
    // v6.8 mm/memcontrol.c:5783, under cgroup_rstat_lock.
    m(
        Aggregate,
        Flusher,
        Store,
        None,
        Plain,
        "+=",
        "mem_cgroup_css_rstat_flush()",
        "v6.8 mm/memcontrol.c:5783",
    ),
    // v6.8 mm/memcontrol.c:787.
    m(
        Aggregate,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "memcg_page_state()",
        "v6.8 mm/memcontrol.c:787",
    ),
    // v6.8 mm/memcontrol.c:709 (memcg_vmstats_needs_flush(), from :732 and
    // the gate at :764), :733, :5848.
    m(
        Threshold,
        Updater,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic64_read()",
        "memcg_vmstats_needs_flush()",
        "v6.8 mm/memcontrol.c:709",
    ),
    m(
        Threshold,
        Updater,
        Rmw,
        Some(Idiom::AtomicAdd),
        Atomic,
        "atomic64_add()",
        "memcg_rstat_updated()",
        "v6.8 mm/memcontrol.c:733",
    ),
    m(
        Threshold,
        Flusher,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic64_read()",
        "memcg_vmstats_needs_flush()",
        "v6.8 mm/memcontrol.c:709",
    ),
    m(
        Threshold,
        Flusher,
        Store,
        Some(Idiom::AtomicSet),
        Atomic,
        "atomic64_set()",
        "mem_cgroup_css_rstat_flush()",
        "v6.8 mm/memcontrol.c:5848",
    ),
    // The model follows v6.12's annotations here (v6.12 mm/memcontrol.c:
    // 575-576, 587, 3833); v6.8.0 has plain `+=` and `= 0` (:724, :735,
    // :5845). docs/model.md, section 3.1.
    m(
        StatsUpdates,
        Updater,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "memcg_rstat_updated()",
        "v6.12 mm/memcontrol.c:575 (v6.8.0: plain +=, :724)",
    ),
    m(
        StatsUpdates,
        Updater,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "memcg_rstat_updated()",
        "v6.12 mm/memcontrol.c:576 (v6.8.0: plain, :724)",
    ),
    m(
        StatsUpdates,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "mem_cgroup_css_rstat_flush()",
        "v6.12 mm/memcontrol.c:3833 (v6.8.0: plain = 0, :5845)",
    ),
    // v6.8 mm/memcontrol.c:742 and :771.
    m(
        FlushTime,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "do_flush_stats()",
        "v6.8 mm/memcontrol.c:742",
    ),
    m(
        FlushTime,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_flush_stats_ratelimited()",
        "v6.8 mm/memcontrol.c:771",
    ),
    // The rstat tree (d8ef4b38cb69, v5.7, through v6.14): the lockless
    // on-list test, v6.8 kernel/cgroup/rstat.c:42 (data_race() since
    // eda09706b240, 2021; a plain read before); the walk under the per-CPU
    // lock, :57 (read), :62 and :67 (links); the flusher's test and
    // unlinks under the same lock, :165 (read), :189 and :117 (unlinks).
    said(
        locked(
            m(
                UpdatedNext,
                Updater,
                Load,
                None,
                DataRace,
                "data_race()",
                "cgroup_rstat_updated()",
                "v6.8 kernel/cgroup/rstat.c:42",
            ),
            false,
        ),
        ON_LIST_RACE,
    ),
    locked(
        m(
            UpdatedNext,
            Updater,
            Load,
            None,
            Plain,
            "plain read",
            "cgroup_rstat_updated()",
            "v6.8 kernel/cgroup/rstat.c:57",
        ),
        true,
    ),
    m(
        UpdatedNext,
        Updater,
        Store,
        None,
        Plain,
        "=",
        "cgroup_rstat_updated()",
        "v6.8 kernel/cgroup/rstat.c:62,67",
    ),
    m(
        UpdatedNext,
        Flusher,
        Load,
        None,
        Plain,
        "plain read",
        "cgroup_rstat_updated_list()",
        "v6.8 kernel/cgroup/rstat.c:165",
    ),
    m(
        UpdatedNext,
        Flusher,
        Store,
        None,
        Plain,
        "= NULL",
        "cgroup_rstat_updated_list()",
        "v6.8 kernel/cgroup/rstat.c:189,117",
    ),
];

/// v6.8 to v6.15 (per-memcg thresholds), with the rstat tree of v5.7 to
/// v6.14 (v6.8's form) for the tree variants.
pub static V6_8: Release = Release {
    name: "v6.8-v6.15",
    covers: "v6.8 to v6.15 (v6.8's lines; the rstat tree of v5.7-v6.14 as v6.8 has it)",
    markings: V6_8_MARKINGS,
    base: None,
};

/// The candidate that closes the tree's store-buffering race in LKMM
/// (docs/findings.md, section 15): v6.8's sites, with the on-list test a
/// `READ_ONCE()` and the unlinks `WRITE_ONCE()`s; the `smp_mb()` pair is
/// the variant's code. The model's `v6.8-tree-mb` runs it.
const V6_8_CANDIDATE_MARKINGS: &[Marking] = &[
    locked(
        m(
            UpdatedNext,
            Updater,
            Load,
            None,
            ReadOnce,
            "READ_ONCE()",
            "cgroup_rstat_updated()",
            "candidate for v6.8 kernel/cgroup/rstat.c:42",
        ),
        false,
    ),
    m(
        UpdatedNext,
        Flusher,
        Store,
        None,
        WriteOnce,
        "WRITE_ONCE()",
        "cgroup_rstat_updated_list()",
        "candidate for v6.8 kernel/cgroup/rstat.c:189,117",
    ),
];

/// v6.8 with the tree's candidate fix (the `smp_mb()` pair of
/// 9a9e97b2f1f2 and `updated_next` marked): not a kernel release.
pub static V6_8_TREE_CANDIDATE: Release = Release {
    name: "v6.8+tree-candidate",
    covers: "v6.8 with the rstat tree's candidate fix (smp_mb() pair, updated_next marked)",
    markings: V6_8_CANDIDATE_MARKINGS,
    base: Some(&V6_8),
};
