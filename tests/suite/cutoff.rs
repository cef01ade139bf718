//! The cutoff of docs/cutoff.md, checked: for every variant of the
//! catalogue (global and per-memcg families), every property violated on
//! three or four CPUs is violated on two CPUs (batch 2, 3-page updates,
//! one reader, no periodic work). Global family: 2 CPUs x 1 to 3 updates
//! against 3 x 1, 3 x 2 and 4 x 1; per-memcg family (whose walks visit
//! every level, so its searches are larger): 2 x 1 and 2 x 2 against
//! 3 x 1 and 4 x 1, where three mutants do violate `no_lost_flush` beyond
//! the cutoff (pinned: the cutoff is not claimed for that family).
//! Minutes on two cores: `cargo test --release --test
//! suite cutoff -- --ignored --nocapture` prints the lines docs/cutoff.md
//! quotes.

use std::collections::BTreeSet;
use std::time::Duration;

use memcg_flush_model::cli::registry;
use memcg_flush_model::explore::Backend;
use memcg_flush_model::measure::exhaustive::{growth_config, summarize};
use memcg_flush_model::protocol::{Family, Kind};

fn violated(
    cpus: usize,
    updates: usize,
    v: &memcg_flush_model::protocol::Variant,
) -> BTreeSet<String> {
    let reg = registry(Vec::new()).expect("catalogue");
    let cfg = growth_config(cpus, updates);
    let b = Backend::ShuttleDfs {
        max_schedules: 20_000_000,
        sleep_sets: true,
        stateful: true,
        symmetry: true,
        workers: 2,
    };
    let s = summarize(&cfg, v, &reg, &b, Duration::from_secs(600), None)
        .unwrap_or_else(|e| panic!("{} on {cfg}: {e}", v.name));
    assert!(s.finished, "{} on {cfg}: {:?}", v.name, s.stopped);
    s.verdicts
        .iter()
        .filter_map(|p| p.strip_suffix("=violated"))
        .map(str::to_string)
        .collect()
}

/// Every variant of `family`: what `larger` (`(cpus, updates)`) violates
/// and `cutoff` does not, as `variant property on N CPUs x U` lines.
fn beyond(family: Family, cutoff: &[(usize, usize)], larger: &[(usize, usize)]) -> Vec<String> {
    let reg = registry(Vec::new()).expect("catalogue");
    let mut variants = 0;
    let mut beyond = Vec::new();
    for v in reg
        .iter()
        .filter(|v| v.kind != Kind::Bound && v.family == family)
    {
        let at_cutoff: BTreeSet<String> = cutoff
            .iter()
            .flat_map(|&(c, u)| violated(c, u, v))
            .collect();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for &(c, u) in larger {
            let l = violated(c, u, v);
            for p in l.difference(&at_cutoff) {
                beyond.push(format!("{} {p} on {c} CPUs x {u}", v.name));
            }
            seen.extend(l);
        }
        println!(
            "{:<38} cutoff {:>2} violated, larger {:>2} violated, beyond the cutoff {}",
            v.name,
            at_cutoff.len(),
            seen.len(),
            seen.difference(&at_cutoff).count()
        );
        variants += 1;
    }
    println!("{family:?}: {variants} variants; beyond the cutoff: {beyond:?}");
    beyond
}

#[test]
#[ignore = "the global family at 3 and 4 CPUs: minutes; run with --ignored"]
fn no_counterexample_beyond_the_cutoff_global() {
    let b = beyond(
        Family::Global,
        &[(2, 1), (2, 2), (2, 3)],
        &[(3, 1), (3, 2), (4, 1)],
    );
    assert!(b.is_empty(), "{b:#?}");
}

#[test]
#[ignore = "the per-memcg family at 3 and 4 CPUs: minutes; run with --ignored"]
fn per_memcg_mutants_beyond_the_cutoff_are_pinned() {
    let b = beyond(Family::PerMemcg, &[(2, 1), (2, 2)], &[(3, 1), (4, 1)]);
    let pinned: Vec<String> = [
        ("mutant-v6.8-skip-at-trigger", 3),
        ("mutant-v6.17-break-at-trigger", 3),
        ("mutant-scaled-2026-break-at-trigger", 4),
    ]
    .iter()
    .flat_map(|(v, n)| {
        ["no_lost_flush", "no_lost_flush_same_schedule"].map(|p| format!("{v} {p} on {n} CPUs x 1"))
    })
    .collect();
    assert_eq!(b, pinned);
}
