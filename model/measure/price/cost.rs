//! The hot path's cost in kernel terms: per `__mod_memcg_state()`, per
//! level of the ancestor walk, the `this_cpu_*` operations, the other
//! per-CPU accesses (`READ_ONCE()`/`WRITE_ONCE()`, plain), atomic reads,
//! atomic RMWs, spinlock operations, barriers, and the distinct cache lines
//! touched, shared between CPUs (a memcg's `vmstats`, global words) or
//! CPU-local (a memcg's per-CPU `statc`, its rstat per-CPU node).
//!
//! Counted from the protocol's own observations ([`Obs::Access`]) by a
//! [`Sink`] on the deterministic schedule of [`Schedule`]; nothing
//! is counted by hand, and the [`crate::explore::Bare`] platform of the
//! throughput runs compiles the observations out.
//!
//! Cache lines follow the kernel's layout: `stats_updates` and the walk's
//! cached pointers share the first line of `struct memcg_vmstats_percpu`
//! ("The above should fit a single cacheline for memcg_rstat_updated()",
//! mm/memcontrol.c), the `state[]` counters are further on; a memcg's
//! `vmstats->stats_updates` atomic is on a line every CPU writes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::check::on_fresh_thread;
use crate::config::Config;
use crate::kernel::barrier::FENCE;
use crate::measure::bench::{HotPath, Schedule, FLUSH_EVERY, READ_EVERY};
use crate::protocol::Variant;
use crate::vocab::obs::{Access, Actor, Idiom, LockName, Obs, Op, Sink, Var};

/// `MEMCG_CHARGE_BATCH` from v6.1 on (1813e51eece0): the batch the prices
/// are counted at.
pub const KERNEL_BATCH: i64 = 64;

/// Updates the deterministic schedule runs in all.
pub const TOTAL_UPDATES: usize = 1 << 20;

/// Operations and cache lines per update, in one place of the walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Ops {
    /// `this_cpu_add_return()`, `this_cpu_xchg()`, `__this_cpu_add()`,
    /// `__this_cpu_read()`/`_write()`: one each.
    pub this_cpu: f64,
    /// Other accesses to per-CPU data: `READ_ONCE()`, `WRITE_ONCE()`, plain.
    pub percpu_plain: f64,
    /// `atomic_read()` (and `smp_load_acquire()`) of shared words.
    pub atomic_reads: f64,
    /// Atomic RMWs: `atomic_add()`, `atomic_xchg()`, cmpxchg.
    pub atomic_rmws: f64,
    /// Spinlock operations (lock, trylock, unlock).
    pub locks: f64,
    /// `smp_mb()`, `smp_rmb()`, `smp_wmb()`.
    pub barriers: f64,
    /// Distinct CPU-local cache lines touched.
    pub local_lines: f64,
    /// Distinct cache lines shared between CPUs touched.
    pub shared_lines: f64,
}

impl Ops {
    fn add(&mut self, o: &Ops) {
        self.this_cpu += o.this_cpu;
        self.percpu_plain += o.percpu_plain;
        self.atomic_reads += o.atomic_reads;
        self.atomic_rmws += o.atomic_rmws;
        self.locks += o.locks;
        self.barriers += o.barriers;
        self.local_lines += o.local_lines;
        self.shared_lines += o.shared_lines;
    }

    fn scaled(&self, by: f64) -> Ops {
        Ops {
            this_cpu: self.this_cpu * by,
            percpu_plain: self.percpu_plain * by,
            atomic_reads: self.atomic_reads * by,
            atomic_rmws: self.atomic_rmws * by,
            locks: self.locks * by,
            barriers: self.barriers * by,
            local_lines: self.local_lines * by,
            shared_lines: self.shared_lines * by,
        }
    }
}

/// One variant's cost per update on the deterministic schedule.
#[derive(Clone, Debug, Serialize)]
pub struct Cost {
    /// The variant.
    pub variant: String,
    /// Updater CPUs (also `num_online_cpus()`).
    pub cpus: usize,
    /// Per level of the walk, the charged memcg first, the root last.
    pub levels: Vec<Ops>,
    /// Accesses to no memcg's data (global words, barriers, locks).
    pub global: Ops,
    /// The sum over the levels and the global part.
    pub total: Ops,
    /// Updates counted.
    pub updates: u64,
}

/// The cache line a variable lives on, and whether other CPUs share it;
/// `None` for what is no memory (a barrier, scenario bookkeeping).
fn line(var: Var) -> Option<(Var, bool)> {
    match var {
        v if v == FENCE => None,
        Var::Flushing | Var::Dwork => None,
        // state[] and state_prev[] are one line apart from stats_updates.
        Var::StatePrev { memcg, cpu } => Some((Var::State { memcg, cpu }, false)),
        Var::Lock(LockName::Other(n)) if n.starts_with("rstat_cpu") => Some((var, false)),
        v => Some((v, v.cpu().is_none())),
    }
}

