//! The hot-path benchmark runs, and its deterministic figure holds: v6.0
//! cuts threshold RMWs per million updates by at least 90% against v5.19
//! on the deterministic schedule, at every thread count the benchmark
//! uses. No timing is asserted (machines are noisy).

use memcg_flush_model::measure::bench::{
    count_rmws, rmws_per_million, run, HotPath, FLUSH_EVERY, READ_EVERY,
};

use crate::common::{self, variant};

#[test]
fn v6_0_cuts_threshold_rmws_by_90_percent_on_the_deterministic_schedule() {
    for t in [1, 2, 4, 8, 16, 32] {
        let old = rmws_per_million(variant("v5.19"), t, READ_EVERY, FLUSH_EVERY);
        let new = rmws_per_million(variant("v6.0"), t, READ_EVERY, FLUSH_EVERY);
        // 2^20 updates of 2^20 / 32 batches: one add per MEMCG_CHARGE_BATCH
        // pages on average, huge pages included.
        assert_eq!(old, 31_250.0, "v5.19 at {t} threads");
        assert!(new <= old * 0.10, "v6.0 at {t} threads: {new} vs {old}");
        let ceiling = rmws_per_million(variant("no-global-accounting"), t, READ_EVERY, FLUSH_EVERY);
        assert_eq!(ceiling, 0.0, "ceiling at {t} threads");
    }
}

#[test]
fn the_monitor_counts_every_update_and_only_updater_rmws() {
    // 4 CPUs, 64 one-page updates each: v5.19 adds once per 33 pages per
    // CPU (x > batch), so once per CPU; the reader's and the periodic
    // work's resets are writes too, but not updater RMWs.
    let (rmws, updates) = count_rmws(variant("v5.19"), 4, 256, 8, 16);
    assert_eq!(updates, 256);
    assert_eq!(rmws, 4);
}

#[test]
fn one_real_thread_run_reports_a_rate() {
    let m = run(variant("v6.0"), &HotPath::new(2, 4096));
    assert_eq!((m.variant.as_str(), m.threads), ("v6.0", 2));
    assert!(m.seconds > 0.0 && m.updates_per_sec > 0.0, "{m:?}");
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
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = crate::schemas::data(&out.stdout, "bench");
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

#[test]
fn bench_subcommand_rejects_bad_input_in_one_line() {
    for (args, says) in [
        (&["bench", "--threads", "0"][..], "--threads 0"),
        (&["bench", "--threads", "1,2000"][..], "--threads 2000"),
        (&["bench", "--updates", "10"][..], "--updates 10"),
        (&["bench", "--reps", "0"][..], "--reps 0"),
    ] {
        let out = common::flushcheck(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}
