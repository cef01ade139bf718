//! The `#[test]` API from a crate of its own (tests/outside, a workspace
//! member that `cargo test` at the top does not build): its tests pass, and the harmful variant's
//! failing `assert_holds()` prints its trace and no shuttle panic flood.

use std::process::{Command, Output};

/// `cargo test --release -p outside-variants` with `args`, in this
/// build's target directory (the model library and its dependencies are
/// this build's).
fn cargo_test(args: &[&str]) -> Output {
    let exe = std::env::current_exe().expect("test binary");
    let target = exe
        .parent()
        .and_then(|d| d.parent())
        .and_then(|d| d.parent())
        .expect("target dir");
    Command::new(env!("CARGO"))
        .args([
            "test",
            "--release",
            "--quiet",
            "-p",
            "outside-variants",
            "--target-dir",
        ])
        .arg(target)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUSTC_BOOTSTRAP")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("cargo")
}

/// A few seconds: the model library and its dependencies are this
/// build's; cargo compiles only the outside crate.
#[test]
fn an_outside_crate_checks_its_variants_from_test_functions() {
    let ok = cargo_test(&[]);
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(out.contains("3 passed; 0 failed; 1 ignored"), "{out}");
    // examples/own_property.rs as this crate's test: a property of one's
    // own, registered with Check::property, kills its mutant and holds on
    // v6.0.
    assert!(out.contains("test result: ok. 2 passed"), "{out}");

    let failed = cargo_test(&["--test", "verdicts", "--", "--ignored"]);
    let out = String::from_utf8_lossy(&failed.stdout);
    assert!(!failed.status.success(), "{out}");
    assert!(
        out.contains("outside-never-counts violates no_lost_flush"),
        "{out}"
    );
    // The trace: the CPU columns and the verdict beneath them.
    assert!(out.contains("reader 0"), "{out}");
    assert!(out.contains("-> no flush"), "{out}");
    assert!(out.contains("violated: no_lost_flush"), "{out}");
    assert!(!out.contains("NotSet"), "shuttle's panics leaked: {out}");
}

/// `flushcheck variants --json` lists every registered variant with its
/// lineage, kind and twin, and every twin it names is itself listed.
#[test]
fn variants_lists_the_registry_with_lineage_kind_and_twin() {
    let out = Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .args(["variants", "--json"])
        .output()
        .expect("flushcheck");
    assert!(out.status.success());
    let rows = crate::schemas::data(&String::from_utf8_lossy(&out.stdout), "variants");
    let rows = rows.as_array().expect("rows");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let registry = memcg_flush_model::cli::registry(Vec::new()).unwrap();
    assert_eq!(names.len(), registry.len());
    for r in rows {
        assert!(["global", "per-memcg", "lifetime"].contains(&r["lineage"].as_str().unwrap()));
        if let Some(t) = r["twin"].as_str() {
            assert!(names.contains(&t), "{}'s twin {t} is not listed", r["name"]);
        }
    }
    let tree_mb = rows
        .iter()
        .find(|r| r["updated_tree"] == true && r["twin"] == "v6.8-tree-mb-no-skip");
    assert!(tree_mb.is_some(), "an updated-tree form with its twin");
}

/// examples/v6_4_variant.rs, written from docs/extending.md's names
/// (`v6_4_flushers!`, twin `v6.4-no-skip`), holds on the pair entry and
/// its --version names the example, not flushcheck.
#[test]
fn a_v6_4_variant_from_the_guide_holds() {
    let bin = example("v6_4_variant");
    let out = Command::new(&bin)
        .args(["--variant", "v6.4-restated", "--entry", "pair"])
        .output()
        .expect("example");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("v6.4-restated  every property it must hold holds"),
        "{text}"
    );
    let version = Command::new(&bin)
        .arg("--version")
        .output()
        .expect("example");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("v6_4_variant "));
}

/// examples/tree_and_lifetime.rs, written from the guide's names: the
/// restated updated tree holds on a memcg entry against its twin, and the
/// release flush moved after the grace period holds every lifetime
/// property.
#[test]
fn an_updated_tree_and_a_reordered_lifetime_variant_from_the_guide() {
    let bin = example("tree_and_lifetime");
    let run = |args: &[&str]| {
        let out = Command::new(&bin).args(args).output().expect("example");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = run(&[
        "--variant",
        "v6.8-tree-mb-restated",
        "--entry",
        "memcg-pair",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("v6.8-tree-mb-restated  every property it must hold holds"),
        "{text}"
    );
    let (code, text) = run(&["lifetime", "--variant", "v7.1-life-flush-after-gp"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("lifetime: 15 cells: must-hold violations 0"),
        "{text}"
    );
}

/// The example `name`, built into this build's target directory.
fn example(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let profile = exe.parent().and_then(|d| d.parent()).expect("profile dir");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--example", name, "--target-dir"])
        .arg(profile.parent().expect("target dir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUSTC_BOOTSTRAP")
        .status()
        .expect("cargo");
    assert!(status.success(), "building {name} failed");
    profile.join("examples").join(name)
}
