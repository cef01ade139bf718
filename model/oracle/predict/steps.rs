//! The derivation alone: a scenario's update calls in the kernel's order,
//! with its reads placed among them.

use super::super::charge::{Item, Kernel, Machine, Update};
use super::super::spec::{Op, Scenario};
use super::setup::{Setup, Tree};

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
    /// uncertain ([`check_trace`](super::check_trace) leaves them out).
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
                for k in 1..=super::super::spec::units_at(*n, n_by_cpus, cpus) {
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
