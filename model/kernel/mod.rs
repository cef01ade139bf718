//! Kernel idioms on top of [`crate::explore::Platform`].
//!
//! Each function carries the kernel primitive's name and documents the Rust
//! ordering it maps to under the Linux kernel memory model (LKMM,
//! `tools/memory-model/`) and what that mapping loses. Protocol code calls
//! these, never the platform atomics directly, so a reviewer can read it
//! against the C source line by line.
//!
//! Every shared variable is created with the [`Var`] it stands for, and
//! every access through this layer is reported as an observation
//! ([`crate::vocab::obs::Access`]): protocol code does not report its own
//! memory accesses, and cannot forget to. On the benchmark platform
//! ([`crate::explore::Bare`]) the reports compile to nothing.
//!
//! General losses, true of every mapping here:
//! - LKMM `READ_ONCE`/`WRITE_ONCE` and non-value-returning RMWs are modelled
//!   as C11 `Relaxed`. LKMM additionally respects address, data and control
//!   dependencies, which C11 `Relaxed` does not; the model is therefore
//!   *weaker* than the kernel (it may show outcomes the kernel forbids), never
//!   stronger, for code that relies on dependency ordering. No step of the
//!   v5.19/v6.0 protocol relies on it.
//! - loom does not explore load buffering, so outcomes that need it are
//!   missed; shuttle runs every operation SeqCst.
//! - Interrupts, preemption and `irqsave` are not modelled: each model thread
//!   is one CPU running the function to completion except where it is
//!   preempted by the scheduler of the backend.

pub mod atomic;
pub mod barrier;
pub mod lock;
pub mod marking;
pub mod percpu;
pub mod rcu;
pub mod time;
pub mod trace;

pub use crate::vocab::obs::{LockName, Var};
pub use atomic::{
    atomic64_add, atomic64_read, atomic64_set, atomic_add, atomic_add_return, atomic_cmpxchg,
    atomic_read, atomic_set, atomic_xchg, cmpxchg, read_once, smp_load_acquire, smp_store_release,
    this_cpu_add, write_once, Atomic,
};
pub use barrier::{smp_mb, smp_rmb, smp_wmb};
pub use lock::{
    spin_is_locked, spin_lock, spin_trylock, spin_trylock_with, spin_unlock, spin_unlock_with,
    Locked, SpinLock,
};
pub use percpu::{
    smp_processor_id, this_cpu_add_return, this_cpu_add_return_shared, this_cpu_read,
    this_cpu_write, this_cpu_xchg_shared, CpuLocal, PerCpu,
};
pub use rcu::{
    rcu_access_pointer, rcu_assign_pointer, rcu_dereference, rcu_read_lock, rcu_read_unlock,
    synchronize_rcu, Rcu, RcuDefect, RcuFlavor, RcuPointer, RcuReadGuard, RcuThread,
};
pub use time::time_after64;
pub use trace::{
    trace_flush_begin, trace_flush_end, trace_memcg_flush_stats,
    trace_memcg_flush_stats_ratelimited, Css, CssId,
};
