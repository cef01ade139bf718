//! Per-CPU data: `DEFINE_PER_CPU`, `this_cpu_ptr()`, `per_cpu_ptr()` and
//! the owner-only `__this_cpu_*` operations.

use crossbeam_utils::CachePadded;

use crate::kernel::atomic::{named, observe, read_once_as, write_once_as, Atomic};
use crate::vocab::footprint;
use crate::vocab::obs::{Actor, Idiom, Op, Var};
use crate::vocab::{ModelCell, Platform};

/// `smp_processor_id()`: the CPU the calling updater thread stands for.
///
/// Only updater threads are CPUs of `num_online_cpus()`; readers and
/// flushers run "elsewhere" (see `num_online_cpus` in the protocol
/// modules), so per-CPU access from them panics.
pub fn smp_processor_id<P: Platform>() -> usize {
    match P::actor() {
        Actor::Cpu(c) => c,
        a => panic!("model: this_cpu access from {a}, which is not an updater CPU"),
    }
}

/// `DEFINE_PER_CPU(T, name)` / `alloc_percpu(T)`: one `T` per CPU, each on
/// its own cache line as the kernel's per-CPU areas are.
pub struct PerCpu<T>(Vec<CachePadded<T>>);

impl<T> PerCpu<T> {
    /// One instance per CPU, built by `f(cpu)`. Everything `f(cpu)`
    /// creates is CPU `cpu`'s for the exhaustive search's symmetry
    /// reduction ([`footprint::owner`]).
    pub fn new(cpus: usize, mut f: impl FnMut(usize) -> T) -> Self {
        let v = (0..cpus)
            .map(|cpu| {
                footprint::owner(Some(cpu));
                CachePadded::new(f(cpu))
            })
            .collect();
        footprint::owner(None);
        PerCpu(v)
    }

    /// `per_cpu_ptr(ptr, cpu)`: another CPU's instance.
    pub fn per_cpu(&self, cpu: usize) -> &T {
        &self.0[cpu]
    }

    /// `this_cpu_ptr(ptr)`: the calling CPU's instance.
    pub fn this_cpu<P: Platform>(&self) -> &T {
        &self.0[smp_processor_id::<P>()]
    }

    /// `for_each_possible_cpu(cpu)`.
    pub fn cpus(&self) -> std::ops::Range<usize> {
        0..self.0.len()
    }
}

/// A per-CPU integer touched only by its owner CPU
/// (`DEFINE_PER_CPU(unsigned int, stats_updates)` in v5.16-v6.7).
///
/// Accesses go through a cell, so under loom a remote access would be
/// reported as a data race.
pub struct CpuLocal<P: Platform> {
    cell: P::Cell<i64>,
    var: Var,
}

impl<P: Platform> CpuLocal<P> {
    /// A counter for `var` starting at `v`.
    pub fn new(var: Var, v: i64) -> Self {
        named(var);
        CpuLocal {
            cell: P::Cell::new(v),
            var,
        }
    }
}

/// `__this_cpu_add_return(pcp, val)` on the calling CPU's counter:
/// owner-only, so a plain read and write.
pub fn this_cpu_add_return<P: Platform>(pcp: &PerCpu<CpuLocal<P>>, val: i64) -> i64 {
    let c = pcp.this_cpu::<P>();
    P::note_cell(c.var);
    // SAFETY: only the owning CPU's thread touches a CpuLocal.
    let x = unsafe {
        let x = c.cell.get() + val;
        c.cell.set(x);
        x
    };
    observe::<P>(c.var, Op::Add { val, new: x }, Idiom::ThisCpuAddReturn);
    x
}

/// `__this_cpu_read(pcp)` on the calling CPU's counter.
pub fn this_cpu_read<P: Platform>(pcp: &PerCpu<CpuLocal<P>>) -> i64 {
    let c = pcp.this_cpu::<P>();
    P::note_cell(c.var);
    // SAFETY: only the owning CPU's thread touches a CpuLocal.
    let x = unsafe { c.cell.get() };
    observe::<P>(c.var, Op::Read(x), Idiom::ThisCpuRead);
    x
}

/// `__this_cpu_write(pcp, val)` on the calling CPU's counter.
pub fn this_cpu_write<P: Platform>(pcp: &PerCpu<CpuLocal<P>>, val: i64) {
    let c = pcp.this_cpu::<P>();
    P::note_cell(c.var);
    // SAFETY: only the owning CPU's thread touches a CpuLocal.
    unsafe { c.cell.set(val) };
    observe::<P>(c.var, Op::Write(val), Idiom::ThisCpuWrite);
}

/// `this_cpu_add_return(pcp, val)` on a per-CPU field that another CPU
/// also writes: `statc->stats_updates` from v6.17 on, which the flusher
/// zeroes remotely with `WRITE_ONCE()`. The caller passes the calling CPU's
/// instance.
///
/// NOTE(kernel): `this_cpu_*` operations are atomic against interrupts on
/// the same CPU only, and imply no ordering; against the remote store they
/// are a load and a store, so the model makes them two `Relaxed` steps,
/// between which the flusher's store can land (and be lost).
pub fn this_cpu_add_return_shared<P: Platform>(pcp: &Atomic<P>, val: i64) -> i64 {
    let x = read_once_as(pcp, Idiom::ThisCpuAddReturn) + val;
    write_once_as(pcp, x, Idiom::ThisCpuAddReturn);
    x
}

/// `this_cpu_xchg(pcp, new)` on a per-CPU field another CPU also writes
/// (see [`this_cpu_add_return_shared`]): a load and a store.
pub fn this_cpu_xchg_shared<P: Platform>(pcp: &Atomic<P>, new: i64) -> i64 {
    let x = read_once_as(pcp, Idiom::ThisCpuXchg);
    write_once_as(pcp, new, Idiom::ThisCpuXchg);
    x
}
