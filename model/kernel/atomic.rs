//! `atomic_t`, `atomic64_t`, `atomic_long_t` and `READ_ONCE`/`WRITE_ONCE`
//! on shared integers.

use std::sync::atomic::Ordering;

use crate::vocab::obs::{Access, Idiom, Obs, Op, Var};
use crate::vocab::{BackendKind, ModelAtomic, Platform};

/// An `atomic_t` (also `atomic64_t`, `atomic_long_t`), or a shared `long`
/// accessed with `READ_ONCE`/`WRITE_ONCE`, named by the kernel variable it
/// stands for.
pub struct Atomic<P: Platform> {
    pub(crate) a: P::Atomic,
    var: Var,
}

impl<P: Platform> Atomic<P> {
    /// `ATOMIC_INIT(i)` for the variable `var`.
    pub fn new(var: Var, i: i64) -> Self {
        named(var);
        Atomic {
            a: P::Atomic::new(i),
            var,
        }
    }

    /// The variable this atomic stands for.
    pub fn var(&self) -> Var {
        self.var
    }

    /// Overwrite with `v`, unobserved: the lifetime model's free, which
    /// makes every later access to the object a dependent of the free for
    /// loom's search.
    pub(crate) fn poison(&self, v: i64) {
        store_against_rmw::<P>(&self.a, v, Ordering::Relaxed);
    }
}

/// Cross-check a new location's kernel name against the CPU it is built
/// for ([`crate::vocab::footprint::named_for`]).
pub(crate) fn named(var: Var) {
    if let Some(c) = var.cpu() {
        crate::vocab::footprint::named_for(c);
    }
}

/// Report an access to `v` (nothing is built unless a sink listens).
#[inline(always)]
pub(crate) fn observe<P: Platform>(var: Var, op: Op, idiom: Idiom) {
    P::emit(|| Obs::Access(Access { var, op, idiom }));
}

/// `atomic_read(v)`: LKMM plain-atomic load, `Relaxed`.
pub fn atomic_read<P: Platform>(v: &Atomic<P>) -> i64 {
    let x = v.a.load(Ordering::Relaxed);
    observe::<P>(v.var, Op::Read(x), Idiom::AtomicRead);
    x
}

/// `atomic_set(v, i)`: LKMM unordered store, `Relaxed`.
///
/// NOTE(loom): loom 0.7.3 lets an RMW that races with a plain store read a
/// stale value and then order its write last, so an `atomic_add` could undo
/// this reset (tokio-rs/loom#254, #389). Under loom the store is therefore
/// issued as a `swap`, which loom orders correctly against RMWs and which
/// C11 gives the same meaning here because the old value is discarded.
/// `tests/suite/litmus.rs` pins the loom behaviour so a fixed release is noticed.
pub fn atomic_set<P: Platform>(v: &Atomic<P>, i: i64) {
    store_against_rmw::<P>(&v.a, i, Ordering::Relaxed);
    observe::<P>(v.var, Op::Write(i), Idiom::AtomicSet);
}

/// `atomic_add(i, v)`: non-value-returning RMW, unordered in LKMM, so a
/// `Relaxed` `fetch_add`.
pub fn atomic_add<P: Platform>(i: i64, v: &Atomic<P>) {
    add_observed(v, i, Ordering::Relaxed);
}

/// `fetch_add` with `order`, reported as an `atomic_add`; returns the old
/// value.
fn add_observed<P: Platform>(v: &Atomic<P>, i: i64, order: Ordering) -> i64 {
    let old = v.a.fetch_add(i, order);
    observe::<P>(
        v.var,
        Op::Add {
            val: i,
            new: old + i,
        },
        Idiom::AtomicAdd,
    );
    old
}

/// `atomic_add_return(i, v)` (`atomic_dec_and_test()`, `percpu_ref_put()`
/// in atomic mode): a fully ordered value-returning RMW in LKMM; returns the
/// new value.
///
/// NOTE(kernel): modelled as `AcqRel` between `SeqCst` fences, as
/// [`atomic_xchg`].
pub fn atomic_add_return<P: Platform>(i: i64, v: &Atomic<P>) -> i64 {
    P::fence(Ordering::SeqCst);
    let old = add_observed(v, i, Ordering::AcqRel);
    P::fence(Ordering::SeqCst);
    old + i
}

/// `atomic_xchg(v, new)`: a fully ordered value-returning RMW in LKMM.
///
/// NOTE(kernel): modelled as `AcqRel` surrounded by `SeqCst` fences, since
/// loom gives SeqCst accesses only acquire/release semantics and checks
/// fences (docs/model.md, section 4).
pub fn atomic_xchg<P: Platform>(v: &Atomic<P>, new: i64) -> i64 {
    P::fence(Ordering::SeqCst);
    let old = v.a.swap(new, Ordering::AcqRel);
    // Reported in the step of the swap: the fence is a step of its own.
    observe::<P>(v.var, Op::Xchg { old, new }, Idiom::AtomicXchg);
    P::fence(Ordering::SeqCst);
    old
}

