//! `flushcheck explain` finds a counterexample, prints it as a kernel-style
//! column trace whose steps each fit one line of their column, and
//! `flushcheck replay` reproduces the same violation from the printed
//! token, on each backend.

use crate::common::{self, token};

/// The trace, without the lines that say how it was found.
fn diagram(out: &str) -> String {
    out.lines()
        .skip_while(|l| !l.starts_with('{'))
        .take_while(|l| !l.starts_with("replay:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rows of the column diagram (numbered lines).
fn rows(out: &str) -> Vec<String> {
    diagram(out)
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .map(str::to_string)
        .collect()
}

fn explain_and_replay(args: &[&str], expect: &[&str]) -> String {
    let mut all = vec!["explain", "--runs", "3"];
    all.extend_from_slice(args);
    let out = common::flushcheck(&all);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let property = args
        .windows(2)
        .find(|w| w[0] == "--property")
        .map(|w| w[1])
        .expect("a property");
    assert!(
        out.stdout.contains(&format!("violated: {property}:")),
        "{}",
        out.stdout
    );
    for e in expect {
        assert!(out.stdout.contains(e), "trace lacks {e:?}:\n{}", out.stdout);
    }
    let again = common::flushcheck(&["replay", &token(&out.stdout)]);
    assert_eq!(again.code, 0, "replay failed:\n{}", again.stdout);
    assert_eq!(
        diagram(&again.stdout),
        diagram(&out.stdout),
        "replay printed a different trace"
    );
    out.stdout
}

#[test]
fn off_by_one_round_trip_on_shuttle_with_short_steps() {
    let out = explain_and_replay(
        &[
            "--variant",
            "mutant-skip-off-by-one",
            "--property",
            "no_lost_flush",
            "--backend",
            "shuttle-pct",
            "--cpus",
            "2",
            "--no-periodic",
        ],
        &[
            "CPU 0",
            "CPU 1",
            "reader 0",
            "-> skip the add",
            "atomic_read(thr)=",
            "-> no flush",
        ],
    );
    // Each step is one line of its column; with four columns or fewer the
    // diagram fits 80 characters.
    for r in rows(&out) {
        assert!(r.len() <= 80, "{r:?}");
    }
}

#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 s: under --cfg loom (.ci/loom), or run with --ignored"
)]
fn a_later_epoch_bug_is_explained_on_the_suite() {
    // No configuration given: explain tries the suite's entries (all 22
    // flush entries, at 2,000 schedules per search instead of the default
    // 20,000 to keep the test near 10 s: still found on epochs).
    explain_and_replay(
        &[
            "--variant",
            "mutant-cached-flushable",
            "--property",
            "no_lost_flush",
            "--backend",
            "shuttle-random",
            "--shuttle-iterations",
            "2000",
        ],
        &["scratch[0] = 1", "atomic_set(thr, 0)", "-> no flush"],
    );
}

#[test]
fn lock_mutants_round_trip_on_loom() {
    explain_and_replay(
        &[
            "--variant",
            "mutant-relaxed-trylock",
            "--property",
            "flush_exclusion",
            "--backend",
            "loom",
        ],
        &[
            "trylock(flush)=1",
            "happens-before",
            "data race on flush_time",
        ],
    );
    explain_and_replay(
        &[
            "--variant",
            "mutant-no-trylock",
            "--property",
            "flush_exclusion",
            "--backend",
            "loom",
        ],
        &["flush_next_time=4"],
    );
}

/// Under loom `no_lost_flush` compares outcomes: explain finds one that no
/// v5.19 outcome dominates and replays the execution that produces it.
#[test]
fn loom_outcome_violation_round_trips() {
    explain_and_replay(
        &[
            "--variant",
            "mutant-skip-off-by-one",
            "--property",
            "no_lost_flush",
            "--backend",
            "loom",
            "--no-periodic",
            "--updates",
            "2",
            "--val",
            "2,1",
        ],
        &["dominated by none of v5.19's", "readers observed"],
    );
}

/// The finding of docs/findings.md: v6.0 skips a flush that v5.19 performs
/// on the same schedule.
#[test]
#[cfg_attr(
    not(loom),
    ignore = "10 s: under --cfg loom (.ci/loom), or run with --ignored"
)]
fn the_same_schedule_finding_has_a_replayable_witness() {
    let out = explain_and_replay(
        &[
            "--variant",
            "v6.0",
            "--property",
            "no_lost_flush_same_schedule",
            "--backend",
            "shuttle-pct",
            // Every suite entry, 2,000 schedules per search (see above).
            "--shuttle-iterations",
            "2000",
        ],
        &["-> skip the add", "atomic_set(thr, 0)", "-> no flush"],
    );
    assert!(
        out.contains("LKMM litmus test") || out.contains("not exported"),
        "{out}"
    );
}

#[test]
fn a_property_that_holds_has_no_counterexample() {
    let out = common::flushcheck(&[
        "explain",
        "--variant",
        "v6.0",
        "--property",
        "conservation",
        "--backend",
        "shuttle-random",
        "--runs",
        "1",
        "--shuttle-iterations",
        "300",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("no counterexample of conservation for v6.0"),
        "{}",
        out.stdout
    );
}
