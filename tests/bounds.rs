//! Pins the staleness figures quoted in docs/findings.md: the derived
//! closed forms, the exhaustive searches (maxima and schedule counts), and
//! the seeded shuttle searches of `flushcheck bounds` (the same on every
//! run and machine).

use std::sync::OnceLock;
use std::time::Duration;

use memcg_flush_model::cli::registry;
use memcg_flush_model::explore::Backend;
use memcg_flush_model::measure::bounds::{
    compare_with_baseline, exhaustive_configs, measure, measure_exhaustive, measure_sampled,
    standard_configs, timed_configs, Bound,
};
use memcg_flush_model::measure::derived::derive;
use memcg_flush_model::observe::obs::{Actor, Idiom, Op};
use memcg_flush_model::{Config, Variant};

const KERNELS: [&str; 2] = ["v5.19", "v6.0"];
const OFF_BY_ONE: &str = "mutant-skip-off-by-one";

fn reg() -> &'static [Variant] {
    static REG: OnceLock<Vec<Variant>> = OnceLock::new();
    REG.get_or_init(|| registry(Vec::new()).expect("catalogue"))
}

fn variant(name: &str) -> &'static Variant {
    reg()
        .iter()
        .find(|v| v.name == name)
        .expect("known variant")
}

/// `flushcheck bounds`'s default search: 20,000 random and 20,000 PCT
/// schedules, seed 1.
fn sampled(cfg: &Config, name: &str) -> Bound {
    measure_sampled(cfg, variant(name), reg(), 20_000)
}

/// The sampled rows of the standard configurations, measured once for
/// every test that reads them (on two threads: they dominate the file's
/// time).
fn standard(i: usize, name: &str) -> Bound {
    static ROWS: OnceLock<Vec<Bound>> = OnceLock::new();
    let rows = ROWS.get_or_init(|| {
        let configs = standard_configs();
        let mut jobs: Vec<(Config, &str)> = configs
            .iter()
            .flat_map(|c| KERNELS.iter().map(move |v| (c.clone(), *v)))
            .collect();
        jobs.push((configs[5].clone(), OFF_BY_ONE));
        let half = jobs.split_off(jobs.len() / 2);
        let run = |part: &[(Config, &str)]| -> Vec<Bound> {
            part.iter().map(|(c, v)| sampled(c, v)).collect()
        };
        std::thread::scope(|s| {
            let a = s.spawn(|| run(&half));
            let mut rows = run(&jobs);
            rows.extend(a.join().expect("sampled searches"));
            rows
        })
    });
    let cfg = &standard_configs()[i];
    rows.iter()
        .find(|r| r.cfg == *cfg && r.variant == name)
        .cloned()
        .expect("measured")
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
    for v in KERNELS {
        let b = sampled(&cfg, v);
        assert_eq!(b.documented, 4);
        assert_eq!(b.stale_at_no_flush, 6, "{b:?}");
        assert!(!b.documented_bound_holds());
        assert_eq!(b.split[3], 0, "no reset raced: {b:?}");
        let last = b.witness.last().expect("a witness");
        assert!(
            last.actor.is_reader() && last.text == "-> no flush",
            "{last:?}"
        );
    }
}

