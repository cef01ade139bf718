//! The corpus's findings: a litmus test for every weak-memory finding of
//! docs/findings.md, sliced from its loom witness and marked as the kernel
//! marks each access ([`crate::kernel::marking`]), and one for each fix
//! candidate. This file has the helpers and section 15 (the rstat tree's
//! store buffering); section 13 is [`super::trigger`].

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::check::run::{judged, monitor_plan, VariantScenario};
use crate::cli::args::ConfigArgs;
use crate::cli::registry;
use crate::config::Config;
use crate::drive::explain::{explain, Explained, Search, Target};
use crate::explore::{loom_find, on_fresh_thread, Backend, Outcome};
use crate::kernel::marking::{self, Release};
use crate::observe::{Property, ReaderOutcome, Shared, Step};
use crate::protocol::catalogue::TREE_MB;
use crate::protocol::Variant;
use crate::report::litmus::herd::{plain_races, race_note};
use crate::report::litmus::prog::{Instr, Observation, Program};
use crate::report::litmus::program;

use super::corpus::{measure_all_spawned, verdict_lines, wrapped, Entry};
use super::edit::{insert_after, mark_once, stores};

use Observation::{Never, Sometimes};

/// The arguments of a documented `flushcheck explain` command.
#[derive(Parser, Debug)]
struct ExplainCmd {
    #[arg(long)]
    variant: String,
    #[arg(long)]
    property: String,
    #[arg(long)]
    backend: String,
    #[command(flatten)]
    cfg: ConfigArgs,
}

/// The variant, property and configuration of `args` (an `explain`
/// command line without the program name).
pub(super) fn parse(args: &str) -> Result<(Variant, Property, Config), String> {
    let words = std::iter::once("explain").chain(args.split_whitespace());
    let c = ExplainCmd::try_parse_from(words).map_err(|e| e.to_string())?;
    let v = Variant::find(&registry(Vec::new())?, &c.variant)?;
    Ok((v, Property::by_name(&c.property)?, c.cfg.config()))
}

/// What `flushcheck explain <args>` finds with loom (preemption bounds 0 to
/// 3, as the command does): the witness's steps and how it was found.
pub(super) fn loom_witness(args: &str, budget: Duration) -> Result<(Vec<Step>, String), String> {
    let (variant, property, cfg) = parse(args)?;
    let reg = registry(Vec::new())?;
    let t = Target {
        cfg: &cfg,
        variant: &variant,
        registry: &reg,
        property,
        rcu: None,
    };
    match explain(&t, &Search::Loom { max_bound: Some(3) }, budget) {
        Explained::Found(c) => Ok((c.steps, c.search)),
        Explained::NotFound { search, note, .. } => Err(format!(
            "flushcheck explain {args}: no witness ({search}{})",
            note.map(|n| format!(": {n}")).unwrap_or_default()
        )),
    }
}

/// Whether loom finds `property` violated in `variant` on `cfg` (bounds 0
/// to 2, as the suite's loom searches), in words.
pub(super) fn loom_verdict(
    variant: &str,
    property: Property,
    cfg: &Config,
    budget: Duration,
) -> String {
    let reg = match registry(Vec::new()) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let Ok(v) = Variant::find(&reg, variant) else {
        return format!("{variant}: not in the catalogue");
    };
    let t = Target {
        cfg,
        variant: &v,
        registry: &reg,
        property,
        rcu: None,
    };
    match explain(&t, &Search::Loom { max_bound: Some(2) }, budget) {
        Explained::Found(c) => format!("{property} violated in {variant} ({})", c.search),
        Explained::NotFound {
            search,
            finished: true,
            ..
        } => format!("{property} holds in {variant} ({search}: no counterexample)"),
        Explained::NotFound { search, note, .. } => format!(
            "{property} undecided in {variant} ({search} cut short{})",
            note.map(|n| format!(": {n}")).unwrap_or_default()
        ),
    }
}

/// The steps of a loom execution (unbounded search) of `variant` on `cfg`
/// whose readers observe `outcome`: for outcomes no property judges.
pub(super) fn loom_execution_with(
    variant: &str,
    cfg: &Config,
    outcome: ReaderOutcome,
    budget: Duration,
) -> Result<Vec<Step>, String> {
    let reg = registry(Vec::new())?;
    let v = Variant::find(&reg, variant)?;
    let backend = Backend::Loom {
        preemption_bound: None,
    };
    let checks = judged(&v, cfg, &backend);
    let mut plan = monitor_plan(&v, &reg, cfg, &backend, checks)?;
    plan.trace = true;
    plan.target = Some(outcome.clone());
    let shared = Shared::new(plan);
    let s = Arc::new(VariantScenario::new(&v, shared, &backend, None));
    let sc = s.clone();
    let (e, _) = on_fresh_thread(move || loom_find(None, budget, sc));
    match e.outcome {
        Outcome::Failed(msg) if msg.contains("readers observed") => Ok(s.shared().steps()),
        o => Err(format!(
            "{variant}: no loom execution with the readers' outcome {outcome:?} ({o:?})"
        )),
    }
}

