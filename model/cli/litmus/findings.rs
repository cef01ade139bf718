//! The corpus's findings: a litmus test for every weak-memory finding of
//! docs/findings.md, sliced from its loom witness, and one for each fix.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::check::run::{judged, monitor_plan, VariantScenario};
use crate::check::{Sizes, Suite};
use crate::cli::args::ConfigArgs;
use crate::cli::registry;
use crate::config::Config;
use crate::drive::explain::{explain, Explained, Search, Target};
use crate::explore::{loom_find, on_fresh_thread, Backend, Outcome};
use crate::observe::{Property, ReaderOutcome, Shared, Step};
use crate::protocol::catalogue::TREE_MB;
use crate::protocol::Variant;
use crate::report::litmus::prog::{Instr, Observation, Program, Store};
use crate::report::litmus::program;

use super::corpus::{measure_all, verdict_lines, wrapped, Entry};

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
fn parse(args: &str) -> Result<(Variant, Property, Config), String> {
    let words = std::iter::once("explain").chain(args.split_whitespace());
    let c = ExplainCmd::try_parse_from(words).map_err(|e| e.to_string())?;
    let v = Variant::find(&registry(Vec::new())?, &c.variant)?;
    Ok((v, Property::by_name(&c.property)?, c.cfg.config()))
}

