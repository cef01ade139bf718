//! `flushcheck perf`'s time to kill: an armed search stops at the first
//! violation of its property, and a kernel version is never "killed".

use std::time::Duration;

use memcg_flush_model::explore::BackendName;
use memcg_flush_model::measure::perf::first_kill;
use memcg_flush_model::Property;

use crate::common::{self, reg, variant};

const BUDGET: Duration = Duration::from_secs(30);

#[test]
fn an_armed_search_stops_at_the_first_violation() {
    let v = variant("mutant-walk-skips-last-cpu");
    let (entry, executions, _) = first_kill(
        v,
        Property::Conservation,
        BackendName::Loom,
        1,
        reg(),
        BUDGET,
    )
    .unwrap()
    .expect("killed");
    // Every execution loses the last CPU's updates: the first one fails.
    assert_eq!((entry.as_str(), executions), ("pair", 1));
}

#[test]
fn the_off_by_one_mutant_dies_and_v6_0_does_not() {
    let mutant = variant("mutant-skip-off-by-one");
    let hit = first_kill(
        mutant,
        Property::NoLostFlush,
        BackendName::ShuttlePct,
        1,
        reg(),
        BUDGET,
    )
    .unwrap();
    assert!(hit.as_ref().is_some_and(|(_, n, _)| *n < 4_000), "{hit:?}");
    let v6_0 = variant("v6.0");
    let hit = first_kill(
        v6_0,
        Property::NoLostFlush,
        BackendName::ShuttleDfs,
        1,
        reg(),
        BUDGET,
    )
    .unwrap();
    assert_eq!(hit, None);
}

#[test]
fn perf_subcommand_rejects_zero_in_one_line() {
    for flag in ["--seeds", "--growth-budget", "--budget", "--dfs-cap"] {
        let out = common::flushcheck(&["perf", flag, "0"]);
        assert_eq!(out.code, 2, "{flag}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{flag}: {}", out.stderr);
        assert!(out.stderr.contains(&format!("{flag} 0")), "{}", out.stderr);
    }
}
