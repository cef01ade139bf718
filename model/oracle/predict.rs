//! The model's protocol driven through a scenario: every
//! `memcg_rstat_updated()` call that [`super::charge`] derives, every read
//! as `mem_cgroup_flush_stats()` then the value, the periodic work where
//! the kernel ran it, on the scenario's CPUs (`pin` moves the task; each
//! CPU has its LRU add batch and objcg stock, and its updates are the
//! model's `Actor::Cpu(c)`), with the protocol of the kernel's lineage
//! built on [`Bare`].
//!
//! [`derive`] is the derivation alone: the scenario's calls in order, with
//! its reads placed among them; [`check_trace`] compares it with the
//! kernel's own record of the calls (the memcg tracepoints, or the kprobes
//! on 6.1 and 6.12).
//!
//! What a read shows follows from the flushes the protocol decides: a
//! flush of a subtree (6.12's reader, the periodic work) or of everything
//! (6.1) makes each flushed memcg's `anon` its subtree's charges.

use std::sync::Arc;

use super::charge::{Item, Kernel, Machine, Update, PAGE_SIZE};
use super::spec::{Op, Scenario, Unit};
use super::trace::{Ev, UpdateFn};
use super::Observation;
use crate::config::Config;
use crate::explore::{Bare, Platform, ThreadCtx};
use crate::protocol::{Env, Protocol, Variant};
use crate::vocab::Actor;

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
    /// ([`shmem_before`]).
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

    fn in_subtree(&self, d: u8, m: u8) -> bool {
        self.cfg.in_subtree(d, m)
    }
}

/// One step of a scenario as the kernel makes it: a call, a read's start
/// and gate, a poll, or an object left to an RCU callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A `memcg_rstat_updated()` call.
    Update(Update),
    /// A read of `memcg` begins on `cpu` (op `op`, after unit `n`): the
    /// probe samples its counts here; a reopening read's own allocations
    /// follow, then its [`Step::Gate`].
    Read {
        /// Index of the op.
        op: usize,
        /// Units of the op done.
        n: usize,
        /// The memcg read.
        memcg: u8,
        /// The CPU the task reads on.
        cpu: usize,
        /// `obj_cgroup_charge()` calls so far.
        objcg: u64,
    },
    /// The read's `mem_cgroup_flush_stats()` and its value.
    Gate,
    /// A `poll` op: the probe's reads of `memcg` at op `op`, as many as it
    /// made; each allocates nothing.
    Poll {
        /// Index of the op.
        op: usize,
        /// The memcg read.
        memcg: u8,
        /// The CPU.
        cpu: usize,
        /// `obj_cgroup_charge()` calls so far.
        objcg: u64,
    },
    /// The task on `cpu` left an object to an RCU callback: its free
    /// reaches that CPU's objcg stock at a grace period's end, which no
    /// derivation knows, so the stock's calls on that CPU from here are
    /// uncertain ([`check_trace`] leaves them out).
    Rcu {
        /// The CPU.
        cpu: usize,
    },
}

