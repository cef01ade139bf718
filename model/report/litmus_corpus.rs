//! The checked-in litmus corpus, docs/litmus/ (`flushcheck litmus --out
//! DIR` regenerates it).
//!
//! Two groups:
//! - **Findings**: a test for every weak-memory finding of
//!   docs/findings.md and one for each fix of it. A finding's test is its
//!   loom witness, sliced by [`super::litmus::program`]; a fix is that test
//!   with the barrier the fix adds, where the fixed variant (`-mb`) puts
//!   it. Each states the result LKMM gives (`Result:`, checked with herd7
//!   where available, `flushcheck litmus --check`) and, beside it, the
//!   model's verdicts, measured while generating: what loom finds in the
//!   variant, and the test itself run under loom and the SC DFS through the
//!   kernel-idiom layer.
//! - **Shapes**: the classic shapes of [`super::litmus_shapes`], with
//!   loom's and the DFS's outcomes (docs/weak-memory.md).
//!
//! Every figure in a header is measured when the corpus is generated; the
//! searches are deterministic, so the same code writes the same files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::check::{monitor_plan, on_fresh_thread, FlushScenario, Sizes, Suite};
use crate::cli::args::ConfigArgs;
use crate::cli::registry;
use crate::config::Config;
use crate::explore::{loom_find, Backend, Outcome};
use crate::observe::{Property, ReaderOutcome, Shared, Step};
use crate::protocol::Variant;
use crate::report::explain::{explain, Explained, Search, Target};

use super::litmus::program;
use super::litmus_prog::{measure, Instr, Measured, Observation, Program, Store};
use super::litmus_shapes;

use Observation::{Never, Sometimes};

/// One file of the corpus.
pub struct Entry {
    /// The test (its `expected` is LKMM's result).
    pub prog: Program,
    /// The README's group.
    pub group: &'static str,
    /// The README's line about it.
    pub summary: String,
    /// The test under loom (unbounded, bound 2) and the DFS.
    pub measured: Vec<Measured>,
}

/// The loom searches a corpus test is measured with: unbounded, and at
/// preemption bound 2.
pub fn loom_searches() -> [Backend; 2] {
    [
        Backend::Loom {
            preemption_bound: None,
        },
        Backend::Loom {
            preemption_bound: Some(2),
        },
    ]
}

/// Every sequentially consistent interleaving.
pub fn dfs() -> Backend {
    Backend::ShuttleDfs {
        max_schedules: 1_000_000,
        sleep_sets: true,
        stateful: false,
    }
}

/// `prog` under loom (unbounded, bound 2) and the DFS.
pub fn measure_all(prog: &Program, budget: Duration) -> Result<Vec<Measured>, String> {
    let mut out = Vec::new();
    for b in loom_searches().into_iter().chain([dfs()]) {
        let m = measure(prog, &b, budget)?;
        if !m.finished {
            return Err(format!(
                "litmus test {}: the {} search did not finish",
                prog.name,
                b.search()
            ));
        }
        out.push(m);
    }
    Ok(out)
}

/// One line per search: `loom, unbounded: Sometimes (30 executions)`.
pub fn verdict_lines(prog: &Program, ms: &[Measured]) -> Vec<String> {
    let target = prog.target();
    ms.iter()
        .map(|m| {
            let what = match &m.backend {
                Backend::Loom {
                    preemption_bound: None,
                } => "loom, unbounded".to_string(),
                Backend::Loom {
                    preemption_bound: Some(b),
                } => format!("loom, preemption bound {b}"),
                _ => "every SC interleaving (DFS)".to_string(),
            };
            format!(
                "{what}: {} ({} executions, {} outcomes)",
                m.observation(&target),
                m.executions,
                m.outcomes.len()
            )
        })
        .collect()
}

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
    let mut plan = monitor_plan(&v, &reg, cfg, &backend)?;
    plan.trace = true;
    plan.target = Some(outcome.clone());
    let shared = Shared::new(plan);
    let s = Arc::new(FlushScenario::new(cfg, &v, shared));
    let sc = s.clone();
    let (e, _) = on_fresh_thread(move || loom_find(None, budget, sc));
    match e.outcome {
        Outcome::Failed(msg) if msg.contains("readers observed") => Ok(s.shared.steps()),
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
    matches!(i, Instr::Store { var: v, store: Store::Once, .. } if v == var)
}

