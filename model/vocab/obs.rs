//! What the protocol reports: observations.
//!
//! Every shared-memory access made through the kernel-idiom layer
//! ([`crate::kernel`]) is reported as an [`Obs::Access`]: which variable,
//! which kernel idiom, and the value read or written. Protocol code adds a
//! few tracepoints ([`Tp`]) for events that are not single accesses (a
//! reader's flush decision, the span of a flush), and the scenario reports
//! what surrounds the protocol (an update call returned, a value a reader
//! read, the end of the execution). Monitors ([`crate::observe`]) build
//! ghost state, properties, coverage, measures and traces from these alone;
//! they never look at a protocol's fields.

use std::fmt;

pub use super::life::LifeEvent;

use serde::{Deserialize, Serialize};

/// Who runs a step: one model thread, one column of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Actor {
    /// An updater CPU, `0..num_online_cpus()`.
    Cpu(usize),
    /// A memory.stat-style reader.
    Reader(usize),
    /// The periodic `flush_memcg_stats_dwork()`.
    Periodic,
    /// The main thread: the quiescent read and the final flush.
    Main,
    /// The timer interrupt advancing `jiffies_64` (abstract time).
    Clock,
    /// `cgroup_rmdir()` of a memcg, and the release and free work that the
    /// last reference put runs (the lifetime model); with
    /// [`crate::config::Death::relink`] the memory controller disabled in
    /// the parent's `cgroup.subtree_control` instead (`kill_css()`).
    Rmdir(u8),
    /// The memory controller enabled again in the parent's
    /// `cgroup.subtree_control`: `css_create()` of a new memory css in memcg
    /// `m`'s cgroup (the lifetime model).
    Enable(u8),
}

impl Actor {
    /// Whether this actor is an updater CPU.
    pub fn is_cpu(self) -> bool {
        matches!(self, Actor::Cpu(_))
    }

    /// Whether this actor reads statistics (a reader or main).
    pub fn is_reader(self) -> bool {
        matches!(self, Actor::Reader(_) | Actor::Main)
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Cpu(c) => write!(f, "CPU {c}"),
            Actor::Reader(r) => write!(f, "reader {r}"),
            Actor::Periodic => f.write_str("periodic"),
            Actor::Main => f.write_str("main"),
            Actor::Clock => f.write_str("clock"),
            Actor::Rmdir(m) => write!(f, "rmdir {m}"),
            Actor::Enable(m) => write!(f, "enable {m}"),
        }
    }
}

/// A lock word, by the kernel name of the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockName {
    /// `stats_flush_lock` (mm/memcontrol.c, v5.15-v6.3).
    StatsFlushLock,
    /// `cgroup_rstat_lock` (kernel/cgroup/rstat.c).
    CgroupRstatLock,
    /// `stats_flush_ongoing` (mm/memcontrol.c, v6.4-v6.7), an `atomic_t`
    /// used as a trylock.
    StatsFlushOngoing,
    /// A lock a variant adds.
    Other(&'static str),
}

impl LockName {
    /// The short name used in traces (see the legend).
    pub fn short(self) -> &'static str {
        match self {
            LockName::StatsFlushLock => "flush",
            LockName::CgroupRstatLock => "rstat",
            LockName::StatsFlushOngoing => "ongoing",
            LockName::Other(s) => s,
        }
    }

    /// The kernel name.
    pub fn kernel(self) -> &'static str {
        match self {
            LockName::StatsFlushLock => "stats_flush_lock",
            LockName::CgroupRstatLock => "cgroup_rstat_lock",
            LockName::StatsFlushOngoing => "stats_flush_ongoing",
            LockName::Other(s) => s,
        }
    }
}

