//! Running herd7 on litmus files and reading its answer.
//!
//! herd7 prints, per test, a line `Observation NAME Never|Sometimes|Always
//! P N` (P executions satisfy `exists`, N do not). A file states the result
//! it expects in its header comment, ` * Result: Sometimes`, as the files
//! of tools/memory-model/litmus-tests do.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::litmus_prog::Observation;

/// Every `Observation NAME RESULT` line of herd7's output.
pub fn observations(stdout: &str) -> Vec<(String, Observation)> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            if w.next() != Some("Observation") {
                return None;
            }
            let name = w.next()?.to_string();
            Some((name, Observation::parse(w.next()?)?))
        })
        .collect()
}

/// The result a litmus file's header expects (`Result: ...`), if it states
/// one.
pub fn expected(text: &str) -> Option<Observation> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with('{'))
        .find_map(|l| {
            let rest = l.split("Result:").nth(1)?;
            Observation::parse(rest.split_whitespace().next()?)
        })
}

/// The test name of a litmus file (its first line, `C NAME`).
pub fn name(text: &str) -> Option<&str> {
    text.lines().next()?.strip_prefix("C ").map(str::trim)
}

/// herd7's verdict on one file, or why there is none.
pub fn run(herd7: &Path, lkmm: &Path, file: &Path) -> Result<Observation, String> {
    let file: PathBuf =
        std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = Command::new(herd7)
        .args(["-conf", "linux-kernel.cfg"])
        .arg(&file)
        .current_dir(lkmm)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", herd7.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match observations(&stdout).first() {
        Some((_, o)) => Ok(*o),
        None => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr
                .lines()
                .chain(stdout.lines())
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no output");
            Err(format!("herd7 gave no Observation line: {why}"))
        }
    }
}
