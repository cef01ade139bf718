//! The larger loom suite, enabled as loom users expect:
//!
//! ```text
//! CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" cargo test --release --test loom_suite
//! ```
//!
//! Each test runs `flushcheck` on one configuration with loom only, so that
//! cells run in parallel worker processes, and checks every cell's verdict.
//! Unbounded searches are exhaustive; the rest state their bound.
#![cfg(loom)]

use serde_json::Value;

mod common;

/// Run loom-only `flushcheck --json` with `args`; return exit code and cells.
fn loom_matrix(args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["--backend", "loom", "--budget", "900", "--json"];
    all.extend_from_slice(args);
    let (code, cells) = common::flushcheck_json(&all);
    for c in &cells {
        eprintln!(
            "{args:?} {} {}: {} ({} executions, {:.1} s, coverage {})",
            c["variant"], c["property"], c["verdict"], c["executions"], c["seconds"], c["coverage"]
        );
    }
    (code, cells)
}

/// Kernel variants hold; for v6.0 the races behind `covered` happened.
/// Without the periodic flusher only one flusher runs concurrently, so the
/// flusher-flusher races of monotonic_reads and flush_exclusion cannot occur.
fn assert_kernel_holds(cells: &[Value], exhaustive: bool, covered: &[&str]) {
    for c in cells.iter().filter(|c| c["kind"] == "kernel") {
        assert_eq!(c["verdict"], "holds", "{c}");
        assert_eq!(c["exhaustive"], exhaustive, "{c}");
        if c["variant"] == "v6.0" && covered.iter().any(|p| c["property"] == *p) {
            assert!(
                c["coverage"].as_u64().unwrap() > 0,
                "race never happened: {c}"
            );
        }
    }
}

/// With one concurrent flusher, unbounded loom explores only 20 v6.0
/// executions with a skip on the default values, none of them racing a
/// reset (shuttle PCT sees the race 851 times in 20,000 schedules of the same
/// configuration), so only conservation's race is required here.
const ONE_FLUSHER: &[&str] = &["conservation"];
const ALL: &[&str] = &[
    "no_lost_flush",
    "conservation",
    "monotonic_reads",
    "flush_exclusion",
];

/// No periodic flusher: 2 CPUs and a reader, every interleaving. The
/// threshold mutants are killed by the differential no_lost_flush. (The lock
/// mutants need two concurrent flushers, so they are not run here.)
#[test]
fn default_scenario_without_periodic_flusher_exhaustively() {
    let (code, cells) = loom_matrix(&[
        "--variant",
        "v5.19,v6.0,mutant-skip-off-by-one,mutant-load-store-bump",
        "--no-periodic",
        "--loom-preemptions",
        "unbounded",
    ]);
    assert_eq!(code, 0, "a kernel variant failed or a mutant survived");
    assert_kernel_holds(&cells, true, ONE_FLUSHER);
    for m in ["mutant-skip-off-by-one", "mutant-load-store-bump"] {
        let c = cells
            .iter()
            .find(|c| c["variant"] == m && c["property"] == "no_lost_flush")
            .unwrap();
        assert_eq!(c["verdict"], "violated", "{c}");
    }
}

/// Two updates per CPU, one of them a huge page (|val| > 2 * batch),
/// every interleaving.
#[test]
fn huge_page_updates_exhaustively() {
    let (code, cells) = loom_matrix(&[
        "--variant",
        "v5.19,v6.0",
        "--batch",
        "2",
        "--updates",
        "2",
        "--val",
        "3,7",
        "--no-periodic",
        "--loom-preemptions",
        "unbounded",
    ]);
    assert_eq!(code, 0);
    assert_kernel_holds(&cells, true, ONE_FLUSHER);
}

/// Three CPUs and a reader at preemption bound 3 (unbounded did not finish
/// 1.8 million executions in 150 s).
#[test]
fn three_cpus_at_three_preemptions() {
    let (code, cells) = loom_matrix(&[
        "--variant",
        "v5.19,v6.0",
        "--cpus",
        "3",
        "--val",
        "2,2,3",
        "--no-periodic",
        "--loom-preemptions",
        "3",
    ]);
    assert_eq!(code, 0);
    assert_kernel_holds(&cells, false, ONE_FLUSHER);
}

/// The default scenario, periodic flusher included, at preemption bound 3:
/// one more than the default matrix.
#[test]
fn default_scenario_at_three_preemptions() {
    let (code, cells) = loom_matrix(&["--loom-preemptions", "3"]);
    assert_eq!(code, 0, "a kernel variant failed or a mutant survived");
    assert_kernel_holds(&cells, false, ALL);
}
