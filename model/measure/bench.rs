//! The hot path on real threads: what 873f64b791a2 was measured by.
//!
//! The same model code (`MemcgSystem<Std>`), with ghost bookkeeping off and
//! per-CPU data padded to cache lines, runs `__mod_memcg_state()` in a loop
//! on `threads` OS threads standing for CPUs, while a periodic flusher and a
//! reader run alongside. Two figures come out:
//!
//! - updates per second, measured (noisy; compare variants only within one
//!   run, see [`compare`]);
//! - threshold RMWs per million updates, counted on a deterministic
//!   round-robin schedule ([`rmws_per_million`]), so it is the same on every
//!   machine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::Config;
use crate::memcontrol::{MemcgSystem, ROOT_MEM_CGROUP};
use crate::platform::Std;
use crate::trace::Actor;
use crate::variant::Variant;

/// `MEMCG_CHARGE_BATCH` in v5.19 and v6.0.
pub const MEMCG_CHARGE_BATCH: i64 = 32;

/// Every `HUGE_EVERY`-th update is a huge page of `HUGE_VAL` pages.
pub const HUGE_EVERY: usize = 512;
/// Pages in a huge page (2 MiB / 4 KiB).
pub const HUGE_VAL: i64 = 512;

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
}

impl HotPath {
    /// The default run for `threads` threads.
    pub fn new(threads: usize, updates: usize) -> Self {
        HotPath {
            threads,
            updates,
            flush_period: Duration::from_millis(2),
            read_period: Duration::from_micros(100),
        }
    }

    fn config(&self) -> Config {
        Config {
            cpus: self.threads,
            batch: MEMCG_CHARGE_BATCH,
            updates: self.updates,
            vals: vec![1],
            readers: 1,
            reads: 1,
            periodic: true,
            ticks: 0,
            late: 0,
        }
    }
}

fn val(k: usize) -> i64 {
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
    /// Wall-clock time until every updater finished.
    pub seconds: f64,
    /// Updates per second over all threads.
    pub updates_per_sec: f64,
    /// Threshold RMWs the updaters issued in this run.
    pub threshold_rmws: u64,
}

/// Run the hot path once for `variant`.
pub fn run(variant: &Variant, hp: &HotPath) -> Measured {
    let sys = Arc::new(MemcgSystem::<Std>::without_ghost(
        hp.config(),
        variant.clone(),
    ));
    let done = Arc::new(AtomicBool::new(false));
    let start_line = Arc::new(Barrier::new(hp.threads + 1));
    let updaters: Vec<_> = (0..hp.threads)
        .map(|cpu| {
            let (s, b, n) = (sys.clone(), start_line.clone(), hp.updates);
            std::thread::spawn(move || {
                b.wait();
                let t0 = Instant::now();
                for k in 0..n {
                    s.__mod_memcg_state(cpu, ROOT_MEM_CGROUP, 0, val(k));
                }
                (t0, Instant::now())
            })
        })
        .collect();
    let flusher = periodically(&sys, &done, hp.flush_period, |s| {
        s.flush_memcg_stats_dwork()
    });
    let reader = periodically(&sys, &done, hp.read_period, |s| {
        s.memory_stat_read(Actor::Reader(0), ROOT_MEM_CGROUP, 0);
    });
    start_line.wait();
    // From the first updater's start to the last one's end.
    let spans: Vec<(Instant, Instant)> = updaters
        .into_iter()
        .map(|u| u.join().expect("updater"))
        .collect();
    let first = spans
        .iter()
        .map(|s| s.0)
        .min()
        .expect("one updater at least");
    let last = spans
        .iter()
        .map(|s| s.1)
        .max()
        .expect("one updater at least");
    let seconds = (last - first).as_secs_f64();
    done.store(true, Ordering::Relaxed);
    flusher.join().expect("flusher");
    reader.join().expect("reader");
    let total = (hp.threads * hp.updates) as f64;
    Measured {
        variant: variant.name.to_string(),
        threads: hp.threads,
        seconds,
        updates_per_sec: total / seconds,
        threshold_rmws: sys.threshold_rmw_count(),
    }
}

/// A thread that runs `f` every `period` until `done`.
fn periodically(
    sys: &Arc<MemcgSystem<Std>>,
    done: &Arc<AtomicBool>,
    period: Duration,
    f: impl Fn(&MemcgSystem<Std>) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let (s, d) = (sys.clone(), done.clone());
    std::thread::spawn(move || {
        while !d.load(Ordering::Relaxed) {
            f(&s);
            std::thread::sleep(period);
        }
    })
}

/// Threshold RMWs per million updates on a deterministic schedule: the
/// `threads` CPUs update in round-robin order, a reader calls
/// `mem_cgroup_flush_stats()` after every `read_every` updates and the
/// periodic work flushes after every `flush_every` updates.
pub fn rmws_per_million(
    variant: &Variant,
    threads: usize,
    read_every: usize,
    flush_every: usize,
) -> f64 {
    const UPDATES: usize = 1 << 20;
    let hp = HotPath::new(threads, UPDATES / threads);
    let sys = MemcgSystem::<Std>::without_ghost(hp.config(), variant.clone());
    let mut n = 0;
    for k in 0..hp.updates {
        for cpu in 0..threads {
            sys.__mod_memcg_state(cpu, ROOT_MEM_CGROUP, 0, val(k));
            n += 1;
            if n % read_every == 0 {
                sys.mem_cgroup_flush_stats(Actor::Reader(0));
            }
            if n % flush_every == 0 {
                sys.flush_memcg_stats_dwork();
            }
        }
    }
    sys.threshold_rmw_count() as f64 * 1e6 / n as f64
}

/// The deterministic schedule's reader period, in updates (all CPUs).
pub const READ_EVERY: usize = 1 << 16;
/// The deterministic schedule's periodic-flush period, in updates.
pub const FLUSH_EVERY: usize = 1 << 20;

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
    let variants = [Variant::V5_19, Variant::V6_0, Variant::NO_GLOBAL];
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
            let r5 = rmws_per_million(&Variant::V5_19, t, READ_EVERY, FLUSH_EVERY);
            let r6 = rmws_per_million(&Variant::V6_0, t, READ_EVERY, FLUSH_EVERY);
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
