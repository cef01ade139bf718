//! `flushcheck report --finding ID` (`--all --out DIR`): one finding as
//! plain text that can be pasted into a mail to linux-mm: at most 80
//! columns, no Markdown. Every verdict in it comes from a search run while
//! the text is written: the witness replayed, its shortest trace, the LKMM
//! litmus test of a weak-memory trace, each fix candidate checked on the
//! witness, a larger configuration and the default suite.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use clap::Parser;

use crate::drive::findings::{check_candidates, replay};
use crate::protocol::findings::{Expected, Finding};
use crate::protocol::Variant;

use super::findings::{candidate_verdict, check_line};
use super::matrix::{build_plan, run_with_progress, MatrixArgs};

/// The widest line a report may have.
pub const WIDTH: usize = 80;

/// Section text is wrapped to this width, indented by two.
const TEXT: usize = 76;

/// `text` wrapped to [`TEXT`] columns, each line indented by `indent`.
fn para(out: &mut String, indent: &str, text: &str) {
    for line in crate::observe::record::wrap(text, TEXT + 2 - indent.len()) {
        let _ = writeln!(out, "{indent}{line}");
    }
}

/// `text` as a list item: `first` before its first line, its other
/// lines indented to match.
fn item(out: &mut String, first: &str, text: &str) {
    let hang = " ".repeat(first.len());
    for (i, line) in crate::observe::record::wrap(text, TEXT + 2 - first.len())
        .into_iter()
        .enumerate()
    {
        let _ = writeln!(out, "{}{line}", if i == 0 { first } else { &hang });
    }
}

/// The `Subject:` header, folded (RFC 5322: a continuation line starts
/// with a space) if it does not fit.
fn subject(out: &mut String, text: &str) {
    let mut lines = crate::observe::record::wrap(&format!("Subject: {text}"), WIDTH).into_iter();
    let _ = writeln!(out, "{}", lines.next().unwrap_or_default());
    for rest in crate::observe::record::wrap(&lines.collect::<Vec<_>>().join(" "), WIDTH - 1) {
        let _ = writeln!(out, " {rest}");
    }
}

/// A heading line and its paragraph.
fn section(out: &mut String, title: &str, text: &str) {
    let _ = writeln!(out, "\n{title}");
    para(out, "  ", text);
}

/// A shell command split over lines ending in ` \` so that every line
/// fits; it pastes into a shell as it is.
pub fn shell_lines(cmd: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = indent.to_string();
    let mut first = true;
    for word in cmd.split_whitespace() {
        // An option starts a new line once the line is half full, so that
        // `--flag value` pairs stay together.
        let wide = line.len() + 1 + word.len() > WIDTH - 2;
        if !first && wide {
            let _ = writeln!(out, "{line} \\");
            line = format!("{indent}  ");
        } else if !first {
            line.push(' ');
        }
        line.push_str(word);
        first = false;
    }
    let _ = writeln!(out, "{line}");
    out
}

/// Litmus text with every line over [`WIDTH`] broken after a comma (the
/// C parser herd7 uses ignores the line breaks).
fn fit_litmus(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut rest = line.to_string();
        while rest.len() > WIDTH {
            let cut = rest[..WIDTH].rfind(", ").map(|i| i + 1);
            let Some(cut) = cut else { break };
            let _ = writeln!(out, "{}", &rest[..cut]);
            rest = format!("\t{}", rest[cut..].trim_start());
        }
        let _ = writeln!(out, "{rest}");
    }
    out
}

/// The default suite run for one variant, as `flushcheck --variant NAME`
/// runs it: whether every cell is as the catalogue expects, and a line
/// saying so.
pub fn default_suite(name: &str, registry: &[Variant]) -> Result<(bool, String), String> {
    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        m: MatrixArgs,
    }
    let w = Wrap::try_parse_from(["flushcheck", "--variant", name, "--in-process"])
        .map_err(|e| e.to_string())?;
    let plan = build_plan(&w.m, registry)?;
    let (m, elapsed) = run_with_progress(&plan, true);
    let bad: Vec<String> = m
        .cells
        .iter()
        .filter(|c| !c.ok)
        .map(|c| {
            format!(
                "{} on {}: {:?}",
                c.property.name(),
                c.backend.name(),
                c.verdict
            )
        })
        .collect();
    let line = if bad.is_empty() {
        format!(
            "default suite: all {} (property, backend) cells as expected ({:.0} s)",
            m.cells.len(),
            elapsed.as_secs_f64()
        )
    } else {
        format!("default suite: NOT as expected: {}", bad.join("; "))
    };
    Ok((bad.is_empty(), line))
}