/// `atomic_cmpxchg(v, old, new)`: fully ordered when it succeeds, unordered
/// when it fails (LKMM); returns the value found.
///
/// NOTE(kernel): the success case is modelled as `AcqRel` between `SeqCst`
/// fences, as [`atomic_xchg`].
pub fn atomic_cmpxchg<P: Platform>(v: &Atomic<P>, old: i64, new: i64) -> i64 {
    cmpxchg_as(v, old, new, Idiom::AtomicCmpxchg)
}

/// The exchange of [`atomic_cmpxchg`] and [`cmpxchg`], reported as `idiom`.
fn cmpxchg_as<P: Platform>(v: &Atomic<P>, old: i64, new: i64, idiom: Idiom) -> i64 {
    P::fence(Ordering::SeqCst);
    let r =
        v.a.compare_exchange(old, new, Ordering::AcqRel, Ordering::Relaxed);
    let found = r.unwrap_or_else(|x| x);
    // Reported in the step of the exchange: the fence is a step of its own.
    observe::<P>(
        v.var,
        Op::CmpXchg {
            old: found,
            new,
            ok: r.is_ok(),
        },
        idiom,
    );
    if r.is_ok() {
        P::fence(Ordering::SeqCst);
    }
    found
}

/// `cmpxchg(ptr, old, new)` / `try_cmpxchg()` on a plain word (the llist
/// pointers of v6.17 on): ordered as [`atomic_cmpxchg`], reported as a
/// plain word's exchange (a litmus test declares the word `int`).
pub fn cmpxchg<P: Platform>(v: &Atomic<P>, old: i64, new: i64) -> i64 {
    cmpxchg_as(v, old, new, Idiom::Cmpxchg)
}

/// `smp_load_acquire(p)`: an `Acquire` load.
pub fn smp_load_acquire<P: Platform>(x: &Atomic<P>) -> i64 {
    let v = x.a.load(Ordering::Acquire);
    observe::<P>(x.var, Op::Read(v), Idiom::LoadAcquire);
    v
}

/// `smp_store_release(p, v)`: a `Release` store.
///
/// NOTE(kernel): C11 release is not A-cumulative through a relaxed read
/// of another thread's store the way LKMM's release is; it still orders
/// that store, as a read-read coherence argument shows for the WRC shape
/// (docs/weak-memory.md measures it).
pub fn smp_store_release<P: Platform>(x: &Atomic<P>, val: i64) {
    x.a.store(val, Ordering::Release);
    observe::<P>(x.var, Op::Write(val), Idiom::StoreRelease);
}

/// `READ_ONCE(x)`: a `Relaxed` load (loses LKMM dependency ordering).
pub fn read_once<P: Platform>(x: &Atomic<P>) -> i64 {
    read_once_as(x, Idiom::ReadOnce)
}

/// `WRITE_ONCE(x, val)`: a `Relaxed` store.
pub fn write_once<P: Platform>(x: &Atomic<P>, val: i64) {
    write_once_as(x, val, Idiom::WriteOnce);
}

/// A `Relaxed` load reported as `idiom`.
pub(crate) fn read_once_as<P: Platform>(x: &Atomic<P>, idiom: Idiom) -> i64 {
    let v = x.a.load(Ordering::Relaxed);
    observe::<P>(x.var, Op::Read(v), idiom);
    v
}

/// A `Relaxed` store reported as `idiom`.
pub(crate) fn write_once_as<P: Platform>(x: &Atomic<P>, val: i64, idiom: Idiom) {
    x.a.store(val, Ordering::Relaxed);
    observe::<P>(x.var, Op::Write(val), idiom);
}

/// `atomic64_add()` / `atomic_long_add()`: see [`atomic_add`].
pub use atomic_add as atomic64_add;
/// `atomic64_read()` (v6.8-v6.14 `vmstats->stats_updates`), and
/// `atomic_long_read()` (v7.1): the same as [`atomic_read`] in LKMM.
pub use atomic_read as atomic64_read;
/// `atomic64_set()` / `atomic_long_set()`: see [`atomic_set`].
pub use atomic_set as atomic64_set;

/// `__this_cpu_add(pcp, val)` on a per-CPU counter that remote CPUs read
/// with `READ_ONCE` (`memcg->vmstats_percpu->state[idx]`); the caller
/// passes the calling CPU's instance ([`crate::kernel::PerCpu::this_cpu`]).
///
/// NOTE(kernel): the kernel uses one local, interrupt-atomic instruction.
/// The owner is the only writer, so a `Relaxed` `fetch_add` gives remote
/// readers exactly the values the kernel allows, in one model step instead
/// of two.
pub fn this_cpu_add<P: Platform>(pcp: &Atomic<P>, val: i64) {
    let old = pcp.a.fetch_add(val, Ordering::Relaxed);
    observe::<P>(
        pcp.var,
        Op::Add {
            val,
            new: old + val,
        },
        Idiom::ThisCpuAdd,
    );
}

/// The same store as [`atomic_set`] for any location that also receives
/// RMWs.
pub(crate) fn store_against_rmw<P: Platform>(a: &P::Atomic, v: i64, order: Ordering) {
    // NOTE(loom): see atomic_set.
    if P::BACKEND_KIND == BackendKind::Loom {
        a.swap(v, order);
    } else {
        a.store(v, order);
    }
}
