//! The model's protocol driven through a derivation: every call, every
//! read's gate and value, the periodic work where the kernel ran it.

use std::sync::Arc;

use super::super::charge::{Kernel, Update};
use super::super::spec::Scenario;
use super::setup::{Predicted, ReadAt, Setup, Tree, MEMCG_CHARGE_BATCH};
use super::steps::{derive, Step};
use crate::config::Config;
use crate::explore::{Bare, Platform, ThreadCtx};
use crate::protocol::{Env, Protocol, Variant};
use crate::vocab::Actor;

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
    let cfg = Config::driven(cpus, MEMCG_CHARGE_BATCH, tree.parents.clone());
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
