//! Each mutant is killed by the property that should kill it, on the backends
//! that can see it; and the kernel variants hold on the same searches.
//!
//! These run single cells in process; `tests/matrix.rs` runs the whole
//! default matrix through the `flushcheck` binary.

use std::time::Duration;

use memcg_flush_model::check::{check_cell, Cell, Plan};
use memcg_flush_model::{Backend, Config, Property, Variant, Verdict};

fn backend(name: &str) -> Backend {
    Plan::default_backends(1)
        .into_iter()
        .find(|b| b.name() == name)
        .expect("known backend")
}

fn cell_on(cfg: &Config, variant: &str, property: Property, backend_name: &str) -> Cell {
    let v = Variant::by_name(variant).expect("known variant");
    check_cell(
        cfg,
        &v,
        property,
        &backend(backend_name),
        Duration::from_secs(120),
    )
}

/// A cell on the property's own default configuration, as the matrix runs it.
fn cell(variant: &str, property: Property, backend_name: &str) -> Cell {
    let cfg = property.default_config().unwrap_or_default();
    cell_on(&cfg, variant, property, backend_name)
}

fn assert_killed(c: &Cell, property: Property) {
    assert_eq!(c.verdict, Verdict::Violated, "{c:?}");
    let note = c.note.as_deref().unwrap_or("");
    assert!(note.starts_with(&format!("{}:", property.name())), "{note}");
}

#[test]
fn off_by_one_skip_is_killed_by_no_lost_flush_on_shuttle() {
    for b in ["shuttle-random", "shuttle-pct"] {
        assert_killed(
            &cell("mutant-skip-off-by-one", Property::NoLostFlush, b),
            Property::NoLostFlush,
        );
    }
}

#[test]
fn load_store_bump_is_killed_by_no_lost_flush_on_shuttle() {
    for b in ["shuttle-random", "shuttle-pct"] {
        assert_killed(
            &cell("mutant-load-store-bump", Property::NoLostFlush, b),
            Property::NoLostFlush,
        );
    }
}

/// Without `stats_flush_lock` two flushers run at once, but
/// `cgroup_rstat_lock` still serialises the walk, so the statistics stay
/// right: only flush_exclusion fails.
#[test]
fn no_trylock_is_killed_by_flush_exclusion_only_on_shuttle() {
    for b in ["shuttle-random", "shuttle-pct"] {
        assert_killed(
            &cell("mutant-no-trylock", Property::FlushExclusion, b),
            Property::FlushExclusion,
        );
        for p in [Property::Conservation, Property::MonotonicReads] {
            let c = cell("mutant-no-trylock", p, b);
            assert_eq!(
                c.verdict,
                Verdict::Holds,
                "cgroup_rstat_lock protects the walk: {c:?}"
            );
        }
    }
}

/// Without either lock, concurrent flushers lose and reorder deltas.
#[test]
fn no_locks_is_killed_by_conservation_monotonic_reads_and_flush_exclusion_on_shuttle() {
    for b in ["shuttle-random", "shuttle-pct"] {
        for p in [
            Property::FlushExclusion,
            Property::Conservation,
            Property::MonotonicReads,
        ] {
            assert_killed(&cell("mutant-no-locks", p, b), p);
        }
    }
}

#[test]
fn no_trylock_is_killed_by_flush_exclusion_on_loom() {
    assert_killed(
        &cell("mutant-no-trylock", Property::FlushExclusion, "loom"),
        Property::FlushExclusion,
    );
}

/// A `Relaxed` trylock still excludes (the CAS is atomic), but the next
/// flusher does not synchronise with the previous one's unlock. Only loom
/// tracks happens-before, so only loom sees it; shuttle passes it.
#[test]
fn relaxed_trylock_is_killed_by_flush_exclusion_only_on_loom() {
    let loom = cell("mutant-relaxed-trylock", Property::FlushExclusion, "loom");
    assert_killed(&loom, Property::FlushExclusion);
    assert!(
        loom.note
            .as_deref()
            .unwrap_or("")
            .contains("happens-before"),
        "{loom:?}"
    );
    for b in ["shuttle-random", "shuttle-pct"] {
        let c = cell("mutant-relaxed-trylock", Property::FlushExclusion, b);
        assert_eq!(
            c.verdict,
            Verdict::Holds,
            "shuttle cannot see ordering bugs: {c:?}"
        );
        assert!(c.coverage > 0, "two flushers must have contended: {c:?}");
    }
}

/// Without the periodic flusher loom can explore v5.19 exhaustively, and
/// the differential form of no_lost_flush kills both threshold mutants: the
/// quiescent reader sees the threshold stuck at num_online_cpus() and
/// reads a value that no v5.19 execution lets it read without flushing.
#[test]
fn loom_differential_kills_threshold_mutants_without_periodic_flusher() {
    let cfg = Config {
        periodic: false,
        ..Config::default()
    };
    let unbounded = Backend::Loom {
        preemption_bound: None,
    };
    for m in ["mutant-skip-off-by-one", "mutant-load-store-bump"] {
        let v = Variant::by_name(m).unwrap();
        let c = check_cell(
            &cfg,
            &v,
            Property::NoLostFlush,
            &unbounded,
            Duration::from_secs(120),
        );
        assert_killed(&c, Property::NoLostFlush);
        assert!(c.exhaustive, "{c:?}");
        assert!(c
            .note
            .as_deref()
            .unwrap()
            .contains("which no execution of v5.19 produces"));
    }
    let v6 = check_cell(
        &cfg,
        &Variant::V6_0,
        Property::NoLostFlush,
        &unbounded,
        Duration::from_secs(120),
    );
    assert_eq!(v6.verdict, Verdict::Holds, "{v6:?}");
    assert!(v6.exhaustive);
}

