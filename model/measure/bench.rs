//! The hot path on real threads: what 873f64b791a2 was measured by.
//!
//! The protocol code itself, built on [`Bare`] (no step lock, observations
//! compiled out, per-CPU data on its own cache lines), runs
//! `__mod_memcg_state()` in a loop on `threads` OS threads standing for
//! CPUs, while a periodic flusher and a reader run alongside. Two figures
//! come out:
//!
//! - updates per second, measured (noisy; compare variants only within one
//!   run, see [`compare`]);
//! - threshold RMWs per million updates, counted by a monitor on a
//!   deterministic round-robin schedule ([`rmws_per_million`]), so it is
//!   the same on every machine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::check::on_fresh_thread;
use crate::config::Config;
use crate::explore::{Bare, Platform, Std, ThreadCtx};
use crate::observe::monitor::Monitor;
use crate::observe::plan::{MonitorPlan, Shared};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::{catalogue, Env, FlushModel, Kind, Protocol, Variant};
use crate::vocab::obs::{Actor, Obs, Sink};

/// `MEMCG_CHARGE_BATCH` in v5.19 and v6.0.
pub const MEMCG_CHARGE_BATCH: i64 = 32;

/// Every `HUGE_EVERY`-th update is a huge page of `HUGE_VAL` pages.
pub const HUGE_EVERY: usize = 512;
/// Pages in a huge page (2 MiB / 4 KiB).
pub const HUGE_VAL: i64 = 512;

/// The deterministic schedule's reader period, in updates (all CPUs).
pub const READ_EVERY: usize = 1 << 16;
/// The deterministic schedule's periodic-flush period, in updates.
pub const FLUSH_EVERY: usize = 1 << 20;

/// How one hot-path run is set up.
#[derive(Clone, Debug, Serialize)]
pub struct HotPath {
    /// Updater threads ("CPUs"); also `num_online_cpus()`.
    pub threads: usize,
    /// `__mod_memcg_state()` calls per thread.
    pub updates: usize,
    /// Period of the flusher thread (the kernel's FLUSH_TIME is 2 s).
    pub flush_period: Duration,
    /// Pause between the reader's `mem_cgroup_flush_stats()` calls.
    pub read_period: Duration,
    /// The memcg tree ([`Config::tree`]; empty: the root alone).
    pub tree: Vec<u8>,
    /// The memcg every update charges; the reader reads the root.
    pub memcg: u8,
}

impl HotPath {
    /// The default run for `threads` threads.
    pub fn new(threads: usize, updates: usize) -> Self {
        HotPath {
            threads,
            updates,
            flush_period: Duration::from_millis(2),
            read_period: Duration::from_micros(100),
            tree: Vec::new(),
            memcg: ROOT_MEM_CGROUP,
        }
    }

    /// [`HotPath::new`] charging a grandchild of the root (memcg 2 under
    /// memcg 1), so that the per-memcg walk climbs three levels.
    pub fn deep(threads: usize, updates: usize) -> Self {
        HotPath {
            tree: vec![0, 1],
            memcg: 2,
            ..HotPath::new(threads, updates)
        }
    }

    /// The configuration the protocol is built with.
    pub fn config(&self) -> Config {
        let cfg = Config::default()
            .cpus(self.threads)
            .batch(MEMCG_CHARGE_BATCH)
            .updates(self.updates)
            .vals(&[1]);
        if self.tree.is_empty() {
            cfg
        } else {
            cfg.tree(&self.tree).charge(&[self.memcg])
        }
    }
}

/// The value of a CPU's `k`-th update: one page, or a huge page.
pub fn val(k: usize) -> i64 {
    if k % HUGE_EVERY == HUGE_EVERY - 1 {
        HUGE_VAL
    } else {
        1
    }
}

/// One measured run.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// Variant name.
    pub variant: String,
    /// Updater threads.
    pub threads: usize,
    /// Wall-clock time from the first updater's start to the last one's
    /// end.
    pub seconds: f64,
    /// Updates per second over all threads.
    pub updates_per_sec: f64,
}

