//! The reductions of the stateful search are sound: the search up to CPU
//! symmetry, the search split over two workers, and both together report
//! the same verdict on every property, the same maxima with the same
//! witness splits, and the same coverage events as the plain stateful
//! search (one worker, states stored as they are), for every variant of
//! the catalogue but the lifetime wing (no updater CPUs to permute).
//!
//! The split search sharded over machines (`--shard I/N`, merged by
//! `flushcheck merge`) is compared the same way on the first of them.
//!
//! `cargo test` runs the first and the two-class configurations; the others
//! (10 to 20 s each) run under `--cfg loom` (.ci/loom) or with `--ignored`.
//!
//! The configurations: three interchangeable CPUs, two CPUs with the
//! periodic work, three CPUs of two classes (values 2 and 3 cycled), and
//! two CPUs charging a child memcg. The larger ones are compared by
//! `flushcheck exhaustive --compare-plain` (docs/exhaustive.md).

use std::time::Duration;

use memcg_flush_model::cli::registry;
use memcg_flush_model::explore::run::Shard;
use memcg_flush_model::explore::Backend;
use memcg_flush_model::measure::exhaustive::{
    growth_config, merge, summarize, summarize_shard, Summary,
};
use memcg_flush_model::protocol::{Family, Kind, Variant};
use memcg_flush_model::Config;

fn dfs(symmetry: bool, workers: usize) -> Backend {
    Backend::ShuttleDfs {
        max_schedules: 2_000_000,
        sleep_sets: true,
        stateful: true,
        symmetry,
        workers,
    }
}

fn search(cfg: &Config, v: &Variant, reg: &[Variant], b: &Backend) -> Summary {
    let s = summarize(cfg, v, reg, b, Duration::from_secs(300), None)
        .unwrap_or_else(|e| panic!("{} on {cfg}, {}: {e}", v.name, b.search()));
    assert!(
        s.finished,
        "{} on {cfg}, {}: {:?}",
        v.name,
        b.search(),
        s.stopped
    );
    s
}

/// Compare every reduction with the plain stateful search on `cfg`, for
/// the variants of `families`; returns the states the plain and the
/// symmetric searches stored, summed over the variants.
fn compare(cfg: &Config, families: &[Family]) -> (u64, u64) {
    compare_with(cfg, families, true)
}

/// [`compare`]; without `workers`, the symmetric search alone.
fn compare_with(cfg: &Config, families: &[Family], workers: bool) -> (u64, u64) {
    let reg = registry(Vec::new()).expect("catalogue");
    let (mut plain_states, mut sym_states, mut compared) = (0, 0, 0);
    for v in reg
        .iter()
        .filter(|v| v.kind != Kind::Bound && families.contains(&v.family))
    {
        let plain = search(cfg, v, &reg, &dfs(false, 1));
        for (what, b) in [
            ("symmetry", dfs(true, 1)),
            ("two workers", dfs(false, 2)),
            ("symmetry, two workers", dfs(true, 2)),
        ]
        .into_iter()
        .filter(|(what, _)| workers || *what == "symmetry")
        {
            let r = search(cfg, v, &reg, &b);
            let at = format!("{} on {cfg}: {what} vs plain", v.name);
            assert_eq!(r.verdicts, plain.verdicts, "{at}");
            assert_eq!(r.maxima, plain.maxima, "{at}");
            assert_eq!(r.events, plain.events, "{at}");
            if what == "symmetry" {
                sym_states += r.states;
            }
        }
        plain_states += plain.states;
        compared += 1;
    }
    assert!(compared > 0, "no variant of {families:?}");
    (plain_states, sym_states)
}

/// Three interchangeable CPUs: the reduction must also store fewer states.
#[test]
#[cfg_attr(
    not(loom),
    ignore = "7 s: under --cfg loom (.ci/loom), or run with --ignored"
)]
fn reductions_equal_plain_on_three_cpus_global() {
    let cfg = growth_config(3, 1);
    let (plain, sym) = compare(&cfg, &[Family::Global]);
    assert!(
        sym < plain,
        "{cfg}: {sym} states up to symmetry, {plain} plain"
    );
}

/// The symmetric search alone: with the split searches too this is over a
/// minute on two cores (the split is compared on the memcg tree below).
#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 to 20 s each: under --cfg loom, or run with --ignored"
)]
fn reductions_equal_plain_on_three_cpus_per_memcg() {
    let cfg = growth_config(3, 1);
    let (plain, sym) = compare_with(&cfg, &[Family::PerMemcg], false);
    assert!(
        sym < plain,
        "{cfg}: {sym} states up to symmetry, {plain} plain"
    );
}

/// Two CPUs with two updates each and the periodic work (a flusher that is
/// not a reader).
#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 to 20 s each: under --cfg loom, or run with --ignored"
)]
fn reductions_equal_plain_with_the_periodic_work() {
    let cfg = Config {
        updates: 2,
        readers: 0,
        periodic: true,
        ..growth_config(2, 2)
    };
    compare(&cfg, &[Family::Global]);
}

/// Three CPUs of two classes (values 2, 3, 2): only CPUs 0 and 2 may be
/// swapped.
#[test]
fn reductions_equal_plain_on_cpus_of_two_classes() {
    let cfg = Config {
        vals: vec![2, 3],
        ..growth_config(3, 1)
    };
    compare(&cfg, &[Family::Global]);
}

/// Two CPUs charging a child of the root, a reader of the root: the
/// per-memcg ghost domains and the updated tree are permuted too.
#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 to 20 s each: under --cfg loom, or run with --ignored"
)]
fn reductions_equal_plain_on_a_memcg_tree() {
    let cfg = Config {
        tree: vec![0],
        charge: vec![1],
        read: vec![0],
        ..growth_config(2, 1)
    };
    compare(&cfg, &[Family::PerMemcg]);
}

/// Three shards of the symmetric split search, merged, equal the plain
/// search; two of the three are inconclusive.
#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 to 20 s each: under --cfg loom, or run with --ignored"
)]
fn merged_shards_equal_plain() {
    let cfg = growth_config(3, 1);
    let reg = registry(Vec::new()).expect("catalogue");
    for v in reg
        .iter()
        .filter(|v| v.kind != Kind::Bound && v.family == Family::Global)
    {
        let plain = search(&cfg, v, &reg, &dfs(false, 1));
        let parts: Vec<Summary> = (0..3)
            .map(|index| {
                let shard = Shard { index, count: 3 };
                summarize_shard(
                    &cfg,
                    v,
                    &reg,
                    &dfs(true, 2),
                    shard,
                    Duration::from_secs(300),
                    None,
                )
                .expect("shard")
            })
            .collect();
        let at = format!("{} on {cfg}: merged shards vs plain", v.name);
        let merged = merge(&parts);
        assert_eq!(merged.len(), 1, "{at}");
        let m = &merged[0];
        assert!(m.finished, "{at}: {:?}", m.stopped);
        assert_eq!(m.verdicts, plain.verdicts, "{at}");
        assert_eq!(m.maxima, plain.maxima, "{at}");
        assert_eq!(m.events, plain.events, "{at}");
        let partial = merge(&parts[..2]);
        assert!(!partial[0].finished, "{at}: two of three shards finished");
    }
}