/// A shared variable of the model, named by what it is in the kernel.
///
/// Memcgs are numbered in the model's tree (0 is `root_mem_cgroup`); the
/// model has one statistic item, so `state[0]` is implied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Var {
    /// `memcg->vmstats_percpu->state[0]` on `cpu` (`S[c]` in traces).
    State {
        /// The memcg.
        memcg: u8,
        /// The CPU whose counter it is.
        cpu: u8,
    },
    /// `memcg->vmstats_percpu->state_prev[0]` on `cpu` (`P[c]`).
    StatePrev {
        /// The memcg.
        memcg: u8,
        /// The CPU.
        cpu: u8,
    },
    /// `memcg->vmstats.state[0]`, the flushed aggregate (`agg`).
    Aggregate {
        /// The memcg.
        memcg: u8,
    },
    /// `memcg->vmstats.state_pending[0]` (`pend`).
    Pending {
        /// The memcg.
        memcg: u8,
    },
    /// `stats_updates` on `cpu` (`U[c]`): the global per-CPU counter
    /// (v5.16-v6.7, `memcg` is `None`) or `memcg->vmstats_percpu->
    /// stats_updates` (v6.8 on).
    StatsUpdates {
        /// The memcg, from v6.8 on.
        memcg: Option<u8>,
        /// The CPU.
        cpu: u8,
    },
    /// `stats_flush_threshold` (v5.16-v6.7, `memcg` is `None`) or
    /// `memcg->vmstats->stats_updates` (v6.8 on) (`thr`).
    Threshold {
        /// The memcg, from v6.8 on.
        memcg: Option<u8>,
    },
    /// A lock word.
    Lock(LockName),
    /// `flush_next_time` (v5.18-v6.7) or `flush_last_time` (v6.8 on).
    FlushTime,
    /// `jiffies_64`.
    Jiffies,
    /// When the queued `stats_flush_dwork` is due (its timer).
    Dwork,
    /// Flushes in progress, as the scenario's clock sees them (scenario
    /// bookkeeping for abstract time, not kernel state).
    Flushing,
    /// `cgroup_rstat_cpu(cgrp, cpu)->updated_next` (v5.x-v6.14), or
    /// `css_rstat_cpu(css, cpu)->lnode.next` (v6.17 on): whether `memcg` is
    /// on CPU `cpu`'s updated tree (`on[c]` in traces; 0: off the tree).
    UpdatedNext {
        /// The memcg.
        memcg: u8,
        /// The CPU whose tree it is.
        cpu: u8,
    },
    /// `css_rstat_cpu(css, cpu)->lnode.next` (v6.17 on), encoded: 0 off
    /// the list (`next == &lnode`), 1 NULL (claimed, or the tail), `m + 2`
    /// a pointer to memcg `m`'s node (`ln[c]` in traces).
    LlistNode {
        /// The memcg.
        memcg: u8,
        /// The CPU whose list it is.
        cpu: u8,
    },
    /// `ss_lhead_cpu(ss, cpu)->first` (v6.17 on): 1 NULL, `m + 2` memcg
    /// `m`'s node (`lhead[c]`).
    LlistHead {
        /// The CPU.
        cpu: u8,
    },
    /// A field of memcg `memcg`'s `struct cgroup_subsys_state` (the
    /// lifetime model: `refcnt`, `rstat_css_node`).
    Css {
        /// The memcg.
        memcg: u8,
        /// The field's name.
        field: &'static str,
    },
    /// A variable a variant adds: a name and, for per-CPU data, the CPU.
    Other {
        /// Name, as the variant's code names it.
        name: &'static str,
        /// The CPU for per-CPU data.
        cpu: Option<u8>,
    },
}

impl Var {
    /// The CPU a per-CPU variable belongs to, if any.
    pub fn cpu(self) -> Option<usize> {
        match self {
            Var::State { cpu, .. }
            | Var::StatePrev { cpu, .. }
            | Var::StatsUpdates { cpu, .. }
            | Var::UpdatedNext { cpu, .. }
            | Var::LlistNode { cpu, .. }
            | Var::LlistHead { cpu }
            | Var::Other { cpu: Some(cpu), .. } => Some(cpu as usize),
            _ => None,
        }
    }

    /// The memcg a variable belongs to, if any.
    pub fn memcg(self) -> Option<u8> {
        match self {
            Var::State { memcg, .. }
            | Var::StatePrev { memcg, .. }
            | Var::Aggregate { memcg }
            | Var::Pending { memcg } => Some(memcg),
            Var::StatsUpdates { memcg, .. } | Var::Threshold { memcg } => memcg,
            Var::UpdatedNext { memcg, .. } | Var::LlistNode { memcg, .. } => Some(memcg),
            Var::Css { memcg, .. } => Some(memcg),
            _ => None,
        }
    }

