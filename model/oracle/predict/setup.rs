//! What a prediction starts from and returns: the start state the probe
//! cannot see ([`Setup`]), where the reads are ([`ReadAt`]), one predicted
//! read, the scenario's memcgs ([`Tree`]).

use super::super::charge::{Kernel, PAGE_SIZE};
use super::super::spec::{Op, Scenario, Unit};
use crate::config::Config;

/// `MEMCG_CHARGE_BATCH` in 6.1 and 6.12 (include/linux/memcontrol.h).
pub const MEMCG_CHARGE_BATCH: i64 = 64;

/// What the kernel's state held when the scenario's charges began, which
/// the probe cannot see: the model predicts one outcome per setup. The
/// default is the traced probe's: nothing of another memcg waiting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Setup {
    /// Folios of other memcgs in CPU 0's LRU add batch when the charges
    /// begin (after the scenario's first `wait_periodic`, whose
    /// `lru_add_drain()` empties it: the traced probe finds it empty).
    pub lru_fill: usize,
    /// 6.1: CPU 0's `stats_updates` (the periodic flush resets only the
    /// global threshold). Always 0 for 6.12, whose fresh memcgs start at 0.
    pub residual: i64,
    /// 6.1: slab bytes another memcg's objcg left in CPU 0's stock, which
    /// the scenario's first slab charge flushes (to that memcg: 6.12's
    /// per-memcg counters never see them, so always 0 there).
    pub old_slab: i64,
    /// Pairs of one-page updates (0 to 5) that the task's own kernel
    /// objects make in its memcg as the scenario's charges begin: the
    /// kprobes of the old probe saw three slab charges
    /// (`obj_cgroup_charge()`) and kernel pages there on every boot
    /// (docs/real-kernels.md, section 4). Each pair is a `MEMCG_KMEM` and
    /// an `NR_PAGETABLE`-like update of 1.
    pub own_tables: i64,
    /// Pages already in the probe's memfd (made once per boot: earlier
    /// scenarios' `shmem4k` pages stay): where its xarray stands
    /// ([`shmem_before`](super::shmem_before)).
    pub shmem_pages: usize,
    /// Whether the probe's THP mapping has its `anon_vma` (an earlier
    /// scenario of the boot faulted a THP: the start record's `thp` is not
    /// 0). Its first THP fault otherwise allocates it, and wakes
    /// khugepaged, whose `lru_add_drain_all()` drains every CPU's batch.
    pub thp_anon_vma: bool,
}

impl Setup {
    /// Every setup the kernel may start a scenario in at `cpus` online
    /// CPUs, the simplest first. For 6.1 the old slab bytes are taken in
    /// steps of `MEMCG_CHARGE_BATCH` (what a flush adds to the threshold is
    /// the bytes divided by it) up to where the threshold is past the
    /// trigger whatever else happens (more bytes act alike).
    pub fn all(kernel: Kernel, slab: bool, cpus: usize) -> Vec<Setup> {
        let (residuals, olds): (Vec<i64>, Vec<i64>) = if kernel.global() {
            let olds = if slab {
                let most = (cpus as i64 + 2).min(PAGE_SIZE / MEMCG_CHARGE_BATCH);
                (0..=most).map(|j| j * MEMCG_CHARGE_BATCH).collect()
            } else {
                vec![0]
            };
            ((0..=MEMCG_CHARGE_BATCH).collect(), olds)
        } else {
            (vec![0], vec![0])
        };
        let mut out = Vec::new();
        for own_tables in 0..=5 {
            for &old_slab in &olds {
                for lru_fill in 0..kernel.lru_batch() {
                    for &residual in &residuals {
                        out.push(Setup {
                            lru_fill,
                            residual,
                            old_slab,
                            own_tables,
                            shmem_pages: 0,
                            thp_anon_vma: false,
                        });
                    }
                }
            }
        }
        out
    }
}

/// Where a read happens in a scenario: its op and unit, as the probe
/// numbers them (`ReadRecord::op`, `ReadRecord::n`), and whether the
/// periodic work ran since the previous read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadAt {
    /// Index of the op.
    pub op: usize,
    /// Units of the op done (a `Poll`'s sequence number).
    pub n: usize,
    /// Whether `flush_memcg_stats_dwork()` ran since the previous read.
    pub periodic_before: bool,
}

