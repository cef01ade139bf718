//! The hot-path benchmark runs, and its deterministic figure holds: v6.0
//! cuts threshold RMWs per million updates by at least 90% against v5.19 on
//! the deterministic schedule, at every thread count the benchmark uses. No
//! timing is asserted (machines are noisy).

use memcg_flush_model::bench::{rmws_per_million, FLUSH_EVERY, READ_EVERY};
use memcg_flush_model::Variant;

mod common;

#[test]
fn v6_0_cuts_threshold_rmws_by_90_percent_on_the_deterministic_schedule() {
    for t in [1, 2, 4, 8, 16, 32] {
        let old = rmws_per_million(&Variant::V5_19, t, READ_EVERY, FLUSH_EVERY);
        let new = rmws_per_million(&Variant::V6_0, t, READ_EVERY, FLUSH_EVERY);
        // One add per MEMCG_CHARGE_BATCH + 1 small updates, plus huge pages.
        assert!(
            (31_000.0..32_000.0).contains(&old),
            "v5.19 at {t} threads: {old}"
        );
        assert!(new <= old * 0.10, "v6.0 at {t} threads: {new} vs {old}");
        let ceiling = rmws_per_million(&Variant::NO_GLOBAL, t, READ_EVERY, FLUSH_EVERY);
        assert_eq!(ceiling, 0.0);
    }
}

#[test]
fn bench_subcommand_prints_all_three_variants() {
    let out = common::flushcheck(&[
        "bench",
        "--threads",
        "1,2",
        "--updates",
        "4096",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(Some(out.code), Some(0), "{}", out.stderr);
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        for f in [
            "v5_19",
            "v6_0",
            "ceiling",
            "ratio_v6_0_over_v5_19",
            "rmws_per_million_v6_0",
        ] {
            assert!(
                r[f].as_f64().unwrap() > 0.0 || f == "rmws_per_million_v6_0",
                "{r}"
            );
        }
    }
}
