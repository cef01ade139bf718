//! `flushcheck findings`: the findings with their status, which the
//! witness's search decides as the listing runs; `--check` also checks
//! every fix candidate on the witness and a larger configuration;
//! `--replay ID` prints one witness's trace.

use std::process::ExitCode;
use std::time::Duration;

use crate::drive::findings::{check, check_candidates, check_unfixed_at_scale, replay, Check};
use crate::measure::price::{cost_markdown, costs};
use crate::protocol::findings::{self, Expected, Finding};
use crate::protocol::Variant;
use crate::report::price::{price_text, PRICE_CPUS};

/// `flushcheck findings`.
#[derive(clap::Args, Debug, Clone)]
pub struct FindingsArgs {
    /// Also check every fix candidate on the witness and on a larger
    /// configuration (the listing always replays each witness); exit 1 if
    /// a witness does not show or a candidate does not do what the data
    /// says.
    #[arg(long)]
    pub check: bool,
    /// Price every candidate in kernel terms instead: per update and per
    /// level of the walk, this_cpu_* operations, atomics and cache lines on
    /// the deterministic schedule, beside the unfixed version and the
    /// version before the introducing patch, at 1, 2 and 3 CPUs.
    #[arg(long, conflicts_with_all = ["check", "replay"])]
    pub price: bool,
    /// With --price: Markdown tables (docs/findings.md, section 18).
    #[arg(long, requires = "price")]
    pub markdown: bool,
    /// Replay one finding's witness and print its trace.
    #[arg(long, value_name = "ID")]
    pub replay: Option<String>,
    /// Only these findings (comma-separated identifiers).
    #[arg(long, value_delimiter = ',')]
    pub id: Vec<String>,
    /// The trace as the kernel's statements, one per row
    /// (`this_cpu_add_return(statc->stats_updates, 2) = 2` for
    /// `U.1[0] += 2`), as reports print it.
    #[arg(long = "kernel-names")]
    pub kernel_names: bool,
    /// Time budget per search, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
}

/// The findings `a` names (every one by default).
pub fn selected(ids: &[String]) -> Result<Vec<Finding>, String> {
    if ids.is_empty() {
        return Ok(findings::all());
    }
    ids.iter().map(|id| findings::by_id(id)).collect()
}

/// Run `flushcheck findings`.
pub fn findings_cmd(a: &FindingsArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    let budget = Duration::from_secs(a.budget);
    if let Some(id) = &a.replay {
        let f = findings::by_id(id)?;
        print!("{}", replay_text(&f, registry, budget, a.kernel_names)?);
        return Ok(ExitCode::SUCCESS);
    }
    let list = selected(&a.id)?;
    if a.price {
        // Only behavioural findings have candidates to price.
        for f in list.iter().filter(|f| !f.fixes.is_empty()) {
            print!("{}", price_section(f, registry, a.markdown)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    crate::explore::quiet_panics();
    let mut ok = true;
    for f in &list {
        // The status is what the searches show now, not what the data says.
        let w = check(
            f,
            &Variant::find(registry, f.witness.variant)?,
            &(f.witness.cfg)(),
            registry,
            budget,
        )?;
        ok &= w.shows;
        println!("{}", listing(f, &w));
        // A finding's further forms must show too.
        for missing in crate::drive::forms::also_show(f, registry, budget)? {
            ok = false;
            println!("  further form NOT shown: {missing}");
        }
        if !a.check {
            continue;
        }
        for c in check_unfixed_at_scale(f, registry, budget)? {
            ok &= c.shows;
            println!(
                "  unfixed {} at scale: {}{}",
                c.variant,
                timed_line(&c),
                if c.shows { "" } else { " (MUST SHOW)" }
            );
        }
        for (name, checks) in check_candidates(f, registry, budget)? {
            let expected = f
                .fixes
                .iter()
                .find(|c| c.variant == name)
                .map_or(Expected::Fixes, |c| c.expected);
            let met = candidate_met(expected, &checks);
            ok &= met;
            println!(
                "  fix {name}: {}{}",
                candidate_verdict(expected, &checks),
                if met { "" } else { " (NOT AS THE DATA SAYS)" }
            );
            for c in &checks {
                println!("    {}", timed_line(c));
            }
        }
    }
    let id = list.first().map_or("ID", |f| f.id);
    println!(
        "{} findings{}\n`flushcheck findings --replay {id}`: a witness's trace\n\
         `flushcheck report --finding {id}`: a finding's report",
        list.len(),
        if a.check {
            ", fix candidates checked on each finding's witness, larger configuration and configurations at scale"
        } else {
            " (--check also checks the fix candidates)"
        }
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn price_section(f: &Finding, registry: &[Variant], markdown: bool) -> Result<String, String> {
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

/// Whether a candidate's checks are what the data expects: a fix holds on
/// every configuration (exhaustively, or loom at the finding's bound) and
/// breaks no must-hold property there; a refuted candidate still shows the
/// finding on one of them.
pub fn candidate_met(expected: Expected, checks: &[Check]) -> bool {
    match expected {
        Expected::Fixes => checks
            .iter()
            .all(|c| !c.shows && c.finished && c.broken.is_empty()),
        Expected::Refuted => checks.iter().any(|c| c.shows),
    }
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
                out.push_str(&c.listing(80, &format!("violated: {}", c.violation)));
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
