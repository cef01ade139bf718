//! `flushcheck lifetime`: the lifetime cells (issue 12), or one witness.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use crate::check::lifetime::{
    backends, catalogue, entries, explore_life, flavor_for, for_entry, life_cells, LifeVariant,
};
use crate::check::{matrix_ok, Cell, Expect, Verdict};
use crate::explore::quiet_panics;
use crate::kernel::rcu::RcuFlavor;
use crate::observe::property::Property;
use crate::protocol::Kind;

/// Arguments of `flushcheck lifetime`.
#[derive(Args, Debug, Clone)]
pub struct LifetimeArgs {
    /// Lifetime variants to check (comma-separated); default all.
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Backends to run (comma-separated names); default all.
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// loom's preemption bound (`none`: unbounded); default: each entry's.
    #[arg(long)]
    pub loom_preemptions: Option<String>,
    /// Time budget per exploration, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
    /// Print the witness of one violation: `VARIANT:PROPERTY:BACKEND:ENTRY`.
    #[arg(long)]
    pub witness: Option<String>,
    /// The RCU flavour (`flag` or `epoch`); default: epoch wherever the
    /// backend can see it.
    #[arg(long)]
    pub rcu: Option<String>,
    /// Print the cells as JSON (the matrix's cell format).
    #[arg(long)]
    pub json: bool,
}

fn bound(s: &str) -> Result<Option<usize>, String> {
    if s == "none" {
        return Ok(None);
    }
    s.parse()
        .map(Some)
        .map_err(|_| format!("--loom-preemptions {s}: expected a number or none"))
}

/// The variants `names` selects (all if empty); the error names the
/// unknown one and lists the known.
pub fn select(names: &[String]) -> Result<Vec<LifeVariant>, String> {
    let all = catalogue();
    for n in names {
        if !all.iter().any(|v| v.name == n) {
            let known: Vec<&str> = all.iter().map(|v| v.name).collect();
            return Err(format!(
                "unknown lifetime variant {n:?}: expected one of {}",
                known.join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|v| names.is_empty() || names.iter().any(|n| n == v.name))
        .collect())
}

/// The lifetime cells of the default run, with a progress line per
/// exploration on stderr.
pub fn default_cells(budget: Duration) -> Vec<Cell> {
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut progress = |line: &str| {
        let line = format!("[lifetime {:.0}s] {line}", start.elapsed().as_secs_f64());
        if tty {
            eprint!("\r\x1b[2K{}", &line[..line.len().min(150)]);
        } else {
            eprintln!("{line}");
        }
    };
    let cells = life_cells(&catalogue(), &backends(), None, budget, &mut progress);
    if tty {
        eprintln!();
    }
    cells
}

/// The lifetime summary: cells, must-hold violations, mutants killed,
/// findings shown.
pub fn summary(cells: &[Cell], elapsed: Duration) -> String {
    let names: Vec<&str> = {
        let mut v: Vec<&str> = cells.iter().map(|c| c.variant.as_str()).collect();
        v.dedup();
        v
    };
    let mutants: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            cells
                .iter()
                .any(|c| c.variant == *n && c.kind == Kind::Mutant)
        })
        .collect();
    let killed = mutants
        .iter()
        .filter(|n| {
            cells
                .iter()
                .filter(|c| c.variant == **n && c.expect == Expect::Killed)
                .all(|c| c.ok)
        })
        .count();
    let bad: Vec<&Cell> = cells.iter().filter(|c| !c.ok).collect();
    let must_hold = bad.iter().filter(|c| c.expect == Expect::Holds).count();
    let findings = cells
        .iter()
        .filter(|c| c.expect == Expect::Finding && c.ok)
        .count();
    let inconclusive = cells
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .count();
    let mut out = format!(
        "lifetime: {} cells in {:.1} s: must-hold violations {must_hold}, mutants killed {killed}/{}, findings shown {findings}, inconclusive {inconclusive}\n",
        cells.len(),
        elapsed.as_secs_f64(),
        mutants.len()
    );
    for c in bad {
        let _ = writeln!(
            out,
            "  not as expected: {} ({} on {}): {}",
            c.variant,
            c.property.name(),
            c.backend,
            c.verdict.name()
        );
    }
    out
}

/// `flushcheck lifetime`.
pub fn lifetime(args: &LifetimeArgs) -> Result<ExitCode, String> {
    if args.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    let loom_bound = args.loom_preemptions.as_deref().map(bound).transpose()?;
    let budget = Duration::from_secs(args.budget);
    let rcu = args.rcu.as_deref().map(RcuFlavor::parse).transpose()?;
    quiet_panics();
    if let Some(w) = &args.witness {
        return witness(w, loom_bound, budget, rcu);
    }
    let variants = select(&args.variant)?;
    let all = backends();
    for b in &args.backend {
        if !all.iter().any(|x| x.name() == b) {
            let known: Vec<&str> = all.iter().map(|x| x.name()).collect();
            return Err(format!(
                "unknown backend {b:?}: expected one of {}",
                known.join(", ")
            ));
        }
    }
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|b| args.backend.is_empty() || args.backend.iter().any(|n| n == b.name()))
        .collect();
    let start = Instant::now();
    let cells = life_cells(&variants, &chosen, loom_bound, budget, &mut |l| {
        eprintln!("{l}")
    });
    if args.json {
        crate::cli::args::print_json(&cells)?;
        return Ok(if matrix_ok(&cells) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    print!("{}", crate::cli::matrix::cell_rows(&cells, true));
    println!(
        "searches (per entry: {}):",
        entries()
            .iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut seen = std::collections::BTreeSet::new();
    for c in &cells {
        if seen.insert((c.backend.clone(), c.search.clone())) {
            println!("  {:<15} {}", c.backend, c.search);
        }
    }
    print!("{}", summary(&cells, start.elapsed()));
    Ok(if matrix_ok(&cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Print the witness of `spec` (`VARIANT:PROPERTY:BACKEND:ENTRY`): the
/// searches are deterministic, so the same command prints the same trace.
fn witness(
    spec: &str,
    loom_bound: Option<Option<usize>>,
    budget: Duration,
    rcu: Option<RcuFlavor>,
) -> Result<ExitCode, String> {
    let bad = || format!("--witness {spec}: expected VARIANT:PROPERTY:BACKEND:ENTRY");
    let parts: Vec<&str> = spec.split(':').collect();
    let [v, p, b, e] = parts[..] else {
        return Err(bad());
    };
    let variant = select(&[v.to_string()])?.remove(0);
    let property = Property::by_name(p)?;
    let backend = backends()
        .into_iter()
        .find(|x| x.name() == b)
        .ok_or_else(|| format!("--witness: unknown backend {b:?}"))?;
    let entry = entries().into_iter().find(|x| x.name == e).ok_or_else(|| {
        format!("--witness: unknown entry {e:?}: expected life-child, life-parent")
    })?;
    let backend = for_entry(&backend, &entry, &variant, loom_bound);
    let flavor = rcu.unwrap_or_else(|| flavor_for(&backend, &variant));
    let r = explore_life(&variant, &entry, &backend, property, flavor, budget, true);
    println!(
        "{} on {} under {} ({} RCU): {} after {} executions",
        variant.name,
        entry.name,
        backend.search(),
        flavor.name(),
        r.verdict.name(),
        r.executions
    );
    if let Some(n) = r.note {
        println!("{n}");
    }
    Ok(if r.verdict == Verdict::Violated {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
