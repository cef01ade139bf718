//! `flushcheck lifetime`: the lifetime wing's cells (the matrix restricted
//! to the lifetime forms and entries), or one witness trace.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::check::{Sizes, Suite};
use crate::drive::explain::{witness, Target};
use crate::drive::matrix_ok;
use crate::explore::{quiet_panics, Backend};
use crate::kernel::rcu::RcuFlavor;
use crate::observe::property::Property;
use crate::protocol::Variant;
use crate::vocab::{BackendName, Family};

use super::args::{parse_bound, print_doc, Bound};
use super::matrix::run_with_progress;
use crate::publish::summary::summary;
use crate::publish::table::table;

/// Arguments of `flushcheck lifetime`.
#[derive(Args, Debug, Clone)]
pub struct LifetimeArgs {
    /// Lifetime variants to check (comma-separated); default all.
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Backends to run (comma-separated names); default all.
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// loom's preemption bound (a number or "unbounded"); default: each
    /// entry's, at most each variant's cap.
    #[arg(long, value_parser = parse_bound)]
    pub loom_preemptions: Option<Bound>,
    /// Time budget per exploration, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
    /// Print the witness of one violation: `VARIANT:PROPERTY:BACKEND:ENTRY`.
    #[arg(long)]
    pub witness: Option<String>,
    /// The RCU flavour of `--witness` (`flag` or `epoch`); default: epoch
    /// wherever the backend can see it.
    #[arg(long)]
    pub rcu: Option<String>,
    /// Trace width in columns (`--witness`).
    #[arg(long, default_value_t = 80)]
    pub width: usize,
    /// Print the cells as JSON (the matrix's cell format).
    #[arg(long)]
    pub json: bool,
    /// Run one configuration of your own instead of the suite's entries
    /// (`life-custom`): the CPUs charge the child through a folio's
    /// reference instead of the objcg under RCU.
    #[arg(long)]
    pub folio: bool,
    /// `life-custom`: the parent is removed too, concurrently.
    #[arg(long)]
    pub parent_dies: bool,
    /// `life-custom`: the child's memory css is killed while its cgroup
    /// lives, and a new memory css is linked into the cgroup once the old
    /// one is offline (the controller disabled and enabled again).
    #[arg(long)]
    pub relink: bool,
    /// `life-custom`: charging CPUs (1 or 2).
    #[arg(long)]
    pub cpus: Option<usize>,
    /// `life-custom`: without the periodic flush.
    #[arg(long)]
    pub no_periodic: bool,
}

/// The `life-custom` entry the configuration flags ask for, if any.
fn custom(args: &LifetimeArgs, suite: &Suite) -> Result<Option<crate::check::Entry>, String> {
    if !(args.folio || args.parent_dies || args.relink || args.cpus.is_some() || args.no_periodic) {
        return Ok(None);
    }
    let cpus = args.cpus.unwrap_or(1);
    if !(1..=2).contains(&cpus) {
        return Err(format!(
            "--cpus {cpus}: a lifetime configuration has 1 or 2 charging CPUs (loom's thread limit)"
        ));
    }
    let death = crate::config::Death {
        parent_dies: args.parent_dies,
        folio: args.folio,
        relink: args.relink,
    };
    let mut e = suite
        .entries
        .first()
        .cloned()
        .ok_or("lifetime: the suite has no lifetime entry")?;
    e.name = "life-custom".into();
    e.why = "given on the command line".into();
    e.cfg = crate::config::Config::lifetime(cpus, death)
        .vals(&[1])
        .periodic(!args.no_periodic);
    Ok(Some(e))
}

/// `flushcheck lifetime`.
pub fn lifetime(args: &LifetimeArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if args.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    let rcu = args.rcu.as_deref().map(RcuFlavor::parse).transpose()?;
    let sizes = Sizes {
        loom_bound: args.loom_preemptions.map(|b| b.0),
        ..Sizes::default()
    };
    let mut suite = Suite::standard(&sizes);
    suite.entries.retain(|e| e.applies_to(Family::Lifetime));
    if let Some(e) = custom(args, &suite)? {
        suite.entries = vec![e];
    }
    let forms: Vec<Variant> = registry
        .iter()
        .filter(|v| v.family == Family::Lifetime)
        .cloned()
        .collect();
    let budget = Duration::from_secs(args.budget);
    if let Some(w) = &args.witness {
        quiet_panics();
        return print_witness(w, &suite, &forms, registry, budget, rcu, args.width);
    }
    let mut plan = crate::drive::Plan::new(suite, registry.to_vec());
    plan.variants = if args.variant.is_empty() {
        forms
    } else {
        args.variant
            .iter()
            .map(|v| Variant::find(&forms, v).map_err(|e| format!("lifetime: {e}")))
            .collect::<Result<_, _>>()?
    };
    plan.properties = Property::of_family(Family::Lifetime).collect();
    plan.backends = args
        .backend
        .iter()
        .map(|b| BackendName::parse(b))
        .collect::<Result<_, _>>()?;
    plan.budget = budget;
    plan.validate()?;
    quiet_panics();
    let (m, elapsed) = run_with_progress(&plan, false);
    if args.json {
        print_doc("matrix", &m.cells)?;
    } else {
        print!("{}", table(&plan, &m.cells, true));
        print!("{}", summary(&plan, &m.cells, elapsed));
    }
    Ok(if matrix_ok(&m.cells) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Print the witness of `spec` (`VARIANT:PROPERTY:BACKEND:ENTRY`): the
/// searches are deterministic, so the same command prints the same trace.
fn print_witness(
    spec: &str,
    suite: &Suite,
    forms: &[Variant],
    registry: &[Variant],
    budget: Duration,
    rcu: Option<RcuFlavor>,
    width: usize,
) -> Result<ExitCode, String> {
    let bad = || format!("--witness {spec}: expected VARIANT:PROPERTY:BACKEND:ENTRY");
    let parts: Vec<&str> = spec.split(':').collect();
    let [v, p, b, e] = parts[..] else {
        return Err(bad());
    };
    let variant = Variant::find(forms, v).map_err(|e| format!("--witness: {e}"))?;
    let property = Property::by_name(p)?;
    let name = BackendName::parse(b).map_err(|e| format!("--witness: {e}"))?;
    let entry = suite.entry(e).ok_or_else(|| {
        let names: Vec<&str> = suite.entries.iter().map(|x| x.name.as_str()).collect();
        format!(
            "--witness: unknown entry {e:?}: expected one of {}",
            names.join(", ")
        )
    })?;
    let mut backend = entry
        .backends
        .iter()
        .find(|x| x.id() == name)
        .cloned()
        .ok_or_else(bad)?;
    if let (Backend::Loom { preemption_bound }, Some(cap)) = (&mut backend, variant.loom_cap) {
        *preemption_bound = Some(preemption_bound.map_or(cap, |b| b.min(cap)));
    }
    let t = Target {
        cfg: &entry.cfg,
        variant: &variant,
        registry,
        property,
        rcu,
    };
    let (x, found) = witness(&t, &backend, budget)?;
    let flavor = rcu.unwrap_or_else(|| crate::check::lifetime::rcu_flavor(backend.id(), &variant));
    println!(
        "{} on {} under {} ({} RCU): {} after {} executions",
        variant.name,
        entry.name,
        backend.search(),
        flavor.name(),
        if found.is_some() {
            "violated"
        } else {
            "not violated"
        },
        x.executions
    );
    Ok(match found {
        Some(c) => {
            print!("{}", c.diagram(width));
            ExitCode::SUCCESS
        }
        None => ExitCode::FAILURE,
    })
}