/// One predicted read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Predicted {
    /// The memcg's `anon` as the read shows it, in pages.
    pub anon: i64,
    /// Whether the read's `mem_cgroup_flush_stats()` flushed.
    pub flushed: bool,
    /// `__mod_memcg_state()`, `__mod_memcg_lruvec_state()` and
    /// `__count_memcg_events()` calls on the task's CPU since the charges
    /// began, up to the read (what the probe's kprobes count there).
    pub calls: u64,
    /// `obj_cgroup_charge()` calls up to the read.
    pub objcg: u64,
}

/// The model's memcg numbers for a scenario: 0 the root, 1 the scenario's
/// own directory, then its cgroups in order, then one more memcg outside
/// the scenario (other tasks' folios in the LRU batch).
pub struct Tree {
    /// Parent of memcg `i + 1`.
    pub parents: Vec<u8>,
    /// The scenario's cgroup paths, memcg `i + 2`.
    pub names: Vec<String>,
    /// A configuration of this tree, for its subtree test.
    cfg: Config,
}

impl Tree {
    /// The tree of `s`.
    pub fn of(s: &Scenario) -> Tree {
        let mut parents = vec![0u8];
        for cg in &s.cgroups {
            let parent = match cg.rfind('/') {
                Some(i) => s
                    .cgroups
                    .iter()
                    .position(|c| c == &cg[..i])
                    .map(|p| p as u8 + 2),
                None => Some(1),
            };
            parents.push(parent.unwrap_or(1));
        }
        parents.push(0);
        Tree {
            cfg: Config::default().tree(&parents),
            parents,
            names: s.cgroups.clone(),
        }
    }

    /// The memcg of a cgroup path.
    pub fn id(&self, cg: &str) -> u8 {
        self.names
            .iter()
            .position(|c| c == cg)
            .map(|i| i as u8 + 2)
            .unwrap_or(1)
    }

    /// The memcg outside the scenario.
    pub fn other(&self) -> u8 {
        self.parents.len() as u8
    }

    pub(super) fn in_subtree(&self, d: u8, m: u8) -> bool {
        self.cfg.in_subtree(d, m)
    }
}

/// Whether a scenario makes slab charges (its 6.1 setups then include the
/// old stock's bytes).
pub fn uses_slab(s: &Scenario) -> bool {
    s.ops.iter().any(|op| match op {
        Op::Charge { kind, reopen, .. } => {
            *reopen || matches!(kind, Unit::OpenKeep | Unit::OpenClose | Unit::Shmem4k)
        }
        Op::Free { kind, .. } => matches!(kind, Unit::OpenKeep),
        Op::Read { reopen, .. } => *reopen,
        _ => false,
    })
}

/// The units a scenario charges, for docs and reports.
pub fn units(s: &Scenario) -> Vec<(Unit, usize)> {
    s.ops
        .iter()
        .filter_map(|op| match op {
            Op::Charge { kind, n, .. } => Some((*kind, *n)),
            _ => None,
        })
        .collect()
}

/// The reads scenario `s` makes at `cpus` online CPUs, in order, with no
/// periodic work between them and `polls` reads for each `Poll` (for
/// predictions made without an observation).
pub fn reads_of(s: &Scenario, cpus: usize, polls: usize) -> Vec<ReadAt> {
    let mut out = Vec::new();
    let at = |op, n| ReadAt {
        op,
        n,
        periodic_before: false,
    };
    for (i, op) in s.ops.iter().enumerate() {
        match op {
            Op::Charge {
                n,
                n_by_cpus,
                read: Some(_),
                every,
                ..
            } if *every > 0 => {
                let units = super::super::spec::units_at(*n, n_by_cpus, cpus);
                out.extend((1..=units).filter(|k| k % every == 0).map(|k| at(i, k)));
            }
            Op::Read { .. } => out.push(at(i, 0)),
            Op::Free {
                n,
                read: Some(_),
                every,
                ..
            } if *every > 0 => out.extend((1..=*n).filter(|k| k % every == 0).map(|k| at(i, k))),
            Op::Poll { .. } => out.extend((0..polls).map(|k| at(i, k))),
            _ => {}
        }
    }
    out
}
