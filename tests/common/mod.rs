//! Running the built `flushcheck` binary from the integration tests.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::Command;

/// What one `flushcheck` run printed and returned.
pub struct Run {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Run `flushcheck` with `args`.
pub fn flushcheck<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .args(args)
        .output()
        .expect("run flushcheck");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Run `flushcheck` with `args` and parse its standard output as a JSON
/// array; returns the exit code and the elements.
pub fn flushcheck_json<S: AsRef<OsStr>>(args: &[S]) -> (i32, Vec<serde_json::Value>) {
    let r = flushcheck(args);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
    (r.code, v.as_array().expect("a JSON array").clone())
}

use memcg_flush_model::check::{run::run, RunResult, RunSpec, Sizes, Suite, Verdict};
use memcg_flush_model::explore::{Backend, Shard};
use memcg_flush_model::{Config, Property};

/// One search of `variant` on `cfg` (120 s budget), named entry "test".
pub fn on_config(variant: &str, cfg: &Config, backend: Backend) -> RunResult {
    search(variant, cfg, backend, false)
}

/// [`on_config`], with every distinct reader outcome collected.
pub fn collecting(variant: &str, cfg: &Config, backend: Backend) -> RunResult {
    search(variant, cfg, backend, true)
}

fn search(variant: &str, cfg: &Config, backend: Backend, collect: bool) -> RunResult {
    let spec = RunSpec {
        variant: variant.into(),
        entry: "test".into(),
        cfg: cfg.clone(),
        backend,
        budget_secs: 120.0,
        shard: Shard::default(),
        collect,
    };
    let reg = memcg_flush_model::cli::registry(Vec::new()).expect("catalogue");
    run(&spec, &reg).expect("runs")
}

/// One search of `variant` on the standard suite's entry `entry`, by its
/// search named `backend`.
pub fn on_entry(variant: &str, entry: &str, backend: &str) -> RunResult {
    let suite = Suite::standard(&Sizes::default());
    let e = suite.entry(entry).expect("known entry");
    let b = e
        .backends
        .iter()
        .find(|b| b.name() == backend)
        .unwrap_or_else(|| panic!("{entry} has no {backend} search"))
        .clone();
    on_config(variant, &e.cfg, b)
}

/// The verdict of `p` in `r`, and its note.
pub fn verdict(r: &RunResult, p: Property) -> (Verdict, String) {
    let v = r
        .verdict(p)
        .unwrap_or_else(|| panic!("{p} not judged for {}", r.spec.variant));
    (v.verdict, v.note.clone().unwrap_or_default())
}

/// The replay token `explain` printed.
pub fn token(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("replay: flushcheck replay "))
        .unwrap_or_else(|| panic!("no replay line in:\n{out}"))
        .to_string()
}
