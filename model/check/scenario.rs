//! The scenario every backend runs: updater CPUs, readers and the periodic
//! work race; then main reads once more (the quiescent reader) and flushes
//! once more.
//!
//! ```text
//! main:     spawn; the last CPU's updates ------------- join all; read; flush; read
//! CPU c:    __mod_memcg_state() x updates (the last CPU on main)
//! reader r: (mem_cgroup_flush_stats(); memcg_page_state()) x reads
//!           (mem_cgroup_flush_stats_ratelimited() for the first cfg.ratelimited)
//! periodic: flush_memcg_stats_dwork() once, or every FLUSH_TIME ticks
//! clock:    jiffies_64 = 1 .. ticks (abstract time only)
//! ```

use std::sync::Arc;

use crate::config::Config;
use crate::explore::{ModelJoinHandle, Scenario, StartGate, ThreadCtx};
use crate::kernel::{atomic_add, atomic_read, atomic_set, read_once, write_once, Atomic};
use crate::observe::monitor::Monitor;
use crate::observe::noise::UnusedReads;
use crate::observe::plan::{Shared, FLUSH_TIME};
use crate::protocol::{Env, Protocol, Variant};
use crate::vocab::footprint;
use crate::vocab::obs::{Actor, Obs, Sink, Var};
use crate::vocab::Platform;

/// One variant on one configuration, reporting into `shared`.
pub struct FlushScenario {
    /// Configuration, shared with the monitor and every execution.
    pub cfg: Arc<Config>,
    /// Variant under test.
    pub variant: Variant,
    /// What every execution reports into.
    pub shared: Arc<Shared>,
}

impl FlushScenario {
    /// A scenario for `variant` reporting into `shared`, on the plan's
    /// configuration.
    pub fn new(variant: &Variant, shared: Arc<Shared>) -> Self {
        FlushScenario {
            cfg: shared.plan.cfg.clone(),
            variant: variant.clone(),
            shared,
        }
    }
}

/// The workqueue timer of `stats_flush_dwork` and the clock's view of
/// flushes in progress (abstract time only).
struct Timer<P: Platform> {
    /// When the queued work is due, or `i64::MAX` while it runs.
    dwork: Atomic<P>,
    /// Flushes in progress: time does not pass during one.
    flushing: Atomic<P>,
}

