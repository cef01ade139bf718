//! The memcg statistics flush protocol of v5.19 and v6.0 (mm/memcontrol.c).
//!
//! Names follow the kernel. The map from each function here to the kernel
//! function it stands for, and the list of what is abstracted away, is in
//! `docs/model.md`.
//!
//! State, and who touches it:
//!
//! | model field | kernel | written by | read by |
//! |---|---|---|---|
//! | `memcgs[m].vmstats_percpu[cpu].state` | `memcg->vmstats_percpu->state[idx]` | owner CPU (`__this_cpu_add`) | flusher (`READ_ONCE`) |
//! | `memcgs[m].vmstats_percpu[cpu].state_prev` | `statc->state_prev[idx]` | flusher, under `cgroup_rstat_lock` | flusher |
//! | `memcgs[m].vmstats.state` | `memcg->vmstats.state[idx]` | flusher, under `cgroup_rstat_lock` | readers, locklessly |
//! | `memcgs[m].vmstats.state_pending` | `memcg->vmstats.state_pending[idx]` | flusher, under `cgroup_rstat_lock` | flusher |
//! | `stats_updates[cpu]` | `DEFINE_PER_CPU(unsigned int, stats_updates)` | owner CPU | owner CPU |
//! | `stats_flush_threshold` | `static atomic_t stats_flush_threshold` | updaters (`atomic_add`), flusher (`atomic_set`) | updaters (v6.0), readers |
//! | `stats_flush_lock` | `static DEFINE_SPINLOCK(stats_flush_lock)` | flushers | flushers |
//! | `flush_next_time` | `static u64 flush_next_time` | flusher, under `stats_flush_lock` | (refault path, not modelled) |
//! | `cgroup_rstat_lock` | `static DEFINE_SPINLOCK(cgroup_rstat_lock)` (rstat.c) | flushers | flushers |
//! | `jiffies_64` | `jiffies_64` | the clock (with `--ticks`) | flushers, the worker, the clock |
//! | `stats_flush_dwork` | the delayed work's timer | the worker | the worker, the clock |

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::config::Config;
use crate::ghost::{Coverage, Event, Ghost};
use crate::kernel::{
    atomic_add, atomic_read, atomic_set, read_once, spin_is_locked, spin_lock, spin_trylock,
    spin_unlock, this_cpu_add, this_cpu_add_return, this_cpu_write, write_once, Atomic, CpuLocal,
    Locked, SpinLock,
};
use crate::platform::Platform;
use crate::property::{self, Property};
use crate::trace::{Actor, Tracer};
use crate::variant::{BumpPolicy, RstatLockPolicy, SkipPolicy, Variant};

/// Statistic items per memcg.
///
/// NOTE(kernel): the kernel has `MEMCG_NR_STAT` items plus events and
/// per-node lruvec items, all flushed by the same loop; one item exercises
/// every step of that loop.
pub const MEMCG_NR_STAT: usize = 1;

/// `FLUSH_TIME` in model ticks.
///
/// NOTE(kernel): `2UL*HZ` in the kernel. Time is abstracted: `jiffies_64`
/// stays 0, so `flush_next_time` is always written with `2 * FLUSH_TIME`.
pub const FLUSH_TIME: i64 = 2;

/// The index of `root_mem_cgroup` in [`MemcgSystem::memcgs`].
pub const ROOT_MEM_CGROUP: usize = 0;

/// `struct memcg_vmstats_percpu`: one CPU's counters for one memcg.
pub struct MemcgVmstatsPercpu<P: Platform> {
    /// `state[]`: written by the owner CPU, read remotely by the flusher.
    pub state: Vec<Atomic<P>>,
    /// `state_prev[]`: the value the last flush saw; flusher-only.
    pub state_prev: Vec<Locked<P>>,
}

/// `struct memcg_vmstats`: the flushed, hierarchical aggregate of one memcg.
pub struct MemcgVmstats<P: Platform> {
    /// `state[]`: written by the flusher, read locklessly by readers.
    pub state: Vec<Atomic<P>>,
    /// `state_pending[]`: deltas pushed up by children; flusher-only.
    pub state_pending: Vec<Locked<P>>,
}

