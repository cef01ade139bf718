//! The model's protocol driven through a scenario: every
//! `memcg_rstat_updated()` call that [`super::charge`] derives, every read
//! as `mem_cgroup_flush_stats()` then the value, the periodic work where
//! the kernel ran it, on the scenario's CPUs (`pin` moves the task; each
//! CPU has its LRU add batch and objcg stock, and its updates are the
//! model's `Actor::Cpu(c)`), with the protocol of the kernel's lineage
//! built on [`Bare`](crate::explore::Bare).
//!
//! [`derive`] is the derivation alone: the scenario's calls in order, with
//! its reads placed among them; [`check_trace`] compares it with the
//! kernel's own record of the calls (the memcg tracepoints, or the kprobes
//! on 6.1 and 6.12).
//!
//! What a read shows follows from the flushes the protocol decides: a
//! flush of a subtree (6.12's reader, the periodic work) or of everything
//! (6.1) makes each flushed memcg's `anon` its subtree's charges.

mod check;
mod run;
mod setup;
mod steps;

pub use check::{check_trace, shmem_before, Traced};
pub use run::{predict, predict_with};
pub use setup::{reads_of, units, uses_slab, Predicted, ReadAt, Setup, Tree, MEMCG_CHARGE_BATCH};
pub use steps::{derive, Step};
