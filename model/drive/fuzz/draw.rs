//! Drawing configurations: seeded, reproducible, within a stated box.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::explore::sched::mix;

/// The update values drawn from; 5 exceeds every batch drawn (a huge page).
pub const VALS: [i64; 4] = [1, 2, 3, 5];
/// Values per configuration: 1 to this many, distinct.
pub const MAX_VALS: usize = 3;
/// `MEMCG_CHARGE_BATCH` is drawn from 1 to this.
pub const MAX_BATCH: i64 = 3;
/// Reader threads: 0 to this.
pub const MAX_READERS: usize = 2;
/// Reads per reader: 1 to this.
pub const MAX_READS: usize = 3;
/// Abstract time, when drawn: ticks in this range.
pub const TICKS: (usize, usize) = (4, 8);
/// Abstract time, when drawn: lateness 0 to this.
pub const MAX_LATE: usize = 1;
/// Abstract time is drawn on 1 in this many configurations.
pub const TIME_ONE_IN: u64 = 5;

/// The box configurations are drawn from (the parts that are flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    /// CPUs: 1 to this.
    pub max_cpus: usize,
    /// Updates per CPU: 1 to this.
    pub max_updates: usize,
    /// Draw abstract time on every configuration (when only
    /// `flush_time_bound` is fuzzed, which needs it).
    pub always_time: bool,
}

impl Bounds {
    /// The bounds in one line, as printed before a run.
    pub fn describe(&self) -> String {
        let vals: Vec<String> = VALS.iter().map(|v| v.to_string()).collect();
        format!(
            "cpus 1..={}, batch 1..={MAX_BATCH}, updates 1..={}, vals 1 to {MAX_VALS} distinct of \
             {{{}}} (5 > batch: a huge page), readers 0..={MAX_READERS}, reads 1..={MAX_READS}, \
             periodic on/off, abstract time (ticks {}..={}, late 0..={MAX_LATE}, periodic on) on {}",
            self.max_cpus,
            self.max_updates,
            vals.join(","),
            TICKS.0,
            TICKS.1,
            if self.always_time {
                "every configuration".to_string()
            } else {
                format!("1 in {TIME_ONE_IN} configurations")
            }
        )
    }
}

/// A splitmix64 stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0, 0)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}

/// Configuration number `k` of a run seeded with `seed`: every draw comes
/// from splitmix64 of (seed, k), so a configuration can be drawn again
/// without drawing the ones before it.
pub fn draw(seed: u64, k: u64, b: &Bounds) -> Config {
    let mut r = Rng(mix(seed, k));
    let time = b.always_time || r.next().is_multiple_of(TIME_ONE_IN);
    let cpus = r.range(1, b.max_cpus);
    let batch = r.range(1, MAX_BATCH as usize) as i64;
    let updates = r.range(1, b.max_updates);
    let mut pool = VALS.to_vec();
    let vals: Vec<i64> = (0..r.range(1, MAX_VALS))
        .map(|_| pool.remove(r.range(0, pool.len() - 1)))
        .collect();
    let readers = r.range(0, MAX_READERS);
    let reads = r.range(1, MAX_READS);
    let periodic = time || r.next().is_multiple_of(2);
    let (ticks, late) = if time {
        (r.range(TICKS.0, TICKS.1), r.range(0, MAX_LATE))
    } else {
        (0, 0)
    };
    canonical(
        Config::default()
            .cpus(cpus)
            .batch(batch)
            .updates(updates)
            .vals(&vals)
            .readers(readers)
            .reads(reads)
            .periodic(periodic)
            .ticks(ticks)
            .late(late),
    )
}

/// One representative of configurations that run the same scenario:
/// `reads` counts reader threads' reads only, values past the last update
/// are never used, and `vals` all equal cycle like one value.
pub(super) fn canonical(mut c: Config) -> Config {
    if c.readers == 0 {
        c.reads = 1;
    }
    c.vals.truncate((c.cpus * c.updates).max(1));
    if c.vals.windows(2).all(|w| w[0] == w[1]) {
        c.vals.truncate(1);
    }
    c
}
