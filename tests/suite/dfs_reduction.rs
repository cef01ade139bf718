//! The sleep-set reduction of the exhaustive search is sound: on
//! configurations where the unreduced depth-first search finishes, both
//! report the same verdict on every property and the same maxima, for
//! every variant of the catalogue.
//!
//! The unreduced search is the reference (every SC interleaving, no
//! pruning); with two flushers it no longer finishes (a CPU, a reader and
//! the periodic work already exceed 400,000 schedules), so the
//! configurations here have one flusher besides main's final flush.

use memcg_flush_model::explore::Outcome;
use memcg_flush_model::protocol::{Family, Kind};
use memcg_flush_model::Config;

use crate::common::{cfg, dfs, explore, reg, tree_family};

struct Search {
    schedules: u64,
    verdicts: Vec<String>,
    maxima: [i64; 5],
}

fn search(cfg: &Config, variant: &str, sleep_sets: bool) -> Search {
    let x = explore(variant, cfg, &dfs(200_000, sleep_sets, false), None);
    let e = &x.exploration;
    assert!(
        e.outcome == Outcome::Finished,
        "{variant} on {cfg}, sleep sets {sleep_sets}: {:?}",
        e.outcome
    );
    let m = &x.shared.measures;
    Search {
        schedules: e.executions,
        verdicts: x
            .verdicts
            .iter()
            .map(|j| format!("{}={}", j.property.name(), j.verdict.name()))
            .collect(),
        maxima: [
            m.stale_at_no_flush.value(),
            m.stale_since_reset.value(),
            m.stale_after_flush_call.value(),
            m.max_threshold.value(),
            m.stale_ticks.value(),
        ],
    }
}

#[test]
fn sleep_sets_change_neither_verdicts_nor_maxima() {
    let configs = [cfg::one_cpu_reader(), cfg::one_cpu_periodic()];
    let mut pruned = 0;
    // The per-memcg family walks more steps per update: one update each.
    let per_memcg: Vec<Config> = configs.iter().map(|c| c.clone().updates(1)).collect();
    for (cfg, family) in configs
        .iter()
        .map(|c| (c, Family::Global))
        .chain(per_memcg.iter().map(|c| (c, Family::PerMemcg)))
    {
        // The tree family's unreduced search spins on the per-CPU rstat
        // lock past the cap (over 200,000 schedules with the periodic work);
        // tests/suite/stateful.rs compares it with sleep sets and state caching.
        for v in reg()
            .iter()
            .filter(|v| v.kind != Kind::Bound && v.family == family && !tree_family(v))
        {
            let reduced = search(cfg, &v.name, true);
            let full = search(cfg, &v.name, false);
            assert_eq!(reduced.verdicts, full.verdicts, "{} on {cfg}", v.name);
            assert_eq!(reduced.maxima, full.maxima, "{} on {cfg}", v.name);
            assert!(reduced.schedules <= full.schedules);
            pruned += full.schedules - reduced.schedules;
        }
    }
    assert!(pruned > 0, "the reduction pruned nothing");
}