    /// The short name used in traces and litmus tests; memcgs other than
    /// the root get a suffix (`agg.1`).
    pub fn short(self) -> String {
        let m = |memcg: u8| {
            if memcg == 0 {
                String::new()
            } else {
                format!(".{memcg}")
            }
        };
        let om = |memcg: Option<u8>| memcg.map_or(String::new(), m);
        match self {
            Var::State { memcg, cpu } => format!("S{}[{cpu}]", m(memcg)),
            Var::StatePrev { memcg, cpu } => format!("P{}[{cpu}]", m(memcg)),
            Var::Aggregate { memcg } => format!("agg{}", m(memcg)),
            Var::Pending { memcg } => format!("pend{}", m(memcg)),
            Var::StatsUpdates { memcg, cpu } => format!("U{}[{cpu}]", om(memcg)),
            Var::Threshold { memcg } => format!("thr{}", om(memcg)),
            Var::UpdatedNext { memcg, cpu } => format!("on{}[{cpu}]", m(memcg)),
            Var::LlistNode { memcg, cpu } => format!("ln{}[{cpu}]", m(memcg)),
            Var::LlistHead { cpu } => format!("lhead[{cpu}]"),
            Var::Lock(l) => l.short().to_string(),
            Var::FlushTime => "flush_time".into(),
            Var::Jiffies => "jiffies".into(),
            Var::Dwork => "dwork".into(),
            Var::Flushing => "flushing".into(),
            Var::Css { memcg, field } => format!("{field}{}", m(memcg)),
            Var::Other { name, cpu: None } => name.to_string(),
            Var::Other { name, cpu: Some(c) } => format!("{name}[{c}]"),
        }
    }
}

impl Var {
    /// The kernel identifier: `S.1[0]` is
    /// `memcg1->vmstats_percpu[cpu0].state[0]`, `thr.1` is
    /// `memcg1->vmstats->stats_updates`; memcg 0 is `root_mem_cgroup` and
    /// memcg `m` is `memcgm`, the model's number for it.
    pub fn kernel(self) -> String {
        let m = |memcg: u8| {
            if memcg == 0 {
                "root_mem_cgroup".to_string()
            } else {
                format!("memcg{memcg}")
            }
        };
        match self {
            Var::State { memcg, cpu } => format!("{}->vmstats_percpu[cpu{cpu}].state[0]", m(memcg)),
            Var::StatePrev { memcg, cpu } => {
                format!("{}->vmstats_percpu[cpu{cpu}].state_prev[0]", m(memcg))
            }
            Var::Aggregate { memcg } => format!("{}->vmstats->state[0]", m(memcg)),
            Var::Pending { memcg } => format!("{}->vmstats->state_pending[0]", m(memcg)),
            Var::StatsUpdates { memcg: None, cpu } => format!("per_cpu(stats_updates, {cpu})"),
            Var::StatsUpdates {
                memcg: Some(memcg),
                cpu,
            } => format!("{}->vmstats_percpu[cpu{cpu}].stats_updates", m(memcg)),
            Var::Threshold { memcg: None } => "stats_flush_threshold".into(),
            Var::Threshold { memcg: Some(memcg) } => {
                format!("{}->vmstats->stats_updates", m(memcg))
            }
            Var::UpdatedNext { memcg, cpu } => {
                format!("cgroup_rstat_cpu({}, {cpu})->updated_next", m(memcg))
            }
            Var::LlistNode { memcg, cpu } => {
                format!("css_rstat_cpu({}, {cpu})->lnode.next", m(memcg))
            }
            Var::LlistHead { cpu } => format!("ss_lhead_cpu(memory, {cpu})->first"),
            Var::Lock(LockName::Other(n)) if n.starts_with("rstat_cpu") => {
                format!(
                    "per_cpu(cgroup_rstat_cpu_lock, {})",
                    &n["rstat_cpu".len()..]
                )
            }
            Var::Lock(l) => l.kernel().to_string(),
            Var::FlushTime => "flush_next_time".into(),
            Var::Jiffies => "jiffies_64".into(),
            Var::Dwork => "stats_flush_dwork.timer".into(),
            Var::Flushing => "flushing".into(),
            Var::Css { memcg, field } => format!("{}->css.{field}", m(memcg)),
            Var::Other { name, cpu: None } => name.to_string(),
            Var::Other { name, cpu: Some(c) } => format!("per_cpu({name}, {c})"),
        }
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.short())
    }
}

