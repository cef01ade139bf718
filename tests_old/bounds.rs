//! Pins the staleness figures quoted in docs/findings.md (seeded shuttle
//! searches, so they are the same on every run and machine).

use memcg_flush_model::bounds::{
    compare_with_baseline, exhaustive_configs, measure_exhaustive, measure_sampled,
    standard_configs, timed_configs, Bound,
};
use memcg_flush_model::derived::derive;
use memcg_flush_model::{Config, Variant};

fn measure(cfg: &Config, v: &Variant) -> Bound {
    measure_sampled(cfg, v, 20_000)
}

/// C1 fails without any race: 3 updates of one page per CPU, a threshold of
/// 1 unit (not above num_online_cpus() = 2), and 6 pages not in the
/// aggregate against a documented bound of MEMCG_CHARGE_BATCH * nr_cpus = 4.
#[test]
fn documented_bound_fails_without_a_race() {
    let cfg = Config {
        batch: 2,
        updates: 3,
        ..Config::bounds()
    };
    for v in [Variant::V5_19, Variant::V6_0] {
        let b = measure(&cfg, &v);
        assert_eq!(b.documented, 4);
        assert_eq!(b.stale_at_no_flush, 6, "{b:?}");
        assert!(!b.documented_bound_holds());
        assert_eq!(b.split[3], 0, "no reset raced: {b:?}");
        assert!(!b.witness.is_empty());
    }
}

/// On the standard 1-page configurations without the periodic flusher the
/// maximum is 2 * nr_cpus * (MEMCG_CHARGE_BATCH + 1), half counted in the
/// threshold and half in per-CPU counters about to be added.
#[test]
fn one_page_maxima_match_two_n_batch_plus_one() {
    let configs = standard_configs();
    for cfg in [&configs[0], &configs[2]] {
        let n = cfg.cpus as i64;
        for v in [Variant::V5_19, Variant::V6_0] {
            let b = measure(cfg, &v);
            assert_eq!(b.stale_at_no_flush, 2 * n * (cfg.batch + 1), "{cfg}: {b:?}");
            assert_eq!(
                b.split,
                [n * (cfg.batch + 1), n * (cfg.batch + 1), 0, 0],
                "{cfg}: {b:?}"
            );
        }
    }
}

/// With the periodic flusher a reset that races a flush loses counted
/// updates: v5.19's maximum on the second standard configuration includes
/// pages lost that way.
#[test]
fn racing_reset_loses_counted_updates() {
    let cfg = &standard_configs()[1];
    let b = measure(cfg, &Variant::V5_19);
    assert_eq!(b.stale_at_no_flush, 12, "{b:?}");
    assert!(b.split[3] > 0, "{b:?}");
}

/// `no_worse_than_baseline` fails for the off-by-one mutant: with nine
/// 1-page updates per CPU, v5.19 and v6.0 peak at 2 * 2 * 3 = 12 pages,
/// while the mutant, stuck at a threshold of exactly num_online_cpus(),
/// leaves all 18 pages out of the aggregate.
#[test]
fn off_by_one_is_worse_than_baseline() {
    let cfg = standard_configs()
        .pop()
        .expect("the nine-update configuration");
    assert_eq!(cfg.updates, 9);
    let off = Variant::by_name("mutant-skip-off-by-one").unwrap();
    let mut rows: Vec<Bound> = [Variant::V5_19, Variant::V6_0, off]
        .iter()
        .map(|v| measure(&cfg, v))
        .collect();
    compare_with_baseline(&mut rows);
    let stale: Vec<i64> = rows.iter().map(|r| r.stale_at_no_flush).collect();
    assert_eq!(stale, vec![12, 12, 18], "{rows:?}");
    let verdicts: Vec<Option<bool>> = rows.iter().map(|r| r.no_worse_than_baseline).collect();
    assert_eq!(verdicts, vec![Some(true), Some(true), Some(false)]);
}

/// The derived worst case equals the maxima of an exhaustive sequentially
/// consistent search (shuttle DFS with sleep sets) on configuration `i` of
/// `exhaustive_configs()`, for v5.19 and v6.0.
fn derived_matches_exhaustive(i: usize) -> Vec<Bound> {
    let cfg = &exhaustive_configs()[i];
    [Variant::V5_19, Variant::V6_0]
        .iter()
        .map(|v| {
            let b = measure_exhaustive(cfg, v, 5_000_000, std::time::Duration::from_secs(300));
            assert!(b.finished, "{cfg} {}: search cut short: {b:?}", v.name);
            assert_eq!(b.matches_derived(), Some(true), "{cfg} {}: {b:?}", v.name);
            b
        })
        .collect()
}

/// C1's smallest violation, exhaustively: 6 pages > 4, all counted.
#[test]
fn exhaustive_two_cpus_one_page() {
    let rows = derived_matches_exhaustive(0);
    assert_eq!((rows[0].executions, rows[1].executions), (12_515, 45_750));
    assert_eq!(rows[0].stale_at_no_flush, 6);
    assert_eq!(rows[0].split, [0, 6, 0, 0]);
}

