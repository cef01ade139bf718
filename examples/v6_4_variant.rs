//! A variant of v6.4 written from docs/extending.md alone (section 9):
//! v6.4's two flushers through `v6_4_flushers!` (named one by one: the
//! macro takes any of the three), its ratelimited reader and its updater
//! restated; it must hold what v6.4 holds against its twin.
//!
//! ```sh
//! cargo run --release --example v6_4_variant -- --variant v6.4-restated --entry pair
//! ```

use std::process::ExitCode;

use memcg_flush_model::protocol::global::v5_19::{self, Memcontrol, State};
use memcg_flush_model::protocol::global::v6_4;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::vocab::Platform;

/// v6.4, its updater restated and its flushers from the macro.
#[derive(Clone, Copy)]
struct Restated;

impl Memcontrol for Restated {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_4::memcg_rstat_updated(self, mm, memcg, val);
    }
    memcg_flush_model::v6_4_flushers!(__mem_cgroup_flush_stats, flush_memcg_stats_dwork);

    /// `mem_cgroup_flush_stats_ratelimited()` (v6.4's name for
    /// `mem_cgroup_flush_stats_delayed()`), written out: the place a change
    /// to the ratelimited reader goes.
    fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        v6_4::mem_cgroup_flush_stats_ratelimited(self, mm, memcg)
    }
}

fn main() -> ExitCode {
    memcg_flush_model::cli::main_with(vec![Variant::new(
        "v6.4-restated",
        Kind::Candidate,
        "v6.4 restated from docs/extending.md",
        v5_19::model(Restated),
    )
    .twin("v6.4-no-skip")])
}
