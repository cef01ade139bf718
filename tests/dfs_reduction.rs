//! The sleep-set reduction of the exhaustive search is sound: on
//! configurations where the unreduced depth-first search finishes, both
//! report the same verdict on every property and the same maxima, for
//! every variant of the catalogue.
//!
//! The unreduced search is the reference (every SC interleaving, no
//! pruning); with two flushers it no longer finishes (a CPU, a reader and
//! the periodic work already exceed 400,000 schedules), so the
//! configurations here have one flusher besides main's final flush.

use std::time::Duration;

use memcg_flush_model::check::run::{explore_variant, judge, judged, monitor_plan};
use memcg_flush_model::cli::registry;
use memcg_flush_model::explore::{Backend, Outcome, Shard};
use memcg_flush_model::protocol::{Family, Kind, Variant};
use memcg_flush_model::{Config, Property};

struct Search {
    schedules: u64,
    verdicts: Vec<String>,
    maxima: [i64; 5],
}

fn search(cfg: &Config, variant: &str, sleep_sets: bool) -> Search {
    let reg = registry(Vec::new()).expect("catalogue");
    let v = reg
        .iter()
        .find(|v| v.name == variant)
        .expect("known")
        .clone();
    let b = Backend::ShuttleDfs {
        max_schedules: 200_000,
        sleep_sets,
        stateful: false,
        symmetry: false,
        workers: 1,
    };
    let plan = monitor_plan(&v, &reg, cfg, &b).expect("plan");
    let (e, shared) = explore_variant(
        &v,
        plan,
        &b,
        Shard::default(),
        Duration::from_secs(120),
        None,
    );
    assert!(
        e.outcome == Outcome::Finished,
        "{variant} on {cfg}, sleep sets {sleep_sets}: {:?}",
        e.outcome
    );
    let m = &shared.measures;
    Search {
        schedules: e.executions,
        verdicts: Property::ALL
            .into_iter()
            .filter(|p| judged(*p, &v, cfg, &b))
            .map(|p| {
                let j = judge(p, cfg, &e.outcome, &shared);
                format!("{}={}", p.name(), j.verdict.name())
            })
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
    let base = Config {
        cpus: 1,
        batch: 1,
        updates: 2,
        vals: vec![2],
        readers: 1,
        reads: 1,
        periodic: false,
        ticks: 0,
        late: 0,
        tree: Vec::new(),
        charge: Vec::new(),
        read: Vec::new(),
        ratelimited: 0,
        settle: 0,
        settle_update: false,
    };
    let configs = [
        base.clone(),
        Config {
            readers: 0,
            periodic: true,
            ..base
        },
    ];
    let reg = registry(Vec::new()).expect("catalogue");
    let mut pruned = 0;
    // The per-memcg family walks more steps per update: one update each.
    let per_memcg: Vec<Config> = configs
        .iter()
        .map(|c| Config {
            updates: 1,
            ..c.clone()
        })
        .collect();
    for (cfg, family) in configs
        .iter()
        .map(|c| (c, Family::Global))
        .chain(per_memcg.iter().map(|c| (c, Family::PerMemcg)))
    {
        // The tree family's unreduced search spins on the per-CPU rstat
        // lock past the cap (over 200,000 schedules with the periodic work);
        // tests/stateful.rs compares it with sleep sets and state caching.
        for v in reg.iter().filter(|v| {
            v.kind != Kind::Bound && v.family == family && !Variant::is_tree_family(&v.name)
        }) {
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