/// What `flushcheck explain <args>` finds with loom (preemption bounds 0 to
/// 3, as the command does): the witness's steps and how it was found.
fn loom_witness(args: &str, budget: Duration) -> Result<(Vec<Step>, String), String> {
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
fn loom_verdict(variant: &str, property: Property, cfg: &Config, budget: Duration) -> String {
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
fn loom_execution_with(
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

/// `prog` with `add` inserted after every statement of the thread noted
/// `note` that `at` matches; an error if none does (the witness changed).
fn insert_after(
    prog: &Program,
    note: &str,
    at: impl Fn(&Instr) -> bool,
    add: Instr,
) -> Result<Program, String> {
    let mut p = prog.clone();
    let t = p
        .threads
        .iter_mut()
        .find(|t| t.note == note)
        .ok_or_else(|| format!("litmus test {}: no thread {note}", prog.name))?;
    let mut body = Vec::new();
    let mut hit = false;
    for i in t.body.drain(..) {
        let m = at(&i);
        body.push(i);
        if m {
            body.push(add.clone());
            hit = true;
        }
    }
    t.body = body;
    if !hit {
        return Err(format!(
            "litmus test {}: nothing in {note} to put {add:?} after",
            prog.name
        ));
    }
    Ok(p)
}

/// Whether `i` stores to a variable named `var`.
fn stores(i: &Instr, var: &str) -> bool {
    matches!(i, Instr::Store { var: v, store: Store::Once | Store::Plain, .. } if v == var)
}

/// Whether `i` is an `atomic_read()` of `var`.
fn reads_atomic(i: &Instr, var: &str) -> bool {
    matches!(i, Instr::Load { var: v, load: crate::report::litmus::prog::Load::Atomic, .. } if v == var)
}

/// `prog` renamed, with the header's result and lines.
fn titled(prog: &Program, name: &str, expected: Observation, doc: &[String]) -> Program {
    let mut p = prog.clone();
    p.name = name.to_string();
    p.expected = Some(expected);
    p.doc = doc.to_vec();
    p
}

/// What a finding's file is: the witness's test, or that test with a
/// fix's barriers added.
pub(super) enum Kind<'a> {
    Witness,
    Fix {
        of: &'a str,
    },
    /// Written by hand (its doc says from what).
    Written,
}

/// A finding's file: `doc` first, then the model's verdicts on the test,
/// then the export's notes (for a fix, which test it modifies).
pub(super) fn finding(
    prog: &Program,
    name: &str,
    expected: Observation,
    doc: Vec<String>,
    kind: Kind,
    budget: Duration,
) -> Result<Entry, String> {
    let mut p = titled(prog, name, expected, &[]);
    let ms = measure_all(&p, budget)?;
    let mut lines = doc;
    lines.push(String::new());
    lines.push("Result: LKMM's result (herd7, `flushcheck litmus --check`).".into());
    lines.push("This test through the kernel-idiom layer (flushcheck):".into());
    lines.extend(verdict_lines(&p, &ms).into_iter().map(|l| format!("  {l}")));
    lines.push(String::new());
    let races = crate::report::litmus::herd::race_note(&p);
    if !races.is_empty() {
        lines.extend(races);
        lines.push(String::new());
    }
    match kind {
        Kind::Witness => lines.extend(prog.doc.iter().cloned()),
        Kind::Written => lines.extend(wrapped(
            "Written by hand from the kernel's order of operations, not \
             sliced from a trace; the exists clause is the outcome asked about.",
        )),
        Kind::Fix { of } => lines.extend(wrapped(&format!(
            "The accesses and the exists clause are those of {of}, with the \
             fix's barriers added."
        ))),
    }
    p.doc = lines;
    let t = p.target();
    let summary = format!(
        "LKMM {expected}; loom {} (bound 2: {}); SC {}",
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

/// The entry for every weak-memory finding and fix.
pub fn findings(budget: Duration) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    out.extend(tree_race(budget)?);
    out.extend(llist_race(budget)?);
    out.extend(trigger(budget)?);
    out.extend(tree_trigger(budget)?);
    out.extend(llist_trigger(budget)?);
    Ok(out)
}

/// The section 15 witness's test.
const RACE: &str = "SB+poonceonces+rstat-tree";

const TREE_RACE: &str = "--variant v6.8-tree --property conservation --backend loom --cpus 1 --updates 2 --val 1 --readers 0 --periodic";
const LLIST_RACE: &str = "--variant v6.17-tree --property conservation --backend loom --cpus 1 --updates 2 --val 1 --readers 0 --periodic";
const TRIGGER: &str = "--variant v6.8 --property quiescent_read_exact --backend loom --cpus 1 --batch 2 --updates 2 --val 2 --tree 0,1 --charge 2 --read 1 --no-periodic";
const TREE_TRIGGER: &str = "--variant v6.8-tree --property eventual_conservation --backend loom --cpus 1 --batch 2 --updates 2 --val 2 --tree 0,1 --charge 2 --read 1 --no-periodic --settle 2 --settle-update";

/// The witness of `args`, sliced, and the lines saying where it is from.
fn sliced_witness(
    args: &str,
    name: &str,
    budget: Duration,
) -> Result<(Program, Vec<String>), String> {
    let (steps, search) = loom_witness(args, budget)?;
    let prog = program(name, &steps)?;
    let mut lines = vec!["Sliced from the loom witness of".to_string()];
    lines.push(format!("  flushcheck explain {args}"));
    lines.extend(wrapped(&format!("(found by {search}).")));
    Ok((prog, lines))
}

/// Section 15: the rstat updated tree's store-buffering race (v6.8-tree),
/// the smp_mb() pair that fixes it, and each half alone.
fn tree_race(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, from) = sliced_witness(TREE_RACE, "tree", budget)?;
    let (_, property, cfg) = parse(TREE_RACE)?;
    let mut doc = wrapped(
        "docs/findings.md section 15: an update that finds its memcg still on \
         the CPU's updated tree (READ_ONCE of updated_next) races the flusher \
         that unlinks it and then reads the counter: both loads return the old \
         value (store buffering), so the update is lost to every later flush.",
    );
    doc.extend(from.clone());
    let mut out = vec![finding(
        &prog,
        "SB+poonceonces+rstat-tree",
        Sometimes,
        doc,
        Kind::Witness,
        budget,
    )?];
    let updater = |p: &Program| insert_after(p, "CPU 0", |i| stores(i, "state0"), Instr::mb());
    let flusher =
        |p: &Program| insert_after(p, "periodic", |i| stores(i, "updated_next0"), Instr::mb());
    let verdict = loom_verdict(TREE_MB[0], property, &cfg, budget);
    let both = flusher(&updater(&prog)?)?;
    let mut doc = wrapped(
        "The fix: 9a9e97b2f1f2's smp_mb() pair (reverted by d8ef4b38cb69), one \
         after the updater's counter store, before its test of updated_next, \
         one after the flusher's unlink, before it reads the counters (the \
         model's v6.8-tree-mb).",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration: {verdict}."
    )));
    out.push(finding(
        &both,
        "SB+fencembonceonces+rstat-tree",
        Never,
        doc,
        Kind::Fix { of: RACE },
        budget,
    )?);
    out.push(finding(
        &updater(&prog)?,
        "SB+fencembonceonce+poonceonce+rstat-tree",
        Sometimes,
        wrapped("The updater's half of the pair alone: not enough."),
        Kind::Fix { of: RACE },
        budget,
    )?);
    out.push(finding(
        &flusher(&prog)?,
        "SB+poonceonce+fencembonceonce+rstat-tree",
        Sometimes,
        wrapped("The flusher's half of the pair alone: not enough."),
        Kind::Fix { of: RACE },
        budget,
    )?);
    Ok(out)
}

