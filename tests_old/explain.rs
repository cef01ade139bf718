//! `flushcheck explain` finds a counterexample for every designated kill,
//! prints it as a kernel-style column trace, and `flushcheck replay`
//! reproduces the same violation from the printed token, on each backend.

mod common;

fn flushcheck(args: &[&str]) -> (i32, String) {
    let r = common::flushcheck(args);
    (r.code, r.stdout)
}

/// `explain` for the off-by-one mutant under shuttle PCT, 5 seeded searches.
const OFF_BY_ONE: &[&str] = &[
    "explain",
    "--variant",
    "mutant-skip-off-by-one",
    "--property",
    "no_lost_flush",
    "--backend",
    "shuttle-pct",
    "--runs",
    "5",
];

fn token(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("replay: flushcheck replay "))
        .unwrap_or_else(|| panic!("no replay line in:\n{out}"))
        .to_string()
}

/// The trace, without the lines that say how it was found.
fn diagram(out: &str) -> String {
    out.lines()
        .skip_while(|l| !l.starts_with('{'))
        .take_while(|l| !l.starts_with("replay:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn explain_and_replay(variant: &str, property: &str, backend: &str, expect: &[&str]) {
    let (code, out) = flushcheck(&[
        "explain",
        "--variant",
        variant,
        "--property",
        property,
        "--backend",
        backend,
        "--runs",
        "5",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("violated: {property}:")), "{out}");
    for e in expect {
        assert!(out.contains(e), "trace lacks {e:?}:\n{out}");
    }
    let t = token(&out);
    let (code, again) = flushcheck(&["replay", &t]);
    assert_eq!(code, 0, "replay failed:\n{again}");
    assert_eq!(
        diagram(&again),
        diagram(&out),
        "replay printed a different trace"
    );
}

#[test]
fn off_by_one_round_trip_on_shuttle() {
    explain_and_replay(
        "mutant-skip-off-by-one",
        "no_lost_flush",
        "shuttle-pct",
        &[
            "CPU 0",
            "CPU 1",
            "reader 0",
            "skip the add",
            "atomic_read(",
            "&stats_flush_threshold)",
        ],
    );
}

#[test]
fn load_store_bump_round_trip_on_shuttle() {
    explain_and_replay(
        "mutant-load-store-bump",
        "no_lost_flush",
        "shuttle-random",
        &["atomic_set(", "reader 0"],
    );
}

#[test]
fn no_trylock_round_trip_on_shuttle_and_loom() {
    explain_and_replay(
        "mutant-no-trylock",
        "flush_exclusion",
        "shuttle-pct",
        &["spin_lock("],
    );
    explain_and_replay(
        "mutant-no-trylock",
        "flush_exclusion",
        "loom",
        &["flush_next_time = 4"],
    );
}

#[test]
fn relaxed_trylock_round_trip_on_loom() {
    explain_and_replay(
        "mutant-relaxed-trylock",
        "flush_exclusion",
        "loom",
        &["spin_trylock(", "&stats_flush_lock) = 1", "happens-before"],
    );
}

#[test]
fn no_locks_round_trip_on_shuttle() {
    explain_and_replay(
        "mutant-no-locks",
        "conservation",
        "shuttle-pct",
        &["main", "vmstats.state[0] ="],
    );
    explain_and_replay(
        "mutant-no-locks",
        "monotonic_reads",
        "shuttle-pct",
        &["READ_ONCE("],
    );
}

/// Without the periodic flusher loom explores v5.19 exhaustively, so the
/// differential no_lost_flush gives a trace too.
#[test]
fn differential_violation_round_trip_on_loom() {
    let (code, out) = flushcheck(&[
        "explain",
        "--variant",
        "mutant-skip-off-by-one",
        "--property",
        "no_lost_flush",
        "--backend",
        "loom",
        "--no-periodic",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("is not one of v5.19's (exhaustive)"), "{out}");
    let (code, again) = flushcheck(&["replay", &token(&out)]);
    assert_eq!(code, 0, "{again}");
    assert_eq!(diagram(&again), diagram(&out));
}

#[test]
fn kernel_variant_has_no_counterexample_and_says_which_bounds() {
    let (code, out) = flushcheck(&[
        "explain",
        "--variant",
        "v6.0",
        "--property",
        "flush_exclusion",
        "--backend",
        "loom",
        "--max-preemptions",
        "1",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no counterexample of flush_exclusion for v6.0"),
        "{out}"
    );
    assert!(
        out.contains("loom, preemption bounds 0..=1: finished, none found"),
        "{out}"
    );
}

#[test]
fn traces_fit_80_columns_with_three_threads() {
    let (_, out) = flushcheck(OFF_BY_ONE);
    let d = diagram(&out);
    assert!(d.lines().all(|l| l.len() <= 80), "{d}");
    assert!(d.is_ascii());
}

#[test]
fn markdown_report_is_mail_friendly() {
    let dir = std::env::temp_dir().join(format!("flushcheck-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.md");
    let (code, out) = flushcheck(&[
        "report",
        "--out",
        path.to_str().unwrap(),
        "--variant",
        "v6.0,mutant-skip-off-by-one",
        "--property",
        "no_lost_flush",
        "--backend",
        "shuttle-pct",
        "--shuttle-iterations",
        "2000",
    ]);
    assert_eq!(code, 0, "{out}");
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(
        md.contains("### mutant-skip-off-by-one: no_lost_flush"),
        "{md}"
    );
    assert!(md.contains("flushcheck replay fc1."), "{md}");
    let html = md
        .match_indices('<')
        .any(|(i, _)| md[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/'));
    assert!(!html, "no HTML tags");
    for l in md.lines().filter(|l| !l.starts_with("flushcheck replay ")) {
        assert!(l.len() <= 100, "line over 100 columns: {l}");
    }
}

#[test]
fn bad_token_is_one_line_error() {
    let out = common::flushcheck(&["replay", "xyz"]);
    assert_eq!(out.code, 2);
    let err = out.stderr;
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("replay token must start with \"fc1.\""),
        "{err}"
    );
}

/// A trace over few shared variables is also printed as an LKMM litmus
/// test; a trace over many is not, and says why.
#[test]
fn litmus_export_for_small_traces_only() {
    let (_, out) = flushcheck(OFF_BY_ONE);
    assert!(
        out.contains("C flushcheck-mutant-skip-off-by-one-no_lost_flush"),
        "{out}"
    );
    assert!(
        out.contains("P0(int *state0, atomic_t *thr) /* CPU 0 */"),
        "{out}"
    );
    assert!(out.contains("r0 = atomic_read(thr);"), "{out}");
    assert!(out.contains("exists ("), "{out}");
    let (_, out) = flushcheck(&[
        "explain",
        "--variant",
        "mutant-relaxed-trylock",
        "--property",
        "flush_exclusion",
        "--backend",
        "loom",
    ]);
    assert!(
        out.contains("not exported as a litmus test: the trace touches"),
        "{out}"
    );
}
