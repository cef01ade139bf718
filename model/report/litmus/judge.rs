//! What a litmus file expects, and whether herd7's output meets it, by
//! the rules of the kernel's tools/memory-model/scripts/judgelitmus.sh
//! (run by checklitmus.sh after runlitmus.sh; an LKMM run, not `--hw`).
//!
//! A file states its result in the header, ` * Result: Sometimes`, as the
//! files of tools/memory-model/litmus-tests do; a test herd7 is expected
//! to flag with a data race says so on the same line, ` * Result:
//! Sometimes DATARACE`. The script then requires:
//! - `DATARACE` on the `Result:` line if and only if herd7 prints `Flag
//!   data-race` ("Predicted data race not modeled", "Unexpected data race
//!   modeled");
//! - an `Observation` line ("Verification error" otherwise, or the
//!   unknown macro, or the timeout);
//! - a test whose every execution deadlocks (`Never 0 0`) only where the
//!   file expects `DEADLOCK`;
//! - the expected word on the `Observation` line, a mismatch forgiven
//!   when herd7 flags a data race (LKMM then promises nothing).
//!
//! [`judge`] applies exactly these rules; `flushcheck litmus --check` adds
//! two of its own ([`file_problems`]): the test is named as its file, and
//! herd7 raises no flag other than those the header names (` * Flag:
//! NAME` lines, for flags other than `data-race`).

use super::prog::Observation;

/// Every `Flag NAME` line of herd7's output.
pub fn flags(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("Flag")).then(|| w.next().map(str::to_string))?
        })
        .collect()
}

/// The test name of a litmus file (its first line, `C NAME`).
pub fn name(text: &str) -> Option<&str> {
    text.lines().next()?.strip_prefix("C ").map(str::trim)
}

/// The first `Result:` line as judgelitmus.sh finds it: a line starting
/// `" * Result: "` or `"(* Result: "`.
fn result_line(text: &str) -> Option<&str> {
    text.lines()
        .find(|l| l.starts_with(" * Result: ") || l.starts_with("(* Result: "))
}

/// The outcome word a file expects (`Sometimes`, `Never`, `Always`,
/// `DEADLOCK`, `Maybe`): the third word of its first `Result:` line, as
/// the script reads it (`awk '{ print $3 }'`).
pub fn outcome(text: &str) -> Option<&str> {
    result_line(text)?.split_whitespace().nth(2)
}

/// The result a litmus file's header expects, if it states one of herd7's
/// three words.
pub fn expected(text: &str) -> Option<Observation> {
    Observation::parse(outcome(text)?)
}

/// Whether a file predicts a data race: a `Result:` line with ` DATARACE`
/// after its start (`grep -m1 '^[( ]\* Result: .* DATARACE'`).
pub fn predicts_race(text: &str) -> bool {
    text.lines()
        .filter(|l| l.starts_with(" * Result: ") || l.starts_with("(* Result: "))
        .any(|l| l[11..].contains(" DATARACE"))
}

/// The flags other than `data-race` a file's header names (` * Flag: NAME`
/// lines, the first word after `Flag:`).
pub fn declared_flags(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with('{'))
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("* Flag:")?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

/// judgelitmus.sh's verdict when the test passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passed {
    /// herd7's observation is the expected one.
    AsExpected,
    /// It is not, but herd7 flags a data race, so the script forgives it
    /// (" --- Forgiven non-... verification").
    Forgiven,
}

/// judgelitmus.sh on the file `litmus` and herd7's output `out`: how the
/// test passes, or the script's failure message.
pub fn judge(litmus: &str, out: &str) -> Result<Passed, String> {
    let modeled = out.lines().any(|l| l == "Flag data-race");
    let outcome = match outcome(litmus) {
        Some(o) => {
            let predicted = predicts_race(litmus);
            if predicted && !modeled {
                return Err("!!! Predicted data race not modeled".into());
            }
            if !predicted && modeled {
                return Err("!!! Unexpected data race modeled".into());
            }
            o
        }
        None => "specified",
    };
    let obs: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("Observation"))
        .collect();
    if obs.is_empty() {
        if let Some(l) = out.lines().find(|l| l.contains(": Unknown macro ")) {
            let bad = l.split(": Unknown macro ").nth(1).unwrap_or("");
            let bad = bad.split(" (User error)").next().unwrap_or(bad);
            return Err(format!(" !!! Current LKMM version does not know \"{bad}\""));
        }
        if out
            .lines()
            .any(|l| l.starts_with("Command exited with non-zero status 124"))
        {
            return Err(" !!! Timeout".into());
        }
        return Err(" !!! Verification error".into());
    }
    let deadlock = obs.iter().any(|l| l.ends_with("Never 0 0"));
    if outcome == "DEADLOCK" {
        return if deadlock {
            Ok(Passed::AsExpected)
        } else {
            Err(format!(" !!! Unexpected non-{outcome} verification"))
        };
    }
    if deadlock {
        return Err(format!(" !!! Unexpected non-{outcome} deadlock"));
    }
    if obs.iter().any(|l| l.contains(outcome)) || outcome == "Maybe" {
        return Ok(Passed::AsExpected);
    }
    if modeled {
        Ok(Passed::Forgiven)
    } else {
        Err(format!(" !!! Unexpected non-{outcome} verification"))
    }
}

/// What `flushcheck litmus --check` finds wrong with herd7's output `out`
/// on the file `text` named `file` (`NAME.litmus`), beyond [`judge`]: a
/// test named other than its file, herd7 answering for another test, or a
/// flag the header does not name.
pub fn file_problems(file: &str, text: &str, out: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let want = name(text).unwrap_or_default();
    let stem = file.strip_suffix(".litmus").unwrap_or(file);
    if want != stem {
        bad.push(format!("the test is named {want}, the file {file}"));
    }
    for o in out.lines().filter(|l| l.starts_with("Observation")) {
        let got = o.split_whitespace().nth(1).unwrap_or("");
        if got != want {
            bad.push(format!(
                "herd7's Observation names the test {got}, the file's C line {want}"
            ));
        }
    }
    let allowed = declared_flags(text);
    let extra: Vec<String> = flags(out)
        .into_iter()
        .filter(|f| f != "data-race" && !allowed.contains(f))
        .collect();
    if !extra.is_empty() {
        bad.push(format!(
            "herd7 flags {} (the header names {})",
            extra.join(", "),
            if allowed.is_empty() {
                "no flag but data races".to_string()
            } else {
                allowed.join(", ")
            }
        ));
    }
    bad
}