/// Whether `i` is an `atomic_read()` of `var`.
fn reads_atomic(i: &Instr, var: &str) -> bool {
    matches!(i, Instr::Load { var: v, load: super::litmus_prog::Load::Atomic, .. } if v == var)
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
enum Kind<'a> {
    Witness,
    Fix { of: &'a str },
}

/// A finding's file: `doc` first, then the model's verdicts on the test,
/// then the export's notes (for a fix, which test it modifies).
fn finding(
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
    lines.push("This test through the kernel-idiom layer (flushcheck):".into());
    lines.extend(verdict_lines(&p, &ms).into_iter().map(|l| format!("  {l}")));
    lines.push(String::new());
    match kind {
        Kind::Witness => lines.extend(prog.doc.iter().cloned()),
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

fn wrapped(text: &str) -> Vec<String> {
    crate::observe::record::wrap(text, 70)
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
    let verdict = loom_verdict("v6.8-tree-mb", property, &cfg, budget);
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
    let verdict = loom_verdict("v6.17-tree-mb", property, &cfg, budget);
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
        "docs/findings.md section 13: the updater stores its per-CPU counter \
         and then adds to the memcg's count (atomic_add, unordered); the \
         reader's gate reads the count (atomic_read) and the flush then reads \
         the counter. Nothing orders either side, so a flush the count \
         triggered can miss the pages that raised it (v6.8 and v6.17).",
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
    let verdict = loom_verdict("v6.8-tree-mb", property, &cfg, budget);
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
    let steps = loom_execution_with("v6.17-tree-mb", &cfg, outcome, budget)?;
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

/// The entry for every classic shape.
pub fn shapes(budget: Duration) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for s in litmus_shapes::all() {
        let mut p = s.prog.clone();
        let ms = measure_all(&p, budget)?;
        let expected = p.expected.unwrap_or(Sometimes);
        let mut doc = wrapped(&format!("{}.", capitalise(s.what)));
        doc.push(if s.catalogue {
            "LKMM's result: the kernel's tools/memory-model/litmus-tests file of this name.".into()
        } else {
            "LKMM's result: herd7 with the kernel's tools/memory-model (not in its catalogue)."
                .into()
        });
        doc.push(String::new());
        doc.push("Through the kernel-idiom layer (flushcheck):".into());
        doc.extend(verdict_lines(&p, &ms).into_iter().map(|l| format!("  {l}")));
        p.doc = doc;
        let summary = format!(
            "LKMM {expected}; loom {} (bound 2: {}); SC {}",
            ms[0].observation(&p.target()),
            ms[1].observation(&p.target()),
            ms[2].observation(&p.target())
        );
        out.push(Entry {
            prog: p,
            group: "shapes",
            summary,
            measured: ms,
        });
    }
    Ok(out)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The whole corpus, findings first.
pub fn corpus(budget: Duration) -> Result<Vec<Entry>, String> {
    let mut out = findings(budget)?;
    out.extend(shapes(budget)?);
    Ok(out)
}

/// The README of the corpus.
pub fn readme(entries: &[Entry]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Litmus tests of flushcheck, for herd7 with the Linux-kernel memory model\n\
         (tools/memory-model). Generated by `flushcheck litmus --out docs/litmus`;\n\
         `cargo test --release --test litmus_corpus` checks that these files are\n\
         what the code generates. `flushcheck litmus --check --lkmm DIR` runs\n\
         herd7 on each and compares its Observation with the file's `Result:`.\n\n\
         Names follow tools/memory-model/litmus-tests: the shape, one descriptor\n\
         per thread (po = program order, once = READ_ONCE/WRITE_ONCE, fencemb =\n\
         smp_mb() between, atomicadd, atomicread, cmpxchg, acquire, release,\n\
         lock), then for the findings the kernel site (rstat-tree: the v5.7-v6.14\n\
         updated tree; rstat-llist: the v6.17-v7.1 llist; trigger: the\n\
         threshold-triggered flush). Each header states LKMM's result and,\n\
         beside it, the model's verdicts."
    );
    let mut groups: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        groups.entry(e.group).or_default().push(e);
    }
    for (g, title) in [
        (
            "findings",
            "Weak-memory findings (docs/findings.md sections 13 and 15) and their fixes",
        ),
        (
            "shapes",
            "Classic shapes, measured against loom (docs/weak-memory.md)",
        ),
    ] {
        let _ = writeln!(out, "\n{title}:\n");
        for e in groups.get(g).into_iter().flatten() {
            let _ = writeln!(out, "{}.litmus", e.prog.name);
            let _ = writeln!(out, "\t{}", e.summary);
        }
    }
    out
}

/// Write `entries` and the README into `dir`.
pub fn write(dir: &Path, entries: &[Entry]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let path = dir.join(format!("{}.litmus", e.prog.name));
        std::fs::write(&path, e.prog.render()?).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let path = dir.join("README");
    std::fs::write(&path, readme(entries)).map_err(|e| format!("{}: {e}", path.display()))
}
