//! The larger exhaustive loom suite, enabled as loom users expect:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --test loom_suite
//! ```
//!
//! Each test names its configuration and the search; unbounded searches are
//! exhaustive. Measured runtimes are in docs/running.md.
#![cfg(loom)]

use std::time::Duration;

use memcg_flush_model::check::{check_cell, Cell};
use memcg_flush_model::{Backend, Config, Property, Variant, Verdict};

const BUDGET: Duration = Duration::from_secs(900);

fn run(cfg: &Config, variant: &Variant, property: Property, bound: Option<usize>) -> Cell {
    let backend = Backend::Loom {
        preemption_bound: bound,
    };
    check_cell(cfg, variant, property, &backend, BUDGET)
}

fn assert_kernel_holds(cfg: &Config, bound: Option<usize>) {
    for v in [Variant::V5_19, Variant::V6_0] {
        for p in Property::ALL {
            let c = run(cfg, &v, p, bound);
            assert_eq!(c.verdict, Verdict::Holds, "{cfg}: {c:?}");
            assert_eq!(c.exhaustive, bound.is_none(), "{c:?}");
            eprintln!(
                "{cfg} {} {} {:?}: {} executions, {:.1} s, coverage {}",
                v.name, p, bound, c.executions, c.seconds, c.coverage
            );
        }
    }
}

/// No periodic flusher: 2 CPUs and a reader, every interleaving.
#[test]
fn kernel_variants_hold_exhaustively_without_periodic_flusher() {
    let cfg = Config {
        periodic: false,
        ..Config::default()
    };
    assert_kernel_holds(&cfg, None);
}

/// Two updates per CPU, the second a huge page (|val| > batch), exhaustive.
#[test]
fn kernel_variants_hold_exhaustively_with_two_updates_and_a_huge_page() {
    let cfg = Config {
        batch: 2,
        updates: 2,
        vals: vec![3, 7],
        periodic: false,
        ..Config::default()
    };
    assert_kernel_holds(&cfg, None);
}

/// Three CPUs and a reader, exhaustive.
#[test]
fn kernel_variants_hold_exhaustively_on_three_cpus() {
    let cfg = Config {
        cpus: 3,
        vals: vec![2, 2, 3],
        periodic: false,
        ..Config::default()
    };
    assert_kernel_holds(&cfg, None);
}

/// The default scenario (with the periodic flusher) at preemption bound 3,
/// one more than the default matrix.
#[test]
fn kernel_variants_hold_on_default_config_at_three_preemptions() {
    assert_kernel_holds(&Config::default(), Some(3));
}

/// The differential no_lost_flush kills both threshold mutants on every
/// exhaustive configuration above where the mutant's bug can show.
#[test]
fn threshold_mutants_are_killed_exhaustively() {
    let configs = [
        Config {
            periodic: false,
            ..Config::default()
        },
        Config {
            cpus: 3,
            vals: vec![2, 2, 3],
            periodic: false,
            ..Config::default()
        },
    ];
    for cfg in &configs {
        for m in ["mutant-skip-off-by-one", "mutant-load-store-bump"] {
            let c = run(
                cfg,
                &Variant::by_name(m).unwrap(),
                Property::NoLostFlush,
                None,
            );
            assert_eq!(c.verdict, Verdict::Violated, "{cfg}: {c:?}");
            assert!(c.note.as_deref().unwrap().starts_with("no_lost_flush:"));
        }
    }
}