/// Section 15, v6.17: the same race on the llist node (`llist_on_list()`
/// against `init_llist_node()`), and the barrier pair the 2025 comments
/// describe.
fn llist_race(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, from) = sliced_witness(LLIST_RACE, "llist", budget)?;
    let (_, property, cfg) = parse(LLIST_RACE)?;
    let mut doc = wrapped(
        "docs/findings.md section 15, v6.17-v7.1: llist_on_list() (READ_ONCE of \
         lnode.next) after the counter store races the flusher's \
         init_llist_node() (WRITE_ONCE of lnode.next) before it reads the \
         counter: store buffering, the update lost to every later flush.",
    );
    doc.extend(from);
    let mut out = vec![finding(
        &prog,
        "SB+poonceonces+rstat-llist",
        Sometimes,
        doc,
        Kind::Witness,
        budget,
    )?];
    let both = insert_after(&prog, "CPU 0", |i| stores(i, "state0"), Instr::mb())?;
    let both = insert_after(&both, "periodic", |i| stores(i, "lnode_next0"), Instr::mb())?;
    let verdict = loom_verdict(TREE_MB[1], property, &cfg, budget);
    let mut doc = wrapped(
        "The fix the rstat.c comments describe: smp_mb() before the updater's \
         llist_on_list() and after the flusher's init_llist_node() (the model's \
         v6.17-tree-mb).",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration: {verdict}."
    )));
    out.push(finding(
        &both,
        "SB+fencembonceonces+rstat-llist",
        Never,
        doc,
        Kind::Fix {
            of: "SB+poonceonces+rstat-llist",
        },
        budget,
    )?);
    Ok(out)
}

/// Section 13 without the tree (v6.8; v6.17 is the same shape): the
/// reader's gate sees the count the update added after its counter store,
/// and the flush reads the counter without that store (message passing).
fn trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, from) = sliced_witness(TRIGGER, "trigger", budget)?;
    let mut doc = wrapped(
        "docs/findings.md section 13, the protocol without the updated tree: \
         the updater stores its per-CPU counter and then adds to the memcg's \
         count (atomic_add, unordered); the reader's gate reads the count \
         (atomic_read) and the flush then reads the counter. Nothing orders \
         either side, so a flush the count triggered can miss the pages that \
         raised it. Not a kernel outcome: in v6.8 and v6.17 a flusher reads \
         only the counters of a memcg it found on the updated tree or the \
         lockless list, and finding it orders the reads (the two \
         rstat-*-found tests, Never); the finding stands through the \
         rstat-tree-trigger and rstat-llist-trigger tests.",
    );
    doc.extend(from);
    let mut out = vec![finding(
        &prog,
        "MP+poonceatomicadd+poatomicreadonce+trigger",
        Sometimes,
        doc,
        Kind::Witness,
        budget,
    )?];
    let fixed = insert_after(&prog, "CPU 0", |i| stores(i, "m2_state0"), Instr::wmb())?;
    let fixed = insert_after(
        &fixed,
        "reader 0",
        |i| reads_atomic(i, "m1_thr"),
        Instr::rmb(),
    )?;
    out.push(finding(
        &fixed,
        "MP+fencewmbonceatomicadd+fencermbatomicreadonce+trigger",
        Never,
        wrapped(
            "A fix (no kernel has it): smp_wmb() between the updater's counter \
             store and its atomic_add(), smp_rmb() between the reader's \
             atomic_read() of the count and the flush. The model has no such \
             variant; the verdicts below are the test's.",
        ),
        Kind::Fix {
            of: "MP+poonceatomicadd+poatomicreadonce+trigger",
        },
        budget,
    )?);
    Ok(out)
}

