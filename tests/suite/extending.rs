//! A variant written outside the crate (`examples/scaled_trigger.rs`, the
//! walk-through of docs/extending.md) gets the whole tool through
//! `cli::main_with`: the matrix fails the harmful port of the proposal and
//! passes the benign one, and explain, replay and bounds work on them.

use std::path::PathBuf;
use std::process::Command;

/// The example binary, beside the test binaries. `cargo test` builds it;
/// `cargo test --test extending` does not, so make sure it is current.
fn example() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let exe = std::env::current_exe().expect("test binary");
    let profile = exe.parent().and_then(|d| d.parent()).expect("profile dir");
    let target = profile.parent().expect("target dir");
    BUILT.call_once(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--release",
                "--example",
                "scaled_trigger",
                "--target-dir",
            ])
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo");
        assert!(status.success(), "building the example failed");
    });
    profile.join("examples").join("scaled_trigger")
}

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(example())
        .args(args)
        .output()
        .expect("run the example");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_matrix_judges_variants_written_outside_the_crate() {
    let (code, out) = run(&["--variant", "scaled-trigger,scaled-skip-only", "--json"]);
    assert_eq!(code, 1, "a harmful candidate makes the run fail");
    let cells: Vec<serde_json::Value> = serde_json::from_str(&out).expect("JSON");
    let refuted = ["documented_error_bound", "no_lost_flush_same_schedule"];
    for c in cells
        .iter()
        .filter(|c| !refuted.contains(&c["property"].as_str().unwrap()))
    {
        assert_eq!(c["kind"], "candidate");
        if c["variant"] == "scaled-trigger" {
            assert_eq!(c["verdict"], "holds", "{c}");
        }
    }
    let killed = cells.iter().any(|c| {
        c["variant"] == "scaled-skip-only"
            && c["property"] == "no_lost_flush"
            && c["verdict"] == "violated"
            && c["note"].as_str().unwrap().contains("[three-cpus]")
    });
    assert!(killed, "the skip-only port loses flushes on three CPUs");
}

#[test]
fn explain_replay_and_bounds_work_on_them() {
    let (code, out) = run(&[
        "explain",
        "--variant",
        "scaled-skip-only",
        "--property",
        "no_lost_flush",
        "--backend",
        "shuttle-random",
        "--runs",
        "2",
        "--cpus",
        "3",
        "--batch",
        "2",
        "--updates",
        "6",
        "--val",
        "1",
        "--reads",
        "2",
        "--no-periodic",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("violated: no_lost_flush: "), "{out}");
    let token = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: flushcheck replay "))
        .expect("a replay line");
    let (code, again) = run(&["replay", token]);
    assert_eq!(code, 0, "{again}");
    let (code, bounds) = run(&[
        "bounds",
        "--variant",
        "scaled-trigger,v6.0",
        "--shuttle-iterations",
        "500",
        "--custom",
        "--cpus",
        "3",
        "--batch",
        "2",
        "--updates",
        "4",
        "--val",
        "1",
        "--no-periodic",
    ]);
    assert_eq!(code, 0, "{bounds}");
    assert!(bounds.contains("scaled-trigger"), "{bounds}");
}