/// The kernel idiom an access was written with (for traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Idiom {
    /// `atomic_read()`.
    AtomicRead,
    /// `atomic_set()`.
    AtomicSet,
    /// `atomic_add()`.
    AtomicAdd,
    /// `atomic_xchg()`.
    AtomicXchg,
    /// `atomic_cmpxchg()` / `atomic_try_cmpxchg()`.
    AtomicCmpxchg,
    /// `READ_ONCE()`.
    ReadOnce,
    /// `smp_load_acquire()`.
    LoadAcquire,
    /// `smp_store_release()`.
    StoreRelease,
    /// `smp_mb()` (reported on [`crate::kernel::barrier::FENCE`]).
    SmpMb,
    /// `smp_rmb()`.
    SmpRmb,
    /// `smp_wmb()`.
    SmpWmb,
    /// `cmpxchg()` / `try_cmpxchg()` on a plain word.
    Cmpxchg,
    /// `WRITE_ONCE()`.
    WriteOnce,
    /// `__this_cpu_add()` / `this_cpu_add()`.
    ThisCpuAdd,
    /// `__this_cpu_add_return()` / `this_cpu_add_return()`.
    ThisCpuAddReturn,
    /// `__this_cpu_read()`.
    ThisCpuRead,
    /// `__this_cpu_write()`.
    ThisCpuWrite,
    /// `this_cpu_xchg()`.
    ThisCpuXchg,
    /// A plain C access under a lock.
    Plain,
    /// `spin_trylock()`.
    SpinTrylock,
    /// `spin_lock()` (one successful acquisition).
    SpinLock,
    /// `spin_unlock()`.
    SpinUnlock,
    /// `spin_is_locked()`.
    SpinIsLocked,
}

/// What an access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A load that returned the value.
    Read(i64),
    /// A store of the value.
    Write(i64),
    /// An atomic add of `val`, leaving `new`.
    Add {
        /// The addend.
        val: i64,
        /// The value after the add.
        new: i64,
    },
    /// An exchange.
    Xchg {
        /// The value replaced.
        old: i64,
        /// The value stored.
        new: i64,
    },
    /// A compare-and-exchange.
    CmpXchg {
        /// The value found.
        old: i64,
        /// The value stored if it succeeded.
        new: i64,
        /// Whether it succeeded.
        ok: bool,
    },
}

impl Op {
    /// The value the variable holds after the access, if it wrote.
    pub fn written(self) -> Option<i64> {
        match self {
            Op::Read(_) => None,
            Op::Write(v) => Some(v),
            Op::Add { new, .. } | Op::Xchg { new, .. } => Some(new),
            Op::CmpXchg { new, ok, .. } => ok.then_some(new),
        }
    }

    /// The value read, if the access read.
    pub fn read(self) -> Option<i64> {
        match self {
            Op::Read(v) => Some(v),
            Op::Write(_) => None,
            Op::Add { val, new } => Some(new - val),
            Op::Xchg { old, .. } | Op::CmpXchg { old, .. } => Some(old),
        }
    }
}

/// A shared-memory access, reported by the kernel-idiom layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Access {
    /// The variable.
    pub var: Var,
    /// What happened to it.
    pub op: Op,
    /// The idiom used.
    pub idiom: Idiom,
}

/// Tracepoints: events the protocol reports that are not one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tp {
    /// `trace_memcg_flush_stats()`: a reader's flush decision on `memcg`.
    /// `force` is set for flushes that ignore the threshold.
    ///
    /// NOTE(kernel): the tracepoint exists from v6.13 (`__mem_cgroup_
    /// flush_stats(memcg, force)`); the model places it at the same point of
    /// every version's reader gate.
    FlushStats {
        /// The memcg whose statistics the reader wants.
        memcg: u8,
        /// Whether the gate decided to flush.
        needs_flush: bool,
    },
    /// A flush section begins: the flusher holds the right to flush (won
    /// the trylock or the `ongoing` flag, or entered `do_flush_stats()`),
    /// and will flush the subtree of `root`.
    FlushBegin {
        /// The memcg whose subtree is flushed.
        root: u8,
    },
    /// The flush section ends (after the threshold reset, before the
    /// exclusion is released).
    FlushEnd,
    /// The ratelimited reader's time gate on `memcg`: whether
    /// `jiffies_64`, as it read it, is past the next flush time
    /// (`mem_cgroup_flush_stats_ratelimited()`, `_delayed()` before v6.4).
    ///
    /// NOTE(kernel): no such tracepoint exists; the model reports the
    /// decision so that properties can judge it.
    FlushRatelimited {
        /// The memcg whose statistics the reader wants.
        memcg: u8,
        /// The `jiffies_64` value the gate compared.
        jiffies: i64,
        /// Whether the gate went on to `mem_cgroup_flush_stats()`.
        due: bool,
    },
}

