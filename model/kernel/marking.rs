//! How the kernel marks each shared-memory access the model makes, per
//! release: a table of access sites, each with the kernel's own marking
//! (plain, `data_race()`, `READ_ONCE()`, `WRITE_ONCE()`, a per-CPU
//! operation, an atomic), the function, and the file and line it was read
//! at. The litmus export ([`crate::report::litmus`]) consults it, so an
//! exported test marks an access exactly as the release does, not as the
//! model's idiom layer happens to run it.
//!
//! Why the model's idiom is not enough: the model runs every shared word as
//! an atomic (a plain access would be undefined behaviour in Rust), so a
//! plain C access and a `data_race()` read are relaxed atomics under loom,
//! and `READ_ONCE()` is one too. LKMM tells them apart: plain accesses take
//! part in no ordering relation and make data races (tools/memory-model,
//! Documentation/access-marking.txt and explanation.txt, "PLAIN ACCESSES
//! AND DATA RACES"). The rstat tree's on-list test is `data_race()` in the
//! kernel and `READ_ONCE()`-like in the model; this table is what says so.
//!
//! A site is matched by the kernel variable it touches ([`VarKind`]), who
//! touches it ([`By`]), the kind of access ([`Kind`]), the model's idiom
//! there, and, where the kernel marks the same variable differently under
//! a lock and outside it, whether the per-CPU `cgroup_rstat_cpu_lock` is
//! held. An access no entry matches is the variant's own code (a mutant's,
//! a candidate's), and the export keeps the model's idiom for it.
//!
//! Locks and barriers are not in the tables: their LKMM primitive is the
//! kernel's (`raw_spin_lock_irqsave()` is `spin_lock()` to LKMM, interrupts
//! not being modelled).
//!
//! Sources (whole trees in the search tool's store, docs/kernel-later.md's
//! list; line numbers are of these snapshots):
//! - v6.4: `julianw1010/WASP-linux-6.4.0@ff0057e91bb8`
//! - v6.8: `vivo50kff/linux-6.8@bc4fae0d3fa3`
//! - v6.12: `shilei-massclouds/linux-6.12@e02d6450498d`
//! - v6.17: `busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8` (under
//!   `linux/`)
//!
//! v5.19 and v6.0 have no stored tree; their `flush_next_time` marking is
//! read from the context lines of the 2023 patches that changed it (the
//! v6.4 series, `WRITE_ONCE(flush_next_time, ...)` replacing
//! `flush_next_time = ...`).

use crate::vocab::obs::{Access, Actor, Idiom, LockName, Op, Var};

/// How the kernel marks an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A plain C access (`x = v`, `v = x`, `x += d`).
    Plain,
    /// `data_race()`: plain to LKMM; it only tells KCSAN the race is meant.
    DataRace,
    /// `READ_ONCE()` (and `atomic_read()`-like loads: see [`Mark::Atomic`]).
    ReadOnce,
    /// `WRITE_ONCE()`.
    WriteOnce,
    /// An `atomic_t`/`atomic64_t` operation (`atomic_read()`,
    /// `atomic64_add()`, ...): the spelling says which.
    Atomic,
    /// `cmpxchg()`/`try_cmpxchg()` on a plain word: fully ordered when it
    /// succeeds.
    Cmpxchg,
    /// `smp_load_acquire()`.
    LoadAcquire,
    /// A per-CPU operation (`__this_cpu_add()`, `this_cpu_add()`,
    /// `this_cpu_add_return()`, `this_cpu_xchg()`, `this_cpu_cmpxchg()`):
    /// atomic against the owner's interrupts, not against other CPUs, and
    /// not modelled by LKMM, so plain to it.
    PerCpu,
}

impl Mark {
    /// Whether LKMM sees the access as plain: it orders nothing and can
    /// race.
    pub fn plain_to_lkmm(self) -> bool {
        matches!(self, Mark::Plain | Mark::DataRace | Mark::PerCpu)
    }
}

/// The kernel variable a site touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// `memcg->vmstats_percpu->state[i]`.
    State,
    /// `memcg->vmstats->state[i]`, the flushed aggregate.
    Aggregate,
    /// `stats_flush_threshold` (v5.16-v6.7) or `vmstats->stats_updates`
    /// (v6.8 on).
    Threshold,
    /// `statc->stats_updates`, written remotely by the flusher (v6.8 on).
    StatsUpdates,
    /// `flush_next_time` (v5.18-v6.7) or `flush_last_time` (v6.8 on).
    FlushTime,
    /// `stats_flush_ongoing` (v6.4-v6.7), an `atomic_t` used as a trylock.
    Ongoing,
    /// `cgroup_rstat_cpu(cgrp, cpu)->updated_next` (and, from v6.17,
    /// `css_rstat_cpu(css, cpu)->updated_next`).
    UpdatedNext,
    /// `css_rstat_cpu(css, cpu)->lnode.next` (v6.17 on).
    LlistNode,
    /// `ss_lhead_cpu(ss, cpu)->first` (v6.17 on).
    LlistHead,
}

