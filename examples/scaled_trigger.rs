//! A reviewer checks a proposed patch without editing the crate.
//!
//! The 2026 proposal "memcg: scale vmstats flush threshold" replaces the
//! trigger `MEMCG_CHARGE_BATCH * num_online_cpus()` by
//! `MEMCG_CHARGE_BATCH * (ilog2(nr_cpus) + 1)`. In v6.0's units (batches)
//! the trigger becomes `ilog2(n) + 1`. Two ways to port it to v6.0:
//!
//! - `scaled-trigger`: both the updater's skip test and the reader's gate
//!   use the new trigger;
//! - `scaled-skip-only`: only the skip test does, the reader keeps `> n`.
//!
//! Run the whole tool on them (the default matrix, `explain`, `replay`,
//! `bounds`...):
//!
//! ```sh
//! cargo run --release --example scaled_trigger -- --variant scaled-trigger,scaled-skip-only
//! ```

use std::process::ExitCode;

use memcg_flush_model::explore::Platform;
use memcg_flush_model::kernel::{
    atomic_add, atomic_read, this_cpu_add_return, this_cpu_write, trace_memcg_flush_stats,
};
use memcg_flush_model::protocol::global::v5_19::{self, Memcontrol, State};
use memcg_flush_model::protocol::{Kind, Variant};

/// The proposed trigger, in batches: `ilog2(n) + 1`.
fn trigger<P: Platform>(mm: &State<P>) -> i64 {
    mm.num_online_cpus().ilog2() as i64 + 1
}

/// v6.0's `memcg_rstat_updated()` with the skip test on the new trigger.
fn memcg_rstat_updated<P: Platform>(mm: &State<P>, val: i64) {
    let x = this_cpu_add_return(&mm.stats_updates, val.abs());
    if x > mm.MEMCG_CHARGE_BATCH() {
        if atomic_read(&mm.stats_flush_threshold) <= trigger(mm) {
            atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
        }
        this_cpu_write(&mm.stats_updates, 0);
    }
}

/// Both sides on the new trigger.
#[derive(Clone, Copy)]
struct ScaledTrigger;

impl Memcontrol for ScaledTrigger {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        memcg_rstat_updated(mm, val);
    }

    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, _memcg: u8) -> bool {
        let needs_flush = atomic_read(&mm.stats_flush_threshold) > trigger(mm);
        trace_memcg_flush_stats(mm.root_mem_cgroup(), needs_flush);
        if needs_flush {
            self.__mem_cgroup_flush_stats(mm);
        }
        needs_flush
    }
}

/// Only the skip test on the new trigger; the reader's gate is v6.0's.
#[derive(Clone, Copy)]
struct ScaledSkipOnly;

impl Memcontrol for ScaledSkipOnly {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        memcg_rstat_updated(mm, val);
    }
}

fn main() -> ExitCode {
    memcg_flush_model::cli::main_with(vec![
        Variant::new(
            "scaled-trigger",
            Kind::Candidate,
            "v6.0 with skip test and reader gate on ilog2(n) + 1 batches",
            v5_19::model(ScaledTrigger),
        )
        .twin("v5.19"),
        Variant::new(
            "scaled-skip-only",
            Kind::Candidate,
            "v6.0 with only the skip test on ilog2(n) + 1 batches",
            v5_19::model(ScaledSkipOnly),
        )
        .twin("v5.19"),
    ])
}
