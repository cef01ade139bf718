//! Bad input gets one clear line naming the bad value and what is allowed,
//! and exit code 2.

use crate::common;

fn error_of(args: &[&str]) -> String {
    let out = common::flushcheck(args);
    assert_eq!(Some(out.code), Some(2), "args {args:?} should be rejected");
    assert!(
        out.stdout.is_empty(),
        "no output for bad input: {}",
        out.stdout
    );
    let err = out.stderr.clone();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn zero_cpus_is_rejected() {
    assert!(error_of(&["--cpus", "0"]).contains("--cpus 0: need at least 1 CPU"));
}

#[test]
fn more_threads_than_loom_supports_is_rejected() {
    let e = error_of(&["--cpus", "4"]);
    assert!(e.contains("= 6 threads: loom allows at most 5"), "{e}");
}

#[test]
fn more_threads_are_fine_without_loom() {
    let out = common::flushcheck(&[
        "--cpus",
        "4",
        "--backend",
        "shuttle-pct",
        "--variant",
        "v6.0",
        "--shuttle-iterations",
        "200",
    ]);
    assert_eq!(Some(out.code), Some(0), "{}", out.stderr);
}

#[test]
fn unknown_names_are_rejected_with_the_allowed_names() {
    let e = error_of(&["--variant", "v6.1"]);
    assert!(
        e.contains("unknown variant \"v6.1\": expected one of v5.19, v6.0"),
        "{e}"
    );
    let e = error_of(&["--property", "liveness"]);
    assert!(
        e.contains("unknown property \"liveness\": expected one of no_lost_flush"),
        "{e}"
    );
    let e = error_of(&["--backend", "genmc"]);
    assert!(
        e.contains("unknown backend \"genmc\": expected one of loom, shuttle-random"),
        "{e}"
    );
    let e = error_of(&["--entry", "tiny"]);
    assert!(
        e.contains("unknown entry \"tiny\": expected one of pair, epochs"),
        "{e}"
    );
    let e = error_of(&["explain", "--variant", "v7", "--property", "conservation"]);
    assert!(e.contains("unknown variant \"v7\""), "{e}");
}

#[test]
fn bad_values_are_rejected() {
    assert!(error_of(&["--batch", "0"]).contains("--batch 0"));
    assert!(error_of(&["--val", "0"]).contains("--val 0"));
    assert!(error_of(&["--budget", "0"]).contains("--budget 0"));
    assert!(error_of(&["--jobs", "0"]).contains("--jobs 0"));
    assert!(error_of(&["--loom-preemptions", "two"]).contains("\"two\" is not a preemption bound"));
    assert!(error_of(&["--cpus", "many"]).contains("many"));
    assert!(error_of(&["replay", "fc9.abc"]).contains("replay token must start with \"fc2.\""));
}

#[test]
fn abstract_time_flags_are_checked() {
    let e = error_of(&["--ticks", "4"]);
    assert!(
        e.contains("--ticks 4: abstract time runs under shuttle-random and shuttle-pct only"),
        "{e}"
    );
    let e = error_of(&["--late", "2", "--backend", "shuttle-pct"]);
    assert!(e.contains("--late 2: lateness needs abstract time"), "{e}");
    let e = error_of(&["bounds", "--custom", "--ticks", "3", "--no-periodic"]);
    assert!(
        e.contains("--ticks 3: abstract time drives the periodic flusher"),
        "{e}"
    );
}

#[test]
fn a_variant_named_like_one_in_the_catalogue_is_refused() {
    let code = memcg_flush_model::cli::registry(vec![common::variant("v6.0").clone()]);
    let e = code.unwrap_err();
    assert!(
        e.contains("variant \"v6.0\" is already in the catalogue"),
        "{e}"
    );
}