impl VarKind {
    /// The kind of `var`, if the tables speak of it.
    pub fn of(var: Var) -> Option<VarKind> {
        Some(match var {
            Var::State { .. } => VarKind::State,
            Var::Aggregate { .. } => VarKind::Aggregate,
            Var::Threshold { .. } => VarKind::Threshold,
            Var::StatsUpdates { memcg: Some(_), .. } => VarKind::StatsUpdates,
            Var::FlushTime => VarKind::FlushTime,
            Var::Lock(LockName::StatsFlushOngoing) => VarKind::Ongoing,
            Var::UpdatedNext { .. } => VarKind::UpdatedNext,
            Var::LlistNode { .. } => VarKind::LlistNode,
            Var::LlistHead { .. } => VarKind::LlistHead,
            _ => return None,
        })
    }
}

/// Who makes the access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// An updater CPU (`__mod_memcg_state()` and what it calls).
    Updater,
    /// Anyone else: a reader's gate and `memcg_page_state()`, a flusher.
    Flusher,
}

impl By {
    /// Who `actor` is.
    pub fn of(actor: Actor) -> By {
        if actor.is_cpu() {
            By::Updater
        } else {
            By::Flusher
        }
    }
}

/// The kind of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// It reads.
    Load,
    /// It writes.
    Store,
    /// It reads and writes in one step (an atomic, a per-CPU add).
    Rmw,
}

impl Kind {
    /// The kind of `op`.
    pub fn of(op: Op) -> Kind {
        match op {
            Op::Read(_) => Kind::Load,
            Op::Write(_) => Kind::Store,
            _ => Kind::Rmw,
        }
    }
}

/// One access site of a release and how the kernel marks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marking {
    /// The variable.
    pub var: VarKind,
    /// Who.
    pub by: By,
    /// The kind of access.
    pub kind: Kind,
    /// The model's idiom at the site (`None`: any).
    pub idiom: Option<Idiom>,
    /// Whether the per-CPU `cgroup_rstat_cpu_lock` is held (`None`: either).
    pub cpu_lock: Option<bool>,
    /// The kernel's marking.
    pub mark: Mark,
    /// The kernel's spelling (`data_race()`, `__this_cpu_add()`, ...).
    pub spelling: &'static str,
    /// The kernel function.
    pub func: &'static str,
    /// Where it was read: the release, file and line.
    pub at: &'static str,
    /// The kernel's own words on the race this access takes part in, if
    /// it has any (a plain access racing another thread's).
    pub race: Option<&'static str>,
}

impl Marking {
    /// Whether this entry is the site of `a` by `actor`, `cpu_lock` saying
    /// whether the actor holds its CPU's `cgroup_rstat_cpu_lock`.
    pub fn matches(&self, actor: Actor, a: Access, cpu_lock: bool) -> bool {
        VarKind::of(a.var) == Some(self.var)
            && By::of(actor) == self.by
            && Kind::of(a.op) == self.kind
            && self.idiom.is_none_or(|i| i == a.idiom)
            && self.cpu_lock.is_none_or(|l| l == cpu_lock)
    }
}

/// A release's table.
#[derive(Debug)]
pub struct Release {
    /// Its name, as variants and counterexamples carry it.
    pub name: &'static str,
    /// The kernels it stands for.
    pub covers: &'static str,
    /// Its sites.
    pub markings: &'static [Marking],
    /// The release whose sites it keeps where it has none of its own.
    pub base: Option<&'static Release>,
}

impl Release {
    /// The site of `a` by `actor` (see [`Marking::matches`]), if the
    /// kernel has it.
    pub fn find(&self, actor: Actor, a: Access, cpu_lock: bool) -> Option<&'static Marking> {
        self.markings
            .iter()
            .find(|m| m.matches(actor, a, cpu_lock))
            .or_else(|| self.base.and_then(|b| b.find(actor, a, cpu_lock)))
    }

    /// Every site, its own first, then its base's that it does not
    /// replace.
    pub fn sites(&self) -> Vec<&'static Marking> {
        let mut out: Vec<&'static Marking> = self.markings.iter().collect();
        if let Some(b) = self.base {
            for e in b.sites() {
                let replaced = self.markings.iter().any(|m| {
                    (m.var, m.by, m.kind, m.idiom, m.cpu_lock)
                        == (e.var, e.by, e.kind, e.idiom, e.cpu_lock)
                });
                if !replaced {
                    out.push(e);
                }
            }
        }
        out
    }
}

