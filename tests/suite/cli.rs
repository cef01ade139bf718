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
    assert!(
        e.contains("shuttle-random, shuttle-pct, shuttle-dfs, std would run it"),
        "{e}"
    );
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
    // A number after a flag that takes none is not called negative.
    let e = memcg_flush_model::cli::parses(&["fuzz", "--keep-going", "20"]).unwrap_err();
    assert!(
        e.contains("unexpected value '20' after '--keep-going': that flag takes no value"),
        "{e}"
    );
    let e = memcg_flush_model::cli::parses(&["--cpus", "-2"]).unwrap_err();
    assert!(e.contains("'-2' for '--cpus': a negative number"), "{e}");
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

/// Bad registrations are refused before anything runs, each with one line
/// naming the variant: a mutant nothing is designated to kill (it would
/// never be searched), an empty name, a twin that is not registered
/// (named as the twin), a twin without a gate.
#[test]
fn bad_registrations_are_refused_with_one_line_each() {
    use memcg_flush_model::protocol::Kind;
    let named = |name: &str, kind: Kind| {
        let mut v = common::variant("v6.0").clone();
        v.name = name.into();
        v.kind = kind;
        v.findings.clear();
        v
    };
    let cases: [(memcg_flush_model::Variant, &str); 5] = [
        (
            named("mine-unkilled", Kind::Mutant),
            "mutant \"mine-unkilled\" has no killed_by",
        ),
        (
            named("", Kind::Candidate),
            "variant name \"\": a variant's name must be non-empty",
        ),
        (named("a,b", Kind::Candidate), "variant name \"a,b\""),
        (
            named("mine", Kind::Candidate).twin("v5.91"),
            "variant \"mine\" names the twin \"v5.91\", which is not registered: twins are v5.19,",
        ),
        (
            named("mine", Kind::Candidate).twin("v6.0"),
            "variant \"mine\" names the twin \"v6.0\", which has no gate",
        ),
    ];
    for (v, want) in cases {
        let e = memcg_flush_model::cli::registry(vec![v]).unwrap_err();
        assert!(e.contains(want), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// clap's errors in one line keep what names the problem.
#[test]
fn parse_errors_name_what_is_wrong() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["explain", "--variant", "v6.0"],
            "not provided: --property",
        ),
        (&["merge"], "not provided: <FILES>"),
        (&["compare", "a.json"], "not provided: <AFTER>"),
        (&["--cpu", "2"], "a similar argument exists: '--cpus'"),
        (
            &["--format", "yaml"],
            "possible values: text, markdown, json",
        ),
        (&["--cpus", "-1"], "invalid value '-1' for '--cpus'"),
        (
            &["--periodic", "--no-periodic"],
            "'--periodic' cannot be used with '--no-periodic'",
        ),
        (
            &["--json", "--format", "markdown"],
            "'--json' cannot be used with '--format",
        ),
    ];
    for (args, want) in cases {
        let e = error_of(args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

/// A selection that would judge no cell is refused, saying why.
#[test]
fn a_selection_that_runs_nothing_is_an_error() {
    let e = error_of(&["--variant", "v6.0", "--entry", "memcg-chain"]);
    assert!(
        e.contains("no selected entry (memcg-chain) applies to v6.0") && e.contains("pair, epochs"),
        "{e}"
    );
    let e = error_of(&["--variant", "v6.0", "--property", "ancestors_flushable"]);
    assert!(
        e.contains("ancestors_flushable is judged for none of v6.0"),
        "{e}"
    );
}

/// Every `flushcheck` command in `text` (in backquotes, or after
/// `explain: `) parses; how many there were.
pub fn every_command_parses(text: &str) -> usize {
    let mut found = 0;
    for line in text.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("flushcheck ") {
            let before = &rest[..i];
            let tail = &rest[i + "flushcheck ".len()..];
            let end = if before.ends_with('`') {
                tail.find('`')
            } else if before.ends_with("explain: ") || before.ends_with("its witness: ") {
                tail.find(';')
            } else {
                rest = tail;
                continue;
            };
            let cmd = &tail[..end.unwrap_or(tail.len())];
            let args: Vec<&str> = cmd.split_whitespace().collect();
            memcg_flush_model::cli::parses(&args).unwrap_or_else(|e| {
                panic!("printed command `flushcheck {cmd}` does not parse: {e}")
            });
            found += 1;
            rest = tail;
        }
    }
    found
}

/// The hints of a run with cells not as expected parse: on a suite entry
/// and on a configuration of the user's own (given as its flags).
#[test]
fn printed_hints_parse() {
    for args in [
        &[
            "--val",
            "-2,3",
            "--variant",
            "v6.0",
            "--backend",
            "shuttle-dfs",
            "--dfs-cap",
            "5",
        ][..],
        &[
            "--periodic",
            "--variant",
            "v6.0",
            "--backend",
            "shuttle-pct",
            "--shuttle-iterations",
            "100",
        ][..],
        &[
            "--entry",
            "batch2-dfs",
            "--variant",
            "v6.0",
            "--backend",
            "shuttle-dfs",
            "--dfs-cap",
            "50",
        ][..],
    ] {
        let out = common::flushcheck(args);
        let n = every_command_parses(&out.stdout);
        assert!(
            n > 0 || out.code == 0,
            "no hint for a failing run:\n{}",
            out.stdout
        );
    }
    let listing = common::flushcheck(&["findings", "--id", "c1-bound"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    assert_eq!(
        every_command_parses(&listing.stdout),
        2,
        "{}",
        listing.stdout
    );
    assert!(
        listing
            .stdout
            .contains("`flushcheck report --finding c1-bound`"),
        "{}",
        listing.stdout
    );
    // A configuration of the user's own whose exhaustive search is cut
    // short: the inconclusive cell's hint gives the configuration as flags.
    let custom = common::flushcheck(&[
        "--val",
        "-2,3",
        "--variant",
        "v6.0",
        "--backend",
        "shuttle-dfs",
        "--dfs-cap",
        "5",
    ]);
    assert!(custom.stdout.contains("explain: flushcheck explain --variant v6.0 --property no_lost_flush --backend shuttle-pct --cpus 2 --batch 1 --updates 1 --val -2,3"), "{}", custom.stdout);
}

/// `flushcheck --cpus 9 --backend shuttle-pct`: the kernel versions'
/// verdicts, exit 0 (no kill or finding is pinned on it).
#[test]
fn a_large_custom_configuration_answers_for_itself() {
    let out = common::flushcheck(&[
        "--cpus",
        "9",
        "--backend",
        "shuttle-pct",
        "--shuttle-iterations",
        "200",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("no_lost_flush on v6.0: HOLDS"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("findings: not checked on this configuration"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("  mutant "), "{}", out.stdout);
}

/// `plot` without `--out` writes a fresh directory, never docs/figures.
#[test]
fn plot_writes_a_fresh_directory_by_default() {
    let scratch = tempfile::tempdir().expect("dir");
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("flushcheck-figures")).expect("taken");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .args(["plot", "--rmw-updates", "16"])
        .current_dir(dir)
        .output()
        .expect("plot");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("flushcheck-figures-2").is_dir());
    assert!(std::fs::read_dir(dir.join("flushcheck-figures"))
        .expect("ls")
        .next()
        .is_none());
}

/// A closed pipe ends the output quietly, as Unix tools do (`flushcheck
/// variants | head`): killed by SIGPIPE, no panic on stderr.
#[test]
#[cfg(unix)]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .arg("variants")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flushcheck");
    // The reader goes away before the first line is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}
