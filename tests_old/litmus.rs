//! Litmus tests of the kernel-idiom layer, and of the loom behaviour the
//! layer works around.
//!
//! `loom_rmw_racing_plain_store_reads_stale_value` records a known loom
//! 0.7.3 bug (tokio-rs/loom#254, #389; fix proposed in PR #391): it is
//! expected to show the impossible outcome. When a loom release fixes it,
//! that test fails, and the `NOTE(loom)` swap in `kernel::atomic_set` can go.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};

use memcg_flush_model::kernel::{
    atomic_add, atomic_read, atomic_set, spin_trylock, spin_unlock, Atomic, Locked, SpinLock,
};
use memcg_flush_model::platform::Loom;

/// Final values of `x` (starting at 5) after `fetch_add(1)` races `reset`.
fn final_values(reset: fn(&loom::sync::atomic::AtomicI64)) -> BTreeSet<i64> {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    loom::model(move || {
        let x = Arc::new(loom::sync::atomic::AtomicI64::new(5));
        let x2 = x.clone();
        let t = loom::thread::spawn(move || {
            x2.fetch_add(1, Relaxed);
        });
        reset(&x);
        t.join().unwrap();
        s.lock().unwrap().insert(x.load(Relaxed));
    });
    let v = seen.lock().unwrap().clone();
    v
}

/// C11 allows {0, 1}; loom 0.7.3 also reports 6: the add "undoes" the reset.
#[test]
fn loom_rmw_racing_plain_store_reads_stale_value() {
    let v = final_values(|x| x.store(0, Relaxed));
    assert!(v.contains(&0) && v.contains(&1), "{v:?}");
    assert!(
        v.contains(&6),
        "loom no longer lets an RMW read past a racing store ({v:?}): the bug is fixed; \
         drop the NOTE(loom) swap in kernel::atomic_set and spin_unlock"
    );
}

/// The workaround: issued as a swap, the reset is ordered correctly.
#[test]
fn loom_rmw_racing_swap_is_correct() {
    let v = final_values(|x| {
        x.swap(0, Relaxed);
    });
    assert_eq!(v, BTreeSet::from([0, 1]));
}

/// The kernel layer: `atomic_set(&stats_flush_threshold, 0)` racing an
/// `atomic_add` ends at 0 or at the added units, never above.
#[test]
fn atomic_set_is_never_undone_by_a_racing_atomic_add() {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    loom::model(move || {
        let t = Arc::new(Atomic::<Loom>::new(5));
        let t2 = t.clone();
        let h = loom::thread::spawn(move || atomic_add(1, &t2));
        atomic_set(&t, 0);
        h.join().unwrap();
        s.lock().unwrap().insert(atomic_read(&t));
    });
    assert_eq!(*seen.lock().unwrap(), BTreeSet::from([0, 1]));
}

/// Message passing through the flush lock: data written before
/// `spin_unlock` is seen by the next `spin_trylock` winner (Result: Never
/// for the stale read), which is what the flusher's plain fields rely on.
#[test]
fn spin_trylock_acquire_sees_writes_before_spin_unlock() {
    loom::model(|| {
        let lock = Arc::new(SpinLock::<Loom>::new());
        let data = Arc::new(Locked::<Loom>::new(0));
        let (l2, d2) = (lock.clone(), data.clone());
        let h = loom::thread::spawn(move || {
            if spin_trylock(&l2, std::sync::atomic::Ordering::Acquire) {
                d2.set(1);
                spin_unlock(&l2);
            }
        });
        if spin_trylock(&lock, std::sync::atomic::Ordering::Acquire) {
            // Would be reported as a causality violation if the lock did
            // not order this read after the other thread's write.
            let v = data.get();
            assert!(v == 0 || v == 1);
            spin_unlock(&lock);
        }
        h.join().unwrap();
    });
}

/// The same with a `Relaxed` trylock is a data race loom reports.
#[test]
#[should_panic(expected = "Causality violation")]
fn relaxed_spin_trylock_is_a_data_race() {
    loom::model(|| {
        let lock = Arc::new(SpinLock::<Loom>::new());
        let data = Arc::new(Locked::<Loom>::new(0));
        let (l2, d2) = (lock.clone(), data.clone());
        let h = loom::thread::spawn(move || {
            if spin_trylock(&l2, Relaxed) {
                d2.set(1);
                spin_unlock(&l2);
            }
        });
        if spin_trylock(&lock, Relaxed) {
            data.get();
            spin_unlock(&lock);
        }
        h.join().unwrap();
    });
}
