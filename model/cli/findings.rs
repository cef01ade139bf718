//! `flushcheck findings`: the findings with their status, which the
//! witness's search decides as the listing runs; `--check` also checks
//! every fix candidate on the witness and a larger configuration;
//! `--replay ID` prints one witness's trace.

use std::process::ExitCode;
use std::time::Duration;

use crate::drive::findings::{candidate_met, check, check_candidates, check_unfixed_at_scale};
use crate::protocol::findings::{self, Expected, Finding};
use crate::protocol::Variant;
use crate::publish::findings::{
    candidate_verdict, listing, price_section, replay_text, timed_line,
};

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
    for (i, f) in list.iter().enumerate() {
        // Progress: each finding's witness is a search (a second or two).
        eprintln!("[{}/{}] {} ...", i + 1, list.len(), f.id);
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
