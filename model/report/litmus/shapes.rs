//! The classic litmus shapes of the kernel's catalogue
//! (tools/memory-model/litmus-tests), in the forms the model uses, for
//! measuring loom against LKMM (docs/weak-memory.md).
//!
//! Each shape carries the result LKMM gives it: the catalogue file's own
//! `Result:` line where the catalogue has the test (named the same), else
//! herd7's answer with the LKMM of the kernel tree (stated per shape).
//! The names follow the catalogue's convention: the shape, then one
//! descriptor per thread (`po` program order, `once` READ_ONCE or
//! WRITE_ONCE, `fencemb` smp_mb() between, `release`/`acquire`, `lock`),
//! and `+Once` suffixes for threads with a single access.

use super::prog::{Instr as I, Observation, Program};

use Observation::{Never, Sometimes};

/// One shape: the test and where its LKMM result comes from.
pub struct Shape {
    /// The test; its `expected` is LKMM's result.
    pub prog: Program,
    /// `true` if the kernel's catalogue has this test (with this name).
    pub catalogue: bool,
    /// What the shape asks, one line.
    pub what: &'static str,
}

fn shape(catalogue: bool, what: &'static str, prog: Program) -> Shape {
    Shape {
        prog,
        catalogue,
        what,
    }
}

/// Store buffering: P0 writes x then reads y, P1 writes y then reads x;
/// `w` and `r` build each side's write and read, `mid` goes between.
fn sb(name: &str, expected: Observation, sides: [(I, Option<I>, I); 2]) -> Program {
    let mut p = Program::new(name).expect(expected);
    for (k, (w, mid, r)) in sides.into_iter().enumerate() {
        let mut body = vec![w];
        body.extend(mid);
        body.push(r);
        p = p.thread("", body);
        p = p.reg(k, 0, 0);
    }
    p
}