/// `struct mem_cgroup`, reduced to what flushing touches.
pub struct MemCgroup<P: Platform> {
    /// `parent_mem_cgroup(memcg)` as an index; `None` for the root.
    pub parent: Option<usize>,
    /// `memcg->vmstats_percpu`, one entry per CPU, each on its own cache
    /// line as the kernel's per-CPU areas are.
    pub vmstats_percpu: Vec<CachePadded<MemcgVmstatsPercpu<P>>>,
    /// `memcg->vmstats`.
    pub vmstats: MemcgVmstats<P>,
}

impl<P: Platform> MemCgroup<P> {
    fn new(parent: Option<usize>, cpus: usize) -> Self {
        let items = |f: fn() -> Atomic<P>| (0..MEMCG_NR_STAT).map(|_| f()).collect::<Vec<_>>();
        MemCgroup {
            parent,
            vmstats_percpu: (0..cpus)
                .map(|_| {
                    CachePadded::new(MemcgVmstatsPercpu {
                        state: items(|| Atomic::new(0)),
                        state_prev: (0..MEMCG_NR_STAT).map(|_| Locked::new(0)).collect(),
                    })
                })
                .collect(),
            vmstats: MemcgVmstats {
                state: items(|| Atomic::new(0)),
                state_pending: (0..MEMCG_NR_STAT).map(|_| Locked::new(0)).collect(),
            },
        }
    }
}

/// All kernel globals of the protocol, built fresh for each execution.
pub struct MemcgSystem<P: Platform> {
    /// The scenario's configuration.
    pub cfg: Config,
    /// Which kernel version or mutant runs.
    pub variant: Variant,
    /// The memcg tree; index 0 is `root_mem_cgroup`, children follow
    /// their parents, so reverse index order is a post-order.
    pub memcgs: Vec<MemCgroup<P>>,
    /// `stats_updates`, per CPU (cache-line padded).
    pub stats_updates: Vec<CachePadded<CpuLocal<P>>>,
    /// `stats_flush_threshold`, in units of `MEMCG_CHARGE_BATCH` updates,
    /// alone on its cache line.
    pub stats_flush_threshold: CachePadded<Atomic<P>>,
    /// `stats_flush_lock`.
    pub stats_flush_lock: SpinLock<P>,
    /// `flush_next_time`: a plain `u64` written by flushers under
    /// `stats_flush_lock`.
    ///
    /// NOTE(kernel): its lockless reader, `mem_cgroup_flush_stats_delayed()`
    /// on the refault path, is not modelled, so the field is only written.
    /// It is kept because it is the one piece of plain data that only
    /// `stats_flush_lock` orders: two flushers not ordered by that lock are
    /// a write-write race on it, which loom reports.
    pub flush_next_time: Locked<P>,
    /// `cgroup_rstat_lock` (kernel/cgroup/rstat.c).
    pub cgroup_rstat_lock: SpinLock<P>,
    /// `jiffies_64`: 0 unless time is modelled (`cfg.ticks > 0`), then
    /// advanced by [`MemcgSystem::jiffies_clock`].
    pub jiffies_64: Atomic<P>,
    /// When the queued `stats_flush_dwork` is due, in jiffies, or
    /// `i64::MAX` while its work function runs.
    ///
    /// NOTE(kernel): stands for the delayed work's timer and work-pending
    /// bit; `mem_cgroup_init()` queues the work `FLUSH_TIME` after boot.
    pub stats_flush_dwork: Atomic<P>,
    /// Ghost state of this execution; `None` when benchmarking.
    pub ghost: Option<Ghost>,
    /// RMWs each CPU issued on `stats_flush_threshold` (owner-written,
    /// padded, so counting adds no sharing).
    pub threshold_rmws: Vec<CachePadded<crate::platform::ghost::AtomicU64>>,
    /// Coverage counters shared by all executions of the exploration.
    pub coverage: Arc<Coverage>,
    /// The property whose check is armed, if any.
    pub armed: Option<Property>,
    /// The step log (recording only when explaining a violation).
    pub tracer: Arc<Tracer>,
    /// v5.19's derived worst residue + counted at a no-flush decision on
    /// this configuration (`no_worse_than_baseline`); `None` if underived.
    pub baseline_since_reset: Option<i64>,
}

