//! `spinlock_t` and the plain fields that locks protect.

use std::sync::atomic::Ordering;

use crate::kernel::atomic::{named, observe, store_against_rmw};
use crate::vocab::footprint;
use crate::vocab::obs::{Idiom, LockName, Op, Var};
use crate::vocab::{ModelAtomic, ModelCell, Platform};

/// A `spinlock_t`: `stats_flush_lock` (trylock only) or `cgroup_rstat_lock`.
pub struct SpinLock<P: Platform> {
    word: P::Atomic,
    name: LockName,
}

impl<P: Platform> SpinLock<P> {
    /// `DEFINE_SPINLOCK(name)`.
    pub fn new(name: LockName) -> Self {
        SpinLock {
            word: P::Atomic::new(0),
            name,
        }
    }

    fn var(&self) -> Var {
        Var::Lock(self.name)
    }
}

/// `spin_trylock(lock)` (the kernel uses `spin_trylock_irqsave`): an RMW with
/// ACQUIRE semantics on success and no ordering on failure.
///
/// NOTE(loom): written as `compare_exchange`, not the `atomic_read() ||
/// atomic_xchg()` idiom, which trips loom's RMW bug (docs/model.md, 4.1). The
/// generic qspinlock trylock is a read followed by
/// `atomic_try_cmpxchg_acquire`, which has the same outcomes.
pub fn spin_trylock<P: Platform>(lock: &SpinLock<P>) -> bool {
    spin_trylock_with(lock, Ordering::Acquire)
}

/// [`spin_trylock`] with the success ordering `acquire`: for variants that
/// change the lock's ordering (the kernel's is `Acquire`).
pub fn spin_trylock_with<P: Platform>(lock: &SpinLock<P>, acquire: Ordering) -> bool {
    let r = lock.word.compare_exchange(0, 1, acquire, Ordering::Relaxed);
    observe::<P>(
        lock.var(),
        Op::CmpXchg {
            old: r.unwrap_or_else(|x| x),
            new: 1,
            ok: r.is_ok(),
        },
        Idiom::SpinTrylock,
    );
    r.is_ok()
}

/// `spin_lock(lock)`: retry an acquiring compare-and-exchange until it
/// wins, yielding between attempts so that loom and shuttle schedule the
/// holder. The first failed attempt (the lock was contended) and the
/// successful one are reported.
pub fn spin_lock<P: Platform>(lock: &SpinLock<P>) {
    let mut first = true;
    let mut snap = None;
    while let Err(held) = lock
        .word
        .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
    {
        if std::mem::take(&mut first) {
            let op = Op::CmpXchg {
                old: held,
                new: 1,
                ok: false,
            };
            observe::<P>(lock.var(), op, Idiom::SpinLock);
            snap = footprint::spin_snapshot();
        } else {
            footprint::spin_restore(snap);
        }
        P::yield_now();
    }
    observe::<P>(lock.var(), Op::Write(1), Idiom::SpinLock);
}

/// `spin_is_locked(lock)`: a relaxed read of the lock word.
pub fn spin_is_locked<P: Platform>(lock: &SpinLock<P>) -> bool {
    let v = lock.word.load(Ordering::Relaxed);
    observe::<P>(lock.var(), Op::Read(v), Idiom::SpinIsLocked);
    v != 0
}

/// `spin_unlock(lock)`: a RELEASE store.
pub fn spin_unlock<P: Platform>(lock: &SpinLock<P>) {
    spin_unlock_with(lock, Ordering::Release)
}

/// [`spin_unlock`] with the ordering `release`: for variants that change
/// the lock's ordering (the kernel's is `Release`).
pub fn spin_unlock_with<P: Platform>(lock: &SpinLock<P>, release: Ordering) {
    store_against_rmw::<P>(&lock.word, 0, release);
    observe::<P>(lock.var(), Op::Write(0), Idiom::SpinUnlock);
}

/// Plain data that a lock protects: the flusher's `state_prev` and
/// `state_pending` and the aggregate's writer side (`cgroup_rstat_lock`),
/// and `flush_next_time` (`stats_flush_lock`).
///
/// Under loom the accesses are causality-checked, so a broken lock shows up
/// as a data race ("Causality violation"), attributed to this variable.
pub struct Locked<P: Platform> {
    cell: P::Cell<i64>,
    var: Var,
}

impl<P: Platform> Locked<P> {
    /// The field `var`, starting at `v`.
    pub fn new(var: Var, v: i64) -> Self {
        named(var);
        Locked {
            cell: P::Cell::new(v),
            var,
        }
    }

    /// Plain read; the caller holds the protecting lock.
    pub fn get(&self) -> i64 {
        P::note_cell(self.var);
        // SAFETY: callers hold the lock; under loom a missing lock is a
        // reported race, not undefined behaviour.
        let v = unsafe { self.cell.get() };
        observe::<P>(self.var, Op::Read(v), Idiom::Plain);
        v
    }

    /// Plain write; the caller holds the protecting lock.
    pub fn set(&self, v: i64) {
        P::note_cell(self.var);
        // SAFETY: as for `get`.
        unsafe { self.cell.set(v) };
        observe::<P>(self.var, Op::Write(v), Idiom::Plain);
    }
}
