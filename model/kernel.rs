//! Kernel idioms on top of [`crate::platform`].
//!
//! Each function carries the kernel primitive's name and documents the Rust
//! ordering it maps to under the Linux kernel memory model (LKMM,
//! `tools/memory-model/`) and what that mapping loses. Model code calls these,
//! never the platform atomics directly, so a reviewer can read it against the
//! C source line by line.
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

use std::sync::atomic::Ordering;

use crate::platform::{BackendKind, ModelAtomic, ModelCell, Platform};

/// An `atomic_t` (or a `long` accessed with `READ_ONCE`/`WRITE_ONCE`).
pub struct Atomic<P: Platform>(P::Atomic);

impl<P: Platform> Atomic<P> {
    /// `ATOMIC_INIT(i)`.
    pub fn new(i: i64) -> Self {
        Atomic(P::Atomic::new(i))
    }
}

/// `atomic_read(v)`: LKMM plain-atomic load, `Relaxed`.
pub fn atomic_read<P: Platform>(v: &Atomic<P>) -> i64 {
    v.0.load(Ordering::Relaxed)
}

/// `atomic_set(v, i)`: LKMM unordered store, `Relaxed`.
///
/// NOTE(loom): loom 0.7.3 lets an RMW that races with a plain store read a
/// stale value and then order its write last, so an `atomic_add` could undo
/// this reset (tokio-rs/loom#254, #389). Under loom the store is therefore
/// issued as a `swap`, which loom orders correctly against RMWs and which
/// C11 gives the same meaning here because the old value is discarded.
/// `tests/litmus.rs` pins the loom behaviour so a fixed release is noticed.
pub fn atomic_set<P: Platform>(v: &Atomic<P>, i: i64) {
    store_against_rmw::<P>(&v.0, i, Ordering::Relaxed);
}

/// `atomic_add(i, v)`: non-value-returning RMW, unordered in LKMM, so a
/// `Relaxed` `fetch_add`.
pub fn atomic_add<P: Platform>(i: i64, v: &Atomic<P>) {
    v.0.fetch_add(i, Ordering::Relaxed);
}

/// `READ_ONCE(x)`: a `Relaxed` load (loses LKMM dependency ordering).
pub fn read_once<P: Platform>(x: &Atomic<P>) -> i64 {
    x.0.load(Ordering::Relaxed)
}

/// `WRITE_ONCE(x, val)`: a `Relaxed` store.
pub fn write_once<P: Platform>(x: &Atomic<P>, val: i64) {
    x.0.store(val, Ordering::Relaxed)
}

/// `__this_cpu_add(pcp, val)` on the owner CPU.
///
/// NOTE(kernel): the kernel uses one local, interrupt-atomic instruction and
/// remote CPUs read the counter with `READ_ONCE`. The owner is the only
/// writer, so a `Relaxed` `fetch_add` gives remote readers exactly the values
/// the kernel allows, with one model step instead of two.
pub fn this_cpu_add<P: Platform>(pcp: &Atomic<P>, val: i64) {
    pcp.0.fetch_add(val, Ordering::Relaxed);
}

/// The same store as [`atomic_set`] for any location that also receives RMWs.
fn store_against_rmw<P: Platform>(a: &P::Atomic, v: i64, order: Ordering) {
    // NOTE(loom): see atomic_set.
    if P::BACKEND_KIND == BackendKind::Loom {
        a.swap(v, order);
    } else {
        a.store(v, order);
    }
}

/// A per-CPU variable owned by one CPU and never touched remotely
/// (`DEFINE_PER_CPU(unsigned int, stats_updates)` in v5.16-v6.7).
///
/// Accesses go through a [`ModelCell`], so under loom a remote access would
/// be reported as a data race.
pub struct CpuLocal<P: Platform>(P::Cell<i64>);