#[allow(clippy::too_many_arguments)]
const fn m(
    var: VarKind,
    by: By,
    kind: Kind,
    idiom: Option<Idiom>,
    mark: Mark,
    spelling: &'static str,
    func: &'static str,
    at: &'static str,
) -> Marking {
    Marking {
        var,
        by,
        kind,
        idiom,
        cpu_lock: None,
        mark,
        spelling,
        func,
        at,
        race: None,
    }
}

const fn locked(mut e: Marking, held: bool) -> Marking {
    e.cpu_lock = Some(held);
    e
}

const fn said(mut e: Marking, words: &'static str) -> Marking {
    e.race = Some(words);
    e
}

use By::{Flusher, Updater};
use Kind::{Load, Rmw, Store};
use Mark::*;
use VarKind::*;

/// `cgroup_rstat_updated()`'s comment on its lockless on-list test
/// (d8ef4b38cb69; v6.8 kernel/cgroup/rstat.c:35-36).
pub const ON_LIST_RACE: &str =
    "Speculative already-on-list test. This may race leading to temporary inaccuracies, \
     which is fine.";

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

/// v6.17's sites (through v7.1): `this_cpu_*` counting, the llist.
const V6_17_MARKINGS: &[Marking] = &[
    // v6.17 mm/memcontrol.c:700 (:745 for the lruvec form): this_cpu_add(),
    // no longer __this_cpu_add().
    m(
        State,
        Updater,
        Rmw,
        Some(Idiom::ThisCpuAdd),
        PerCpu,
        "this_cpu_add()",
        "mod_memcg_state()",
        "v6.17 mm/memcontrol.c:700",
    ),
    // v6.17 mm/memcontrol.c:3999 (mem_cgroup_stat_aggregate(), called by
    // mem_cgroup_css_rstat_flush()).
    m(
        State,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_stat_aggregate()",
        "v6.17 mm/memcontrol.c:3999",
    ),
    m(
        Aggregate,
        Flusher,
        Store,
        None,
        Plain,
        "+=",
        "mem_cgroup_stat_aggregate()",
        "v6.17 mm/memcontrol.c:4011",
    ),
    m(
        Aggregate,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "memcg_page_state()",
        "v6.17 mm/memcontrol.c:656",
    ),
    // v6.17 mm/memcontrol.c:559 (memcg_vmstats_needs_flush()), :591, :4125.
    m(
        Threshold,
        Updater,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic_read()",
        "memcg_vmstats_needs_flush()",
        "v6.17 mm/memcontrol.c:559",
    ),
    m(
        Threshold,
        Updater,
        Rmw,
        Some(Idiom::AtomicAdd),
        Atomic,
        "atomic_add()",
        "memcg_rstat_updated()",
        "v6.17 mm/memcontrol.c:591",
    ),
    m(
        Threshold,
        Flusher,
        Load,
        Some(Idiom::AtomicRead),
        Atomic,
        "atomic_read()",
        "memcg_vmstats_needs_flush()",
        "v6.17 mm/memcontrol.c:559",
    ),
    m(
        Threshold,
        Flusher,
        Store,
        Some(Idiom::AtomicSet),
        Atomic,
        "atomic_set()",
        "mem_cgroup_css_rstat_flush()",
        "v6.17 mm/memcontrol.c:4125",
    ),
    // v6.17 mm/memcontrol.c:585, :590, :4122.
    m(
        StatsUpdates,
        Updater,
        Load,
        Some(Idiom::ThisCpuAddReturn),
        PerCpu,
        "this_cpu_add_return()",
        "memcg_rstat_updated()",
        "v6.17 mm/memcontrol.c:585",
    ),
    m(
        StatsUpdates,
        Updater,
        Store,
        Some(Idiom::ThisCpuAddReturn),
        PerCpu,
        "this_cpu_add_return()",
        "memcg_rstat_updated()",
        "v6.17 mm/memcontrol.c:585",
    ),
    m(
        StatsUpdates,
        Updater,
        Load,
        Some(Idiom::ThisCpuXchg),
        PerCpu,
        "this_cpu_xchg()",
        "memcg_rstat_updated()",
        "v6.17 mm/memcontrol.c:590",
    ),
    m(
        StatsUpdates,
        Updater,
        Store,
        Some(Idiom::ThisCpuXchg),
        PerCpu,
        "this_cpu_xchg()",
        "memcg_rstat_updated()",
        "v6.17 mm/memcontrol.c:590",
    ),
    m(
        StatsUpdates,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "mem_cgroup_css_rstat_flush()",
        "v6.17 mm/memcontrol.c:4122",
    ),
    // v6.17 mm/memcontrol.c:606 and :634.
    m(
        FlushTime,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "__mem_cgroup_flush_stats()",
        "v6.17 mm/memcontrol.c:606",
    ),
    m(
        FlushTime,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "mem_cgroup_flush_stats_ratelimited()",
        "v6.17 mm/memcontrol.c:634",
    ),
    // css_rstat_updated(), v6.17 kernel/cgroup/rstat.c:101 (llist_on_list():
    // READ_ONCE(node->next), include/linux/llist.h:100); the claim, :118
    // (this_cpu_cmpxchg() in v6.17.0; try_cmpxchg() in 7.2); llist_add():
    // include/linux/llist.h:238 (READ_ONCE(head->first)), :241 (the plain
    // `new_last->next = first`), :242 (try_cmpxchg()).
    m(
        LlistNode,
        Updater,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "llist_on_list()",
        "v6.17 include/linux/llist.h:100 (rstat.c:101)",
    ),
    m(
        LlistNode,
        Updater,
        Rmw,
        None,
        PerCpu,
        "this_cpu_cmpxchg()",
        "css_rstat_updated()",
        "v6.17 kernel/cgroup/rstat.c:118",
    ),
    m(
        LlistNode,
        Updater,
        Store,
        None,
        Plain,
        "=",
        "llist_add_batch()",
        "v6.17 include/linux/llist.h:241",
    ),
    m(
        LlistHead,
        Updater,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "llist_add_batch()",
        "v6.17 include/linux/llist.h:238",
    ),
    m(
        LlistHead,
        Updater,
        Rmw,
        None,
        Cmpxchg,
        "try_cmpxchg()",
        "llist_add_batch()",
        "v6.17 include/linux/llist.h:242",
    ),
    // css_process_update_tree(): llist_del_first(), v6.17 lib/llist.c:35
    // (smp_load_acquire()), :39 (READ_ONCE(entry->next)), :40
    // (try_cmpxchg()); init_llist_node(), include/linux/llist.h:86.
    m(
        LlistHead,
        Flusher,
        Load,
        Some(Idiom::LoadAcquire),
        LoadAcquire,
        "smp_load_acquire()",
        "llist_del_first()",
        "v6.17 lib/llist.c:35",
    ),
    m(
        LlistHead,
        Flusher,
        Rmw,
        None,
        Cmpxchg,
        "try_cmpxchg()",
        "llist_del_first()",
        "v6.17 lib/llist.c:40",
    ),
    m(
        LlistNode,
        Flusher,
        Load,
        Some(Idiom::ReadOnce),
        ReadOnce,
        "READ_ONCE()",
        "llist_del_first()",
        "v6.17 lib/llist.c:39",
    ),
    m(
        LlistNode,
        Flusher,
        Store,
        Some(Idiom::WriteOnce),
        WriteOnce,
        "WRITE_ONCE()",
        "init_llist_node()",
        "v6.17 include/linux/llist.h:86",
    ),
    // The tree, now the flusher's alone, under the ss rstat lock: v6.17
    // kernel/cgroup/rstat.c:137, :142, :147 (__css_process_update_tree()),
    // :287, :311, :248 (css_rstat_updated_list() and its children).
    m(
        UpdatedNext,
        Flusher,
        Load,
        None,
        Plain,
        "plain read",
        "__css_process_update_tree()",
        "v6.17 kernel/cgroup/rstat.c:137,287",
    ),
    m(
        UpdatedNext,
        Flusher,
        Store,
        None,
        Plain,
        "=",
        "__css_process_update_tree()",
        "v6.17 kernel/cgroup/rstat.c:142,147,311,248",
    ),
];

/// v6.17 to v7.1 (the llist of updated nodes).
pub static V6_17: Release = Release {
    name: "v6.17-v7.1",
    covers: "v6.17 to v7.1 (v6.17.0's lines)",
    markings: V6_17_MARKINGS,
    base: None,
};

/// Every table.
pub const RELEASES: [&Release; 4] = [&GLOBAL, &V6_8, &V6_8_TREE_CANDIDATE, &V6_17];

/// The table named `name`.
pub fn by_name(name: &str) -> Option<&'static Release> {
    RELEASES.iter().copied().find(|r| r.name == name)
}
