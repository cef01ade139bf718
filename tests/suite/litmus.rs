//! Litmus tests of the kernel-idiom layer, of the loom behaviour the layer
//! and the backends work around, and of the LKMM litmus export.
//!
//! Three tests pin known loom 0.7.3 gaps, so that a fixed release is noticed:
//! - `loom_rmw_racing_plain_store_reads_stale_value` (tokio-rs/loom#254,
//!   #389; fix proposed in PR #391): when it fails, the `NOTE(loom)` swap in
//!   `kernel::atomic_set` and `spin_unlock` can go.
//! - `loom_read_or_xchg_trylock_with_plain_unlock_stays_held`: the same bug
//!   seen through v6.4's `stats_flush_ongoing` idiom; it fails together
//!   with the first.
//! - `loom_unbounded_never_reorders_a_load_after_a_later_rmw`
//!   (tokio-rs/loom#166, #392): when it fails, revisit whether
//!   `Backend::exhaustive()` may count unbounded loom as exhaustive, and
//!   docs/model.md.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memcg_flush_model::explore::Loom;
use memcg_flush_model::kernel::marking::{GLOBAL, V6_17, V6_8};
use memcg_flush_model::kernel::{
    atomic_add, atomic_read, atomic_set, atomic_xchg, spin_trylock_with, spin_unlock, Atomic,
    LockName, Locked, SpinLock, Var,
};
use memcg_flush_model::measure::bounds::measure_exhaustive;
use memcg_flush_model::observe::record::Step;
use memcg_flush_model::protocol::global::v5_19::{Memcontrol, State};
use memcg_flush_model::protocol::global::v6_4::V6_4;
use memcg_flush_model::protocol::Env;
use memcg_flush_model::report::litmus::export::{sc_backend, sc_verdict, SC_LINE};
use memcg_flush_model::report::litmus::herd::check_syntax;
use memcg_flush_model::report::litmus::herd::plain_races;
use memcg_flush_model::report::litmus::prog::{Instr, Load, Store};
use memcg_flush_model::report::litmus::{export, measure, program, Observation, MAX_VARIABLES};
use memcg_flush_model::vocab::obs::{Access, Actor, Idiom, Op};
use memcg_flush_model::Config;

use crate::common::{cfg, reg, variant};

