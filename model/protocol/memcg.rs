//! `struct mem_cgroup` as flushing sees it, and the memcg rstat callback
//! shared by v5.13-v6.7: `mem_cgroup_css_rstat_flush()`.
//!
//! NOTE(kernel): the kernel has `MEMCG_NR_STAT` items plus events and
//! per-node lruvec items, all flushed by the same loop; the model has one
//! item, `state[0]`, which exercises every step of that loop.

use crate::config::Config;
use crate::kernel::{read_once, write_once, Atomic, Css, Locked, PerCpu, Var};
use crate::vocab::Platform;

/// The index of `root_mem_cgroup` in the model's memcg tree.
pub const ROOT_MEM_CGROUP: u8 = 0;

/// `struct memcg_vmstats_percpu`: one CPU's counters for one memcg.
pub struct MemcgVmstatsPercpu<P: Platform> {
    /// `state[0]`: written by the owner CPU, read remotely by the flusher.
    pub state: Atomic<P>,
    /// `state_prev[0]`: the value the last flush saw; flusher-only, under
    /// `cgroup_rstat_lock`.
    pub state_prev: Locked<P>,
    /// `stats_updates` (v6.8 on): pages updated on this CPU since the last
    /// fold, written by the owner and zeroed remotely by the flusher.
    /// Unused before v6.8, where the counter is global.
    pub stats_updates: Atomic<P>,
}

/// `struct memcg_vmstats`: the flushed, hierarchical aggregate of one memcg.
pub struct MemcgVmstats<P: Platform> {
    /// `state[0]`: written by the flusher under `cgroup_rstat_lock`, read
    /// locklessly by readers.
    pub state: Atomic<P>,
    /// `state_pending[0]`: deltas pushed up by children; flusher-only.
    pub state_pending: Locked<P>,
    /// `stats_updates` (v6.8 on): pages folded in by updaters since the
    /// last flush of this memcg, the reader's gate (`atomic64_t` in
    /// v6.8-v6.14, `atomic_t` in v6.17-v7.0, `atomic_long_t` in v7.1).
    /// Unused before v6.8.
    pub stats_updates: Atomic<P>,
}

/// `struct mem_cgroup`, reduced to what flushing touches.
pub struct MemCgroup<P: Platform> {
    /// The memcg's number in the model (0 is `root_mem_cgroup`).
    pub id: u8,
    /// `parent_mem_cgroup(memcg)`, by number; `None` for the root.
    pub parent: Option<u8>,
    /// `memcg->vmstats_percpu`.
    pub vmstats_percpu: PerCpu<MemcgVmstatsPercpu<P>>,
    /// `memcg->vmstats`.
    pub vmstats: MemcgVmstats<P>,
}

impl<P: Platform> Css<P> for MemCgroup<P> {
    fn css_id(&self) -> u8 {
        self.id
    }
}

impl<P: Platform> MemCgroup<P> {
    /// `mem_cgroup_alloc()`: a memcg with every counter zero.
    pub fn new(id: u8, parent: Option<u8>, cpus: usize) -> Self {
        MemCgroup {
            id,
            parent,
            vmstats_percpu: PerCpu::new(cpus, |cpu| MemcgVmstatsPercpu {
                state: Atomic::new(
                    Var::State {
                        memcg: id,
                        cpu: cpu as u8,
                    },
                    0,
                ),
                state_prev: Locked::new(
                    Var::StatePrev {
                        memcg: id,
                        cpu: cpu as u8,
                    },
                    0,
                ),
                stats_updates: Atomic::new(
                    Var::StatsUpdates {
                        memcg: Some(id),
                        cpu: cpu as u8,
                    },
                    0,
                ),
            }),
            vmstats: MemcgVmstats {
                state: Atomic::new(Var::Aggregate { memcg: id }, 0),
                state_pending: Locked::new(Var::Pending { memcg: id }, 0),
                stats_updates: Atomic::new(Var::Threshold { memcg: Some(id) }, 0),
            },
        }
    }
}

/// The memcg tree of one execution, as the configuration gives it
/// (`root_mem_cgroup` alone by default).
///
/// NOTE(kernel): v5.19 and v6.0 flush the whole tree from the root with one
/// global threshold, so the root alone exercises their protocol; children
/// matter from v6.8 on, where each memcg has its own threshold.
pub fn memcg_tree<P: Platform>(cfg: &Config) -> Vec<MemCgroup<P>> {
    (0..cfg.memcgs() as u8)
        .map(|m| MemCgroup::new(m, cfg.parent(m), cfg.cpus))
        .collect()
}

/// `mem_cgroup_css_rstat_flush(css, cpu)` (v5.13-v6.7): fold CPU `cpu`'s
/// counter of `memcg` into its aggregate and push the delta to the parent's
/// pending. Runs under `cgroup_rstat_lock`.
pub fn mem_cgroup_css_rstat_flush<P: Platform>(memcgs: &[MemCgroup<P>], memcg: u8, cpu: usize) {
    let m = &memcgs[memcg as usize];
    let statc = m.vmstats_percpu.per_cpu(cpu);
    // "Collect the aggregated propagation counts of groups below us."
    let mut delta = m.vmstats.state_pending.get();
    if delta != 0 {
        m.vmstats.state_pending.set(0);
    }
    let v = read_once(&statc.state);
    let prev = statc.state_prev.get();
    if v != prev {
        delta += v - prev;
        statc.state_prev.set(v);
    }
    if delta == 0 {
        return;
    }
    // NOTE(kernel): a plain `+=` under the lock that lockless readers load
    // with READ_ONCE; modelled as a relaxed load and store by the only
    // writer.
    write_once(&m.vmstats.state, read_once(&m.vmstats.state) + delta);
    if let Some(parent) = m.parent {
        let pending = &memcgs[parent as usize].vmstats.state_pending;
        pending.set(pending.get() + delta);
    }
}

/// `memcg_page_state(memcg, idx)`: a lockless `READ_ONCE` of the aggregate.
///
/// NOTE(kernel): v5.19 returns the raw value (96e51ccf1af3 removed the
/// clamp in v5.15); later kernels clamp negative values to 0 under
/// CONFIG_SMP. The model returns the raw value.
pub fn memcg_page_state<P: Platform>(memcg: &MemCgroup<P>) -> i64 {
    read_once(&memcg.vmstats.state)
}