/// The derivation of scenario `s` on `kernel` at `cpus` online CPUs from
/// `setup`: every call the kernel makes for it, in order, with its reads.
/// `slots` are the slot sizes of `struct file` and `struct dentry` as the
/// guest reported them (0: the default).
///
/// Moves (`enter`) cost nothing: the probe holds every ancestor's
/// `cgroup.procs` open ([`Machine::enter`] has the general rule).
pub fn derive(
    s: &Scenario,
    kernel: Kernel,
    cpus: usize,
    setup: Setup,
    slots: (i64, i64),
) -> Result<Vec<Step>, String> {
    let tree = Tree::of(s);
    let mut m = Machine::new(kernel, cpus, tree.other(), slots, setup.shmem_pages);
    m.set_thp_anon_vma(setup.thp_anon_vma);
    // The probe made the scenario's memcgs last, in order, on CPU 0: the
    // last one's parent charged it (mem_cgroup_css_alloc() under
    // set_active_memcg()), and CPU 0's stock caches the parent's objcg.
    if let Some(last) = s.cgroups.last() {
        let parent = tree.parents[tree.id(last) as usize - 1];
        m.set_stock(0, parent, kernel.mkdir_pending());
    }
    if setup.old_slab != 0 {
        m.set_stock(0, tree.other(), setup.old_slab);
    }
    let waits = s.ops.iter().any(|op| matches!(op, Op::WaitPeriodic { .. }));
    if !waits {
        m.set_lru(0, setup.lru_fill, tree.other());
    }
    let mut d = Derivation {
        m,
        steps: Vec::new(),
        cpu: 0,
        rcu: vec![0; cpus.max(1)],
    };
    let mut waited = false;
    // The task starts in the root (the probe moves back there after each
    // scenario).
    let mut current = 0u8;
    let mut tables = setup.own_tables;
    for (i, op) in s.ops.iter().enumerate() {
        match op {
            Op::Pin { cpu } => {
                if *cpu >= d.m.cpus() {
                    return Err(format!(
                        "scenario {}: pin to CPU {cpu}, the guest has {} CPUs (0 to {})",
                        s.name,
                        d.m.cpus(),
                        d.m.cpus() - 1
                    ));
                }
                d.cpu = *cpu;
            }
            Op::Enter { cg } => {
                let to = tree.id(cg);
                let mut ups = Vec::new();
                d.m.enter(d.cpu, current, true, &mut ups)?;
                d.push(ups);
                current = to;
            }
            Op::WaitPeriodic { .. } => {
                // The probe's lru_add_drain() after the wait.
                let mut ups = Vec::new();
                d.m.drain(d.cpu, &mut ups)?;
                d.push(ups);
                if !waited {
                    d.m.set_lru(d.cpu, setup.lru_fill, tree.other());
                    waited = true;
                }
            }
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
                        for item in [Item::Kmem, Item::PageTable] {
                            ups.push(Update {
                                memcg: current,
                                item,
                                val: 1,
                                anon: 0,
                                cpu: d.cpu,
                                by_task: true,
                            });
                        }
                    }
                    d.m.charge(d.cpu, *kind, current, &mut ups)
                        .map_err(|e| format!("scenario {}: {e}", s.name))?;
                    d.push(ups);
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            d.read(i, k, tree.id(cg), current, *reopen)?;
                        }
                    }
                }
            }
            Op::Free {
                kind,
                n,
                read,
                every,
            } => {
                for k in 1..=*n {
                    let mut ups = Vec::new();
                    d.m.free(d.cpu, *kind, &mut ups)
                        .map_err(|e| format!("scenario {}: {e}", s.name))?;
                    d.push(ups);
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            d.read(i, k, tree.id(cg), current, false)?;
                        }
                    }
                }
            }
            Op::Read { cg, reopen } => d.read(i, 0, tree.id(cg), current, *reopen)?,
            Op::Poll { cg, .. } => d.steps.push(Step::Poll {
                op: i,
                memcg: tree.id(cg),
                cpu: d.cpu,
                objcg: d.m.objcg_charges(),
            }),
        }
    }
    Ok(d.steps)
}

/// The walk of [`derive`].
struct Derivation {
    m: Machine,
    steps: Vec<Step>,
    /// The CPU the task runs on.
    cpu: usize,
    /// Objects each CPU's task has left to RCU callbacks so far.
    rcu: Vec<u64>,
}

impl Derivation {
    fn push(&mut self, ups: Vec<Update>) {
        self.steps.extend(ups.into_iter().map(Step::Update));
        for (c, seen) in self.rcu.iter_mut().enumerate() {
            let now = self.m.rcu_deferred(c);
            if now > *seen {
                *seen = now;
                self.steps.push(Step::Rcu { cpu: c });
            }
        }
    }