impl<P: Platform> MemcgSystem<P> {
    /// A system with only `root_mem_cgroup`, everything zero.
    pub fn new(
        cfg: Config,
        variant: Variant,
        armed: Option<Property>,
        coverage: Arc<Coverage>,
        tracer: Arc<Tracer>,
    ) -> Self {
        let cpus = cfg.cpus;
        MemcgSystem {
            memcgs: vec![MemCgroup::new(None, cpus)],
            stats_updates: (0..cpus)
                .map(|_| CachePadded::new(CpuLocal::new(0)))
                .collect(),
            stats_flush_threshold: CachePadded::new(Atomic::new(0)),
            threshold_rmws: (0..cpus).map(|_| CachePadded::default()).collect(),
            stats_flush_lock: SpinLock::new(),
            flush_next_time: Locked::new(0),
            cgroup_rstat_lock: SpinLock::new(),
            jiffies_64: Atomic::new(0),
            stats_flush_dwork: Atomic::new(FLUSH_TIME),
            ghost: Some(Ghost::new::<P>(cpus)),
            coverage,
            armed,
            tracer,
            baseline_since_reset: None,
            cfg,
            variant,
        }
    }

    /// `num_online_cpus()`.
    ///
    /// NOTE(kernel): CPU hotplug is not modelled; the value is constant.
    /// Reader and flusher threads run on CPUs that this count leaves out; in
    /// the kernel they would share CPUs with updaters but could not run
    /// inside an updater's interrupts-off `__mod_memcg_state()`. The model
    /// allows those extra interleavings (an over-approximation).
    pub fn num_online_cpus(&self) -> i64 {
        self.cfg.cpus as i64
    }

    /// Without ghost state (benchmarks): no ghost or coverage bookkeeping,
    /// no trace, no property armed.
    pub fn without_ghost(cfg: Config, variant: Variant) -> Self {
        let mut sys = Self::new(
            cfg,
            variant,
            None,
            Arc::new(Coverage::default()),
            Arc::new(Tracer::new(false)),
        );
        sys.ghost = None;
        sys
    }