impl<P: Platform> CpuLocal<P> {
    /// A counter starting at `v`.
    pub fn new(v: i64) -> Self {
        CpuLocal(P::Cell::new(v))
    }
}

/// `__this_cpu_add_return(pcp, val)`: owner-only, so a plain read and write.
pub fn this_cpu_add_return<P: Platform>(pcp: &CpuLocal<P>, val: i64) -> i64 {
    // SAFETY: only the owning CPU's thread touches a CpuLocal.
    unsafe {
        let x = pcp.0.get() + val;
        pcp.0.set(x);
        x
    }
}

/// `__this_cpu_write(pcp, val)`: owner-only plain write.
pub fn this_cpu_write<P: Platform>(pcp: &CpuLocal<P>, val: i64) {
    // SAFETY: only the owning CPU's thread touches a CpuLocal.
    unsafe { pcp.0.set(val) }
}

/// A `spinlock_t`: `stats_flush_lock` (trylock only) or `cgroup_rstat_lock`.
pub struct SpinLock<P: Platform>(P::Atomic);

impl<P: Platform> SpinLock<P> {
    /// `DEFINE_SPINLOCK(lock)`.
    pub fn new() -> Self {
        SpinLock(P::Atomic::new(0))
    }
}

impl<P: Platform> Default for SpinLock<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// `spin_trylock(lock)` (the kernel uses `spin_trylock_irqsave`): an RMW with
/// ACQUIRE semantics on success and no ordering on failure.
///
/// `acquire` is `Ordering::Acquire` for the kernel; a mutant passes
/// `Relaxed`. NOTE(loom): written as `compare_exchange`, not the
/// `atomic_read() || atomic_xchg()` idiom, which trips loom's RMW bug.
pub fn spin_trylock<P: Platform>(lock: &SpinLock<P>, acquire: Ordering) -> bool {
    // Lock words carry no measured ghost state (see platform::ghost_step).
    crate::platform::ghost_step(false, || {
        lock.0
            .compare_exchange(0, 1, acquire, Ordering::Relaxed)
            .is_ok()
    })
}

/// `spin_lock(lock)`: spin on [`spin_trylock`] with ACQUIRE until it wins,
/// yielding between attempts so that loom and shuttle schedule the holder.
pub fn spin_lock<P: Platform>(lock: &SpinLock<P>) {
    while !spin_trylock(lock, Ordering::Acquire) {
        P::yield_now();
    }
}

/// `spin_is_locked(lock)`: a relaxed read of the lock word.
pub fn spin_is_locked<P: Platform>(lock: &SpinLock<P>) -> bool {
    crate::platform::ghost_step(false, || lock.0.load(Ordering::Relaxed) != 0)
}

/// `spin_unlock(lock)`: a RELEASE store.
pub fn spin_unlock<P: Platform>(lock: &SpinLock<P>) {
    crate::platform::ghost_step(false, || {
        store_against_rmw::<P>(&lock.0, 0, Ordering::Release)
    });
}

/// Plain data that a lock protects: the flusher's `state_prev` and
/// `state_pending` fields (`cgroup_rstat_lock`) and `flush_next_time`
/// (`stats_flush_lock`).
///
/// Under loom the accesses are causality-checked, so a broken lock shows up
/// as a data race ("Causality violation").
pub struct Locked<P: Platform>(P::Cell<i64>);

impl<P: Platform> Locked<P> {
    /// A field starting at `v`.
    pub fn new(v: i64) -> Self {
        Locked(P::Cell::new(v))
    }

    /// Plain read; the caller holds the protecting lock.
    pub fn get(&self) -> i64 {
        // SAFETY: callers hold the lock; under loom a missing lock is a
        // reported race, not undefined behaviour.
        unsafe { self.0.get() }
    }

    /// Plain write; the caller holds the protecting lock.
    pub fn set(&self, v: i64) {
        // SAFETY: as for `get`.
        unsafe { self.0.set(v) }
    }
}