    fn read(
        &mut self,
        op: usize,
        n: usize,
        memcg: u8,
        current: u8,
        reopen: bool,
    ) -> Result<(), String> {
        self.steps.push(Step::Read {
            op,
            n,
            memcg,
            cpu: self.cpu,
            objcg: self.m.objcg_charges(),
        });
        let mut after = Vec::new();
        if reopen {
            let mut before = Vec::new();
            self.m
                .reopen_read(self.cpu, current, &mut before, &mut after)?;
            self.push(before);
        }
        self.steps.push(Step::Gate);
        self.push(after);
        Ok(())
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
    let steps = derive(s, kernel, cpus, setup, slots)?;
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
    Bare::install(ThreadCtx::new(Actor::Cpu(0), None));
    let mut run = Run {
        proto,
        tree: &tree,
        kernel,
        charged: vec![0; tree.parents.len() + 1],
        shown: vec![0; tree.parents.len() + 1],
        calls: 0,
    };
    if setup.residual > 0 {
        // Not a call of the scenario's: the counter's value at the start.
        run.proto.mod_memcg_state(tree.other(), setup.residual);
    }
    let mut next = reads.iter().peekable();
    let mut preds = Vec::new();
    // The read begun and not yet gated: (memcg, cpu, calls, objcg).
    let mut open: Option<(u8, usize, u64, u64)> = None;
    for step in &steps {
        match *step {
            Step::Update(u) => run.feed(&u),
            Step::Read {
                op,
                n,
                memcg,
                cpu,
                objcg,
            } => {
                let at = expect(&mut next, op, n, s)?;
                if at.periodic_before {
                    run.periodic();
                }
                open = Some((memcg, cpu, run.calls, objcg));
            }
            Step::Gate => {
                let (memcg, cpu, calls, objcg) = open
                    .take()
                    .ok_or("a gate without its read (derivation bug)")?;
                preds.push(run.gate(memcg, cpu, calls, objcg));
            }
            Step::Poll {
                op,
                memcg,
                cpu,
                objcg,
            } => {
                while let Some(at) = next.next_if(|r| r.op == op) {
                    if at.periodic_before {
                        run.periodic();
                    }
                    let calls = run.calls;
                    preds.push(run.gate(memcg, cpu, calls, objcg));
                }
            }
            Step::Rcu { .. } => {}
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
    /// Pages of `anon` charged to each memcg itself.
    charged: Vec<i64>,
    /// What each memcg's memory.stat shows.
    shown: Vec<i64>,
    calls: u64,
}

impl Run<'_> {
    fn feed(&mut self, u: &Update) {
        self.calls += 1;
        if let Some(c) = self.charged.get_mut(u.memcg as usize) {
            *c += u.anon;
        }
        // The model's one statistic carries the rstat count; `anon` is
        // kept beside it (docs/model.md, section 5.7).
        Bare::set_actor(Actor::Cpu(u.cpu));
        self.proto.mod_memcg_state(u.memcg, u.val);
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

    fn periodic(&mut self) {
        self.proto.periodic();
        self.flushed(0);
    }

    /// A reader's `mem_cgroup_flush_stats()` of `memcg` on `cpu`, and the
    /// `anon` it then shows; `calls` and `objcg` as sampled when the read
    /// began.
    fn gate(&mut self, memcg: u8, cpu: usize, calls: u64, objcg: u64) -> Predicted {
        Bare::set_actor(Actor::Cpu(cpu));
        let flushed = self.proto.mem_cgroup_flush_stats(memcg);
        if flushed {
            self.flushed(if self.kernel.global() { 0 } else { memcg });
        }
        Predicted {
            anon: self.shown[memcg as usize],
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
            *reopen || matches!(kind, Unit::OpenKeep | Unit::OpenClose | Unit::Shmem4k)
        }
        Op::Free { kind, .. } => matches!(kind, Unit::OpenKeep),
        Op::Read { reopen, .. } => *reopen,
        _ => false,
    })
}

/// Pages scenario `s` leaves in the probe's memfd at `cpus` CPUs (its
/// `shmem4k` charges less its frees).
fn shmem_net(s: &Scenario, cpus: usize) -> usize {
    let mut pages = 0usize;
    for op in &s.ops {
        match op {
            Op::Charge {
                kind: Unit::Shmem4k,
                n,
                n_by_cpus,
                ..
            } => pages += super::spec::units_at(*n, n_by_cpus, cpus),
            Op::Free {
                kind: Unit::Shmem4k,
                n,
                ..
            } => pages = pages.saturating_sub(*n),
            _ => {}
        }
    }
    pages
}

/// Pages in the probe's memfd when scenario `name` of boot `obs` begins:
/// the net `shmem4k` pages of the scenarios that ran before it in that
/// boot (the probe makes one memfd per boot; a scenario frees only its
/// own pages).
///
/// NOTE(kernel): taken from the scenario file, since the probe's start
/// record does not say where the memfd stands.
pub fn shmem_before(scenarios: &[Scenario], obs: &Observation, name: &str) -> usize {
    let cpus = obs.hello.cpus.max(1);
    obs.done
        .iter()
        .take_while(|d| d.s != name)
        .filter_map(|d| scenarios.iter().find(|s| s.name == d.s))
        .map(|s| shmem_net(s, cpus))
        .sum()
}

/// One call as the comparison sees it: memcg (cgroup id), whether it is
/// an event, the item number, the value `memcg_rstat_updated()` receives,
/// the CPU; and where it stands (the reads before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Call {
    id: u64,
    event: bool,
    item: i64,
    val: i64,
    cpu: usize,
}

/// The derivation of scenario `s` checked against the kernel's trace of
/// one boot: the update calls derived for `kernel` (memcg, item, value,
/// CPU; items by the kernel's names, numbered by the boot's
/// `hello.items`) compared in order with the calls the trace recorded on
/// the scenario's memcgs, made by the probe's own task (the pid that wrote
/// the window's `fcp s NAME` marker), inside the window (`fcp s NAME` to
/// `fcp e NAME`). `scenarios` are the boot's scenario definitions (where
/// the memfd stands at `s`'s start depends on those before it).
///
/// Left out, by rule:
/// - on a CPU whose task has left an object to an RCU callback (6.1's
///   `struct file`s and cursor dentries, a memfd's emptied xarray nodes,
///   the inode of an unheld move), the objcg stock's calls (`MEMCG_KMEM`
///   and the slab items) from that point on, on both sides: the
///   callback's free reaches the stock at a grace period's end, which no
///   derivation knows;
/// - the whole pages (`MEMCG_KMEM` negative) the trace shows at the first
///   drain of the start objcg (the parent of the memcg the probe made
///   last) when the scenario never enters it: they depend on every
///   allocation of the probe's `mkdir`s, which the derivation does not
///   follow (traced once: 7.1 at 4 vCPUs);
/// - calls of other tasks on the scenario's memcgs (a kworker's
///   `lru_add_drain_all()` share, `ksoftirqd`): the derivation's kworker
///   calls are not compared, but may instead be the task's own, in the
///   same order, before the next read (the worker lost the race to the
///   task's own drain: traced at 4 vCPUs).
///
/// `Ok` with the calls compared, or the first difference, one line.
pub fn check_trace(
    scenarios: &[Scenario],
    s: &Scenario,
    obs: &Observation,
    kernel: Kernel,
) -> Result<usize, String> {
    let name = &s.name;
    let start = obs
        .starts
        .iter()
        .find(|x| &x.s == name)
        .ok_or_else(|| format!("{name}: no start record"))?;
    if let Some(done) = obs.done.iter().find(|d| &d.s == name) {
        if !done.ok {
            return Err(format!("{name}: the probe failed: {}", done.error));
        }
        if done.overrun > 0 {
            return Err(format!(
                "{name}: the trace lost {} events to a full ring buffer",
                done.overrun
            ));
        }
    }
    let (from, to) = super::replay::window(&obs.events, name)
        .ok_or_else(|| format!("{name}: the trace has no `fcp s {name}` marker"))?;
    let pid = obs.events[from].pid;
    let tree = Tree::of(s);
    // Model memcg -> cgroup id, for the scenario's memcgs.
    let mut ids = std::collections::BTreeMap::new();
    for cg in &s.cgroups {
        let id = start
            .ids
            .get(cg)
            .ok_or_else(|| format!("{name}: the start record has no id for {cg}"))?;
        ids.insert(tree.id(cg), *id);
    }
    let path = |id: u64| {
        start
            .ids
            .iter()
            .find(|(_, v)| **v == id)
            .map_or_else(|| id.to_string(), |(k, _)| k.clone())
    };
    let items = &obs.hello.items;
    let number = |item: Item| -> Result<i64, String> {
        let n = kernel.item_name(item);
        items
            .get(n)
            .copied()
            .ok_or_else(|| format!("the probe's hello gives no number for {n}"))
    };
    let describe = |c: &Call| {
        let item = items
            .iter()
            .filter(|(k, v)| **v == c.item && is_event_name(k) == c.event)
            .map(|(k, _)| k.as_str())
            .next()
            .unwrap_or("?");
        format!("{} {item} {:+} on CPU {}", path(c.id), c.val, c.cpu)
    };
    let stock_numbers = [
        number(Item::Kmem)?,
        number(Item::SlabReclaimableB)?,
        number(Item::SlabUnreclaimableB)?,
    ];
    let from_stock = |c: &Call| !c.event && stock_numbers.contains(&c.item);

    // The derived calls, with the reads before each.
    let setup = Setup {
        shmem_pages: shmem_before(scenarios, obs, name),
        thp_anon_vma: start.thp > 0,
        ..Setup::default()
    };
    let slots = (start.filp as i64, start.dentry as i64);
    let steps = derive(s, kernel, obs.hello.cpus.max(1), setup, slots)?;
    enum D {
        /// A call, the reads before it, whether the task makes it.
        Call(Call, usize, bool),
        Rcu(usize),
    }
    let mut derived = Vec::new();
    let mut reads = 0usize;
    for st in &steps {
        match st {
            Step::Update(u) => {
                if let Some(&id) = ids.get(&u.memcg) {
                    let call = Call {
                        id,
                        event: u.item.is_event(),
                        item: number(u.item)?,
                        val: u.val,
                        cpu: u.cpu,
                    };
                    derived.push(D::Call(call, reads, u.by_task));
                }
            }
            Step::Read { .. } => reads += 1,
            Step::Rcu { cpu } => derived.push(D::Rcu(*cpu)),
            Step::Gate | Step::Poll { .. } => {}
        }
    }
    // The start objcg (the parent of the last memcg the probe made), if
    // the scenario never charges it itself: its whole pages at its first
    // drain are left out.
    let entered: Vec<u8> = s
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Enter { cg } => Some(tree.id(cg)),
            _ => None,
        })
        .collect();
    let start_objcg = s
        .cgroups
        .last()
        .map(|last| tree.parents[tree.id(last) as usize - 1])
        .filter(|p| !entered.contains(p))
        .and_then(|p| ids.get(&p).copied());
    let kmem = number(Item::Kmem)?;
    let start_pages =
        |c: &Call| Some(c.id) == start_objcg && !c.event && c.item == kmem && c.val < 0;
    // The traced calls, with the probe's read markers before each.
    let wanted: std::collections::BTreeSet<u64> = ids.values().copied().collect();
    // The trace's values mean what the booted release passes on.
    let release = Kernel::from_release(&obs.hello.release).map_or(kernel.release, |k| k.release);
    let mut traced = Vec::new();
    let mut marks = 0usize;
    let marker = format!("fcp r {name} ");
    for e in &obs.events[from..to] {
        if e.pid != pid {
            continue;
        }
        match &e.ev {
            Ev::Marker(m) if m.starts_with(&marker) => marks += 1,
            Ev::Update {
                func,
                id,
                item,
                val,
            } if wanted.contains(id) => {
                let v = super::replay::rstat_val(&obs.hello, release, *func, *item, *val);
                traced.push((
                    Call {
                        id: *id,
                        event: *func == UpdateFn::Events,
                        item: *item,
                        val: v,
                        cpu: e.cpu,
                    },
                    marks,
                    e.t_us,
                ));
            }
            _ => {}
        }
    }
    // In order. Left out on both sides: the stock's calls on a CPU after
    // an RCU deferral; on the trace's side, the start objcg's pages. A
    // kworker's drain may instead be the task's own calls, in the same
    // order, before the next read (the worker lost the race to the task's
    // own drain: traced at 4 vCPUs).
    let mut uncertain = vec![false; obs.hello.cpus.max(1) + 1];
    let mut floating: std::collections::VecDeque<(Call, usize)> = Default::default();
    let mut j = 0usize;
    let mut compared = 0usize;
    let at = |reads: usize| {
        if reads == 0 {
            "before the first read".to_string()
        } else {
            format!("after read {reads}")
        }
    };
    let skip = |j: &mut usize, uncertain: &[bool]| {
        while let Some((t, _, _)) = traced.get(*j) {
            let unsure = from_stock(t) && uncertain.get(t.cpu).copied().unwrap_or(false);
            if !unsure && !start_pages(t) {
                break;
            }
            *j += 1;
        }
    };
    for d in &derived {
        let (call, reads, by_task) = match d {
            D::Rcu(c) => {
                if let Some(u) = uncertain.get_mut(*c) {
                    *u = true;
                }
                continue;
            }
            D::Call(c, r, b) => (c, *r, *b),
        };
        if from_stock(call) && uncertain.get(call.cpu).copied().unwrap_or(false) {
            continue;
        }
        floating.retain(|(_, r)| *r == reads);
        if !by_task {
            floating.push_back((*call, reads));
            continue;
        }
        loop {
            skip(&mut j, &uncertain);
            let Some((t, marks, t_us)) = traced.get(j) else {
                return Err(format!(
                    "call {} ({}): derived {}, the trace has no more calls",
                    compared + 1,
                    at(reads),
                    describe(call)
                ));
            };
            if t == call {
                compared += 1;
                j += 1;
                break;
            }
            if floating.front().is_some_and(|(f, _)| f == t) {
                floating.pop_front();
                compared += 1;
                j += 1;
                continue;
            }
            return Err(format!(
                "call {} (derived {}, traced {} at {:.6} s): derived {}, traced {}",
                compared + 1,
                at(reads),
                at(*marks),
                *t_us as f64 / 1e6,
                describe(call),
                describe(t)
            ));
        }
    }
    skip(&mut j, &uncertain);
    if let Some((t, marks, t_us)) = traced.get(j) {
        return Err(format!(
            "call {} (traced {} at {:.6} s): the derivation has no more calls, traced {} \
             ({} traced calls left)",
            compared + 1,
            at(*marks),
            *t_us as f64 / 1e6,
            describe(t),
            traced.len() - j
        ));
    }
    Ok(compared)
}

/// Whether a `hello.items` name is a `vm_event_item` (the names the
/// probe reads from both enums).
fn is_event_name(name: &str) -> bool {
    matches!(
        name,
        "PGFAULT" | "PGMAJFAULT" | "PGPGIN" | "PGPGOUT" | "THP_FAULT_ALLOC"
    )
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
