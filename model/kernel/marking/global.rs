//! v5.19 to v6.7: the global threshold's sites (the lines are v6.4's,
//! julianw1010/WASP-linux-6.4.0@ff0057e91bb8).

use super::site::By::{Flusher, Updater};
use super::site::Kind::{Load, Rmw, Store};
use super::site::Mark::*;
use super::site::VarKind::*;
use super::site::{m, Marking, Release};

use crate::vocab::obs::Idiom;

/// The sites both per-memcg releases share with v5.19-v6.7: the counter and
/// the aggregate (the lines are v6.4's; v6.8's and v6.17's follow).
const GLOBAL_MARKINGS: &[Marking] = &[
    // v6.4 mm/memcontrol.c:785 (:835 for the lruvec form).
    m(
        State,
        Updater,
        Rmw,
        Some(Idiom::ThisCpuAdd),
        PerCpu,
        "__this_cpu_add()",
        "__mod_memcg_state()",
        "v6.4 mm/memcontrol.c:785",
    ),
    // v6.4 mm/memcontrol.c:5592.
    m(
        State,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_css_rstat_flush()",
        "v6.4 mm/memcontrol.c:5592",
    ),
    // v6.4 mm/memcontrol.c:5602, under cgroup_rstat_lock.
    m(
        Aggregate,
        Flusher,
        Store,
        None,
        Plain,
        "+=",
        "mem_cgroup_css_rstat_flush()",
        "v6.4 mm/memcontrol.c:5602",
    ),
    // v6.4 mm/memcontrol.c:766.
    m(
        Aggregate,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "memcg_page_state()",
        "v6.4 mm/memcontrol.c:766",
    ),
    // v6.4 mm/memcontrol.c:636-637: the updater's skip test and add.
    m(
        Threshold,
        Updater,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic_read()",
        "memcg_rstat_updated()",
        "v6.4 mm/memcontrol.c:636",
    ),
    m(
        Threshold,
        Updater,
        Rmw,
        Some(Idiom::AtomicAdd),
        Atomic,
        "atomic_add()",
        "memcg_rstat_updated()",
        "v6.4 mm/memcontrol.c:637",
    ),
    // v6.4 mm/memcontrol.c:666 (the reader's gate) and :660 (the reset).
    m(
        Threshold,
        Flusher,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic_read()",
        "mem_cgroup_flush_stats()",
        "v6.4 mm/memcontrol.c:666",
    ),
    m(
        Threshold,
        Flusher,
        Store,
        Some(Idiom::AtomicSet),
        Atomic,
        "atomic_set()",
        "do_flush_stats()",
        "v6.4 mm/memcontrol.c:660",
    ),
    // v5.18-v6.3: `flush_next_time = jiffies_64 + 2*FLUSH_TIME;` under
    // stats_flush_lock and `time_after64(jiffies_64, flush_next_time)`
    // without it (the context lines of the v6.4 series' diff of
    // __mem_cgroup_flush_stats() and mem_cgroup_flush_stats_delayed()).
    m(
        FlushTime,
        Flusher,
        Store,
        Some(Idiom::Plain),
        Plain,
        "=",
        "__mem_cgroup_flush_stats()",
        "v6.0 mm/memcontrol.c (v6.4 series' diff context)",
    ),
    m(
        FlushTime,
        Flusher,
        Load,
        Some(Idiom::Plain),
        Plain,
        "plain read",
        "mem_cgroup_flush_stats_delayed()",
        "v6.0 mm/memcontrol.c (v6.4 series' diff context)",
    ),
    // v6.4 mm/memcontrol.c:653 and :683.
    m(
        FlushTime,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "do_flush_stats()",
        "v6.4 mm/memcontrol.c:653",
    ),
    m(
        FlushTime,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_flush_stats_ratelimited()",
        "v6.4 mm/memcontrol.c:683",
    ),
    // v6.4 mm/memcontrol.c:649-650 and :661.
    m(
        Ongoing,
        Flusher,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic_read()",
        "do_flush_stats()",
        "v6.4 mm/memcontrol.c:649",
    ),
    m(
        Ongoing,
        Flusher,
        Rmw,
        Some(Idiom::AtomicXchg),
        Atomic,
        "atomic_xchg()",
        "do_flush_stats()",
        "v6.4 mm/memcontrol.c:650",
    ),
    m(
        Ongoing,
        Flusher,
        Store,
        Some(Idiom::AtomicSet),
        Atomic,
        "atomic_set()",
        "do_flush_stats()",
        "v6.4 mm/memcontrol.c:661",
    ),
];

/// v5.19 to v6.7: one global threshold (v5.19, v6.0, v6.4 and their
/// mutants).
pub static GLOBAL: Release = Release {
    name: "v5.19-v6.7",
    covers: "v5.19 to v6.7 (global threshold; v6.4's lines)",
    markings: GLOBAL_MARKINGS,
    base: None,
};