/// Section 13 with the tree (v6.8-tree): the documented witness, in which
/// the flush both misses the counter (message passing through the count)
/// and unlinks the memcg (store buffering on updated_next); and the
/// smp_mb() pair, which forbids both.
fn tree_trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, from) = sliced_witness(TREE_TRIGGER, "tree-trigger", budget)?;
    let (_, property, cfg) = parse(TREE_TRIGGER)?;
    let mut doc = wrapped(
        "docs/findings.md section 13, v6.8-tree: the reader's gate sees the \
         count of both updates, the flush unlinks memcg 2 and reads its counter \
         without the second update (the documented witness).",
    );
    doc.extend(from);
    let mut out = vec![finding(
        &prog,
        "SB+MP+poonceonces+rstat-tree-trigger",
        Sometimes,
        doc,
        Kind::Witness,
        budget,
    )?];
    let both = insert_after(&prog, "CPU 0", |i| stores(i, "m2_state0"), Instr::mb())?;
    let both = insert_after(
        &both,
        "reader 0",
        |i| stores(i, "m2_updated_next0"),
        Instr::mb(),
    )?;
    let verdict = loom_verdict(TREE_MB[0], property, &cfg, budget);
    let mut doc = wrapped(
        "The smp_mb() pair of v6.8-tree-mb: the flusher's barrier, after the \
         unlink, also orders the gate's load of the count before the counter \
         loads, so neither the store-buffering nor the message-passing path \
         remains.",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration: {verdict}."
    )));
    out.push(finding(
        &both,
        "SB+MP+fencembonceonces+rstat-tree-trigger",
        Never,
        doc,
        Kind::Fix {
            of: "SB+MP+poonceonces+rstat-tree-trigger",
        },
        budget,
    )?);
    Ok(out)
}

/// Section 13's open question (v6.17-tree-mb): the reader's gate saw both
/// updates' counts, yet the flush finds the CPU's llist empty. No property
/// judges that outcome; the execution is found by its readers' outcome.
fn llist_trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let suite = Suite::standard(&Sizes::default());
    let cfg = suite
        .entry("memcg-tree-trigger")
        .ok_or("the suite has no memcg-tree-trigger entry")?
        .cfg
        .clone();
    let outcome: ReaderOutcome = vec![(true, 0), (true, 4)];
    let steps = loom_execution_with(TREE_MB[1], &cfg, outcome, budget)?;
    let prog = program("llist-trigger", &steps)?;
    let mut doc = wrapped(
        "docs/findings.md section 13, the open question: with the smp_mb() pair \
         (v6.17-tree-mb), a reader whose gate saw both updates' counts finds \
         CPU 0's llist empty (smp_load_acquire of the head reads NULL, 1 here) \
         and flushes nothing. The updater's llist_add() is a fully ordered \
         cmpxchg, so its side is ordered; the reader's atomic_read() of the \
         count is not ordered before the acquire load of the head (an acquire \
         orders only what follows it, and the gate's test is a control \
         dependency, which LKMM does not order before a load).",
    );
    doc.push("Sliced from the loom execution (memcg-tree-trigger, unbounded) of".into());
    doc.push("v6.17-tree-mb whose readers observe [(true, 0), (true, 4)].".into());
    let mut out = vec![finding(
        &prog,
        "MP+pocmpxchgatomicadd+poatomicreadacquire+rstat-llist-trigger",
        Sometimes,
        doc,
        Kind::Witness,
        budget,
    )?];
    let fixed = insert_after(
        &prog,
        "reader 0",
        |i| reads_atomic(i, "m1_thr"),
        Instr::rmb(),
    )?;
    out.push(finding(
        &fixed,
        "MP+pocmpxchgatomicadd+fencermbatomicreadacquire+rstat-llist-trigger",
        Never,
        wrapped(
            "What forbids it: smp_rmb() (or an acquire load of the count, \
             atomic_read_acquire()) between the gate's read and the flush. With \
             the updater's fully ordered cmpxchg this is message passing with \
             both sides ordered. No kernel has it and the model has no such \
             variant; the verdicts below are the test's.",
        ),
        Kind::Fix {
            of: "MP+pocmpxchgatomicadd+poatomicreadacquire+rstat-llist-trigger",
        },
        budget,
    )?);
    Ok(out)
}