#[test]
fn kernel_variants_hold_every_property_on_shuttle_with_coverage() {
    for v in ["v5.19", "v6.0"] {
        // C1 is a kernel claim the model refutes (see documented_bound_*).
        for p in Property::ALL.into_iter().filter(|p| !p.refutable_claim()) {
            for b in ["shuttle-random", "shuttle-pct"] {
                let c = cell(v, p, b);
                assert_eq!(c.verdict, Verdict::Holds, "{c:?}");
                // v5.19 never skips, so the skip races cannot occur there.
                let skip_race = matches!(p, Property::NoLostFlush | Property::NoWorseThanBaseline);
                if !(v == "v5.19" && skip_race) {
                    assert!(c.coverage > 0, "racy interleaving never happened: {c:?}");
                }
            }
        }
    }
}

/// The default configuration drives v6.0 into the race its claim is about:
/// updates skip their add while a flush that already read their CPU is
/// about to reset the threshold.
#[test]
fn v6_0_skips_race_with_resets_under_loom() {
    let c = cell("v6.0", Property::NoLostFlush, "loom");
    assert_eq!(c.verdict, Verdict::Holds, "{c:?}");
    assert!(c.coverage > 0, "{c:?}");
    assert!(
        c.search.contains("differential against v5.19"),
        "{}",
        c.search
    );
}

#[test]
fn every_mutant_names_a_killer_and_every_property_has_one() {
    let all = Variant::all();
    // flush_time_bound fails for the kernel itself once the periodic work
    // may be late: flush_time_bound_holds_on_time_and_fails_when_late.
    for p in Property::ALL
        .into_iter()
        .filter(|p| *p != Property::FlushTimeBound)
    {
        assert!(
            all.iter().any(|v| v.killed_by.iter().any(|(k, _)| *k == p)),
            "no mutant is expected to kill {p}"
        );
    }
    for v in all
        .iter()
        .filter(|v| v.kind == memcg_flush_model::variant::Kind::Mutant)
    {
        assert!(!v.killed_by.is_empty(), "{} has no expected killer", v.name);
    }
}

/// The quantitative form of no_lost_flush: the off-by-one mutant leaves
/// more pages behind the threshold gate than v5.19 ever can (8 > 6 on
/// Config::bounds()), while v6.0 stays within it.
#[test]
fn off_by_one_skip_is_killed_by_no_worse_than_baseline() {
    for b in ["shuttle-random", "shuttle-pct", "std"] {
        let c = cell("mutant-skip-off-by-one", Property::NoWorseThanBaseline, b);
        assert_killed(&c, Property::NoWorseThanBaseline);
        let note = c.note.as_deref().unwrap_or("");
        assert!(note.contains("more than the 6 v5.19 can leave"), "{note}");
    }
    let v6 = cell("v6.0", Property::NoWorseThanBaseline, "shuttle-random");
    assert_eq!(v6.verdict, Verdict::Holds, "{v6:?}");
    assert!(v6.coverage > 0, "v6.0 never skipped: {v6:?}");
}

/// C1 is refuted for the kernel itself on every SC backend, and holds where
/// MEMCG_CHARGE_BATCH * nr_cpus is above everything a configuration writes.
#[test]
fn documented_bound_is_violated_by_the_kernel_and_can_hold() {
    for v in ["v5.19", "v6.0"] {
        for b in ["shuttle-random", "shuttle-pct"] {
            assert_killed(
                &cell(v, Property::DocumentedErrorBound, b),
                Property::DocumentedErrorBound,
            );
        }
    }
    let roomy = Config {
        batch: 8,
        updates: 2,
        vals: vec![1],
        ..Config::bounds()
    };
    let c = cell_on(
        &roomy,
        "v6.0",
        Property::DocumentedErrorBound,
        "shuttle-random",
    );
    assert_eq!(c.verdict, Verdict::Holds, "{c:?}");
    assert!(c.coverage > 0, "{c:?}");
}

/// C2/C16 hold while the periodic work runs on time, and fail once it may
/// run a tick late (B11).
#[test]
fn flush_time_bound_holds_on_time_and_fails_when_late() {
    for v in ["v5.19", "v6.0"] {
        let on_time = cell(v, Property::FlushTimeBound, "shuttle-pct");
        assert_eq!(on_time.verdict, Verdict::Holds, "{on_time:?}");
        assert!(on_time.coverage > 0, "{on_time:?}");
        let late = Config {
            late: 1,
            ..Config::timed()
        };
        for b in ["shuttle-random", "shuttle-pct"] {
            assert_killed(
                &cell_on(&late, v, Property::FlushTimeBound, b),
                Property::FlushTimeBound,
            );
        }
    }
}

/// Staleness is not decided by loom: the cell says so instead of holding.
#[test]
fn quantitative_properties_are_not_decided_by_loom() {
    let c = cell("v6.0", Property::NoWorseThanBaseline, "loom");
    assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
    assert!(
        c.note
            .as_deref()
            .unwrap_or("")
            .contains("not decided by loom"),
        "{c:?}"
    );
}