/// The kind of kernel operation an access is one of; `None` for the read
/// half of a `this_cpu_*` RMW the model splits in two steps.
fn kind(a: &Access) -> Option<fn(&mut Ops)> {
    use Idiom::*;
    let percpu = a.var.cpu().is_some();
    Some(match a.idiom {
        ThisCpuAddReturn | ThisCpuXchg if matches!(a.op, Op::Read(_)) => return None,
        ThisCpuAdd | ThisCpuAddReturn | ThisCpuRead | ThisCpuWrite | ThisCpuXchg => {
            |o| o.this_cpu += 1.0
        }
        SmpMb | SmpRmb | SmpWmb => |o| o.barriers += 1.0,
        SpinTrylock | SpinLock | SpinUnlock | SpinIsLocked => |o| o.locks += 1.0,
        AtomicAdd | AtomicXchg | AtomicCmpxchg | Cmpxchg => |o| o.atomic_rmws += 1.0,
        _ if percpu => |o| o.percpu_plain += 1.0,
        AtomicRead | LoadAcquire => |o| o.atomic_reads += 1.0,
        // READ_ONCE() or a plain read of a shared word.
        _ if matches!(a.op, Op::Read(_)) => |o| o.atomic_reads += 1.0,
        // atomic_set(), WRITE_ONCE() or a plain store to a shared word:
        // no column, only its line.
        _ => return None,
    })
}

#[derive(Default)]
struct Acc {
    pending: Vec<Access>,
    levels: Vec<Ops>,
    global: Ops,
    updates: u64,
}

/// The counting observer: collects an updater CPU's accesses until its
/// `UpdateDone`, then attributes them to the levels of the charged memcg's
/// ancestry.
struct CostSink {
    cfg: Config,
    acc: Mutex<Acc>,
}

impl CostSink {
    fn close(&self, acc: &mut Acc, memcg: u8) {
        let ancestry = self.cfg.ancestry(memcg);
        if acc.levels.len() < ancestry.len() {
            acc.levels.resize(ancestry.len(), Ops::default());
        }
        let mut seen: HashSet<Var> = HashSet::new();
        let mut per = vec![Ops::default(); ancestry.len()];
        let mut global = Ops::default();
        for a in std::mem::take(&mut acc.pending) {
            let level = a
                .var
                .memcg()
                .and_then(|m| ancestry.iter().position(|&x| x == m));
            let o = match level {
                Some(l) => &mut per[l],
                None => &mut global,
            };
            if let Some(k) = kind(&a) {
                k(o);
            }
            if let Some((l, shared)) = line(a.var) {
                if seen.insert(l) {
                    if shared {
                        o.shared_lines += 1.0;
                    } else {
                        o.local_lines += 1.0;
                    }
                }
            }
        }
        for (sum, o) in acc.levels.iter_mut().zip(&per) {
            sum.add(o);
        }
        acc.global.add(&global);
        acc.updates += 1;
    }
}

impl Sink for CostSink {
    fn observe(&self, actor: Actor, obs: Obs) {
        if !actor.is_cpu() {
            return;
        }
        let mut acc = self.acc.lock().unwrap_or_else(|e| e.into_inner());
        match obs {
            Obs::Access(a) => acc.pending.push(a),
            Obs::UpdateDone { memcg, .. } => self.close(&mut acc, memcg),
            _ => {}
        }
    }
}

/// `variant`'s cost per update on `hp`'s tree and charged memcg, with
/// [`TOTAL_UPDATES`] updates round-robin over `hp.threads` CPUs at
/// [`KERNEL_BATCH`], a reader of the root every [`READ_EVERY`] updates and
/// a periodic flush every [`FLUSH_EVERY`].
pub fn cost(variant: &Variant, hp: &HotPath) -> Cost {
    let hp = HotPath {
        updates: TOTAL_UPDATES / hp.threads,
        ..hp.clone()
    };
    let model = variant.flush_model().clone();
    let name = variant.name.clone();
    on_fresh_thread(move || {
        let cfg = Config {
            batch: KERNEL_BATCH,
            ..hp.config()
        };
        let sink = Arc::new(CostSink {
            cfg: cfg.clone(),
            acc: Mutex::new(Acc::default()),
        });
        let schedule = Schedule {
            hp: &hp,
            cfg: &cfg,
            read_every: READ_EVERY,
            flush_every: FLUSH_EVERY,
        };
        schedule.play(&*model, sink.clone(), || {});
        let acc = sink.acc.lock().unwrap_or_else(|e| e.into_inner());
        let per = 1.0 / acc.updates.max(1) as f64;
        let levels: Vec<Ops> = acc.levels.iter().map(|o| o.scaled(per)).collect();
        let global = acc.global.scaled(per);
        let mut total = global;
        for o in &levels {
            total.add(o);
        }
        Cost {
            variant: name,
            cpus: hp.threads,
            levels,
            global,
            total,
            updates: acc.updates,
        }
    })
}