impl Scenario for FlushScenario {
    fn run<P: Platform>(&self) {
        let cfg = &self.cfg;
        let monitor = Monitor::new(self.shared.clone());
        let sink: Arc<dyn Sink> = if self.shared.plan.unused_reads {
            Arc::new(UnusedReads::new(monitor.clone(), cfg))
        } else {
            monitor.clone()
        };
        let ctx = ThreadCtx::new(Actor::Main, Some(sink));
        P::install(ctx.clone());
        footprint::cpu_classes(&cpu_classes(cfg));
        let env = Env::<P>::new_shared(cfg.clone());
        let jiffies = env.jiffies.clone();
        let proto: Arc<dyn Protocol<P>> = self.variant.flush_model().build::<P>(env);
        let timed = cfg.ticks > 0;
        let timer = Arc::new(Timer::<P> {
            dwork: Atomic::new(Var::Dwork, FLUSH_TIME),
            flushing: Atomic::new(Var::Flushing, 0),
        });
        // Main takes part as the last CPU (one model thread less per
        // execution).
        let gate = Arc::new(StartGate::new::<P>(cfg.threads()));
        let spawn = |actor: Actor, f: Box<dyn FnOnce() + Send>| {
            let g = gate.clone();
            P::spawn(ctx.for_actor(actor), move || {
                g.wait();
                f();
                P::checkpoint_locals(u64::MAX);
            })
        };
        let last = cfg.cpus.saturating_sub(1);
        let updaters: Vec<_> = (0..last)
            .map(|cpu| {
                let (p, cfg) = (proto.clone(), cfg.clone());
                spawn(Actor::Cpu(cpu), Box::new(move || updates(&*p, &cfg, cpu)))
            })
            .collect();
        let readers: Vec<_> = (0..cfg.readers)
            .map(|r| {
                let (p, t, reads) = (proto.clone(), timer.clone(), cfg.reads);
                let (memcg, ratelimited) = (cfg.read_of(r), r < cfg.ratelimited);
                spawn(
                    Actor::Reader(r),
                    Box::new(move || {
                        for i in 0..reads {
                            if timed {
                                atomic_add(1, &t.flushing);
                            }
                            P::emit(|| Obs::FlushCall { memcg });
                            if ratelimited {
                                p.mem_cgroup_flush_stats_ratelimited(memcg);
                            } else {
                                p.mem_cgroup_flush_stats(memcg);
                            }
                            // The flush returned: what its walk read is
                            // dead, only the loop counter is live.
                            P::checkpoint_locals(FLUSHED ^ i as u64);
                            if timed {
                                atomic_add(-1, &t.flushing);
                            }
                            read(&*p, memcg);
                            P::checkpoint_locals(i as u64 + 1);
                        }
                    }),
                )
            })
            .collect();
        let periodic = cfg.periodic.then(|| {
            let (p, t, j, ticks) = (proto.clone(), timer.clone(), jiffies.clone(), cfg.ticks);
            spawn(
                Actor::Periodic,
                Box::new(move || {
                    if timed {
                        worker(&*p, &t, &j, ticks as i64)
                    } else {
                        p.periodic()
                    }
                }),
            )
        });
        let clock = timed.then(|| {
            let (t, j, ticks, late) = (timer.clone(), jiffies.clone(), cfg.ticks, cfg.late);
            spawn(
                Actor::Clock,
                Box::new(move || clock::<P>(&t, &j, ticks as i64, late as i64)),
            )
        });
        // The last CPU's updates, on main, once every other thread is
        // spawned: spawning orders nothing but initialisation, so this runs
        // that CPU concurrently with everything, as its own thread would.
        P::set_actor(Actor::Cpu(last));
        gate.wait();
        updates(&*proto, cfg, last);
        P::set_actor(Actor::Main);
        for h in updaters {
            h.join();
        }
        if let Some(h) = periodic {
            h.join();
        }
        if let Some(h) = clock {
            h.join();
        }
        for h in readers {
            h.join();
        }
        // The quiescent reader: every update is done and every thread joined.
        P::emit(|| Obs::Quiescent);
        for memcg in quiescent_reads(cfg) {
            P::emit(|| Obs::FlushCall { memcg });
            proto.mem_cgroup_flush_stats(memcg);
            read(&*proto, memcg);
        }
        // One more flush of the whole tree; nothing else runs.
        proto.flush();
        for memcg in 0..cfg.memcgs() as u8 {
            let value = proto.memcg_page_state(memcg);
            P::emit(|| Obs::Final { memcg, value });
        }
        settle(&*proto, cfg);
        monitor.finish();
        P::uninstall();
    }
}

/// The memcgs main reads once quiescent: each memcg the readers read, in
/// reader order (the root if there are no readers).
fn quiescent_reads(cfg: &Config) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for r in 0..cfg.readers.max(1) {
        let m = cfg.read_of(r);
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// The tag of a reader's locals after its `i`-th flush call returned is
/// `FLUSHED ^ i` (after its read, `i + 1`).
const FLUSHED: u64 = 0xF1u64 << 48;

/// Each CPU's program, for the exhaustive search's symmetry reduction
/// (explore/dfs): CPUs that charge the same memcg with the same values run
/// the same code ([`updates`]) and are interchangeable.
fn cpu_classes(cfg: &Config) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    (0..cfg.cpus)
        .map(|cpu| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            cfg.charge_of(cpu).hash(&mut h);
            for k in 0..cfg.updates {
                cfg.val(cpu, k).hash(&mut h);
            }
            h.finish()
        })
        .collect()
}

