//! Two variants of v6.0, written outside the model crate.

use memcg_flush_model::explore::Platform;
use memcg_flush_model::kernel::{this_cpu_add_return, this_cpu_write};
use memcg_flush_model::protocol::global::v5_19::{self, Memcontrol, State};
use memcg_flush_model::protocol::global::v6_0;
use memcg_flush_model::protocol::{Kind, Variant};

/// v6.0 restated: its updater, through the lineage's defaults elsewhere.
#[derive(Clone, Copy)]
pub struct Restated;

impl Memcontrol for Restated {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
}

/// v6.0 whose updater never adds to `stats_flush_threshold`: a reader's
/// gate never opens, so a flush v5.19 would make is lost.
#[derive(Clone, Copy)]
pub struct NeverCounts;

impl Memcontrol for NeverCounts {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// The harmless variant.
pub fn restated() -> Variant {
    Variant::new(
        "outside-v6.0-restated",
        Kind::Candidate,
        "v6.0's updater, restated outside the crate",
        v5_19::model(Restated),
    )
    .twin("v5.19")
}

/// The harmful variant.
pub fn never_counts() -> Variant {
    Variant::new(
        "outside-never-counts",
        Kind::Candidate,
        "v6.0 without the atomic_add to stats_flush_threshold",
        v5_19::model(NeverCounts),
    )
    .twin("v5.19")
}
