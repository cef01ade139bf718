//! The model's protocol driven through a scenario: every
//! `memcg_rstat_updated()` call that [`super::charge`] derives, every read
//! as `mem_cgroup_flush_stats()` then the value, the periodic work where
//! the kernel ran it, all on one model CPU (the task is pinned), with the
//! protocol of the kernel's lineage built on [`Bare`].
//!
//! What a read shows follows from the flushes the protocol decides: a
//! flush of a subtree (6.12's reader, the periodic work) or of everything
//! (6.1) makes each flushed memcg's `anon` its subtree's charges.

use std::sync::Arc;

use super::charge::{Cpu, Kernel, Update, PAGE_SIZE};
use super::spec::{Op, Scenario, Unit};
use crate::config::Config;
use crate::explore::{Bare, Platform, ThreadCtx};
use crate::protocol::{Env, Protocol, Variant};
use crate::vocab::Actor;

/// `MEMCG_CHARGE_BATCH` in 6.1 and 6.12 (include/linux/memcontrol.h).
pub const MEMCG_CHARGE_BATCH: i64 = 64;

/// What the kernel's state held when the scenario's charges began, which
/// the probe cannot see: the model predicts one outcome per setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Setup {
    /// Folios of other memcgs in CPU 0's LRU add batch.
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
    /// kprobes see three slab charges (`obj_cgroup_charge()`) and kernel
    /// pages there on every boot, which the model does not derive
    /// (docs/real-kernels.md, section 4). Each pair is a `MEMCG_KMEM` and
    /// an `NR_PAGETABLE`-like update of 1.
    pub own_tables: i64,
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

    fn in_subtree(&self, d: u8, m: u8) -> bool {
        self.cfg.in_subtree(d, m)
    }
}

/// Drive `kernel`'s protocol through scenario `s` at `cpus` online CPUs,
/// from `setup`, with the reads at `reads` (the probe's, in order; a read
/// the scenario does not make is an error). `slots` are the slot sizes of
/// `struct file` and `struct dentry` as the guest reported them (0: the
/// default).
pub fn predict(
    s: &Scenario,
    kernel: Kernel,
    cpus: usize,
    setup: Setup,
    reads: &[ReadAt],
    slots: (i64, i64),
) -> Result<Vec<Predicted>, String> {
    predict_with(&kernel.variant()?, s, kernel, cpus, setup, reads, slots)
}

/// [`predict`] with the kernel's variant looked up once by the caller.
pub fn predict_with(
    variant: &Variant,
    s: &Scenario,
    kernel: Kernel,
    cpus: usize,
    setup: Setup,
    reads: &[ReadAt],
    slots: (i64, i64),
) -> Result<Vec<Predicted>, String> {
    let tree = Tree::of(s);
    let cfg = Config {
        cpus,
        batch: MEMCG_CHARGE_BATCH,
        updates: 0,
        vals: vec![1],
        readers: 0,
        periodic: false,
        tree: tree.parents.clone(),
        ..Config::default()
    };
    let proto: Arc<dyn Protocol<Bare>> = variant.flush_model().build::<Bare>(Env::new(&cfg));
    // NOTE(kernel): the probe pins itself to CPU 0; the model's CPU 0 is
    // the only one that updates (other CPUs' activity is not modelled).
    Bare::install(ThreadCtx::new(Actor::Cpu(0), None));
    let mut run = Run {
        proto,
        tree: &tree,
        kernel,
        cpu: Cpu::new(kernel, setup.lru_fill, tree.other(), setup.old_slab, slots),
        charged: vec![0; tree.parents.len() + 1],
        shown: vec![0; tree.parents.len() + 1],
        out: Vec::new(),
        calls: 0,
    };
    if setup.residual > 0 {
        // Not a call of the scenario's: the counter's value at the start.
        run.proto.mod_memcg_state(tree.other(), setup.residual);
    }
    let mut next = reads.iter().peekable();
    let mut current = 1u8;
    let mut tables = setup.own_tables;
    let mut preds = Vec::new();
    for (i, op) in s.ops.iter().enumerate() {
        match op {
            Op::Pin { .. } | Op::WaitPeriodic { .. } => {}
            Op::Enter { cg } => current = tree.id(cg),
            Op::Charge {
                kind,
                n,
                n_by_cpus,
                read,
                every,
                reopen,
                ..
            } => {
                for k in 1..=super::spec::units_at(*n, n_by_cpus, cpus) {
                    let mut ups = Vec::new();
                    for _ in 0..std::mem::take(&mut tables) {
                        for item in [super::charge::Item::Kmem, super::charge::Item::PageTable] {
                            ups.push(Update {
                                memcg: current,
                                item,
                                val: 1,
                                anon: 0,
                            });
                        }
                    }
                    run.cpu.unit(*kind, current, &mut ups);
                    run.feed(&ups);
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            let at = expect(&mut next, i, k, s)?;
                            preds.push(run.read(tree.id(cg), current, *reopen, at.periodic_before));
                        }
                    }
                }
            }
            Op::Read { cg, reopen } => {
                let at = expect(&mut next, i, 0, s)?;
                preds.push(run.read(tree.id(cg), current, *reopen, at.periodic_before));
            }
            Op::Poll { cg, .. } => {
                while let Some(at) = next.next_if(|r| r.op == i) {
                    preds.push(run.read(tree.id(cg), current, false, at.periodic_before));
                }
            }
            Op::Free { .. } => {
                return Err(format!(
                    "scenario {}: TODO(derivation of free) not derived yet",
                    s.name
                ))
            }
        }
    }
    if let Some(r) = next.next() {
        return Err(format!(
            "scenario {}: the probe read at op {} unit {}, which the scenario does not",
            s.name, r.op, r.n
        ));
    }
    Ok(preds)
}