/// The report of finding `f`; `suite` also runs each candidate's default
/// suite.
pub fn mail(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    kernel_names: bool,
    suite: bool,
) -> Result<String, String> {
    let mut out = String::new();
    subject(&mut out, f.subject);
    section(&mut out, "Class", f.class.name());
    section(
        &mut out,
        "Affected releases",
        &format!(
            "{} (first {}, last read {}). Introduced by {}.{}",
            f.affected,
            f.first,
            f.last,
            f.introduced,
            f.closed_by
                .map(|c| format!(" Ended upstream by {c}."))
                .unwrap_or_default()
        ),
    );
    let _ = writeln!(out, "\nThe claim");
    para(&mut out, "  ", &format!("\"{}\"", f.claim.quote));
    item(&mut out, "    -- ", f.claim.source);

    let r = replay(f, registry, budget)?;
    section(
        &mut out,
        "What the model shows",
        &format!(
            "{}: {} on {} ({}, {} executions). {}",
            f.witness.variant,
            r.check.verdict(),
            r.check.cfg,
            r.check.search,
            r.check.executions,
            r.check.note.lines().next().unwrap_or("")
        ),
    );
    section(&mut out, "Mechanism", f.mechanism);
    section(&mut out, "Impact", f.impact);
    section(&mut out, "Magnitude", f.magnitude);
    section(&mut out, "Likelihood", f.likelihood);
    section(&mut out, "Preconditions", f.preconditions);

    let _ = writeln!(out, "\nShortest witness found");
    match &r.trace {
        Some(c) => {
            let c = if kernel_names {
                c.with_kernel_names()
            } else {
                c.clone()
            };
            para(&mut out, "  ", &format!("found by {}", r.how));
            out.push('\n');
            // A column may run a few characters over its share of the
            // width rather than cut a step: ask for less until it fits.
            let fits = (48..=WIDTH)
                .rev()
                .map(|w| c.diagram(w))
                .find(|d| long_lines(d).is_empty());
            out.push_str(&fits.unwrap_or_else(|| c.diagram(WIDTH)));
            if f.weak_memory {
                let _ = writeln!(out, "\nLKMM litmus test of the witness (herd7)\n");
                match c.litmus_named(f.id) {
                    Ok(t) => out.push_str(&fit_litmus(&t)),
                    Err(e) => para(&mut out, "  ", &format!("not exported: {e}")),
                }
            }
        }
        None => para(&mut out, "  ", &format!("no trace: {}", r.how)),
    }

    let _ = writeln!(out, "\nReproduce");
    let _ = writeln!(out, "  {}", f.replay_command());
    let _ = writeln!(out, "  or directly:");
    out.push_str(&shell_lines(f.witness.command, "  "));

    if !f.fixes.is_empty() {
        let _ = writeln!(out, "\nFix candidates (the model's variants, not patches)");
        for (name, checks) in check_candidates(f, registry, budget)? {
            let c = f.fixes.iter().find(|c| c.variant == name);
            let expected = c.map_or(Expected::Fixes, |c| c.expected);
            let _ = writeln!(out, "\n  {name}: {}", candidate_verdict(expected, &checks));
            if let Some(c) = c {
                para(&mut out, "    ", c.change);
            }
            for ch in &checks {
                item(&mut out, "    - ", &check_line(ch));
            }
            if suite && expected == Expected::Fixes {
                let (_, line) = default_suite(&name, registry)?;
                item(&mut out, "    - ", &line);
            }
        }
        out.push('\n');
        para(
            &mut out,
            "  ",
            "(holds*: every interleaving of the configuration; holds: loom within \
             its preemption bound; shows: the finding is still there)",
        );
    }
    if let Some(b) = &f.bound {
        section(&mut out, "Corrected comment", b.comment);
        section(&mut out, "Derivation", b.derivation);
        let _ = writeln!(out, "\nConfirmed by");
        out.push_str(&shell_lines(b.confirm, "  "));
    }
    if f.id == super::reply::FINDING {
        out.push_str(&super::reply::reply(registry)?);
    }
    section(&mut out, "What the model abstracts away", f.abstractions);
    let _ = writeln!(
        out,
        "\n-- \nflushcheck {} (memcg-flush-model); the text says what the model\nshowed and nothing more.",
        env!("CARGO_PKG_VERSION")
    );
    Ok(out)
}

/// Every line of `text` over [`WIDTH`] columns, with its number.
pub fn long_lines(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > WIDTH)
        .map(|(i, l)| (i + 1, l.chars().count()))
        .collect()
}

/// Write one report per finding into `dir` (`ID.txt`).
pub fn write_all(
    findings: &[Finding],
    dir: &Path,
    registry: &[Variant],
    budget: Duration,
    kernel_names: bool,
    suite: bool,
) -> Result<Vec<std::path::PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for f in findings {
        eprintln!("report {} ...", f.id);
        let text = mail(f, registry, budget, kernel_names, suite)?;
        let path = dir.join(format!("{}.txt", f.id));
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
