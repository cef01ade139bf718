//! Pins the staleness figures quoted in docs/findings.md (seeded shuttle
//! searches, so they are the same on every run and machine).

use memcg_flush_model::bounds::{compare_with_baseline, measure_sampled, standard_configs, Bound};
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
        cpus: 2,
        batch: 2,
        updates: 3,
        vals: vec![1],
        readers: 1,
        reads: 1,
        periodic: false,
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