/// CPU `cpu`'s updates: `__mod_memcg_state()` with each of its values.
///
/// The same code on every CPU, whichever thread runs it: its locals are
/// declared dead on entry and on exit, so that the thread of CPU 0 and main
/// standing for the last CPU hold equal locals at equal points.
fn updates<P: Platform>(p: &dyn Protocol<P>, cfg: &Config, cpu: usize) {
    P::checkpoint_locals(0);
    for k in 0..cfg.updates {
        let (memcg, val) = (cfg.charge_at(cpu, k), cfg.val(cpu, k));
        p.mod_memcg_state(memcg, val);
        P::emit(|| Obs::UpdateDone { memcg, val });
        // The update returned: nothing it computed is live, only the loop
        // counter.
        P::checkpoint_locals(k as u64 + 1);
    }
    P::checkpoint_locals(u64::MAX);
}

/// Eventual conservation: `cfg.settle` more flushes of the whole
/// tree, the aggregates reported after each; then, with
/// `cfg.settle_update`, one more 1-page update on each CPU (main standing
/// for that CPU, whose thread has ended) and one more flush.
fn settle<P: Platform>(p: &dyn Protocol<P>, cfg: &Config) {
    let report = |flushes: usize| {
        for memcg in 0..cfg.memcgs() as u8 {
            let value = p.memcg_page_state(memcg);
            P::emit(|| Obs::Settled {
                flushes,
                memcg,
                value,
            });
        }
    };
    for k in 1..=cfg.settle {
        p.flush();
        report(k);
    }
    if cfg.settle_update {
        for cpu in 0..cfg.cpus {
            P::set_actor(Actor::Cpu(cpu));
            let memcg = cfg.charge_of(cpu);
            p.mod_memcg_state(memcg, 1);
            P::emit(|| Obs::UpdateDone { memcg, val: 1 });
        }
        P::set_actor(Actor::Main);
        p.flush();
        report(cfg.settle + 1);
    }
}

/// A reader's `memcg_page_state()`, reported as the value it read.
fn read<P: Platform>(p: &dyn Protocol<P>, memcg: u8) -> i64 {
    let value = p.memcg_page_state(memcg);
    P::emit(|| Obs::Read { memcg, value });
    value
}

/// The workqueue worker running `stats_flush_dwork` each time its timer
/// expires, until the next expiry lies beyond `ticks`; after each run it
/// re-queues the work `FLUSH_TIME` later (the `queue_delayed_work()` at the
/// end of `flush_memcg_stats_dwork()`).
fn worker<P: Platform>(p: &dyn Protocol<P>, t: &Timer<P>, jiffies: &Atomic<P>, ticks: i64) {
    loop {
        let due = atomic_read(&t.dwork);
        if due > ticks {
            break;
        }
        while read_once(jiffies) < due {
            P::yield_now();
        }
        atomic_set(&t.dwork, i64::MAX);
        atomic_add(1, &t.flushing);
        p.periodic();
        atomic_add(-1, &t.flushing);
        let due = read_once(jiffies) + FLUSH_TIME;
        atomic_set(&t.dwork, due);
    }
}

/// The timer interrupt: `jiffies_64` from 1 to `ticks`.
///
/// NOTE(kernel): time may not pass `due + late` before the periodic work
/// has started (the deferrable timer fires at most `late` ticks late), nor
/// while a flush runs (a flush takes milliseconds, a tick here stands for a
/// second).
fn clock<P: Platform>(t: &Timer<P>, jiffies: &Atomic<P>, ticks: i64, late: i64) {
    for now in 1..=ticks {
        loop {
            let due = atomic_read(&t.dwork);
            let waiting = due == i64::MAX || now > due.saturating_add(late);
            if !waiting && atomic_read(&t.flushing) == 0 {
                break;
            }
            P::yield_now();
        }
        write_once(jiffies, now);
    }
}
