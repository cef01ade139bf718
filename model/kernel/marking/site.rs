//! The vocabulary of the release tables: what a site is, how the kernel
//! marks it, and a release's table (see the module above).

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
pub(super) const fn m(
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

pub(super) const fn locked(mut e: Marking, held: bool) -> Marking {
    e.cpu_lock = Some(held);
    e
}

pub(super) const fn said(mut e: Marking, words: &'static str) -> Marking {
    e.race = Some(words);
    e
}

/// `cgroup_rstat_updated()`'s comment on its lockless on-list test
/// (d8ef4b38cb69; v6.8 kernel/cgroup/rstat.c:35-36).
pub const ON_LIST_RACE: &str =
    "Speculative already-on-list test. This may race leading to temporary inaccuracies, \
     which is fine.";