/// One observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Obs {
    /// A shared-memory access.
    Access(Access),
    /// A tracepoint.
    Trace(Tp),
    /// The scenario: an updater's `__mod_memcg_state()` call returned.
    UpdateDone {
        /// The memcg charged.
        memcg: u8,
        /// The update's value.
        val: i64,
    },
    /// The scenario: a reader read this value of `memcg`'s statistic
    /// (`memcg_page_state()` returned it).
    Read {
        /// The memcg read.
        memcg: u8,
        /// The value.
        value: i64,
    },
    /// The scenario: a reader's `mem_cgroup_flush_stats()` (or ratelimited) call.
    FlushCall {
        /// The memcg whose statistics it wants; its window opens here.
        memcg: u8,
    },
    /// The scenario: every thread has been joined; main's quiescent read
    /// follows.
    Quiescent,
    /// A step of a memcg's death or of RCU (the lifetime model).
    Life(LifeEvent),
    /// The scenario: after the final flush, the aggregate of `memcg` is
    /// `value`.
    Final {
        /// The memcg.
        memcg: u8,
        /// Its aggregate.
        value: i64,
    },
    /// The scenario: after the final flush and `flushes` more flushes of
    /// the whole tree (`Config::settle`), the aggregate of `memcg` is
    /// `value`.
    Settled {
        /// Flushes after the final one (1 ..= `settle`).
        flushes: usize,
        /// The memcg.
        memcg: u8,
        /// Its aggregate.
        value: i64,
    },
}

/// Something that receives the observations of one execution.
///
/// Called in the step of the operation observed (no scheduling point can
/// come between), from the model thread that ran it. A panic fails the
/// execution; the message must start with a property name.
pub trait Sink: Send + Sync {
    /// One observation by `actor`.
    fn observe(&self, actor: Actor, obs: Obs);

    /// Feed everything of this execution's observer state that can change
    /// what later observations do (checks, measures, the twin gates) into
    /// `state`, for the stateful exhaustive search (explore/dfs);
    /// cross-execution counts and witness traces are not state. Return `false` if the state cannot be digested: the
    /// search then never prunes this execution (the default).
    fn digest(&self, _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }

    /// The symmetry reduction's split of [`Sink::digest`]: feed into
    /// `state` everything of the observer state that belongs to updater
    /// CPU `cpu` (its per-CPU counters, what walks read of it).
    /// [`Sink::digest_renamed`] feeds the rest. `false` (the default):
    /// the observer cannot be permuted, and the search does not reduce by
    /// symmetry.
    fn digest_cpu(&self, _cpu: usize, _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }

    /// Everything [`Sink::digest_cpu`] left out, with every CPU number `c`
    /// written as `rename[c]` (an actor `Cpu(c)`, a CPU field). The two
    /// must fix the observer state up to the renaming: equal per-CPU parts
    /// at renamed places and equal renamed rests mean one observer state is
    /// the other with its CPUs permuted.
    fn digest_renamed(&self, _rename: &[usize], _state: &mut dyn std::hash::Hasher) -> bool {
        false
    }

    /// A copy of this execution's observer state (what [`Sink::digest`]
    /// covers and whatever else later observations use), for the stateful
    /// search: it saves the state at each branching decision and, when it
    /// runs a schedule's prefix again to try another choice there, skips
    /// the prefix's observations and [`Sink::restore`]s the copy instead.
    /// `None` (the default): every observation is replayed.
    fn save(&self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        None
    }

    /// Put back a state [`Sink::save`] returned (of an earlier execution of
    /// the same plan, at the same point of the same schedule).
    fn restore(&self, _saved: &(dyn std::any::Any + Send + Sync)) {}
}

/// `actor` with its CPU number written as `rename[c]` (other actors as they
/// are): what [`Sink::digest_renamed`] hashes in place of an actor.
pub fn renamed(actor: Actor, rename: &[usize]) -> Actor {
    match actor {
        Actor::Cpu(c) => Actor::Cpu(rename.get(c).copied().unwrap_or(c)),
        a => a,
    }
}