    /// One model operation and its ghost update as one step (see
    /// [`Ghost::step`]).
    fn step<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.ghost {
            Some(g) => g.step(f),
            None => f(),
        }
    }

    /// Threshold RMWs issued so far, over all CPUs.
    pub fn threshold_rmw_count(&self) -> u64 {
        self.threshold_rmws
            .iter()
            .map(|c| c.load(crate::platform::ghost::Ordering::Relaxed))
            .sum()
    }

    fn armed(&self, p: Property) -> bool {
        self.armed == Some(p)
    }

    /// `__mod_memcg_state(memcg, idx, val)`, run by CPU `cpu` (the caller
    /// has interrupts off in the kernel).
    pub fn __mod_memcg_state(&self, cpu: usize, memcg: usize, idx: usize, val: i64) {
        this_cpu_add(&self.memcgs[memcg].vmstats_percpu[cpu].state[idx], val);
        self.tracer.record(Actor::Cpu(cpu), || {
            format!("__this_cpu_add(state[{idx}], {val})")
        });
        if let Some(g) = &self.ghost {
            let sum = g.written[cpu].fetch_add(val, SEQ) + val;
            if self.cfg.ticks > 0 {
                let mut s = g.stamps[cpu].lock().unwrap_or_else(|e| e.into_inner());
                s.push((sum, Ghost::get(&g.now)));
            }
        }
        self.memcg_rstat_updated(cpu, memcg, val);
    }

    /// `memcg_rstat_updated(memcg, val)` on CPU `cpu`.
    ///
    /// NOTE(kernel): the call to `cgroup_rstat_updated()` is not modelled:
    /// the flush visits every (CPU, memcg) pair instead of the updated tree,
    /// which abstracts away the tree's own store-buffering race (C4/C13 in
    /// the reference notes).
    pub fn memcg_rstat_updated(&self, cpu: usize, _memcg: usize, val: i64) {
        let batch = self.cfg.batch;
        let x = this_cpu_add_return(&self.stats_updates[cpu], val.abs());
        if let Some(g) = &self.ghost {
            g.residue[cpu].store(x, SEQ);
        }
        self.tracer.record(Actor::Cpu(cpu), || {
            format!(
                "x = __this_cpu_add_return(stats_updates, {}) = {x}",
                val.abs()
            )
        });
        if x > batch {
            let units = x / batch;
            let skipped = match self.variant.skip {
                SkipPolicy::Never => false,
                SkipPolicy::Always => true,
                _ => self.skip_add(cpu, x, units),
            };
            if !skipped {
                self.bump_threshold(cpu, x, units);
            }
            this_cpu_write(&self.stats_updates[cpu], 0);
            if let Some(g) = &self.ghost {
                g.residue[cpu].store(0, SEQ);
            }
            self.tracer.record(Actor::Cpu(cpu), || {
                "__this_cpu_write(stats_updates, 0)".into()
            });
        }
    }

    /// v6.0's test `atomic_read(&stats_flush_threshold) <= num_online_cpus()`
    /// (inverted); the ghost baseline takes the skipped add at this point.
    fn skip_add(&self, cpu: usize, x: i64, units: i64) -> bool {
        let n = self.num_online_cpus();
        self.step(|| {
            let threshold =
                crate::platform::ghost_step(true, || atomic_read(&self.stats_flush_threshold));
            let skip = self.variant.skip.skips(threshold, n);
            self.tracer.record(Actor::Cpu(cpu), || {
                let verdict = if skip { "skip the add" } else { "add" };
                format!("atomic_read(&stats_flush_threshold) = {threshold}: {verdict}")
            });
            if let (true, Some(g)) = (skip, &self.ghost) {
                g.baseline_threshold.fetch_add(units, SEQ);
                self.coverage.hit(Event::Skip);
                g.skipped_at[cpu].store(Ghost::get(&g.written[cpu]), SEQ);
                g.skipped.fetch_add(x, SEQ);
                let stale = threshold > Ghost::get(&g.threshold_mirror);
                if stale && Ghost::get(&g.seen_by_flush[cpu]) < Ghost::get(&g.written[cpu]) {
                    self.coverage.hit(Event::SkipRacedReset);
                }
            }
            skip
        })
    }

    /// `atomic_add(x / MEMCG_CHARGE_BATCH, &stats_flush_threshold)`.
    fn bump_threshold(&self, cpu: usize, x: i64, units: i64) {
        let ghost = |g: &Option<Ghost>| {
            if let Some(g) = g {
                g.baseline_threshold.fetch_add(units, SEQ);
                g.threshold_mirror.fetch_add(units, SEQ);
                g.counted.fetch_add(x, SEQ);
                let m = &self.coverage.measures;
                m.max_threshold
                    .offer(Ghost::get(&g.threshold_mirror), || self.tracer.steps());
                if g.flushers_inside.load(SEQ) > 0 {
                    g.added_during_flush.fetch_add(units, SEQ);
                }
            }
        };
        self.threshold_rmws[cpu].fetch_add(1, crate::platform::ghost::Ordering::Relaxed);
        match self.variant.bump {
            BumpPolicy::AtomicAdd => self.step(|| {
                atomic_add(units, &self.stats_flush_threshold);
                ghost(&self.ghost);
                self.tracer.record(Actor::Cpu(cpu), || {
                    format!("atomic_add({units}, &stats_flush_threshold)")
                });
            }),
            BumpPolicy::LoadThenStore => {
                let old = self.step(|| atomic_read(&self.stats_flush_threshold));
                self.tracer.record(Actor::Cpu(cpu), || {
                    format!("atomic_read(&stats_flush_threshold) = {old}")
                });
                self.step(|| {
                    atomic_set(&self.stats_flush_threshold, old + units);
                    ghost(&self.ghost);
                    if let Some(g) = &self.ghost {
                        g.threshold_mirror.store(old + units, SEQ);
                    }
                    self.tracer.record(Actor::Cpu(cpu), || {
                        format!("atomic_set(&stats_flush_threshold, {})", old + units)
                    });
                });
            }
        }
    }

    /// `mem_cgroup_flush_stats()`: flush if the threshold is above
    /// `num_online_cpus()`. Returns the reader's decision.
    pub fn mem_cgroup_flush_stats(&self, who: Actor) -> bool {
        let n = self.num_online_cpus();
        let threshold = self.step(|| {
            // Staleness is measured in this step (see platform::observing).
            let t = crate::platform::observing(|| atomic_read(&self.stats_flush_threshold));
            self.tracer.record(who, || {
                let verdict = if t > n { "flush" } else { "no flush" };
                format!("atomic_read(&stats_flush_threshold) = {t}: {verdict}")
            });
            if let Some(g) = &self.ghost {
                let baseline = Ghost::get(&g.baseline_threshold);
                if baseline != t {
                    self.coverage.hit(Event::ReaderSawSkippedUnits);
                }
                if self.armed(Property::NoLostFlush)
                    && P::BACKEND_KIND != crate::platform::BackendKind::Loom
                {
                    property::no_lost_flush(t, baseline, n);
                }
            }
            t
        });
        if let (Some(g), false) = (&self.ghost, threshold > n) {
            let m = &self.coverage.measures;
            let (stale, split) = (g.staleness(), g.split());
            if stale > 0 {
                self.coverage.hit(Event::StaleNoFlush);
            }
            if self.armed(Property::DocumentedErrorBound) {
                property::documented_error_bound(stale, split, self.cfg.batch * n);
            }
            if let (true, Some(baseline)) = (
                self.armed(Property::NoWorseThanBaseline),
                self.baseline_since_reset,
            ) {
                property::no_worse_than_baseline(split, baseline);
            }
            m.stale_at_no_flush
                .offer_split(stale, split, || self.tracer.steps());
            m.stale_since_reset
                .offer_split(split[0] + split[1] + split[2], split, || {
                    self.tracer.steps()
                });
        }
        if threshold > n {
            self.__mem_cgroup_flush_stats(who);
            true
        } else {
            false
        }
    }

    /// `__mem_cgroup_flush_stats()`: take the trylock (losers return at
    /// once), note the next flush time, flush everything, reset the
    /// threshold. Returns whether this call flushed.
    pub fn __mem_cgroup_flush_stats(&self, who: Actor) -> bool {
        let locked = match self.variant.flush_lock.acquire() {
            Some(order) => {
                let won = spin_trylock(&self.stats_flush_lock, order);
                self.tracer.record(who, || {
                    format!("spin_trylock(&stats_flush_lock) = {}", u8::from(won))
                });
                if !won {
                    self.coverage.hit(Event::TrylockContended);
                    return false;
                }
                true
            }
            None => false,
        };
        if let Some(g) = &self.ghost {
            let inside = g.flushers_inside.fetch_add(1, SEQ) + 1;
            if inside == 1 {
                g.added_during_flush.store(0, SEQ);
            }
            if self.armed(Property::FlushExclusion) {
                property::flush_exclusion(inside);
            }
        }
        let next = 2 * FLUSH_TIME
            + if self.cfg.ticks > 0 {
                read_once(&self.jiffies_64)
            } else {
                0
            };
        // Recorded first: under loom a racing store panics inside set().
        self.tracer
            .record(who, || format!("flush_next_time = {next}"));
        self.flush_next_time.set(next);
        self.cgroup_rstat_flush_irqsafe(who, ROOT_MEM_CGROUP);
        self.step(|| {
            atomic_set(&self.stats_flush_threshold, 0);
            self.tracer
                .record(who, || "atomic_set(&stats_flush_threshold, 0)".into());
            if let Some(g) = &self.ghost {
                if g.added_during_flush.swap(0, SEQ) > 0 {
                    self.coverage.hit(Event::AddErasedByReset);
                }
                g.baseline_threshold.store(0, SEQ);
                g.threshold_mirror.store(0, SEQ);
                g.counted.store(0, SEQ);
                g.skipped.store(0, SEQ);
                // What this flush left behind, judged by the values it read.
                let missed = |c: usize| Ghost::get(&g.seen_by_flush[c]);
                if (0..self.cfg.cpus).any(|c| missed(c) < Ghost::get(&g.written[c])) {
                    self.coverage.hit(Event::UpdateBehindFlusher);
                }
                if (0..self.cfg.cpus).any(|c| missed(c) < Ghost::get(&g.skipped_at[c])) {
                    self.coverage.hit(Event::SkipRacedReset);
                }
                for c in &g.skipped_at {
                    c.store(i64::MIN, SEQ);
                }
                g.flushers_inside.fetch_sub(1, SEQ);
            }
        });
        if locked {
            spin_unlock(&self.stats_flush_lock);
            self.tracer
                .record(who, || "spin_unlock(&stats_flush_lock)".into());
        }
        true
    }

    /// `cgroup_rstat_flush_irqsafe(root)`: under `cgroup_rstat_lock`, for
    /// each CPU, flush every memcg below `root`, children before parents.
    ///
    /// `cgroup_rstat_lock`, not `stats_flush_lock`, is what protects the
    /// flusher's plain fields in the kernel: other rstat flushers (a
    /// `cpu.stat` read, `cgroup_rstat_exit()`) run the memcg callback holding
    /// only it.
    ///
    /// NOTE(kernel): the per-CPU `cgroup_rstat_cpu_lock` only guards the
    /// updated tree, which is not modelled. Flushers outside memcg are not
    /// modelled either.
    pub fn cgroup_rstat_flush_irqsafe(&self, who: Actor, root: usize) {
        let locked = self.variant.rstat_lock == RstatLockPolicy::Taken;
        if locked {
            spin_lock(&self.cgroup_rstat_lock);
            self.tracer
                .record(who, || "spin_lock(&cgroup_rstat_lock)".into());
        }
        for cpu in 0..self.cfg.cpus {
            for memcg in (root..self.memcgs.len()).rev() {
                self.mem_cgroup_css_rstat_flush(who, memcg, cpu);
            }
            // The ghost cursor moves once this CPU's counters have been read.
        }
        if locked {
            spin_unlock(&self.cgroup_rstat_lock);
            self.tracer
                .record(who, || "spin_unlock(&cgroup_rstat_lock)".into());
        }
    }

    /// `mem_cgroup_css_rstat_flush(css, cpu)`: fold one CPU's counters of
    /// one memcg into its aggregate and push the delta to the parent.
    pub fn mem_cgroup_css_rstat_flush(&self, who: Actor, memcg: usize, cpu: usize) {
        let m = &self.memcgs[memcg];
        let statc = &m.vmstats_percpu[cpu];
        for i in 0..MEMCG_NR_STAT {
            let mut delta = m.vmstats.state_pending[i].get();
            if delta != 0 {
                m.vmstats.state_pending[i].set(0);
            }
            let v = read_once(&statc.state[i]);
            if let (Some(g), ROOT_MEM_CGROUP) = (&self.ghost, memcg) {
                g.seen_by_flush[cpu].store(v, SEQ);
                if v == statc.state_prev[i].get() {
                    g.folded[cpu].store(v, SEQ);
                }
            }
            self.tracer
                .record(who, || format!("READ_ONCE(CPU {cpu} state[{i}]) = {v}"));
            let prev = statc.state_prev[i].get();
            if v != prev {
                delta += v - prev;
                statc.state_prev[i].set(v);
            }
            if delta == 0 {
                continue;
            }
            // NOTE(kernel): a plain `+=` under the lock that lockless
            // readers load with READ_ONCE; modelled as a relaxed load and
            // store by the only writer.
            let total = read_once(&m.vmstats.state[i]) + delta;
            write_once(&m.vmstats.state[i], total);
            if let (Some(g), ROOT_MEM_CGROUP) = (&self.ghost, memcg) {
                g.agg_mirror.store(total, SEQ);
                g.folded[cpu].store(v, SEQ);
            }
            self.tracer
                .record(who, || format!("vmstats.state[{i}] = {total}"));
            if let Some(parent) = m.parent {
                let pending = &self.memcgs[parent].vmstats.state_pending[i];
                pending.set(pending.get() + delta);
            }
        }
    }

    /// `flush_memcg_stats_dwork()`: the periodic work flushes regardless of
    /// the threshold, then re-queues itself `FLUSH_TIME` later.
    ///
    /// NOTE(kernel): without abstract time (`cfg.ticks == 0`) the work runs
    /// once and is not re-queued.
    pub fn flush_memcg_stats_dwork(&self) {
        self.__mem_cgroup_flush_stats(Actor::Periodic);
        if self.cfg.ticks > 0 {
            let due = read_once(&self.jiffies_64) + FLUSH_TIME;
            atomic_set(&self.stats_flush_dwork, due);
            self.tracer.record(Actor::Periodic, || {
                format!("queue_delayed_work(&stats_flush_dwork, FLUSH_TIME): due at {due}")
            });
        }
    }

    /// The workqueue worker running `stats_flush_dwork` each time its timer
    /// expires, until the next expiry lies beyond `cfg.ticks`.
    pub fn stats_flush_dwork_worker(&self) {
        loop {
            let due = atomic_read(&self.stats_flush_dwork);
            if due > self.cfg.ticks as i64 {
                break;
            }
            while read_once(&self.jiffies_64) < due {
                P::yield_now();
            }
            atomic_set(&self.stats_flush_dwork, i64::MAX);
            self.flush_memcg_stats_dwork();
        }
    }

    /// The timer interrupt: `jiffies_64` from 1 to `cfg.ticks`.
    ///
    /// NOTE(kernel): time may not pass `due + cfg.late` before the periodic
    /// work has started (the deferrable timer fires at most `late` ticks
    /// late), nor while a flush runs (a flush takes milliseconds, a tick
    /// here stands for a second).
    pub fn jiffies_clock(&self) {
        for t in 1..=self.cfg.ticks as i64 {
            loop {
                let due = atomic_read(&self.stats_flush_dwork);
                let waiting = due == i64::MAX || t > due.saturating_add(self.cfg.late as i64);
                if !waiting && !spin_is_locked(&self.stats_flush_lock) {
                    break;
                }
                P::yield_now();
            }
            write_once(&self.jiffies_64, t);
            if let Some(g) = &self.ghost {
                g.now.store(t, SEQ);
            }
            self.tracer
                .record(Actor::Clock, || format!("jiffies_64 = {t}"));
        }
    }

    /// `memcg_page_state(memcg, idx)`: a lockless `READ_ONCE` of the
    /// aggregate.
    ///
    /// NOTE(kernel): v5.19 returns the raw value (96e51ccf1af3 removed the
    /// clamp in v5.15); later kernels clamp negative values to 0 under
    /// CONFIG_SMP. The model returns the raw value for both versions.
    pub fn memcg_page_state(&self, who: Actor, memcg: usize, idx: usize) -> i64 {
        let v = crate::platform::observing(|| read_once(&self.memcgs[memcg].vmstats.state[idx]));
        self.tracer
            .record(who, || format!("READ_ONCE(vmstats.state[{idx}]) = {v}"));
        if let Some(g) = &self.ghost {
            if Ghost::get(&g.flushers_inside) > 0 {
                self.coverage.hit(Event::ReadDuringFlush);
            }
            if self.cfg.ticks > 0 {
                let age = g.stale_ticks();
                if self.armed(Property::FlushTimeBound) {
                    property::flush_time_bound(age, FLUSH_TIME);
                }
                let m = &self.coverage.measures;
                m.stale_ticks.offer(age, || self.tracer.steps());
            }
        }
        v
    }

    /// A memory.stat-style reader (`memory_stat_format()`): flush if
    /// needed, then read. Returns the flush decision and the value read.
    pub fn memory_stat_read(&self, who: Actor, memcg: usize, idx: usize) -> (bool, i64) {
        let flushed = self.mem_cgroup_flush_stats(who);
        let v = self.memcg_page_state(who, memcg, idx);
        if let (Some(g), true) = (&self.ghost, flushed) {
            let written: i64 = g.written.iter().map(Ghost::get).sum();
            let m = &self.coverage.measures;
            m.stale_after_flush_call
                .offer(written - v, || self.tracer.steps());
        }
        (flushed, v)
    }

    /// One updater CPU: `cfg.updates` calls of `__mod_memcg_state()`.
    pub fn updater(&self, cpu: usize) {
        for k in 0..self.cfg.updates {
            self.__mod_memcg_state(cpu, ROOT_MEM_CGROUP, 0, self.cfg.val(cpu, k));
        }
        if self.ghost.is_some() {
            let m = &self.coverage.measures;
            m.updates.fetch_add(self.cfg.updates as u64, SEQ);
            m.rmws.fetch_add(self.threshold_rmws[cpu].load(SEQ), SEQ);
        }
    }

    /// One reader thread: `cfg.reads` memory.stat reads, checking
    /// `monotonic_reads` between successive ones.
    pub fn reader(&self, reader: usize) -> Vec<(bool, i64)> {
        let mut seen: Vec<(bool, i64)> = Vec::with_capacity(self.cfg.reads);
        for _ in 0..self.cfg.reads {
            let (flushed, v) = self.memory_stat_read(Actor::Reader(reader), ROOT_MEM_CGROUP, 0);
            if let Some(&(_, previous)) = seen.last() {
                if self.armed(Property::MonotonicReads) && self.cfg.non_negative() {
                    property::monotonic_reads(reader, previous, v);
                }
            }
            seen.push((flushed, v));
        }
        seen
    }
}

const SEQ: crate::platform::ghost::Ordering = crate::platform::ghost::Ordering::SeqCst;
