//! mm/memcontrol.c as of v5.19: the statistics flush protocol before
//! 873f64b791a2.
//!
//! The code was rebuilt from the diffs of 11192d9c124d, 5b3be698a872,
//! fd25a9e0e23b, 9b3016154c91 and 873f64b791a2 (docs/claims.md, "Sources
//! and tags"); `docs/model.md` maps each function here to
//! the kernel's and lists what is abstracted away.
//!
//! [`Memcontrol`] holds the kernel functions of this lineage as default
//! methods: a type implementing it with no overrides *is* v5.19
//! ([`V5_19`]). A later version or a variant overrides the functions it
//! changes; [`crate::protocol::global::v6_0`] overrides one.
//!
//! State, and who touches it:
//!
//! | model field | kernel | written by | read by |
//! |---|---|---|---|
//! | `memcgs[m].vmstats_percpu[cpu].state` | `memcg->vmstats_percpu->state[idx]` | owner CPU (`__this_cpu_add`) | flusher (`READ_ONCE`) |
//! | `memcgs[m].vmstats_percpu[cpu].state_prev` | `statc->state_prev[idx]` | flusher, under `cgroup_rstat_lock` | flusher |
//! | `memcgs[m].vmstats.state` | `memcg->vmstats.state[idx]` | flusher, under `cgroup_rstat_lock` | readers, locklessly |
//! | `memcgs[m].vmstats.state_pending` | `memcg->vmstats.state_pending[idx]` | flusher, under `cgroup_rstat_lock` | flusher |
//! | `stats_updates` | `DEFINE_PER_CPU(unsigned int, stats_updates)` | owner CPU | owner CPU |
//! | `stats_flush_threshold` | `static atomic_t stats_flush_threshold` | updaters (`atomic_add`), flusher (`atomic_set`) | updaters (v6.0), readers |
//! | `stats_flush_lock` | `static DEFINE_SPINLOCK(stats_flush_lock)` | flushers | flushers |
//! | `flush_next_time` | `static u64 flush_next_time` | flusher, under `stats_flush_lock` | ratelimited readers (`mem_cgroup_flush_stats_delayed()`), locklessly: a data race |
//! | `cgroup_rstat_lock` | `static DEFINE_SPINLOCK(cgroup_rstat_lock)` (rstat.c) | flushers | flushers |
//!
//! Two fields are v6.4's and unused before it ([`crate::protocol::global::v6_4`]):
//! `stats_flush_ongoing`, and `flush_next_time_once`, the same kernel
//! variable as `flush_next_time` accessed with `READ_ONCE`/`WRITE_ONCE`.

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::kernel::{
    atomic_add, atomic_read, atomic_set, spin_lock, spin_trylock, spin_unlock, this_cpu_add,
    this_cpu_add_return, this_cpu_write, time_after64, trace_flush_begin, trace_flush_end,
    trace_memcg_flush_stats, trace_memcg_flush_stats_ratelimited, Atomic, CpuLocal, LockName,
    Locked, PerCpu, SpinLock, Var,
};
use crate::protocol::memcg::{self, memcg_tree, MemCgroup, ROOT_MEM_CGROUP};
use crate::protocol::wing::{lineage_model, Env, FlushModel, Lineage};
use crate::vocab::footprint;
use crate::vocab::Platform;

/// `FLUSH_TIME` in model ticks.
///
/// NOTE(kernel): `2UL*HZ` in the kernel; a tick stands for a second.
pub const FLUSH_TIME: i64 = 2;

/// The initial value of `flush_next_time` in model ticks.
///
/// NOTE(kernel): the kernel's `flush_next_time` starts at 0 while
/// `jiffies_64` starts at `INITIAL_JIFFIES`, far above it, so that a
/// ratelimited reader is due from boot. The model's time starts at 0, so
/// the field starts one tick earlier to keep that relation.
pub const FLUSH_NEXT_TIME_INIT: i64 = -1;