/// Every shape, in table order.
pub fn all() -> Vec<Shape> {
    let (x, y, z) = ("x", "y", "z");
    let once_sb = |mid0: Option<I>, mid1: Option<I>| {
        [
            (I::write_once(x, 1), mid0, I::read_once(y, 0)),
            (I::write_once(y, 1), mid1, I::read_once(x, 0)),
        ]
    };
    let mp = |name: &str, e, w: Vec<I>, r: Vec<I>| {
        Program::new(name)
            .expect(e)
            .thread("", w)
            .thread("", r)
            .reg(1, 0, 1)
            .reg(1, 1, 0)
    };
    let lb = |name: &str, e, t0: Vec<I>, t1: Vec<I>| {
        Program::new(name)
            .expect(e)
            .thread("", t0)
            .thread("", t1)
            .reg(0, 0, 1)
            .reg(1, 0, 1)
    };
    let wrc = |name: &str, e, t1: Vec<I>, t2: Vec<I>| {
        Program::new(name)
            .expect(e)
            .thread("", vec![I::write_once(x, 1)])
            .thread("", t1)
            .thread("", t2)
            .reg(1, 0, 1)
            .reg(2, 0, 1)
            .reg(2, 1, 0)
    };
    let iriw = |name: &str, e, mid: Option<I>| {
        let reader = |a: &str, b: &str| {
            let mut v = vec![I::read_once(a, 0)];
            v.extend(mid.clone());
            v.push(I::read_once(b, 1));
            v
        };
        Program::new(name)
            .expect(e)
            .thread("", vec![I::write_once(x, 1)])
            .thread("", reader(x, y))
            .thread("", vec![I::write_once(y, 1)])
            .thread("", reader(y, x))
            .reg(1, 0, 1)
            .reg(1, 1, 0)
            .reg(3, 0, 1)
            .reg(3, 1, 0)
    };
    let r = |name: &str, e, mid: Option<I>| {
        let mut t0 = vec![I::write_once(x, 1)];
        t0.extend(mid.clone());
        t0.push(I::write_once(y, 1));
        let mut t1 = vec![I::write_once(y, 2)];
        t1.extend(mid);
        t1.push(I::read_once(x, 0));
        Program::new(name)
            .expect(e)
            .thread("", t0)
            .thread("", t1)
            .fin(y, 2)
            .reg(1, 0, 0)
    };
    let s = |name: &str, e, mid: Option<I>, load: I| {
        let mut t0 = vec![I::write_once(x, 2)];
        t0.extend(mid);
        t0.push(I::write_once(y, 1));
        Program::new(name)
            .expect(e)
            .thread("", t0)
            .thread("", vec![load, I::write_once(x, 1)])
            .fin(x, 2)
            .reg(1, 0, 1)
    };
    let w22 = |name: &str, e, mid: Option<I>| {
        let side = |a: &str, b: &str| {
            let mut v = vec![I::write_once(a, 1)];
            v.extend(mid.clone());
            v.push(I::write_once(b, 2));
            v
        };
        Program::new(name)
            .expect(e)
            .thread("", side(x, y))
            .thread("", side(y, x))
            .fin(x, 1)
            .fin(y, 1)
    };
    vec![
        shape(
            true,
            "store buffering, no ordering",
            sb("SB+poonceonces", Sometimes, once_sb(None, None)),
        ),
        shape(
            true,
            "store buffering, smp_mb() on both sides (Dekker)",
            sb(
                "SB+fencembonceonces",
                Never,
                once_sb(Some(I::mb()), Some(I::mb())),
            ),
        ),
        shape(
            false,
            "store buffering, smp_mb() on one side only",
            sb(
                "SB+fencembonceonce+poonceonce",
                Sometimes,
                once_sb(Some(I::mb()), None),
            ),
        ),
        shape(
            false,
            "store buffering through non-value-returning atomic_add(): unordered",
            sb(
                "SB+poatomicaddonces",
                Sometimes,
                [
                    (I::atomic_add(x, 1), None, I::atomic_read(y, 0)),
                    (I::atomic_add(y, 1), None, I::atomic_read(x, 0)),
                ],
            ),
        ),
        shape(
            false,
            "store buffering through atomic_xchg(): fully ordered",
            sb(
                "SB+poatomicxchgonces",
                Never,
                [
                    (I::atomic_xchg(x, 1, 1), None, I::atomic_read(y, 0)),
                    (I::atomic_xchg(y, 1, 1), None, I::atomic_read(x, 0)),
                ],
            ),
        ),
        shape(
            true,
            "message passing, no ordering",
            mp(
                "MP+poonceonces",
                Sometimes,
                vec![I::write_once(x, 1), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "message passing, release and acquire",
            mp(
                "MP+pooncerelease+poacquireonce",
                Never,
                vec![I::write_once(x, 1), I::store_release(y, 1)],
                vec![I::load_acquire(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "message passing, smp_wmb() and smp_rmb()",
            mp(
                "MP+fencewmbonceonce+fencermbonceonce",
                Never,
                vec![I::write_once(x, 1), I::wmb(), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::rmb(), I::read_once(x, 1)],
            ),
        ),
        shape(
            false,
            "message passing, smp_wmb() only (the reader unordered)",
            mp(
                "MP+fencewmbonceonce+poonceonce",
                Sometimes,
                vec![I::write_once(x, 1), I::wmb(), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "message passing, the flag written and read under a lock",
            mp(
                "MP+polocks",
                Never,
                vec![
                    I::write_once(x, 1),
                    I::lock("mylock"),
                    I::write_once(y, 1),
                    I::unlock("mylock"),
                ],
                vec![
                    I::lock("mylock"),
                    I::read_once(y, 0),
                    I::unlock("mylock"),
                    I::read_once(x, 1),
                ],
            ),
        ),
        shape(
            true,
            "message passing, the data written and read under a lock",
            mp(
                "MP+porevlocks",
                Never,
                vec![
                    I::lock("mylock"),
                    I::write_once(x, 1),
                    I::unlock("mylock"),
                    I::write_once(y, 1),
                ],
                vec![
                    I::read_once(y, 0),
                    I::lock("mylock"),
                    I::read_once(x, 1),
                    I::unlock("mylock"),
                ],
            ),
        ),
        shape(
            false,
            "message passing through a non-value-returning atomic_add() and atomic_read()",
            mp(
                "MP+poonceatomicadd+poatomicreadonce",
                Sometimes,
                vec![I::write_once(x, 1), I::atomic_add(y, 1)],
                vec![I::atomic_read(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            false,
            "message passing through cmpxchg() and smp_load_acquire() (llist_add, llist_del_first)",
            mp(
                "MP+pooncecmpxchg+poacquireonce",
                Never,
                vec![I::write_once(x, 1), I::cmpxchg(y, 0, 1, 0)],
                vec![I::load_acquire(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "load buffering, no ordering",
            lb(
                "LB+poonceonces",
                Sometimes,
                vec![I::read_once(x, 0), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::write_once(x, 1)],
            ),
        ),
        shape(
            true,
            "load buffering, acquire and release",
            lb(
                "LB+poacquireonce+pooncerelease",
                Never,
                vec![I::load_acquire(x, 0), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::store_release(x, 1)],
            ),
        ),
        shape(
            false,
            "load buffering, smp_mb() on both sides",
            lb(
                "LB+fencembonceonces",
                Never,
                vec![I::read_once(x, 0), I::mb(), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::mb(), I::write_once(x, 1)],
            ),
        ),
        shape(
            true,
            "write-to-read causality, no ordering",
            wrc(
                "WRC+poonceonces+Once",
                Sometimes,
                vec![I::read_once(x, 0), I::write_once(y, 1)],
                vec![I::read_once(y, 0), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "write-to-read causality, release then smp_rmb() (A-cumulativity)",
            wrc(
                "WRC+pooncerelease+fencermbonceonce+Once",
                Never,
                vec![I::read_once(x, 0), I::store_release(y, 1)],
                vec![I::read_once(y, 0), I::rmb(), I::read_once(x, 1)],
            ),
        ),
        shape(
            true,
            "independent reads of independent writes, no ordering",
            iriw("IRIW+poonceonces+OnceOnce", Sometimes, None),
        ),
        shape(
            true,
            "independent reads of independent writes, smp_mb() between the reads",
            iriw("IRIW+fencembonceonces+OnceOnce", Never, Some(I::mb())),
        ),
        shape(
            true,
            "R, no ordering",
            r("R+poonceonces", Sometimes, None),
        ),
        shape(
            true,
            "R, smp_mb() on both sides",
            r("R+fencembonceonces", Never, Some(I::mb())),
        ),
        shape(
            true,
            "S, no ordering",
            s("S+poonceonces", Sometimes, None, I::read_once(y, 0)),
        ),
        shape(
            true,
            "S, smp_wmb() and an acquire",
            s(
                "S+fencewmbonceonce+poacquireonce",
                Never,
                Some(I::wmb()),
                I::load_acquire(y, 0),
            ),
        ),
        shape(
            false,
            "2+2W, no ordering",
            w22("2+2W+poonceonces", Sometimes, None),
        ),
        shape(
            false,
            "2+2W, smp_wmb() on both sides",
            w22("2+2W+fencewmbonceonces", Sometimes, Some(I::wmb())),
        ),
        shape(
            false,
            "2+2W, smp_mb() on both sides",
            w22("2+2W+fencembonceonces", Never, Some(I::mb())),
        ),
        shape(
            true,
            "read-read coherence",
            Program::new("CoRR+poonceonce+Once")
                .expect(Never)
                .thread("", vec![I::write_once(x, 1)])
                .thread("", vec![I::read_once(x, 0), I::read_once(x, 1)])
                .reg(1, 0, 1)
                .reg(1, 1, 0),
        ),
        shape(
            true,
            "a lock's ordering, seen by a thread that does not take it",
            Program::new("Z6.0+pooncelock+pooncelock+pombonce")
                .expect(Sometimes)
                .thread(
                    "",
                    vec![
                        I::lock("mylock"),
                        I::write_once(x, 1),
                        I::write_once(y, 1),
                        I::unlock("mylock"),
                    ],
                )
                .thread(
                    "",
                    vec![
                        I::lock("mylock"),
                        I::read_once(y, 0),
                        I::write_once(z, 1),
                        I::unlock("mylock"),
                    ],
                )
                .thread(
                    "",
                    vec![I::write_once(z, 2), I::mb(), I::read_once(x, 0)],
                )
                .reg(1, 0, 1)
                .fin(z, 2)
                .reg(2, 0, 0),
        ),
        shape(
            false,
            "atomicity: atomic_add() racing atomic_set() cannot undo the set",
            Program::new("RMW+atomicadd+atomicset")
                .expect(Never)
                .init(x, 5)
                .thread("", vec![I::atomic_add(x, 1)])
                .thread("", vec![I::atomic_set(x, 0)])
                .fin(x, 6),
        ),
        shape(
            false,
            "a load racing another thread's load then atomic_add() (v6.0's skip test)",
            Program::new("RR+atomicread+poatomicreadatomicadd")
                .expect(Sometimes)
                .thread("", vec![I::atomic_read(x, 0)])
                .thread("", vec![I::atomic_read(x, 0), I::atomic_add(x, 1)])
                .reg(0, 0, 1),
        ),
        shape(
            false,
            "store buffering through spin_lock()/spin_unlock() critical sections of different locks",
            sb(
                "SB+polockonces",
                Sometimes,
                [
                    (I::write_once(x, 1), Some(I::lock("l0")), I::read_once(y, 0)),
                    (I::write_once(y, 1), Some(I::lock("l1")), I::read_once(x, 0)),
                ],
            )
            .with_unlocks(),
        ),
    ]
}

impl Program {
    /// Close every lock a thread leaves held, at its end.
    fn with_unlocks(mut self) -> Program {
        for t in &mut self.threads {
            let mut held: Vec<String> = Vec::new();
            for i in &t.body {
                match i {
                    I::Lock(l) => held.push(l.clone()),
                    I::Unlock(l) => held.retain(|h| h != l),
                    _ => {}
                }
            }
            for l in held.into_iter().rev() {
                t.body.push(I::unlock(&l));
            }
        }
        self
    }
}
