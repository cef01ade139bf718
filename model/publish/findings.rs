//! The text of `flushcheck findings`: a finding's line in the listing,
//! a check in a line, a candidate's verdict in words, a witness's replay,
//! the price section. The command (model/cli/findings.rs) runs the
//! searches and prints these.

use std::time::Duration;

use crate::drive::findings::{replay, Check};
use crate::measure::price::{cost_markdown, costs};
use crate::protocol::findings::{Expected, Finding};
use crate::protocol::Variant;
use crate::publish::price::{price_text, PRICE_CPUS};

/// A finding's price section (`flushcheck findings --price`): text, or
/// Markdown tables.
pub fn price_section(f: &Finding, registry: &[Variant], markdown: bool) -> Result<String, String> {
    if !markdown {
        return Ok(format!("{}\n{}\n", f.id, price_text(f, registry)?));
    }
    let rows = costs(f, registry, &PRICE_CPUS)?;
    if rows.is_empty() {
        return Ok(format!("\n`{}`: no hot-path change to price.\n", f.id));
    }
    Ok(format!("\n`{}`:\n\n{}", f.id, cost_markdown(&rows)))
}

/// A candidate's verdict over its checks, in a few words.
pub fn candidate_verdict(expected: Expected, checks: &[Check]) -> &'static str {
    let holds = checks
        .iter()
        .all(|c| !c.shows && c.finished && c.broken.is_empty());
    match (holds, checks.iter().any(|c| c.shows), expected) {
        (true, _, _) => "holds on every configuration checked",
        (false, true, Expected::Refuted) => "refuted (compared, not proposed)",
        (false, true, Expected::Fixes) => "FAILS: the finding still shows",
        (false, false, _) => "inconclusive, or breaks another property",
    }
}

/// One check in one line: verdict, configuration, search size, and any
/// other must-hold property it broke.
pub fn check_line(c: &Check) -> String {
    format!(
        "{} on {} ({} executions{}){}",
        c.verdict(),
        c.cfg,
        c.executions,
        if c.exhaustive { ", exhaustive" } else { "" },
        if c.broken.is_empty() {
            String::new()
        } else {
            let b: Vec<&str> = c.broken.iter().map(|p| p.name()).collect();
            format!("; also violated: {}", b.join(", "))
        },
    )
}

/// [`check_line`] with the search's wall-clock time.
pub fn timed_line(c: &Check) -> String {
    format!("{} [{:.1} s]", check_line(c), c.seconds)
}

/// A finding's first line in the listing: identifier, class, first and
/// last affected release.
pub fn headline(f: &Finding) -> String {
    let releases = if f.first == "none" {
        "no release (a proposal)".to_string()
    } else {
        format!("{} to {}", f.first, f.last)
    };
    format!("{:<20} {:<19} {releases}", f.id, f.class.name())
}

/// One finding in the listing, within 80 columns: identifier, class,
/// first and last affected release; what shows it; its status, from the
/// search `w` of its witness that just ran.
pub fn listing(f: &Finding, w: &Check) -> String {
    let mut out = headline(f);
    let shown = format!(
        "shown by {} on {} ({}){}",
        f.witness.shown.what(),
        f.witness.shown.backend().name(),
        f.witness.variant,
        if f.weak_memory {
            "; weak memory only"
        } else {
            ""
        },
    );
    for line in crate::observe::record::wrap(&shown, 76) {
        out.push_str(&format!("\n  {line}"));
    }
    let mut status = format!(
        "status: {} ({}, {} executions)",
        match w.verdict() {
            "shows" => "witness replays",
            "inconclusive" => "witness NOT reproduced (search inconclusive)",
            _ => "witness does NOT show",
        },
        w.search,
        w.executions
    );
    if let Some(by) = f.closed_by {
        let release = by.split(':').next().unwrap_or(by);
        status.push_str(&format!("; fixed upstream in {release}"));
    }
    if !f.fixes.is_empty() {
        let names: Vec<&str> = f.fixes.iter().map(|c| c.variant).collect();
        status.push_str(&format!("; fix candidates {}", names.join(", ")));
    }
    if f.bound.is_some() {
        status.push_str("; corrected bound given");
    }
    for line in crate::observe::record::wrap(&status, 76) {
        out.push_str(&format!("\n  {line}"));
    }
    out
}

/// The text of `flushcheck findings --replay ID`: the deciding search, the
/// trace and how to reproduce it.
pub fn replay_text(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    kernel_names: bool,
) -> Result<String, String> {
    let mut out = form_text(f, &replay(f, registry, budget)?, kernel_names);
    // A finding's further forms, each as the first is replayed.
    for (w, r) in f
        .also
        .iter()
        .zip(crate::drive::forms::replay_also(f, registry, budget)?)
    {
        out.push('\n');
        out.push_str(&form_text(
            &crate::drive::forms::as_form(f, w),
            &r,
            kernel_names,
        ));
    }
    Ok(out)
}

/// One form's replay: the deciding search, the trace, how to reproduce it.
fn form_text(f: &Finding, r: &crate::drive::findings::Replayed, kernel_names: bool) -> String {
    let mut out = format!(
        "{}: {} by {} on {} ({}, {} executions)\n{}\n\n",
        f.id,
        r.check.verdict(),
        f.witness.variant,
        r.check.cfg,
        r.check.search,
        r.check.executions,
        r.check.note
    );
    match &r.trace {
        Some(c) => {
            if kernel_names {
                out.push_str(&c.listing(
                    80,
                    &format!("violated: {}", c.violation),
                    &crate::protocol::dialect::dialect_of(&c.variant),
                ));
            } else {
                out.push_str(&c.diagram(80));
            }
            out.push_str(&format!("\nfound by {}\n", r.how));
            if !c.token.is_empty() {
                out.push_str(&format!("replay: {}\n", c.replay_command()));
            }
        }
        None => out.push_str(&format!("no trace: {}\n", r.how)),
    }
    out.push_str(&format!("directly: {}\n", f.witness.command));
    out
}
