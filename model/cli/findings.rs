//! `flushcheck findings`: the findings with their status; `--check` replays
//! every witness and checks every fix candidate exhaustively on the
//! witness and a larger configuration; `--replay ID` prints one witness's
//! trace.

use std::process::ExitCode;
use std::time::Duration;

use crate::drive::findings::{check_candidates, replay, Check};
use crate::protocol::findings::{self, Expected, Finding};
use crate::protocol::Variant;

/// `flushcheck findings`.
#[derive(clap::Args, Debug, Clone)]
pub struct FindingsArgs {
    /// Replay every witness (or those of --id) and check every fix
    /// candidate on the witness and on a larger configuration; exit 1 if a
    /// witness does not show or a candidate does not do what the data says.
    #[arg(long)]
    pub check: bool,
    /// Replay one finding's witness and print its trace.
    #[arg(long, value_name = "ID")]
    pub replay: Option<String>,
    /// Only these findings (comma-separated identifiers).
    #[arg(long, value_delimiter = ',')]
    pub id: Vec<String>,
    /// Kernel identifiers in traces (`memcg1->vmstats_percpu[cpu0].state[0]`
    /// for `S.1[0]`).
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
    if !a.check {
        for f in &list {
            println!("{}", listing(f));
        }
        println!(
            "{} findings; `flushcheck findings --check` replays every witness and checks \
             the candidates, `flushcheck report --finding ID` writes a report",
            list.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut ok = true;
    for f in &list {
        let r = replay(f, registry, budget)?;
        println!(
            "{}: {} on {} ({}, {} executions): {}",
            f.id,
            r.check.verdict(),
            f.witness.variant,
            r.check.search,
            r.check.executions,
            short(&r.check.note)
        );
        ok &= r.check.shows;
        for (name, checks) in check_candidates(f, registry, budget)? {
            let expected = f
                .fixes
                .iter()
                .find(|c| c.variant == name)
                .map_or(Expected::Fixes, |c| c.expected);
            for c in &checks {
                println!(
                    "  {name} ({}): {} on {} ({} executions){}",
                    match expected {
                        Expected::Fixes => "fix",
                        Expected::Refuted => "refuted",
                    },
                    c.verdict(),
                    c.cfg,
                    c.executions,
                    if c.broken.is_empty() {
                        String::new()
                    } else {
                        let b: Vec<&str> = c.broken.iter().map(|p| p.name()).collect();
                        format!("; also violated: {}", b.join(", "))
                    },
                );
            }
            if !candidate_met(expected, &checks) {
                ok = false;
                println!("  {name}: NOT AS EXPECTED");
            }
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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

/// One finding in the listing, within 80 columns: identifier, class,
/// first and last affected release; what shows it; its status.
pub fn listing(f: &Finding) -> String {
    let mut out = format!(
        "{:<20} {:<19} {} to {}\n  shown by {} on {} ({}){}",
        f.id,
        f.class.name(),
        f.first,
        f.last,
        f.witness.shown.what(),
        f.witness.shown.backend().name(),
        f.witness.variant,
        if f.weak_memory { "; weak memory only" } else { "" },
    );
    for line in crate::observe::record::wrap(&format!("status: {}", f.status()), 76) {
        out.push_str(&format!("\n  {line}"));
    }
    out
}

fn short(note: &str) -> String {
    let line = note.lines().next().unwrap_or("");
    if line.len() > 160 {
        format!("{}...", &line[..157])
    } else {
        line.to_string()
    }
}

/// The text of `flushcheck findings --replay ID`: the deciding search, the
/// trace and how to reproduce it.
pub fn replay_text(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    kernel_names: bool,
) -> Result<String, String> {
    let r = replay(f, registry, budget)?;
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
            let c = if kernel_names {
                c.with_kernel_names()
            } else {
                c.clone()
            };
            out.push_str(&c.diagram(80));
            out.push_str(&format!("\nfound by {}\n", r.how));
            if !c.token.is_empty() {
                out.push_str(&format!("replay: {}\n", c.replay_command()));
            }
        }
        None => out.push_str(&format!("no trace: {}\n", r.how)),
    }
    out.push_str(&format!("directly: {}\n", f.witness.command));
    Ok(out)
}