/// Final values of `x` (starting at 5) after `fetch_add(1)` races `reset`.
fn final_values(reset: fn(&loom::sync::atomic::AtomicI64)) -> BTreeSet<i64> {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    loom::model(move || {
        let x = loom::sync::Arc::new(loom::sync::atomic::AtomicI64::new(5));
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

/// What loom reports for two threads each taking a trylock written as the
/// kernel writes `stats_flush_ongoing` (v6.4-v6.7): `atomic_read(&f) ||
/// atomic_xchg(&f, 1)` to take it, `release(&f)` to give it back. Returns
/// the flag's final values after both joined and the largest number of
/// threads seen holding it at once.
fn read_or_xchg_trylock(
    take: fn(&loom::sync::atomic::AtomicI64) -> bool,
    release: fn(&loom::sync::atomic::AtomicI64),
) -> (BTreeSet<i64>, i64) {
    let seen = Arc::new(Mutex::new((BTreeSet::new(), 0)));
    let s = seen.clone();
    loom::model(move || {
        let f = loom::sync::Arc::new(loom::sync::atomic::AtomicI64::new(0));
        let inside = loom::sync::Arc::new(loom::sync::atomic::AtomicI64::new(0));
        let most = Arc::new(Mutex::new(0));
        let flusher = || {
            let (f, inside, most) = (f.clone(), inside.clone(), most.clone());
            loom::thread::spawn(move || {
                if take(&f) {
                    let n = inside.fetch_add(1, Relaxed) + 1;
                    let mut m = most.lock().unwrap();
                    *m = (*m).max(n);
                    drop(m);
                    inside.fetch_sub(1, Relaxed);
                    release(&f);
                }
            })
        };
        let (a, b) = (flusher(), flusher());
        a.join().unwrap();
        b.join().unwrap();
        let mut s = s.lock().unwrap();
        s.0.insert(f.load(Relaxed));
        s.1 = s.1.max(*most.lock().unwrap());
    });
    let r = seen.lock().unwrap().clone();
    r
}

/// Raw loom 0.7.3: with a plain store as the release, the loser's
/// `atomic_xchg()` can read the winner's 1 after the winner's release and
/// order its own 1 last, so the flag ends set with both threads gone: a
/// "still held" no C11 execution has (C11 allows only 0). Exclusion itself
/// holds. Fails once loom fixes its RMW (see the first test).
#[test]
fn loom_read_or_xchg_trylock_with_plain_unlock_stays_held() {
    let (finals, most) = read_or_xchg_trylock(
        |f| !(f.load(Relaxed) != 0 || f.swap(1, std::sync::atomic::Ordering::AcqRel) != 0),
        |f| f.store(0, Relaxed),
    );
    assert_eq!(most, 1, "two threads inside at once");
    assert!(finals.contains(&0), "{finals:?}");
    assert!(
        finals.contains(&1),
        "loom no longer leaves the flag set after both threads released it ({finals:?}): \
         the RMW bug is fixed; drop the NOTE(loom) swap in kernel::atomic_set"
    );
}

/// The kernel-idiom layer, as v6.4's `do_flush_stats()` uses it
/// (`atomic_read`, `atomic_xchg`, `atomic_set`): the flag is clear after
/// both threads joined in every execution, and never held twice.
#[test]
fn stats_flush_ongoing_idiom_is_released_in_every_execution() {
    let seen = Arc::new(Mutex::new((BTreeSet::new(), 0)));
    let s = seen.clone();
    loom::model(move || {
        let f = loom::sync::Arc::new(Atomic::<Loom>::new(
            Var::Lock(LockName::StatsFlushOngoing),
            0,
        ));
        let inside = loom::sync::Arc::new(loom::sync::atomic::AtomicI64::new(0));
        let most = Arc::new(Mutex::new(0));
        let flusher = || {
            let (f, inside, most) = (f.clone(), inside.clone(), most.clone());
            loom::thread::spawn(move || {
                if atomic_read(&f) != 0 || atomic_xchg(&f, 1) != 0 {
                    return;
                }
                let n = inside.fetch_add(1, Relaxed) + 1;
                let mut m = most.lock().unwrap();
                *m = (*m).max(n);
                drop(m);
                inside.fetch_sub(1, Relaxed);
                atomic_set(&f, 0);
            })
        };
        let (a, b) = (flusher(), flusher());
        a.join().unwrap();
        b.join().unwrap();
        let mut s = s.lock().unwrap();
        s.0.insert(atomic_read(&f));
        s.1 = s.1.max(*most.lock().unwrap());
    });
    let (finals, most) = seen.lock().unwrap().clone();
    assert_eq!(finals, BTreeSet::from([0]));
    assert_eq!(most, 1);
}

/// v6.4's own `do_flush_stats()` under loom: two flushers race, and after
/// both joined `stats_flush_ongoing` is 0 and the next flush runs, in every
/// execution. Under the raw loom idiom a flusher after the race could find
/// the flag still set and skip, which the kernel cannot do.
#[test]
fn v6_4_flush_after_a_race_always_runs() {
    let cfg = Config::default();
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    loom::model(move || {
        let mm = loom::sync::Arc::new(State::<Loom>::new(Env::new(&cfg)));
        let flusher = || {
            let mm = mm.clone();
            loom::thread::spawn(move || V6_4.__mem_cgroup_flush_stats(&mm))
        };
        let (a, b) = (flusher(), flusher());
        let won = [a.join().unwrap(), b.join().unwrap()];
        let after = (
            atomic_read(&mm.stats_flush_ongoing),
            V6_4.__mem_cgroup_flush_stats(&mm),
        );
        s.lock()
            .unwrap()
            .insert((won.iter().filter(|w| **w).count(), after));
    });
    let seen = seen.lock().unwrap().clone();
    // One or both win (one after the other), and the flag is always free.
    assert!(
        seen.iter().all(|(_, after)| *after == (0, true)),
        "{seen:?}"
    );
    assert!(seen.iter().any(|(won, _)| *won == 1), "{seen:?}");
    assert!(seen.iter().any(|(won, _)| *won == 2), "{seen:?}");
}

/// The values thread A's `load(t)` returns over every execution loom runs
/// with preemption bound `bound`, while thread B does `load(t)` then
/// `fetch_add(t, 1)`. C11 (and SC) allow A to read 0 or 1.
fn a_reads(bound: Option<usize>) -> BTreeSet<usize> {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = bound;
    b.check(move || {
        let t = loom::sync::Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let (t1, t2) = (t.clone(), t.clone());
        let ha = loom::thread::spawn(move || t1.load(Relaxed));
        let hb = loom::thread::spawn(move || {
            let _ = t2.load(Relaxed);
            t2.fetch_add(1, Relaxed);
        });
        let v = ha.join().unwrap();
        hb.join().unwrap();
        s.lock().unwrap().insert(v);
    });
    let r = seen.lock().unwrap().clone();
    r
}

/// loom 0.7.3 keeps one `last_access` per atomic, so B's RMW is
/// race-checked only against B's own load, and A's earlier load is never
/// reordered after it: the unbounded search misses A reading 1, which a
/// bounded search (a different backtracking path) finds.
#[test]
fn loom_unbounded_never_reorders_a_load_after_a_later_rmw() {
    assert_eq!(
        a_reads(None),
        BTreeSet::from([0]),
        "unbounded loom now lets A read 1: loom fixed the missed reordering \
         (tokio-rs/loom#166, #392); revisit Backend::exhaustive() for unbounded loom \
         and docs/model.md"
    );
    assert_eq!(a_reads(Some(1)), BTreeSet::from([0, 1]));
    assert_eq!(a_reads(Some(2)), BTreeSet::from([0, 1]));
}

/// The kernel layer: `atomic_set(&stats_flush_threshold, 0)` racing an
/// `atomic_add` ends at 0 or at the added units, never above.
#[test]
fn atomic_set_is_never_undone_by_a_racing_atomic_add() {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    loom::model(move || {
        let t = loom::sync::Arc::new(Atomic::<Loom>::new(Var::Threshold { memcg: None }, 5));
        let t2 = t.clone();
        let h = loom::thread::spawn(move || atomic_add(1, &t2));
        atomic_set(&t, 0);
        h.join().unwrap();
        s.lock().unwrap().insert(atomic_read(&t));
    });
    assert_eq!(*seen.lock().unwrap(), BTreeSet::from([0, 1]));
}

/// Run `reader` and `writer` against a lock and a plain field under loom,
/// each taking the lock with `spin_trylock` of success ordering `order`.
fn trylock_message_passing(order: std::sync::atomic::Ordering) {
    loom::model(move || {
        let lock = loom::sync::Arc::new(SpinLock::<Loom>::new(LockName::StatsFlushLock));
        let data = loom::sync::Arc::new(Locked::<Loom>::new(Var::FlushTime, 0));
        let (l2, d2) = (lock.clone(), data.clone());
        let h = loom::thread::spawn(move || {
            if spin_trylock_with(&l2, order) {
                d2.set(1);
                spin_unlock(&l2);
            }
        });
        if spin_trylock_with(&lock, order) {
            // Reported as a causality violation unless the lock orders
            // this read after the other thread's write.
            let v = data.get();
            assert!(v == 0 || v == 1);
            spin_unlock(&lock);
        }
        h.join().unwrap();
    });
}

/// Message passing through the flush lock: data written before
/// `spin_unlock` is seen by the next `spin_trylock` winner (Result: Never
/// for the stale read), which is what the flusher's plain fields rely on.
#[test]
fn spin_trylock_acquire_sees_writes_before_spin_unlock() {
    trylock_message_passing(Acquire);
}

/// The same with a `Relaxed` trylock is a data race loom reports.
#[test]
#[should_panic(expected = "Causality violation")]
fn relaxed_spin_trylock_is_a_data_race() {
    trylock_message_passing(Relaxed);
}

fn step(actor: Actor, var: Var, op: Op, idiom: Idiom) -> Step {
    Step {
        actor,
        text: String::new(),
        access: Some(Access { var, op, idiom }),
    }
}

const THR: Var = Var::Threshold { memcg: None };
const AGG: Var = Var::Aggregate { memcg: 0 };
const FLUSH: Var = Var::Lock(LockName::StatsFlushLock);

fn state(cpu: u8) -> Var {
    Var::State { memcg: 0, cpu }
}

/// The translation reads the structured accesses, not the step texts: an
/// owner's `__this_cpu_add` is a store of the running sum, CPU-local and
/// flusher-private fields are left out, and the loads' values go to
/// `exists`; one register per declaration and every variable's initial
/// value, as herd7 needs them.
#[test]
fn export_translates_structured_accesses() {
    let u0 = Var::StatsUpdates {
        memcg: None,
        cpu: 0,
    };
    let steps = vec![
        step(
            Actor::Cpu(0),
            state(0),
            Op::Add { val: 2, new: 2 },
            Idiom::ThisCpuAdd,
        ),
        step(
            Actor::Cpu(0),
            u0,
            Op::Add { val: 2, new: 2 },
            Idiom::ThisCpuAddReturn,
        ),
        step(
            Actor::Cpu(0),
            state(0),
            Op::Add { val: 3, new: 5 },
            Idiom::ThisCpuAdd,
        ),
        step(Actor::Cpu(0), THR, Op::Read(0), Idiom::AtomicRead),
        step(
            Actor::Cpu(0),
            THR,
            Op::Add { val: 2, new: 2 },
            Idiom::AtomicAdd,
        ),
        step(Actor::Cpu(0), u0, Op::Write(0), Idiom::ThisCpuWrite),
        Step {
            actor: Actor::Reader(0),
            text: "-> flush".into(),
            access: None,
        },
        step(
            Actor::Periodic,
            FLUSH,
            Op::CmpXchg {
                old: 0,
                new: 1,
                ok: true,
            },
            Idiom::SpinTrylock,
        ),
        step(Actor::Periodic, state(0), Op::Read(5), Idiom::ReadOnce),
        step(
            Actor::Periodic,
            Var::StatePrev { memcg: 0, cpu: 0 },
            Op::Write(5),
            Idiom::Plain,
        ),
        step(Actor::Periodic, AGG, Op::Write(5), Idiom::WriteOnce),
        step(Actor::Periodic, THR, Op::Write(0), Idiom::AtomicSet),
        step(Actor::Periodic, FLUSH, Op::Write(0), Idiom::SpinUnlock),
    ];
    let out = export("flushcheck-test", &steps, &GLOBAL).expect("exported");
    let expected = "\
C flushcheck-test

(*
 * Result: Sometimes DATARACE
 *
 * The Result above states the values flushcheck observed, not an LKMM
 * expectation: herd7 answers whether LKMM allows them.
 * every SC interleaving (DFS): Sometimes (20 executions, 3 outcomes)
 * The outcome is reachable under SC: this test shows the trace's values,
 * not weak memory, and herd7's Sometimes says no more.
 *
 * Generated from a flushcheck trace. The kernel's tests are not here,
 * only their loads, and each thread runs its traced path. Pointers are
 * integers, so no address dependency orders anything.
 * Marking, as v5.19 to v6.7 (global threshold; v6.4's lines) marks it:
 *   CPU 0, state0: __this_cpu_add(), __mod_memcg_state(), v6.4
 *     mm/memcontrol.c:785
 *   CPU 0, thr: atomic_read(), memcg_rstat_updated(), v6.4
 *     mm/memcontrol.c:636
 *   CPU 0, thr: atomic_add(), memcg_rstat_updated(), v6.4
 *     mm/memcontrol.c:637
 *   periodic, state0: READ_ONCE(), mem_cgroup_css_rstat_flush(), v6.4
 *     mm/memcontrol.c:5592
 *   periodic, agg: +=, mem_cgroup_css_rstat_flush(), v6.4
 *     mm/memcontrol.c:5602
 *   periodic, thr: atomic_set(), do_flush_stats(), v6.4
 *     mm/memcontrol.c:660
 *
 * Data race (the DATARACE of the Result line: herd7 is expected to print
 * Flag data-race) on state0. state0: CPU 0's __this_cpu_add() (plain),
 * periodic's READ_ONCE(); undocumented in the kernel. A racy test's
 * verdict carries no LKMM guarantee.
 *)

{ agg=0; state0=0; thr=0; }

P0(int *state0, atomic_t *thr) /* CPU 0 */
{
\tint r0;

\t*state0 = 2; // __this_cpu_add()
\t*state0 = 5; // __this_cpu_add()
\tr0 = atomic_read(thr);
\tatomic_add(2, thr);
}

P1(int *agg, spinlock_t *flush_lock, int *state0, atomic_t *thr) /* periodic */
{
\tint r0;
\tint r1;

\tr0 = spin_trylock(flush_lock);
\tr1 = READ_ONCE(*state0);
\t*agg = 5; // +=
\tatomic_set(thr, 0);
\tspin_unlock(flush_lock);
}

exists (0:r0=0 /\\ 1:r0=1 /\\ 1:r1=5)
";
    assert_eq!(out, expected);
    check_syntax(&out).expect("herd7's syntax");
}

/// Locks, the plain `flush_next_time` store, and a failed trylock (whose
/// register is 0).
#[test]
fn export_locks_and_plain_stores() {
    let trylock = |ok: bool| Op::CmpXchg {
        old: u8::from(!ok).into(),
        new: 1,
        ok,
    };
    let rstat = Var::Lock(LockName::CgroupRstatLock);
    let steps = vec![
        step(Actor::Periodic, FLUSH, trylock(true), Idiom::SpinTrylock),
        step(Actor::Periodic, Var::FlushTime, Op::Write(4), Idiom::Plain),
        step(Actor::Periodic, rstat, Op::Write(1), Idiom::SpinLock),
        step(Actor::Reader(0), FLUSH, trylock(false), Idiom::SpinTrylock),
        step(Actor::Reader(0), AGG, Op::Read(0), Idiom::ReadOnce),
        step(Actor::Periodic, rstat, Op::Write(0), Idiom::SpinUnlock),
    ];
    let out = export("t", &steps, &GLOBAL).expect("exported");
    for line in [
        "P0(int *agg, spinlock_t *flush_lock) /* reader 0 */",
        "P1(spinlock_t *flush_lock, int *flush_next_time, spinlock_t *rstat_lock) /* periodic */",
        "\tr0 = spin_trylock(flush_lock);",
        "\tr1 = READ_ONCE(*agg);",
        "\t*flush_next_time = 4;",
        "\tspin_lock(rstat_lock);",
        "\tspin_unlock(rstat_lock);",
        "exists (0:r0=0 /\\ 0:r1=0 /\\ 1:r0=1)",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
}

/// Beyond MAX_VARIABLES a trace is sliced to its race: here a flusher
/// reads CPU 0's counter without CPU 0's second store after seeing the
/// count CPU 0 added after it (message passing), among reads of four other
/// counters. The slice keeps the counter and the count, and starts from
/// the values they had before the race.
#[test]
fn export_slices_beyond_max_variables_to_the_race() {
    let mut steps: Vec<Step> = (1..=MAX_VARIABLES as u8)
        .map(|c| step(Actor::Reader(0), state(c), Op::Read(0), Idiom::ReadOnce))
        .collect();
    let add = |val, new| Op::Add { val, new };
    steps.extend([
        step(Actor::Cpu(0), state(0), add(1, 1), Idiom::ThisCpuAdd),
        step(Actor::Cpu(0), THR, add(1, 0), Idiom::AtomicAdd),
        step(Actor::Cpu(0), state(0), add(1, 2), Idiom::ThisCpuAdd),
        step(Actor::Cpu(0), THR, add(1, 1), Idiom::AtomicAdd),
        step(Actor::Periodic, THR, Op::Read(1), Idiom::AtomicRead),
        step(Actor::Periodic, state(0), Op::Read(1), Idiom::ReadOnce),
    ]);
    let out = export("t", &steps, &GLOBAL).expect("sliced");
    check_syntax(&out).expect("herd7's syntax");
    for line in [
        "{ state0=1; thr=0; }",
        "P0(int *state0, atomic_t *thr) /* CPU 0 */",
        "\t*state0 = 2; // __this_cpu_add()\n\tatomic_add(1, thr);\n}",
        "P1(int *state0, atomic_t *thr) /* periodic */",
        "\tr0 = atomic_read(thr);\n\tr1 = READ_ONCE(*state0);",
        "exists (1:r0=1 /\\ 1:r1=1)",
        "Sliced: the trace touches 6 shared variables",
        "periodic's load of state0",
        "threads left out: reader 0",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(!out.contains("*state1"), "{out}");
}

/// A value a load returned that no store wrote is the variable's initial
/// value (the model starts `flush_next_time` at -1): the init block states
/// it, with every other variable's.
#[test]
fn export_states_initial_values_the_trace_reveals() {
    let steps = vec![
        step(Actor::Periodic, Var::FlushTime, Op::Read(-1), Idiom::Plain),
        step(Actor::Periodic, Var::FlushTime, Op::Write(4), Idiom::Plain),
        step(Actor::Reader(0), Var::FlushTime, Op::Read(4), Idiom::Plain),
        step(Actor::Reader(0), AGG, Op::Read(0), Idiom::ReadOnce),
    ];
    let out = export("t", &steps, &GLOBAL).expect("exported");
    check_syntax(&out).expect("herd7's syntax");
    assert!(out.contains("{ agg=0; flush_next_time=-1; }"), "{out}");
    assert!(
        out.contains("exists (0:r0=4 /\\ 0:r1=0 /\\ 1:r0=-1)"),
        "{out}"
    );
}

/// A failed `atomic_cmpxchg` does not record the value it expected, so no
/// faithful statement exists for it.
#[test]
fn export_refuses_a_failed_cmpxchg() {
    let steps = vec![step(
        Actor::Cpu(0),
        THR,
        Op::CmpXchg {
            old: 3,
            new: 2,
            ok: false,
        },
        Idiom::AtomicCmpxchg,
    )];
    let err = export("t", &steps, &GLOBAL).unwrap_err();
    assert!(
        err.contains("does not record the value it expected"),
        "{err}"
    );
}

/// A real trace: the smallest C1 violation (one CPU between
/// `__this_cpu_add_return()` and `atomic_add()`, a reader skipping the
/// flush) translates to its two shared variables, `stats_updates` left
/// out; but the reader's read of the threshold before the add is every
/// interleaving's outcome (the staleness is the counter's value, not an
/// ordering), so the test would show no race and is not exported: the
/// export says why (issue 40; the old export said Sometimes where herd7
/// says Always).
#[test]
fn export_of_the_smallest_documented_bound_witness() {
    let b = measure_exhaustive(
        &cfg::smallest_c1(),
        variant("v5.19"),
        reg(),
        100_000,
        Duration::from_secs(60),
    );
    assert_eq!(b.stale_at_no_flush, 2, "{b:?}");
    let prog = program("t", &b.witness, &GLOBAL).expect("translated");
    let out = prog.render().expect("rendered");
    for line in [
        "P0(int *state0) /* CPU 0 */",
        "\t*state0 = 1; // __this_cpu_add()",
        "\t*state0 = 2; // __this_cpu_add()",
        "P1(atomic_t *thr) /* reader 0 */",
        "\tr0 = atomic_read(thr);",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(
        !out.contains("U[") && !out.contains("stats_updates"),
        "{out}"
    );
    let err = export("t", &b.witness, &GLOBAL).unwrap_err();
    assert!(
        err.starts_with("not exported as a litmus test: every SC interleaving of the test gives the traced outcome (Always"),
        "{err}"
    );
}

/// The `flushcheck explain` commands README.md shows (docs/*.md's are
/// run, and their exports checked, by tests/docs.rs), with JSON output.
fn readme_explains() -> Vec<Vec<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    md.lines()
        .filter_map(|l| l.trim().strip_prefix("flushcheck explain "))
        .map(|rest| {
            let mut args = vec!["explain".to_string()];
            args.extend(rest.split_whitespace().map(String::from));
            args.extend(["--format".into(), "json".into()]);
            args
        })
        .collect()
}

/// Issue 20: the README's `explain` export is in herd7's syntax too.
#[test]
#[ignore = "the README's command searches every suite entry: about two minutes"]
fn the_readme_explain_export_is_in_herd7s_syntax() {
    let cmds = readme_explains();
    assert!(!cmds.is_empty());
    for args in cmds {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_flushcheck"))
            .args(&args)
            .output()
            .expect("run flushcheck");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let v = crate::schemas::data(&String::from_utf8_lossy(&out.stdout), "counterexample");
        let litmus = v["litmus"].as_str().expect("a litmus test");
        check_syntax(litmus).unwrap_or_else(|e| panic!("{args:?}: {e}\n{litmus}"));
    }
}

/// Issue 31, issue 40: a per-CPU operation (v6.17's `this_cpu_add` of a
/// counter, `this_cpu_add_return`/`this_cpu_xchg` of `stats_updates`) and
/// the flusher's `+=` of the aggregate are plain C accesses in the export,
/// spelled as the kernel spells them in a comment, as v6.17's table marks
/// them; the flusher's `READ_ONCE` and `WRITE_ONCE` stay marked; the race
/// is named in the header and on the Result line (DATARACE).
#[test]
fn per_cpu_operations_are_exported_plain() {
    let u0 = Var::StatsUpdates {
        memcg: Some(1),
        cpu: 0,
    };
    let steps = vec![
        step(
            Actor::Cpu(0),
            state(0),
            Op::Add { val: 2, new: 2 },
            Idiom::ThisCpuAdd,
        ),
        step(Actor::Cpu(0), u0, Op::Read(0), Idiom::ThisCpuAddReturn),
        step(Actor::Cpu(0), u0, Op::Write(2), Idiom::ThisCpuAddReturn),
        step(Actor::Cpu(0), u0, Op::Read(2), Idiom::ThisCpuXchg),
        step(Actor::Cpu(0), u0, Op::Write(0), Idiom::ThisCpuXchg),
        step(Actor::Periodic, state(0), Op::Read(2), Idiom::ReadOnce),
        step(Actor::Periodic, AGG, Op::Write(2), Idiom::WriteOnce),
        step(Actor::Periodic, u0, Op::Write(0), Idiom::WriteOnce),
        step(Actor::Reader(0), AGG, Op::Read(2), Idiom::ReadOnce),
    ];
    let prog = program("t", &steps, &V6_17).expect("exported");
    let mut per_cpu = 0;
    for (t, th) in prog.threads.iter().enumerate() {
        for i in th.flat() {
            let plain = matches!(
                i,
                Instr::Load {
                    load: Load::Plain(_),
                    ..
                } | Instr::Store {
                    store: Store::Plain(_),
                    ..
                }
            );
            let v = i.var().unwrap_or_default();
            // CPU 0's every access is a per-CPU operation, the periodic
            // flusher's store to agg is its `+=`; the rest are marked.
            let want_plain = th.note == "CPU 0"
                || (th.note == "periodic" && v == "agg" && matches!(i, Instr::Store { .. }));
            assert_eq!(plain, want_plain, "P{t} ({}): {i:?}", th.note);
            per_cpu += usize::from(want_plain);
        }
    }
    assert_eq!(per_cpu, 6, "{prog:?}");
    assert_eq!(plain_races(&prog), ["agg", "m1_updates0", "state0"]);
    let out = export("t", &steps, &V6_17).expect("exported");
    check_syntax(&out).expect("herd7's syntax");
    for line in [
        " * Result: Sometimes DATARACE",
        "\t*state0 = 2; // this_cpu_add()",
        "\tr0 = *m1_updates0; // this_cpu_add_return()",
        "\t*m1_updates0 = 0; // this_cpu_xchg()",
        "\t*agg = 2; // +=",
        "\tWRITE_ONCE(*m1_updates0, 0);",
        "Data race (the DATARACE",
        "undocumented in the kernel",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(
        !out.contains("__this_cpu_add"),
        "v6.17 calls this_cpu_add():\n{out}"
    );
    assert!(!out.contains("This may race"), "{out}");
    // Both under one lock: ordered, no race; one outside it: a race.
    let lock = Var::Lock(LockName::CgroupRstatLock);
    let locked = |a: Actor| {
        [
            step(a, lock, Op::Write(1), Idiom::SpinLock),
            step(a, AGG, Op::Write(1), Idiom::Plain),
            step(a, lock, Op::Write(0), Idiom::SpinUnlock),
        ]
    };
    let mut both: Vec<Step> = locked(Actor::Periodic).into();
    both.extend(locked(Actor::Reader(0)));
    both.push(step(Actor::Reader(0), THR, Op::Read(0), Idiom::AtomicRead));
    let ok = program("t", &both, &GLOBAL).expect("exported");
    assert!(plain_races(&ok).is_empty());
    both.remove(3);
    assert_eq!(
        plain_races(&program("t", &both, &GLOBAL).expect("exported")),
        ["agg"]
    );
}

/// Issue 31: every export's SC line is the project's own SC run of the
/// exported test, and only an SC-forbidden outcome is called a
/// weak-memory result (here a store-buffering slice, forbidden, and a
/// sequential trace, reachable).
#[test]
fn every_export_states_its_sc_reachability() {
    let sb = {
        let u = Var::UpdatedNext { memcg: 0, cpu: 0 };
        vec![
            step(
                Actor::Cpu(0),
                state(0),
                Op::Add { val: 1, new: 1 },
                Idiom::ThisCpuAdd,
            ),
            step(Actor::Periodic, u, Op::Write(0), Idiom::WriteOnce),
            step(Actor::Periodic, state(0), Op::Read(0), Idiom::ReadOnce),
            step(Actor::Cpu(0), u, Op::Read(1), Idiom::ReadOnce),
        ]
    };
    let seq = vec![
        step(
            Actor::Cpu(0),
            state(0),
            Op::Add { val: 1, new: 1 },
            Idiom::ThisCpuAdd,
        ),
        step(
            Actor::Cpu(0),
            THR,
            Op::Add { val: 1, new: 1 },
            Idiom::AtomicAdd,
        ),
        step(Actor::Periodic, THR, Op::Read(1), Idiom::AtomicRead),
        step(Actor::Periodic, state(0), Op::Read(1), Idiom::ReadOnce),
    ];
    let mut seen = BTreeSet::new();
    for steps in [sb, seq] {
        let prog = program("t", &steps, &V6_8).expect("exported");
        let out = export("t", &steps, &V6_8).expect("exported");
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(" * ").filter(|l| l.starts_with(SC_LINE)))
            .unwrap_or_else(|| panic!("no SC line in\n{out}"));
        let m = measure(&prog, &sc_backend(), Duration::from_secs(20)).expect("SC run");
        assert!(m.finished);
        let o = m.observation(&prog.target());
        assert_eq!(line, sc_verdict(&prog).0);
        assert_eq!(Some(o), sc_verdict(&prog).1);
        assert_eq!(
            line,
            format!(
                "{SC_LINE} {o} ({} executions, {} outcomes)",
                m.executions,
                m.outcomes.len()
            )
        );
        let reachable = o != Observation::Never;
        assert_eq!(out.contains("a weak-memory result"), !reachable, "{out}");
        assert_eq!(out.contains("reachable under SC"), reachable, "{out}");
        seen.insert(reachable);
    }
    assert_eq!(seen.len(), 2, "one forbidden and one reachable export");
}

/// Issue 31, issue 40: main's reads after the joins are LKMM final-state
/// conditions (`x=v`), never one more thread, whether or not main also
/// writes: what it reads before writing is the final state.
#[test]
fn quiescent_reads_are_final_state_conditions() {
    let add = Op::Add { val: 2, new: 2 };
    let mut steps = vec![
        step(Actor::Cpu(0), state(0), add, Idiom::ThisCpuAdd),
        step(Actor::Cpu(0), THR, add, Idiom::AtomicAdd),
        step(Actor::Periodic, THR, Op::Read(2), Idiom::AtomicRead),
        step(Actor::Main, state(0), Op::Read(2), Idiom::ReadOnce),
        step(Actor::Main, THR, Op::Read(2), Idiom::AtomicRead),
    ];
    let out = export("t", &steps, &GLOBAL).expect("exported");
    check_syntax(&out).expect("herd7's syntax");
    assert!(
        out.contains("exists (1:r0=2 /\\ state0=2 /\\ thr=2)"),
        "{out}"
    );
    assert!(!out.contains("/* main */"), "{out}");
    assert!(out.contains("final-state"), "{out}");
    // main's own writes, and its reads of what it wrote, are not the
    // final state of the threads: they are left out.
    steps.push(step(Actor::Main, AGG, Op::Write(2), Idiom::WriteOnce));
    steps.push(step(Actor::Main, AGG, Op::Read(2), Idiom::ReadOnce));
    steps.push(step(Actor::Main, THR, Op::Write(0), Idiom::AtomicSet));
    let again = export("t", &steps, &GLOBAL).expect("exported");
    assert!(!again.contains("/* main */"), "{again}");
    assert!(
        again.contains("exists (1:r0=2 /\\ state0=2 /\\ thr=2)"),
        "{again}"
    );
}
