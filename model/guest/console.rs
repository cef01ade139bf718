//! A boot's serial console, read back into what the probe recorded.
//!
//! The console carries the firmware's and the kernel's messages as well as
//! the probe's `FCP {json}` lines, with terminal escape codes before some
//! and `\r\n` line ends, and a kernel message can land inside a probe line.
//! So a record is found as `FCP {` anywhere in a line and read as the first
//! JSON value after it, and a line that does not read is set aside and
//! counted, not fatal: the judge then sees a read fewer, and the run says
//! how many lines were lost.

use serde_json::Value;

use crate::oracle::spec::{Done, Hello, ReadRecord, Start};
use crate::oracle::Observation;

/// The marker before every record.
const MARK: &str = "FCP {";

/// A console read back.
#[derive(Clone, Debug, Default)]
pub struct Console {
    /// The probe's records.
    pub obs: Observation,
    /// Whether the probe said hello (it ran as `/init`).
    pub started: bool,
    /// Whether it reached its end (every scenario ran).
    pub ended: bool,
    /// The probe's fatal error, if it printed one.
    pub fatal: Option<String>,
    /// `FCP` lines that did not read as a record (a kernel message inside
    /// them, or a record of an unknown kind).
    pub garbled: Vec<String>,
}

/// The probe's records in `text`; an error if the probe failed, never
/// said hello, or did not reach its end: what went wrong on its first line,
/// the console's last 20 lines below.
pub fn parse(text: &str) -> Result<Console, String> {
    let c = read(text);
    let problem = match (&c.fatal, c.started, c.ended) {
        (Some(f), _, _) => format!("the probe failed: {f}"),
        (None, false, _) => "the probe never started (no `FCP {\"hello\"` line): the kernel \
                             did not boot, or did not run /init"
            .to_string(),
        (None, true, false) => format!(
            "the probe did not finish (no `FCP {{\"end\"` line; {} of its scenarios done)",
            c.obs.done.len()
        ),
        (None, true, true) => return Ok(c),
    };
    Err(format!(
        "{problem}\nthe console's last lines:\n{}",
        tail(text, 20)
    ))
}

/// Every record in `text`, whether or not the probe finished.
pub fn read(text: &str) -> Console {
    let mut c = Console::default();
    for line in text.lines() {
        if let Some(at) = line.find(crate::oracle::trace::FCE) {
            match crate::oracle::trace::parse_fce(&line[at..]) {
                Some(e) => c.obs.events.push(e),
                None => c.garbled.push(line.trim_end().to_string()),
            }
            continue;
        }
        if let Some(at) = line.find("FCR ") {
            if crate::oracle::trace::parse_fcr(&line[at..], &mut c.obs.repro).is_none() {
                c.garbled.push(line.trim_end().to_string());
            }
            continue;
        }
        let Some(at) = line.find(MARK) else {
            continue;
        };
        if record(&line[at + MARK.len() - 1..], &mut c).is_none() {
            c.garbled.push(line.trim_end().to_string());
        }
    }
    c
}

/// Add the record at the start of `json` to `c`; `None` if it does not
/// read.
fn record(json: &str, c: &mut Console) -> Option<()> {
    // The first JSON value: whatever follows it on the line is junk.
    let v = serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    let (kind, body) = v.as_object()?.iter().next()?;
    let body = body.clone();
    match kind.as_str() {
        "hello" => {
            c.obs.hello = serde_json::from_value::<Hello>(body).ok()?;
            c.started = true;
        }
        "start" => c
            .obs
            .starts
            .push(serde_json::from_value::<Start>(body).ok()?),
        "read" => c
            .obs
            .reads
            .push(serde_json::from_value::<ReadRecord>(body).ok()?),
        "done" => c.obs.done.push(serde_json::from_value::<Done>(body).ok()?),
        "end" => c.ended = true,
        "fatal" => c.fatal = Some(body.as_str().map_or(body.to_string(), str::to_string)),
        _ => return None,
    }
    Some(())
}

/// The last `n` lines of `text`, escape codes and carriage returns taken
/// out, each indented.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(clean)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let from = lines.len().saturating_sub(n);
    if lines.is_empty() {
        return "  (nothing)".to_string();
    }
    lines[from..]
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` without terminal escape sequences and control characters.
fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\u{1b}' {
            // ESC [ params final, or ESC and one character.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if !ch.is_control() || ch == '\t' {
            out.push(ch);
        }
    }
    out
}