/// What a finding's file is: the witness's test, or that test with a
/// fix's change.
pub(super) enum Kind<'a> {
    Witness,
    Fix {
        /// The test it changes.
        of: &'a str,
        /// The change, in words.
        change: &'a str,
    },
    /// Written by hand (its doc says from what).
    Written,
}

/// What LKMM answers on a finding's test, derived by hand (herd7 is not
/// installable here; docs/findings.md gives each argument, and `flushcheck
/// litmus --check` compares with herd7 where a user has it).
pub(super) struct Lkmm {
    /// herd7's observation.
    pub(super) result: Observation,
    /// Whether herd7 flags a data race.
    pub(super) race: bool,
    /// Why there is none, where [`plain_races`] (which sees only locks)
    /// finds plain accesses that could race: the ordering that forbids it.
    pub(super) no_race: Option<&'static str>,
}

/// LKMM's answer: `result`, with or without a data race.
pub(super) fn lkmm(result: Observation, race: bool) -> Lkmm {
    Lkmm {
        result,
        race,
        no_race: None,
    }
}

/// A finding's file: `doc` first, then the model's verdicts on the test,
/// the data race and what the kernel says of it, then the export's notes
/// (for a fix, which test it changes and how).
pub(super) fn finding(
    prog: &Program,
    name: &str,
    lk: Lkmm,
    doc: Vec<String>,
    kind: Kind,
    release: &Release,
    budget: Duration,
) -> Result<Entry, String> {
    let mut p = prog.clone();
    p.name = name.to_string();
    p.expected = Some(lk.result);
    p.datarace = lk.race;
    p.doc = Vec::new();
    let races = plain_races(&p);
    match (lk.race, races.is_empty(), lk.no_race) {
        (true, true, _) => {
            return Err(format!(
                "litmus test {name}: declared racy, but no plain access races"
            ))
        }
        (false, false, None) => {
            return Err(format!(
                "litmus test {name}: plain accesses to {} could race; say why they do not",
                races.join(", ")
            ))
        }
        _ => {}
    }
    let ms = measure_all_spawned(&p, budget)?;
    let mut lines = doc;
    lines.push(String::new());
    lines.extend(wrapped(
        "The Result line is LKMM's verdict (DATARACE: herd7 flags a data \
         race), derived by hand in docs/findings.md; `flushcheck litmus \
         --check` compares it with herd7's by tools/memory-model/scripts/\
         judgelitmus.sh's rules. This test through the kernel-idiom layer \
         (flushcheck; plain accesses run as relaxed atomics, every thread \
         spawned, tokio-rs/loom#166):",
    ));
    lines.extend(verdict_lines(&p, &ms).into_iter().map(|l| format!("  {l}")));
    lines.push(String::new());
    if lk.race {
        lines.extend(race_note(&p, release));
        lines.push(String::new());
    } else if let Some(why) = lk.no_race {
        lines.extend(wrapped(&format!("No data race: {why}")));
        lines.push(String::new());
    }
    match kind {
        Kind::Witness => lines.extend(prog.doc.iter().cloned()),
        Kind::Written => lines.extend(wrapped(
            "Written by hand from the kernel's order of operations, not \
             sliced from a trace; the exists clause is the outcome asked about.",
        )),
        Kind::Fix { of, change } => lines.extend(wrapped(&format!(
            "The accesses and the exists clause are those of {of}, with the \
             change: {change}"
        ))),
    }
    p.doc = lines;
    let t = p.target();
    let race = if lk.race { " DATARACE" } else { "" };
    let summary = format!(
        "LKMM {}{race}; loom {} (bound 2: {}); SC {}",
        lk.result,
        ms[0].observation(&t),
        ms[1].observation(&t),
        ms[2].observation(&t)
    );
    Ok(Entry {
        prog: p,
        group: "findings",
        summary,
        measured: ms,
    })
}

const TREE_RACE: &str = "--variant v6.8-tree --property conservation --backend loom --cpus 1 --updates 2 --val 1 --readers 0 --periodic";
const LLIST_RACE: &str = "--variant v6.17-tree --property conservation --backend loom --cpus 1 --updates 2 --val 1 --readers 0 --periodic";

