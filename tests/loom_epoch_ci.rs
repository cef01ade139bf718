//! Runs `tests/loom_epoch.rs` (crossbeam-epoch under loom) from the normal
//! test command, so that CI checks it: a second build with
//! `RUSTFLAGS="--cfg loom --cfg crossbeam_loom"` in its own target
//! directory (`target/loom-epoch`), then that one test. The build is the
//! cost (about two minutes on 2 cores); the test runs in seconds.
#![cfg(not(any(loom, crossbeam_loom)))]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn crossbeam_epoch_suite_passes_under_loom() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("loom-epoch");
    let out = Command::new(env!("CARGO"))
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTFLAGS", "--cfg loom --cfg crossbeam_loom")
        .args([
            "test",
            "--release",
            "--test",
            "loom_epoch",
            "--",
            "--nocapture",
        ])
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("test result: ok. 1 passed"), "{stdout}");
    assert!(
        stdout.contains("v7.1-life life-rcu no_use_after_free: flag holds"),
        "{stdout}"
    );
}