/// Run the hot path once for `variant`.
pub fn run(variant: &Variant, hp: &HotPath) -> Measured {
    let proto = variant.flush_model().build::<Bare>(Env::new(&hp.config()));
    let done = Arc::new(AtomicBool::new(false));
    let start_line = Arc::new(Barrier::new(hp.threads + 1));
    let updaters: Vec<_> = (0..hp.threads)
        .map(|cpu| {
            let (p, b, n, memcg) = (proto.clone(), start_line.clone(), hp.updates, hp.memcg);
            Bare::spawn(ThreadCtx::new(Actor::Cpu(cpu), None), move || {
                b.wait();
                let t0 = Instant::now();
                for k in 0..n {
                    p.mod_memcg_state(memcg, val(k));
                }
                (t0, Instant::now())
            })
        })
        .collect();
    let flusher = periodically(&proto, &done, Actor::Periodic, hp.flush_period, |p| {
        p.periodic()
    });
    let reader = periodically(&proto, &done, Actor::Reader(0), hp.read_period, |p| {
        p.mem_cgroup_flush_stats(ROOT_MEM_CGROUP);
        p.memcg_page_state(ROOT_MEM_CGROUP);
    });
    start_line.wait();
    let spans: Vec<(Instant, Instant)> = updaters
        .into_iter()
        .map(|u| u.join().expect("updater"))
        .collect();
    let first = spans.iter().map(|s| s.0).min().expect("one updater");
    let last = spans.iter().map(|s| s.1).max().expect("one updater");
    let seconds = (last - first).as_secs_f64();
    done.store(true, Ordering::Relaxed);
    flusher.join().expect("flusher");
    reader.join().expect("reader");
    Measured {
        variant: variant.name.clone(),
        threads: hp.threads,
        seconds,
        updates_per_sec: (hp.threads * hp.updates) as f64 / seconds,
    }
}

/// A thread playing `actor` that runs `f` every `period` until `done`.
fn periodically(
    proto: &Arc<dyn Protocol<Bare>>,
    done: &Arc<AtomicBool>,
    actor: Actor,
    period: Duration,
    f: impl Fn(&dyn Protocol<Bare>) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let (p, d) = (proto.clone(), done.clone());
    Bare::spawn(ThreadCtx::new(actor, None), move || {
        while !d.load(Ordering::Relaxed) {
            f(&*p);
            std::thread::sleep(period);
        }
    })
}

/// Threshold RMWs per million updates on a deterministic schedule: the
/// `threads` CPUs update in round-robin order, a reader calls
/// `mem_cgroup_flush_stats()` after every `read_every` updates and the
/// periodic work flushes after every `flush_every` updates.
///
/// One OS thread plays every actor on the checked [`Std`] platform, so a
/// monitor sees every access; it counts the threshold writes of updater
/// CPUs (`Measures::rmws`).
pub fn rmws_per_million(
    variant: &Variant,
    threads: usize,
    read_every: usize,
    flush_every: usize,
) -> f64 {
    let (rmws, updates) = count_rmws(variant, threads, 1 << 20, read_every, flush_every);
    rmws as f64 * 1e6 / updates as f64
}

/// [`rmws_per_million`] on `hp`'s tree and charged memcg, per update.
pub fn rmws_per_update(variant: &Variant, hp: &HotPath) -> f64 {
    let total = 1 << 20;
    let hp = HotPath {
        updates: total / hp.threads,
        ..hp.clone()
    };
    let (rmws, updates) = count_on(variant, &hp, MEMCG_CHARGE_BATCH, READ_EVERY, FLUSH_EVERY);
    rmws as f64 / updates as f64
}

/// The threshold RMWs and the updates of the deterministic schedule with
/// about `total` updates in all (a multiple of `threads`).
pub fn count_rmws(
    variant: &Variant,
    threads: usize,
    total: usize,
    read_every: usize,
    flush_every: usize,
) -> (u64, u64) {
    count_rmws_batch(
        variant,
        threads,
        MEMCG_CHARGE_BATCH,
        total,
        read_every,
        flush_every,
    )
}