/// The witness of `args`, sliced and marked as its variant's release marks
/// it, the release, and the lines saying where it is from.
pub(super) fn sliced_witness(
    args: &str,
    name: &str,
    budget: Duration,
) -> Result<(Program, &'static Release, Vec<String>), String> {
    let (variant, ..) = parse(args)?;
    let (steps, search) = loom_witness(args, budget)?;
    let prog = program(name, &steps, variant.release)?;
    let mut lines = vec!["Sliced from the loom witness of".to_string()];
    lines.push(format!("  flushcheck explain {args}"));
    lines.extend(wrapped(&format!("(found by {search}).")));
    Ok((prog, variant.release, lines))
}

/// Section 15: the rstat updated tree's store-buffering race (v6.8-tree)
/// as the kernel marks it; the smp_mb() pair of 9a9e97b2f1f2 on those
/// accesses; the candidate that closes it (the pair and `updated_next`
/// marked), each of its halves, and the candidate with the counter marked
/// too.
pub(super) fn tree_race(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, release, from) = sliced_witness(TREE_RACE, "tree", budget)?;
    let (_, property, cfg) = parse(TREE_RACE)?;
    const WITNESS: &str = "SB+poplainplain+poplainonce+rstat-tree";
    let mut doc = wrapped(
        "docs/findings.md section 15: an update that finds its memcg still on \
         the CPU's updated tree (cgroup_rstat_updated()'s data_race() read of \
         updated_next) races the flusher that unlinks it (a plain store under \
         the per-CPU lock) and then reads the counter: both loads return the \
         old value (store buffering), so the update is lost to every later \
         flush. With the test's accesses plain, LKMM orders none of them.",
    );
    doc.extend(from.clone());
    let mut out = vec![finding(
        &prog,
        WITNESS,
        lkmm(Sometimes, true),
        doc,
        Kind::Witness,
        release,
        budget,
    )?];
    let updater = |p: &Program| insert_after(p, "CPU 0", |i| stores(i, "state0"), Instr::mb());
    let flusher =
        |p: &Program| insert_after(p, "periodic", |i| stores(i, "updated_next0"), Instr::mb());
    let pair = flusher(&updater(&prog)?)?;
    out.push(finding(
        &pair,
        "SB+fencembplainplain+fencembplainonce+rstat-tree",
        lkmm(Sometimes, true),
        wrapped(
            "9a9e97b2f1f2's smp_mb() pair (reverted by d8ef4b38cb69) on the \
             kernel's accesses: one after the updater's counter store, before \
             its test of updated_next, one after the flusher's unlink, before \
             it reads the counters. Not enough in LKMM: the test and the unlink \
             are plain, plain accesses take part in no ordering relation \
             (prop, hb and pb start and end at marked accesses), so no cycle is \
             forbidden and the outcome stays, with a data race on \
             updated_next0. loom runs the plain accesses as relaxed atomics, \
             for which the pair suffices: its Never is the candidate's below, \
             not this test's.",
        ),
        Kind::Fix {
            of: WITNESS,
            change: "smp_mb() after CPU 0's counter store and after the \
                     periodic flusher's unlink.",
        },
        release,
        budget,
    )?);
    let mark = |p: &Program| -> Result<Program, String> {
        mark_once(
            &mark_once(p, "CPU 0", "updated_next0")?,
            "periodic",
            "updated_next0",
        )
    };
    let verdict = loom_verdict(TREE_MB[0], property, &cfg, budget);
    let candidate = mark(&pair)?;
    let mut doc = wrapped(
        "The candidate: the smp_mb() pair, the on-list test a READ_ONCE() and \
         the unlink a WRITE_ONCE(). Then the fr edge from the test to the \
         unlink is LKMM's prop, the flusher's smp_mb() makes it pb to the \
         counter load, and the updater's smp_mb() after its plain counter \
         store makes that store wr-visible to the load: the load cannot read \
         the older value (plain-coherence), so the outcome is forbidden. The \
         counter's own race (the plain per-CPU store against the flusher's \
         READ_ONCE() in the executions where the flusher runs first) stays.",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration (the model's v6.8-tree-mb \
         runs updated_next as marked): {verdict}."
    )));
    let change = "smp_mb() after CPU 0's counter store and after the periodic \
                  flusher's unlink; CPU 0's updated_next0 load a READ_ONCE(), \
                  the unlink a WRITE_ONCE().";
    out.push(finding(
        &candidate,
        "SB+fencembplainonce+fencembonceonce+rstat-tree",
        lkmm(Never, true),
        doc,
        Kind::Fix {
            of: WITNESS,
            change,
        },
        &marking::V6_8_TREE_CANDIDATE,
        budget,
    )?);
    out.push(finding(
        &mark(&updater(&prog)?)?,
        "SB+fencembplainonce+poonceonce+rstat-tree",
        lkmm(Sometimes, true),
        wrapped("The candidate with the updater's smp_mb() alone: not enough."),
        Kind::Fix {
            of: WITNESS,
            change: "smp_mb() after CPU 0's counter store; updated_next0 \
                     marked as in the candidate.",
        },
        &marking::V6_8_TREE_CANDIDATE,
        budget,
    )?);
    out.push(finding(
        &mark(&flusher(&prog)?)?,
        "SB+poplainonce+fencembonceonce+rstat-tree",
        lkmm(Sometimes, true),
        wrapped("The candidate with the flusher's smp_mb() alone: not enough."),
        Kind::Fix {
            of: WITNESS,
            change: "smp_mb() after the periodic flusher's unlink; \
                     updated_next0 marked as in the candidate.",
        },
        &marking::V6_8_TREE_CANDIDATE,
        budget,
    )?);
    out.push(finding(
        &mark_once(&candidate, "CPU 0", "state0")?,
        "SB+fencembonceonces+rstat-tree",
        lkmm(Never, false),
        wrapped(
            "The candidate with the counter's store a WRITE_ONCE() too, which no \
             kernel has (this_cpu_add() is not WRITE_ONCE()): with every access \
             marked the test is the catalogue's SB+fencembonceonces, Never with \
             no data race, so the candidate's Never does not rest on the \
             counter's race.",
        ),
        Kind::Fix {
            of: WITNESS,
            change: "the candidate's, and CPU 0's state0 store a WRITE_ONCE().",
        },
        &marking::V6_8_TREE_CANDIDATE,
        budget,
    )?);
    Ok(out)
}