/// State a variant may use for data of its own (a per-CPU counter and a
/// global word), so that a variant written outside the crate needs no new
/// fields. Unused by the kernel versions.
pub struct Scratch<P: Platform> {
    /// One counter per CPU, owner-only (`scratch[c]` in traces).
    pub percpu: PerCpu<CpuLocal<P>>,
    /// One shared word (`scratch` in traces).
    pub word: Atomic<P>,
}

/// The kernel globals of the v5.16-v6.3 protocol, built fresh for each
/// execution.
pub struct State<P: Platform> {
    /// Configuration, `jiffies_64`, `num_online_cpus()` and
    /// `MEMCG_CHARGE_BATCH`.
    pub env: Env<P>,
    /// The memcg tree; children follow their parents, so reverse order is a
    /// post-order.
    pub memcgs: Vec<MemCgroup<P>>,
    /// `stats_updates`, per CPU.
    pub stats_updates: PerCpu<CpuLocal<P>>,
    /// `stats_flush_threshold`, in units of `MEMCG_CHARGE_BATCH` updates,
    /// alone on its cache line.
    pub stats_flush_threshold: CachePadded<Atomic<P>>,
    /// `stats_flush_lock`.
    pub stats_flush_lock: SpinLock<P>,
    /// `flush_next_time`: a plain `u64` written by flushers under
    /// `stats_flush_lock` (v5.18-v6.3).
    ///
    /// It is the one piece of plain data that only `stats_flush_lock`
    /// orders: two flushers not ordered by that lock are a write-write race
    /// on it, which loom reports. Its lockless reader,
    /// [`Memcontrol::mem_cgroup_flush_stats_delayed`], runs only when the
    /// scenario's readers are ratelimited, which needs abstract time and so
    /// runs under shuttle only.
    pub flush_next_time: Locked<P>,
    /// `stats_flush_ongoing` (v6.4-v6.7): an `atomic_t` used as a trylock
    /// in place of `stats_flush_lock`. Unused before v6.4.
    pub stats_flush_ongoing: Atomic<P>,
    /// `flush_next_time` as v6.4-v6.7 access it, with `READ_ONCE` and
    /// `WRITE_ONCE` (3cd9992b9302): the same kernel variable as
    /// [`State::flush_next_time`], which v6.4 no longer protects with a
    /// lock. Unused before v6.4.
    pub flush_next_time_once: Atomic<P>,
    /// `cgroup_rstat_lock` (kernel/cgroup/rstat.c).
    pub cgroup_rstat_lock: SpinLock<P>,
    /// Room for a variant's own data.
    pub scratch: Scratch<P>,
}

impl<P: Platform> State<P> {
    /// Every global at its initial value.
    pub fn new(env: Env<P>) -> Self {
        let cpus = env.cfg.cpus;
        State {
            memcgs: memcg_tree(&env.cfg),
            stats_updates: PerCpu::new(cpus, |cpu| {
                CpuLocal::new(
                    Var::StatsUpdates {
                        memcg: None,
                        cpu: cpu as u8,
                    },
                    0,
                )
            }),
            stats_flush_threshold: CachePadded::new(Atomic::new(Var::Threshold { memcg: None }, 0)),
            stats_flush_lock: SpinLock::new(LockName::StatsFlushLock),
            flush_next_time: Locked::new(Var::FlushTime, FLUSH_NEXT_TIME_INIT),
            stats_flush_ongoing: Atomic::new(Var::Lock(LockName::StatsFlushOngoing), 0),
            flush_next_time_once: Atomic::new(Var::FlushTime, FLUSH_NEXT_TIME_INIT),
            cgroup_rstat_lock: SpinLock::new(LockName::CgroupRstatLock),
            scratch: Scratch {
                percpu: PerCpu::new(cpus, |cpu| {
                    CpuLocal::new(
                        Var::Other {
                            name: "scratch",
                            cpu: Some(cpu as u8),
                        },
                        0,
                    )
                }),
                word: Atomic::new(
                    Var::Other {
                        name: "scratch",
                        cpu: None,
                    },
                    0,
                ),
            },
            env,
        }
    }

