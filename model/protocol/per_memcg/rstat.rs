//! The per-CPU rstat updated trees as data (kernel/cgroup/rstat.c): the
//! words the tree code of both forms reads and writes
//! ([`super::rstat_tree`] for v5.7-v6.14, [`super::rstat_llist`] for v6.17
//! on) and the per-CPU locks, built empty for each execution.

use crate::kernel::{Atomic, LockName, PerCpu, SpinLock, Var};
use crate::vocab::Platform;

/// `lnode.next == &lnode`: off the list.
pub const OFF_LIST: i64 = 0;
/// `NULL`.
pub const NULL: i64 = 1;

/// The name of CPU `cpu`'s `cgroup_rstat_cpu_lock` (`rstat_cpu<c>`), made
/// once per process for every CPU number the model accepts.
fn cpu_lock_name(cpu: usize) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        (0..MAX_CPUS)
            .map(|c| &*Box::leak(format!("rstat_cpu{c}").into_boxed_str()))
            .collect()
    })[cpu]
}

/// The most CPUs the tree is built for (the benchmark's largest count).
pub const MAX_CPUS: usize = 1024;

/// The value an on-tree `updated_next` holds.
///
/// NOTE(kernel): a pointer (to the node itself for the root, else to the
/// next sibling or the parent); any non-NULL value means "on the tree".
pub const ON_TREE: i64 = 1;

/// The per-CPU updated trees of one execution.
pub struct RstatTree<P: Platform> {
    /// `cgroup_rstat_cpu(cgrp, cpu)->updated_next`, per memcg, per CPU.
    pub updated_next: Vec<PerCpu<Atomic<P>>>,
    /// `per_cpu(cgroup_rstat_cpu_lock, cpu)` (a raw spinlock; v5.x-v6.14).
    pub cpu_lock: PerCpu<SpinLock<P>>,
    /// `css_rstat_cpu(css, cpu)->lnode.next`, per memcg, per CPU (v6.17
    /// on; see [`crate::protocol::per_memcg::rstat_llist`] for the encoding).
    pub lnode_next: Vec<PerCpu<Atomic<P>>>,
    /// `ss_lhead_cpu(ss, cpu)->first` (v6.17 on).
    pub lhead: PerCpu<Atomic<P>>,
}

impl<P: Platform> RstatTree<P> {
    /// Every tree empty (`cgroup_rstat_init()`).
    pub fn new(cfg: &crate::config::Config) -> Self {
        let cpus = cfg.cpus;
        assert!(cpus <= MAX_CPUS, "model: at most {MAX_CPUS} CPUs");
        RstatTree {
            updated_next: (0..cfg.memcgs() as u8)
                .map(|memcg| {
                    PerCpu::new(cpus, |cpu| {
                        Atomic::new(
                            Var::UpdatedNext {
                                memcg,
                                cpu: cpu as u8,
                            },
                            0,
                        )
                    })
                })
                .collect(),
            cpu_lock: PerCpu::new(cpus, |cpu| {
                SpinLock::new(LockName::Other(cpu_lock_name(cpu)))
            }),
            lnode_next: (0..cfg.memcgs() as u8)
                .map(|memcg| {
                    PerCpu::new(cpus, |cpu| {
                        Atomic::new(
                            Var::LlistNode {
                                memcg,
                                cpu: cpu as u8,
                            },
                            OFF_LIST,
                        )
                    })
                })
                .collect(),
            lhead: PerCpu::new(cpus, |cpu| {
                Atomic::new(Var::LlistHead { cpu: cpu as u8 }, NULL)
            }),
        }
    }
}