/// Section 15, v6.17: the same race on the llist node (`llist_on_list()`
/// against `init_llist_node()`), both marked since the 2025 series; the
/// barrier pair the 2025 comments describe closes it.
pub(super) fn llist_race(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, release, from) = sliced_witness(LLIST_RACE, "llist", budget)?;
    let (_, property, cfg) = parse(LLIST_RACE)?;
    const WITNESS: &str = "SB+poplainonce+poonceonce+rstat-llist";
    let mut doc = wrapped(
        "docs/findings.md section 15, v6.17-v7.1: llist_on_list() (READ_ONCE \
         of lnode.next) after the counter store races the flusher's \
         init_llist_node() (WRITE_ONCE of lnode.next) before it reads the \
         counter: store buffering, the update lost to every later flush. The \
         kernel marks both lnode.next accesses; the counter's this_cpu_add() \
         is plain to LKMM.",
    );
    doc.extend(from);
    let mut out = vec![finding(
        &prog,
        WITNESS,
        lkmm(Sometimes, true),
        doc,
        Kind::Witness,
        release,
        budget,
    )?];
    let both = insert_after(&prog, "CPU 0", |i| stores(i, "state0"), Instr::mb())?;
    let both = insert_after(&both, "periodic", |i| stores(i, "lnode_next0"), Instr::mb())?;
    let verdict = loom_verdict(TREE_MB[1], property, &cfg, budget);
    let mut doc = wrapped(
        "The fix the rstat.c comments describe: smp_mb() before the updater's \
         llist_on_list() and after the flusher's init_llist_node() (the \
         model's v6.17-tree-mb). The node's accesses are marked, so the pair \
         closes the cycle as in section 15's candidate; the counter's own race \
         stays.",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration: {verdict}."
    )));
    let change = "smp_mb() after CPU 0's counter store and after the periodic \
                  flusher's init_llist_node().";
    out.push(finding(
        &both,
        "SB+fencembplainonce+fencembonceonce+rstat-llist",
        lkmm(Never, true),
        doc,
        Kind::Fix {
            of: WITNESS,
            change,
        },
        release,
        budget,
    )?);
    out.push(finding(
        &mark_once(&both, "CPU 0", "state0")?,
        "SB+fencembonceonces+rstat-llist",
        lkmm(Never, false),
        wrapped(
            "The pair with the counter's store a WRITE_ONCE() too (no kernel \
             has it): Never with no data race, so the pair's Never does not \
             rest on the counter's race.",
        ),
        Kind::Fix {
            of: WITNESS,
            change: "the pair, and CPU 0's state0 store a WRITE_ONCE().",
        },
        release,
        budget,
    )?);
    Ok(out)
}