    /// The memcg numbered `id`.
    pub fn memcg(&self, id: u8) -> &MemCgroup<P> {
        &self.memcgs[id as usize]
    }

    /// `root_mem_cgroup`.
    pub fn root_mem_cgroup(&self) -> &MemCgroup<P> {
        self.memcg(ROOT_MEM_CGROUP)
    }

    /// `num_online_cpus()` (see [`Env::num_online_cpus`]).
    pub fn num_online_cpus(&self) -> i64 {
        self.env.num_online_cpus()
    }

    /// `MEMCG_CHARGE_BATCH` (see [`Env::memcg_charge_batch`]).
    #[allow(non_snake_case)]
    pub fn MEMCG_CHARGE_BATCH(&self) -> i64 {
        self.env.memcg_charge_batch()
    }
}

/// The kernel functions of mm/memcontrol.c v5.19 that the flush protocol
/// runs, each a default method. `&self` is the variant's code (a
/// zero-sized type for the kernel versions); `mm` is the execution's
/// globals.
pub trait Memcontrol: Send + Sync + 'static {
    /// `__mod_memcg_state(memcg, idx, val)` on the calling CPU: the
    /// per-CPU counter first, then `memcg_rstat_updated()`, with no barrier
    /// between (as in every version through 2025).
    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        this_cpu_add(&mm.memcg(memcg).vmstats_percpu.this_cpu::<P>().state, val);
        self.memcg_rstat_updated(mm, memcg, val);
    }

    /// `memcg_rstat_updated(memcg, val)`: count the update's magnitude per
    /// CPU and add whole batches to `stats_flush_threshold` (5b3be698a872).
    ///
    /// NOTE(kernel): the call to `cgroup_rstat_updated()` is not modelled:
    /// the flush visits every (CPU, memcg) pair instead of the updated tree,
    /// which abstracts away the tree's own store-buffering race (C4 and C13
    /// in docs/claims.md; the `-tree` variants model it).
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
            this_cpu_write(&mm.stats_updates, 0);
        }
    }

    /// `mem_cgroup_flush_stats()`: flush if the threshold is above
    /// `num_online_cpus()`. Returns the reader's decision.
    ///
    /// NOTE(kernel): v5.19 takes no memcg and always flushes the whole
    /// tree; the model's reader names the memcg it reads.
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, _memcg: u8) -> bool {
        let needs_flush = atomic_read(&mm.stats_flush_threshold) > mm.num_online_cpus();
        trace_memcg_flush_stats(mm.root_mem_cgroup(), needs_flush);
        if needs_flush {
            self.__mem_cgroup_flush_stats(mm);
        }
        needs_flush
    }

    /// `__mem_cgroup_flush_stats()`: take the trylock (losers return at
    /// once), note the next flush time, flush everything, reset the
    /// threshold. Returns whether this call flushed.
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        if !spin_trylock(&mm.stats_flush_lock) {
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

    /// `cgroup_rstat_flush_irqsafe(root)`: under `cgroup_rstat_lock`, for
    /// each CPU, run the memcg callback on every memcg below `root`,
    /// children before parents.
    ///
    /// `cgroup_rstat_lock`, not `stats_flush_lock`, is what protects the
    /// flusher's plain fields in the kernel: other rstat flushers (a
    /// `cpu.stat` read, `cgroup_rstat_exit()`) run the memcg callback holding
    /// only it.
    ///
    /// NOTE(kernel): the per-CPU `cgroup_rstat_cpu_lock` only guards the
    /// updated tree, which is not modelled. Flushers outside memcg are not
    /// modelled either.
    ///
    /// After each CPU the walk holds nothing it read from it (the model's
    /// `footprint::walk_done`, for the exhaustive search).
    fn cgroup_rstat_flush_irqsafe<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        let entry = footprint::walk_begin();
        for cpu in mm.stats_updates.cpus() {
            for memcg in (root..mm.memcgs.len() as u8).rev() {
                self.mem_cgroup_css_rstat_flush(mm, memcg, cpu);
            }
            footprint::walk_done(entry, walked_up_to(cpu));
        }
        spin_unlock(&mm.cgroup_rstat_lock);
    }

    /// `mem_cgroup_css_rstat_flush(css, cpu)`: see
    /// [`memcg::mem_cgroup_css_rstat_flush`].
    fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
        memcg::mem_cgroup_css_rstat_flush(&mm.memcgs, memcg, cpu);
    }

    /// `flush_memcg_stats_dwork()`: the periodic work flushes regardless of
    /// the threshold (5b3be698a872).
    ///
    /// NOTE(kernel): the `queue_delayed_work(..., FLUSH_TIME)` that re-arms
    /// it is done by the scenario's worker after this returns.
    fn flush_memcg_stats_dwork<P: Platform>(&self, mm: &State<P>) {
        self.__mem_cgroup_flush_stats(mm);
    }

    /// `mem_cgroup_flush_stats_delayed()` (9b3016154c91, v5.18): the
    /// refault path's reader flushes only once `jiffies_64` is past
    /// `flush_next_time`, that is, once the periodic flusher is a full
    /// cycle late. Returns the decision of the threshold gate it then
    /// runs, or `false` if it is not due.
    ///
    /// NOTE(kernel): `flush_next_time` is read plainly and without
    /// `stats_flush_lock`, as the kernel has it: a data race with the
    /// flusher's store (3cd9992b9302 added `READ_ONCE`/`WRITE_ONCE` in
    /// v6.4). loom would report it; the path needs abstract time, which
    /// runs under shuttle only. The model takes no memcg-specific time: the
    /// kernel function has no argument either.
    fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let jiffies = mm.env.jiffies_64();
        let due = time_after64(jiffies, mm.flush_next_time.get());
        trace_memcg_flush_stats_ratelimited(mm.root_mem_cgroup(), jiffies, due);
        due && self.mem_cgroup_flush_stats(mm, memcg)
    }

    /// `memcg_page_state(memcg, idx)`: see [`memcg::memcg_page_state`].
    fn memcg_page_state<P: Platform>(&self, mm: &State<P>, memcg: u8) -> i64 {
        memcg::memcg_page_state(mm.memcg(memcg))
    }
}

