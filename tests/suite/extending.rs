//! Variants written outside the crate (the examples docs/extending.md walks
//! through) get the whole tool: through `cli::main_with`
//! (`examples/scaled_trigger.rs`) the matrix fails the harmful port of the
//! proposal and passes the benign one, and explain, replay and bounds work
//! on them; through `cli::main_with_properties` (`examples/own_additions.rs`)
//! a per-memcg variant's trace gets its lineage's legend and a lifetime
//! form's witness its own.

use std::path::PathBuf;
use std::process::Command;

/// The example binary `name`, beside the test binaries. `cargo test`
/// builds it; `cargo test --test suite extending::` does not, so make sure
/// it is current.
fn example_named(name: &str, built: &'static std::sync::Once) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let profile = exe.parent().and_then(|d| d.parent()).expect("profile dir");
    let target = profile.parent().expect("target dir");
    built.call_once(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "--example", name, "--target-dir"])
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            // A nightly-only flag given to the test binary must not reach
            // this build: cargo would take it as a change and rebuild.
            .env_remove("RUSTC_BOOTSTRAP")
            .status()
            .expect("cargo");
        assert!(status.success(), "building the example failed");
    });
    profile.join("examples").join(name)
}

fn example() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    example_named("scaled_trigger", &BUILT)
}

fn own_additions() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    example_named("own_additions", &BUILT)
}

fn run(args: &[&str]) -> (i32, String) {
    run_example(example(), args)
}

fn run_example(exe: PathBuf, args: &[&str]) -> (i32, String) {
    let out = Command::new(exe)
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
    let cells = crate::schemas::data(&out, "matrix");
    let cells = cells.as_array().expect("cells");
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
        .find_map(|l| l.strip_prefix("replay: scaled_trigger replay "))
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

/// A per-memcg variant registered through `main_with_properties` is drawn
/// with the per-memcg legend (memcg-indexed counters, the per-memcg
/// threshold), as a catalogue variant of its lineage is.
#[test]
fn an_outside_per_memcg_variant_gets_its_lineages_legend() {
    let (code, out) = run_example(
        own_additions(),
        &[
            "explain",
            "--variant",
            "v6.17-count-every-level",
            "--property",
            "quiescent_read_exact",
            "--backend",
            "shuttle-random",
            "--cpus",
            "1",
            "--batch",
            "2",
            "--updates",
            "3",
            "--val",
            "2",
            "--tree",
            "0",
            "--charge",
            "1",
            "--read",
            "0",
        ],
    );
    assert_eq!(code, 0, "{out}");
    for key in [
        "S.m[c] memcg m's vmstats_percpu->state[0] on CPU c",
        "thr.m  memcg m's vmstats->stats_updates",
        "violated: quiescent_read_exact",
    ] {
        assert!(out.contains(key), "no `{key}` in:\n{out}");
    }
    assert!(!out.contains("thr   stats_flush_threshold"), "{out}");
}

/// A lifetime form registered from outside gets a witness with the
/// lifetime legend: freeing without a grace period is a use after free.
#[test]
fn an_outside_lifetime_form_gets_a_lifetime_witness() {
    let (code, out) = run_example(
        own_additions(),
        &[
            "lifetime",
            "--witness",
            "v7.1-life-free-early:no_use_after_free:shuttle-dfs:life-child",
        ],
    );
    assert_eq!(code, 0, "{out}");
    for key in [
        "objcg     objcg->memcg, the memcg updaters charge through RCU",
        "memcg 2 FREED",
        "violated: no_use_after_free",
    ] {
        assert!(out.contains(key), "no `{key}` in:\n{out}");
    }
}