/// On the standard 1-page configurations without the periodic flusher the
/// maximum is 2 * nr_cpus * (MEMCG_CHARGE_BATCH + 1), half counted in the
/// threshold and half in per-CPU counters about to be added.
#[test]
fn one_page_maxima_match_two_n_batch_plus_one() {
    let configs = standard_configs();
    for i in [0, 2] {
        let cfg = &configs[i];
        let n = cfg.cpus as i64;
        for v in KERNELS {
            let b = standard(i, v);
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
    let b = standard(1, "v5.19");
    assert!(b.cfg.periodic);
    assert_eq!(b.stale_at_no_flush, 12, "{b:?}");
    assert!(b.split[3] > 0, "{b:?}");
}

/// `no_worse_than_baseline` fails for the off-by-one mutant: with nine
/// 1-page updates per CPU, v5.19 and v6.0 peak at 2 * 2 * 3 = 12 pages,
/// while the mutant, stuck at a threshold of exactly num_online_cpus(),
/// leaves all 18 pages out of the aggregate, 12 of them skipped.
#[test]
fn off_by_one_is_worse_than_baseline() {
    assert_eq!(standard_configs()[5].updates, 9);
    let mut rows: Vec<Bound> = ["v5.19", "v6.0", OFF_BY_ONE]
        .iter()
        .map(|v| standard(5, v))
        .collect();
    compare_with_baseline(&mut rows);
    let stale: Vec<i64> = rows.iter().map(|r| r.stale_at_no_flush).collect();
    assert_eq!(stale, vec![12, 12, 18], "{rows:?}");
    assert_eq!(rows[2].split, [0, 6, 12, 0], "{:?}", rows[2]);
    let verdicts: Vec<Option<bool>> = rows.iter().map(|r| r.no_worse_than_baseline).collect();
    assert_eq!(verdicts, vec![Some(true), Some(true), Some(false)]);
}

/// The derived worst case equals the maxima of an exhaustive sequentially
/// consistent search (shuttle DFS with sleep sets) on configuration `i` of
/// `exhaustive_configs()`, for v5.19 and v6.0.
fn derived_matches_exhaustive(i: usize) -> Vec<Bound> {
    let cfg = &exhaustive_configs()[i];
    KERNELS
        .iter()
        .map(|v| {
            let b = measure_exhaustive(cfg, variant(v), reg(), 5_000_000, Duration::from_secs(300));
            assert!(b.finished, "{cfg} {v}: search cut short: {b:?}");
            assert_eq!(b.matches_derived(), Some(true), "{cfg} {v}: {b:?}");
            b
        })
        .collect()
}

// The counts below are the states the stateful DFS stores (sleep sets with
// each step's actual footprint, and state caching); schedule counts are
// in the messages. The stateless counts in docs/findings.md were larger.

/// C1's smallest race-free violation, exhaustively: 6 pages > 4, all
/// counted.
#[test]
fn exhaustive_two_cpus_one_page() {
    let rows = derived_matches_exhaustive(0);
    assert_eq!(
        (rows[0].states, rows[1].states),
        (183, 264),
        "{:?}",
        (rows[0].executions, rows[1].executions)
    );
    assert_eq!(rows[0].stale_at_no_flush, 6);
    assert_eq!(rows[0].split, [0, 6, 0, 0]);
}

/// A reset racing the periodic flush loses every page: stale = total = 4.
#[test]
fn exhaustive_racing_reset() {
    let rows = derived_matches_exhaustive(1);
    assert_eq!(
        (rows[0].states, rows[1].states),
        (1220, 1786),
        "{:?}",
        (rows[0].executions, rows[1].executions)
    );
    assert_eq!(rows[0].stale_at_no_flush, 4);
    assert_eq!(rows[0].split[3], 4);
    assert_eq!(rows[0].since_reset, 2);
}

/// Huge pages and the racing reset: all 20 pages lost, 5 behind the gate.
#[test]
fn exhaustive_huge_pages_racing_reset() {
    let rows = derived_matches_exhaustive(2);
    assert_eq!(
        (rows[0].states, rows[1].states),
        (2274, 6591),
        "{:?}",
        (rows[0].executions, rows[1].executions)
    );
    assert_eq!(rows[0].stale_at_no_flush, 20);
    assert_eq!(rows[0].since_reset, 5);
}

/// Three CPUs with 3-page updates over a batch of 2: 9 pages > 6.
#[test]
fn exhaustive_three_cpus_huge_pages() {
    let rows = derived_matches_exhaustive(3);
    assert_eq!(
        (rows[0].states, rows[1].states),
        (338, 884),
        "{:?}",
        (rows[0].executions, rows[1].executions)
    );
    assert_eq!(rows[0].stale_at_no_flush, 9);
    assert_eq!(rows[0].documented, 6);
}

/// The derived worst case is confirmed by the stateful exhaustive search on
/// the standard configurations too (three CPUs, nine updates per CPU, huge
/// pages with the periodic flusher), for v5.19 and v6.0. The sixth, two
/// CPUs with six updates and the periodic flusher, takes about a minute per
/// variant: `flushcheck bounds --exhaustive` and the `--cfg loom` build
/// check it.
#[test]
fn derived_matches_exhaustive_on_standard_configurations() {
    let configs = standard_configs();
    for i in [0, 2, 3, 4, 5] {
        let cfg = &configs[i];
        for v in KERNELS {
            let b =
                measure_exhaustive(cfg, variant(v), reg(), 50_000_000, Duration::from_secs(300));
            assert!(b.finished, "{cfg} {v}: search cut short: {b:?}");
            assert_eq!(b.matches_derived(), Some(true), "{cfg} {v}: {b:?}");
            assert!(b.states > 0);
        }
    }
}

/// The standard configuration with the periodic flusher, exhaustively.
#[cfg(loom)]
#[test]
fn derived_matches_exhaustive_with_the_periodic_flusher() {
    let cfg = &standard_configs()[1];
    assert!(cfg.periodic);
    for v in KERNELS {
        let b = measure_exhaustive(cfg, variant(v), reg(), 50_000_000, Duration::from_secs(900));
        assert!(b.finished, "{cfg} {v}: search cut short: {b:?}");
        assert_eq!(b.matches_derived(), Some(true), "{cfg} {v}: {b:?}");
    }
}

/// The footprint pruning loses no maximum: on configurations where the
/// unreduced DFS finishes in seconds (the four above do not: each passes
/// a million schedules), both searches reach the same maxima, equal to the
/// derived ones. The configurations are the smallest C1 violation, the
/// 2-CPU form of the huge-page configuration, and one CPU racing the
/// periodic flusher's reset.
#[test]
fn pruned_maxima_equal_unreduced_maxima() {
    let base = Config::bounds();
    let cases = [
        (
            Config {
                cpus: 1,
                updates: 2,
                ..base.clone()
            },
            &KERNELS[..],
        ),
        (
            Config {
                batch: 2,
                updates: 1,
                vals: vec![3],
                ..base.clone()
            },
            &KERNELS[..],
        ),
        (
            Config {
                cpus: 1,
                updates: 2,
                readers: 0,
                periodic: true,
                ..base
            },
            &KERNELS[..],
        ),
    ];
    let maxima = |b: &Bound| {
        (
            b.stale_at_no_flush,
            b.since_reset,
            b.stale_after_flush_call,
            b.max_threshold,
        )
    };
    for (cfg, variants) in cases {
        for v in variants {
            let [pruned, full] = [true, false].map(|sleep_sets| {
                let dfs = Backend::ShuttleDfs {
                    max_schedules: 1_000_000,
                    sleep_sets,
                    stateful: false,
                };
                measure(&cfg, variant(v), reg(), &dfs, Duration::from_secs(120))
            });
            assert!(full.finished && pruned.finished, "{cfg} {v}: {full:?}");
            assert!(
                pruned.executions < full.executions,
                "{cfg} {v}: {} vs {}",
                pruned.executions,
                full.executions
            );
            assert_eq!(maxima(&pruned), maxima(&full), "{cfg} {v}");
            assert_eq!(full.matches_derived(), Some(true), "{cfg} {v}: {full:?}");
        }
    }
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
            tree: Vec::new(),
            charge: Vec::new(),
            read: Vec::new(),
            settle: 0,
            settle_update: false,
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
        for v in KERNELS {
            let b = sampled(&cfg, v);
            assert_eq!(b.stale_ticks, 2 + cfg.late as i64, "{cfg} {v}: {b:?}");
            assert!(!b.ticks_witness.is_empty());
        }
    }
}

/// The sampled searches of `flushcheck bounds` reach the derived worst case
/// (an upper bound for every sequentially consistent execution) on every
/// standard configuration, so there the maxima are exact.
#[test]
fn sampled_maxima_reach_the_derived_worst_case() {
    for (i, cfg) in standard_configs().iter().enumerate() {
        for v in KERNELS {
            let b = standard(i, v);
            let d = b.derived.clone().expect("derived for v5.19 and v6.0");
            assert_eq!(Some(b.stale_at_no_flush), d.worst, "{cfg} {v}: {b:?}");
            assert_eq!(b.since_reset, d.since_reset, "{cfg} {v}: {b:?}");
            assert_eq!(b.matches_derived(), None, "sampled, not compared");
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
        variant("v5.19"),
        reg(),
        100_000,
        Duration::from_secs(60),
    );
    assert_eq!(b.matches_derived(), Some(true), "{b:?}");
    assert_eq!((b.executions, b.states), (8, 77));
    assert_eq!((b.stale_at_no_flush, b.documented), (2, 1), "{b:?}");
    assert_eq!(b.split, [2, 0, 0, 0], "{b:?}");
}

/// A reader that decides to flush but loses `spin_trylock()` to the
/// periodic flusher returns at once and reads the aggregate before that
/// flush has folded anything: every page can be stale (B7).
#[test]
fn trylock_loser_reads_everything_stale() {
    for v in KERNELS {
        let b = standard(1, v);
        assert!(b.cfg.periodic);
        assert_eq!(b.stale_after_flush_call, b.cfg.total(), "{b:?}");
        let lost = b.after_witness.iter().any(|s| {
            s.actor == Actor::Reader(0)
                && s.access.is_some_and(|a| {
                    a.idiom == Idiom::SpinTrylock && matches!(a.op, Op::CmpXchg { ok: false, .. })
                })
        });
        assert!(lost, "the reader lost the trylock: {:?}", b.after_witness);
    }
}