/// A reset racing the periodic flush loses every page: stale = total = 4.
#[test]
fn exhaustive_racing_reset() {
    let rows = derived_matches_exhaustive(1);
    assert_eq!((rows[0].executions, rows[1].executions), (21_145, 69_175));
    assert_eq!(rows[0].stale_at_no_flush, 4);
    assert_eq!(rows[0].split[3], 4);
    assert_eq!(rows[0].since_reset, 2);
}

/// Huge pages and the racing reset: all 20 pages lost, 5 behind the gate.
#[test]
fn exhaustive_huge_pages_racing_reset() {
    let rows = derived_matches_exhaustive(2);
    assert_eq!((rows[0].executions, rows[1].executions), (90_552, 522_271));
    assert_eq!(rows[0].stale_at_no_flush, 20);
    assert_eq!(rows[0].since_reset, 5);
}

/// Three CPUs with 3-page updates over a batch of 2: 9 pages > 6.
#[test]
fn exhaustive_three_cpus_huge_pages() {
    let rows = derived_matches_exhaustive(3);
    assert_eq!(
        (rows[0].executions, rows[1].executions),
        (57_650, 1_476_140)
    );
    assert_eq!(rows[0].stale_at_no_flush, 9);
    assert_eq!(rows[0].documented, 6);
}

/// The closed forms quoted in docs/findings.md, from the derivation.
#[test]
fn derived_closed_forms() {
    let d = |cpus: usize, batch: i64, updates: usize, val: i64, periodic: bool| {
        derive(&Config {
            cpus,
            batch,
            updates,
            vals: vec![val],
            readers: 1,
            reads: 1,
            periodic,
            ticks: 0,
            late: 0,
        })
        .expect("non-negative")
    };
    // 1-page updates, batch >= 2, enough updates: 2 * n * (batch + 1).
    for n in 2..=4 {
        for batch in 2..=6 {
            let r = d(n, batch, 4 * (batch as usize + 1), 1, false);
            assert_eq!(
                r.since_reset,
                2 * n as i64 * (batch + 1),
                "n={n} batch={batch}"
            );
        }
    }
    // Batch 1: a crossing adds 2 units, so only n / 2 of them fit.
    assert_eq!(d(2, 1, 8, 1, false).since_reset, 6);
    // Huge pages (val > batch): n * val + floor(n / u) * val, u = val / batch.
    assert_eq!(d(3, 2, 4, 5, false).since_reset, 3 * 5 + 5);
    // With the periodic flusher every page can be lost to the racing reset.
    let r = d(2, 2, 9, 1, true);
    assert_eq!(r.worst, Some(r.total));
    // Without it, all but the pages the first reader flush saw.
    let r = d(2, 2, 20, 1, false);
    assert_eq!((r.trigger, r.worst), (Some(9), Some(40 - 9)));
}

/// Staleness in ticks: FLUSH_TIME when the periodic work is on time, one
/// more tick per tick of lateness.
#[test]
fn staleness_in_ticks_is_flush_time_plus_lateness() {
    for cfg in timed_configs() {
        for v in [Variant::V5_19, Variant::V6_0] {
            let b = measure(&cfg, &v);
            assert_eq!(
                b.stale_ticks,
                2 + cfg.late as i64,
                "{cfg} {}: {b:?}",
                v.name
            );
            assert!(!b.ticks_witness.is_empty());
        }
    }
}

/// The sampled searches of `flushcheck bounds` reach the derived worst case
/// (an upper bound for every sequentially consistent execution) on every
/// standard configuration, so there the maxima are exact.
#[test]
fn sampled_maxima_reach_the_derived_worst_case() {
    for cfg in standard_configs() {
        for v in [Variant::V5_19, Variant::V6_0] {
            let b = measure(&cfg, &v);
            let d = b.derived.clone().expect("derived for v5.19 and v6.0");
            assert_eq!(
                Some(b.stale_at_no_flush),
                d.worst,
                "{cfg} {}: {b:?}",
                v.name
            );
            assert_eq!(b.since_reset, d.since_reset, "{cfg} {}: {b:?}", v.name);
        }
    }
}

/// The smallest violation of C1: one CPU paused between
/// `__this_cpu_add_return()` and `atomic_add()` with 2 pages > 1 * 1.
#[test]
fn smallest_documented_bound_violation_is_one_pending_crossing() {
    let cfg = Config {
        cpus: 1,
        updates: 2,
        ..Config::bounds()
    };
    let b = measure_exhaustive(
        &cfg,
        &Variant::V5_19,
        100_000,
        std::time::Duration::from_secs(60),
    );
    assert_eq!(b.matches_derived(), Some(true), "{b:?}");
    assert_eq!((b.stale_at_no_flush, b.documented), (2, 1), "{b:?}");
    assert_eq!(b.split, [2, 0, 0, 0], "{b:?}");
}

/// A reader that decides to flush but loses `spin_trylock()` to the
/// periodic flusher returns at once and reads the aggregate before that
/// flush has folded anything: every page can be stale (B7).
#[test]
fn trylock_loser_reads_everything_stale() {
    let cfg = &standard_configs()[1];
    assert!(cfg.periodic);
    for v in [Variant::V5_19, Variant::V6_0] {
        let b = measure(cfg, &v);
        assert_eq!(b.stale_after_flush_call, cfg.total(), "{b:?}");
        assert!(!b.after_witness.is_empty());
    }
}
