//! The probe binary (`probe/`, crate `memcg-probe`): built from this
//! source tree as a static binary, so that it runs as a guest's `/init`
//! with no libraries; or run on this machine's own kernel (`--host`).
//!
//! It is built on demand rather than as part of `cargo build`, which does
//! not build it (it is not a default workspace member): a run that boots
//! nothing (`--from`, the tests) never needs it. It goes to
//! `target/probe` (`$CARGO_TARGET_DIR/probe` if that is set), apart from
//! the model's build, whose RUSTFLAGS it must not share.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The triple the probe is built for: the guests are x86-64.
pub const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The source tree the probe is built from: the crate this binary was
/// compiled from, or else the current directory, whichever has `probe/`.
pub fn source_root() -> Result<PathBuf, String> {
    let compiled = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let here = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    [compiled, here]
        .into_iter()
        .find(|d| d.join("probe").join("Cargo.toml").is_file())
        .ok_or_else(|| {
            format!(
                "no probe/Cargo.toml in {} or the current directory: run from the \
                 memcg-flush-model source tree",
                env!("CARGO_MANIFEST_DIR")
            )
        })
}

/// Where the probe's build goes below `root`.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("probe"),
        _ => root.join("target").join("probe"),
    }
}

/// Build the probe (seconds when it is up to date, a minute from scratch)
/// and return the path of the binary. Cargo's output is kept and, if the
/// build fails, its error lines are the error.
pub fn build(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let dir = target_dir(root);
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "memcg-probe",
            "--target",
            TARGET,
        ])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env("CARGO_TARGET_DIR", &dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .stdin(Stdio::null());
    let shown = format!(
        "RUSTFLAGS=\"-C target-feature=+crt-static\" CARGO_TARGET_DIR={} cargo build \
         --release -p memcg-probe --target {TARGET}",
        dir.display()
    );
    let out = cmd.output().map_err(|e| {
        format!(
            "building the probe: cannot run {}: {e}",
            cargo.to_string_lossy()
        )
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("error"))
            .take(3)
            .collect();
        let last = err.lines().last().unwrap_or("");
        return Err(format!(
            "building the probe failed ({}; in {}): {}",
            shown,
            root.display(),
            if lines.is_empty() {
                last.to_string()
            } else {
                lines.join("; ")
            }
        ));
    }
    let bin = dir.join(TARGET).join("release").join("flushprobe");
    if !bin.is_file() {
        return Err(format!(
            "building the probe: {shown} succeeded but made no {}",
            bin.display()
        ));
    }
    Ok(bin)
}

/// Whether the probe can run on this machine's kernel: as root, with
/// cgroup v2 at /sys/fs/cgroup.
pub fn check_host() -> Result<(), String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return Err("--host needs root: the probe creates memcgs".into());
    }
    if !Path::new("/sys/fs/cgroup/cgroup.controllers").is_file() {
        return Err(
            "--host needs cgroup v2 mounted at /sys/fs/cgroup (no cgroup.controllers there)".into(),
        );
    }
    Ok(())
}

/// Run the probe on this machine's kernel (`flushprobe --host`), as root,
/// with `scenarios` (the JSON scenario file) and the names to run (empty:
/// all); returns what it printed, and whether it exited 0.
pub fn run_on_host(
    probe: &Path,
    scenarios: &str,
    names: &[String],
) -> Result<(String, bool), String> {
    check_host()?;
    let file =
        std::env::temp_dir().join(format!("flushcheck-{}-scenarios.json", std::process::id()));
    std::fs::write(&file, scenarios).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = Command::new(probe)
        .arg("--host")
        .arg("--scenarios")
        .arg(&file)
        .args(names)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("running {}: {e}", probe.display()))?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.success(),
    ))
}

/// The C reproducer's source, below the source root.
pub const REPRODUCER_C: &str = "docs/reproducers/test_c12_skew.c";

/// Build the C reproducer static (`gcc -O2 -static`), next to the probe's
/// build, and return the binary's path; an error naming what is missing
/// if it cannot be built.
pub fn build_reproducer(root: &Path) -> Result<PathBuf, String> {
    let src = root.join(REPRODUCER_C);
    let dir = target_dir(root);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bin = dir.join("test_c12_skew");
    let fresh = |b: &Path| -> Option<bool> {
        let built = std::fs::metadata(b).ok()?.modified().ok()?;
        let source = std::fs::metadata(&src).ok()?.modified().ok()?;
        Some(built >= source)
    };
    if fresh(&bin) == Some(true) {
        return Ok(bin);
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let out = Command::new(&cc)
        .args(["-Wall", "-Wextra", "-O2", "-static", "-o"])
        .arg(&bin)
        .arg(&src)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!("building the reproducer: cannot run {cc}: {e} (set CC, or install gcc)")
        })?;
    if !out.status.success() {
        return Err(format!(
            "building the reproducer ({cc} -O2 -static {}) failed: {}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(bin)
}