/// [`count_rmws`] with `MEMCG_CHARGE_BATCH` = `batch`.
pub fn count_rmws_batch(
    variant: &Variant,
    threads: usize,
    batch: i64,
    total: usize,
    read_every: usize,
    flush_every: usize,
) -> (u64, u64) {
    let hp = HotPath::new(threads, total / threads);
    count_on(variant, &hp, batch, read_every, flush_every)
}

/// The threshold RMWs and the updates of the deterministic schedule of
/// `hp`.
fn count_on(
    variant: &Variant,
    hp: &HotPath,
    batch: i64,
    read_every: usize,
    flush_every: usize,
) -> (u64, u64) {
    let hp = hp.clone();
    let model = variant.flush_model().clone();
    on_fresh_thread(move || {
        let cfg = Config {
            batch,
            ..hp.config()
        };
        let shared = Shared::new(MonitorPlan::new(Arc::new(cfg.clone()), true, Vec::new()));
        let monitor = Monitor::new(shared.clone());
        let sink: Arc<dyn Sink> = monitor.clone();
        let schedule = Schedule {
            hp: &hp,
            cfg: &cfg,
            read_every,
            flush_every,
        };
        schedule.play(&*model, sink, || monitor.finish());
        let m = &shared.measures;
        (
            m.rmws.load(Ordering::Relaxed),
            m.updates.load(Ordering::Relaxed),
        )
    })
}

/// The deterministic schedule: `hp.threads` CPUs update in round-robin
/// order, a reader calls `mem_cgroup_flush_stats()` on the root after
/// every `read_every` updates, the periodic work flushes after every
/// `flush_every`.
pub struct Schedule<'a> {
    /// The run (threads, updates per thread, tree, charged memcg).
    pub hp: &'a HotPath,
    /// The configuration the protocol is built with.
    pub cfg: &'a Config,
    /// The reader's period, in updates.
    pub read_every: usize,
    /// The periodic flush's period, in updates.
    pub flush_every: usize,
}

impl Schedule<'_> {
    /// Play the schedule on one OS thread on the checked [`Std`] platform,
    /// every observation going to `sink`, an `Obs::UpdateDone` after each
    /// update; `finish` runs as main before the platform is uninstalled.
    pub fn play(&self, model: &FlushModel, sink: Arc<dyn Sink>, finish: impl FnOnce()) {
        let hp = self.hp;
        let ctx = ThreadCtx::new(Actor::Main, Some(sink));
        Std::install(ctx.clone());
        let proto = model.build::<Std>(Env::new(self.cfg));
        // Each actor gets its own step lock; with one OS thread no lock is
        // ever contended.
        let play = |actor: Actor| {
            Std::uninstall();
            Std::install(ctx.for_actor(actor));
        };
        let mut n = 0;
        for k in 0..hp.updates {
            for cpu in 0..hp.threads {
                play(Actor::Cpu(cpu));
                let v = val(k);
                proto.mod_memcg_state(hp.memcg, v);
                Std::emit(|| Obs::UpdateDone {
                    memcg: hp.memcg,
                    val: v,
                });
                n += 1;
                if n % self.read_every == 0 {
                    play(Actor::Reader(0));
                    proto.mem_cgroup_flush_stats(ROOT_MEM_CGROUP);
                }
                if n % self.flush_every == 0 {
                    play(Actor::Periodic);
                    proto.periodic();
                }
            }
        }
        play(Actor::Main);
        finish();
        Std::uninstall();
    }
}

/// One row of the side-by-side comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Updater threads.
    pub threads: usize,
    /// Median updates per second: v5.19, v6.0, ceiling.
    pub v5_19: f64,
    /// See `v5_19`.
    pub v6_0: f64,
    /// See `v5_19`.
    pub ceiling: f64,
    /// v6.0 / v5.19, from the medians of runs interleaved in one process.
    pub ratio_v6_0_over_v5_19: f64,
    /// v6.0 / ceiling.
    pub v6_0_of_ceiling: f64,
    /// Deterministic threshold RMWs per million updates, v5.19.
    pub rmws_per_million_v5_19: f64,
    /// The same for v6.0.
    pub rmws_per_million_v6_0: f64,
    /// 1 - v6.0 / v5.19 of the RMW counts.
    pub rmw_cut: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Measure v5.19, v6.0 and the ceiling side by side: `reps` rounds, each