fn expect<'a>(
    next: &mut std::iter::Peekable<std::slice::Iter<'a, ReadAt>>,
    op: usize,
    n: usize,
    s: &Scenario,
) -> Result<&'a ReadAt, String> {
    match next.next() {
        Some(r) if r.op == op && r.n == n => Ok(r),
        Some(r) => Err(format!(
            "scenario {}: expected the read at op {op} unit {n}, the probe's was at op {} unit {}",
            s.name, r.op, r.n
        )),
        None => Err(format!(
            "scenario {}: the probe stopped before the read at op {op} unit {n}",
            s.name
        )),
    }
}

struct Run<'a> {
    proto: Arc<dyn Protocol<Bare>>,
    tree: &'a Tree,
    kernel: Kernel,
    cpu: Cpu,
    /// Pages of `anon` charged to each memcg itself.
    charged: Vec<i64>,
    /// What each memcg's memory.stat shows.
    shown: Vec<i64>,
    out: Vec<Update>,
    calls: u64,
}

impl Run<'_> {
    fn feed(&mut self, ups: &[Update]) {
        for u in ups {
            self.calls += 1;
            self.charged[u.memcg as usize] += u.anon;
            // The model's one statistic carries the rstat count; `anon` is
            // kept beside it (docs/model.md, section 5.7).
            self.proto.mod_memcg_state(u.memcg, u.val);
        }
    }

    /// A flush of `root`'s subtree: every flushed memcg shows its
    /// subtree's charges.
    fn flushed(&mut self, root: u8) {
        let n = self.charged.len() as u8;
        for m in 0..n {
            if self.tree_in(m, root) {
                self.shown[m as usize] = (0..n)
                    .filter(|d| self.tree_in(*d, m))
                    .map(|d| self.charged[d as usize])
                    .sum();
            }
        }
    }

    fn tree_in(&self, d: u8, m: u8) -> bool {
        if d as usize > self.tree.parents.len() {
            return false;
        }
        self.tree.in_subtree(d, m)
    }

    fn read(&mut self, memcg: u8, current: u8, reopen: bool, periodic_before: bool) -> Predicted {
        if periodic_before {
            self.proto.periodic();
            self.flushed(0);
        }
        let calls = self.calls;
        let objcg = self.cpu.objcg_charges;
        let mut after = Vec::new();
        if reopen {
            let mut before = std::mem::take(&mut self.out);
            before.clear();
            self.cpu.reopen_read(current, &mut before, &mut after);
            self.feed(&before);
            self.out = before;
        }
        let flushed = self.proto.mem_cgroup_flush_stats(memcg);
        if flushed {
            self.flushed(if self.kernel.global() { 0 } else { memcg });
        }
        let anon = self.shown[memcg as usize];
        self.feed(&after);
        Predicted {
            anon,
            flushed,
            calls,
            objcg,
        }
    }
}

/// Whether a scenario makes slab charges (its 6.1 setups then include the
/// old stock's bytes).
pub fn uses_slab(s: &Scenario) -> bool {
    s.ops.iter().any(|op| match op {
        Op::Charge { kind, reopen, .. } => {
            *reopen || matches!(kind, Unit::OpenKeep | Unit::OpenClose)
        }
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
                let units = super::spec::units_at(*n, n_by_cpus, cpus);
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