/// The CPUs a walk in CPU order has visited once it is done with `cpu`
/// (one bit each, for `footprint::walk_done`).
pub fn walked_up_to(cpu: usize) -> u64 {
    if cpu >= 63 {
        u64::MAX
    } else {
        (1u64 << (cpu + 1)) - 1
    }
}

/// v5.19 itself: every function as the kernel has it.
#[derive(Clone, Copy, Debug, Default)]
pub struct V5_19;

impl Memcontrol for V5_19 {}

/// A [`Memcontrol`] implementation as a [`Lineage`]: the scenario's entry
/// points are these kernel functions.
#[derive(Clone)]
pub struct Global<M>(pub M);

impl<M: Memcontrol + Clone> Lineage for Global<M> {
    type State<P: Platform> = State<P>;
    fn state<P: Platform>(&self, env: Env<P>) -> State<P> {
        State::new(env)
    }
    fn mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        self.0.__mod_memcg_state(mm, memcg, val);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        self.0.mem_cgroup_flush_stats(mm, memcg)
    }
    fn mem_cgroup_flush_stats_ratelimited<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        self.0.mem_cgroup_flush_stats_delayed(mm, memcg)
    }
    fn flush<P: Platform>(&self, mm: &State<P>) -> bool {
        self.0.__mem_cgroup_flush_stats(mm)
    }
    fn periodic<P: Platform>(&self, mm: &State<P>) {
        self.0.flush_memcg_stats_dwork(mm);
    }
    fn memcg_page_state<P: Platform>(&self, mm: &State<P>, memcg: u8) -> i64 {
        self.0.memcg_page_state(mm, memcg)
    }
}

/// The model of a v5.19-lineage implementation (v5.19, v6.0, v6.4, or a
/// variant of one), ready for [`crate::protocol::Variant::new`].
pub fn model<M: Memcontrol + Clone>(code: M) -> Arc<FlushModel> {
    lineage_model(Global(code))
}