/// running the three variants back to back, for every thread count.
pub fn compare(
    threads: &[usize],
    updates: usize,
    reps: usize,
    progress: &dyn Fn(&str),
) -> Vec<Row> {
    let variants = catalogue::bench_subjects();
    threads
        .iter()
        .map(|&t| {
            let hp = HotPath::new(t, updates);
            let mut samples = [Vec::new(), Vec::new(), Vec::new()];
            for r in 0..reps.max(1) {
                for (i, v) in variants.iter().enumerate() {
                    let m = run(v, &hp);
                    progress(&format!(
                        "threads {t} rep {r}: {} {:.1} M updates/s",
                        v.name,
                        m.updates_per_sec / 1e6
                    ));
                    samples[i].push(m.updates_per_sec);
                }
            }
            let [a, b, c] = samples.map(median);
            progress(&format!(
                "threads {t}: counting threshold RMWs on the deterministic schedule"
            ));
            let r5 = rmws_per_million(&variants[0], t, READ_EVERY, FLUSH_EVERY);
            let r6 = rmws_per_million(&variants[1], t, READ_EVERY, FLUSH_EVERY);
            Row {
                threads: t,
                v5_19: a,
                v6_0: b,
                ceiling: c,
                ratio_v6_0_over_v5_19: b / a,
                v6_0_of_ceiling: b / c,
                rmws_per_million_v5_19: r5,
                rmws_per_million_v6_0: r6,
                rmw_cut: 1.0 - r6 / r5,
            }
        })
        .collect()
}

/// One row of the barrier comparison (B1): the tree forms with and
/// without the `smp_mb()` pair on the hot path.
#[derive(Clone, Debug, Serialize)]
pub struct BarrierRow {
    /// Updater threads.
    pub threads: usize,
    /// Median updates per second of `v6.8-tree`.
    pub v6_8_tree: f64,
    /// The same for `v6.8-tree-mb`.
    pub v6_8_tree_mb: f64,
    /// The same for `v6.17-tree`.
    pub v6_17_tree: f64,
    /// The same for `v6.17-tree-mb`.
    pub v6_17_tree_mb: f64,
    /// `v6.8-tree-mb` / `v6.8-tree`.
    pub ratio_v6_8: f64,
    /// `v6.17-tree-mb` / `v6.17-tree`.
    pub ratio_v6_17: f64,
}

/// Measure the tree variants with and without the barrier pair side by
/// side: `reps` rounds of the four back to back, for every thread count.
pub fn compare_barriers(
    threads: &[usize],
    updates: usize,
    reps: usize,
    progress: &dyn Fn(&str),
) -> Vec<BarrierRow> {
    // The kernel's updated-tree forms in catalogue order: each version
    // without the barrier pair, then with it.
    let variants: Vec<Variant> = catalogue::all()
        .into_iter()
        .filter(|v| v.kind == Kind::Kernel && v.updated_tree.is_some())
        .collect();
    threads
        .iter()
        .map(|&t| {
            let hp = HotPath::new(t, updates);
            let mut samples = vec![Vec::new(); variants.len()];
            for r in 0..reps.max(1) {
                for (i, v) in variants.iter().enumerate() {
                    let m = run(v, &hp);
                    progress(&format!(
                        "threads {t} rep {r}: {} {:.1} M updates/s",
                        v.name,
                        m.updates_per_sec / 1e6
                    ));
                    samples[i].push(m.updates_per_sec);
                }
            }
            let m: Vec<f64> = samples.into_iter().map(median).collect();
            BarrierRow {
                threads: t,
                v6_8_tree: m[0],
                v6_8_tree_mb: m[1],
                v6_17_tree: m[2],
                v6_17_tree_mb: m[3],
                ratio_v6_8: m[1] / m[0],
                ratio_v6_17: m[3] / m[2],
            }
        })
        .collect()
}
