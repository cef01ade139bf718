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
