//! The corpus's section 13 tests (docs/findings.md): a flush that a
//! reader's gate triggered missing the pages that triggered it, without
//! the updated tree, with v6.8's tree, and with v6.17's llist; each with
//! the ordering that forbids it. The reader's flush runs inside its gate's
//! `if` (the export keeps the kernel's test), so a flag on the counter is
//! the kernel's race, not one the fixed path makes up.

use std::time::Duration;

use crate::check::{Sizes, Suite};
use crate::observe::ReaderOutcome;
use crate::protocol::catalogue::TREE_MB;
use crate::protocol::Variant;
use crate::report::litmus::prog::{Instr, Observation};
use crate::report::litmus::program;

use super::corpus::{wrapped, Entry};
use super::edit::{insert_after, insert_after_first, reads_atomic, stores};
use super::findings::{
    finding, lkmm, loom_execution_with, loom_verdict, parse, sliced_witness, Kind, Lkmm,
};

use Observation::{Never, Sometimes};

const TRIGGER: &str = "--variant v6.8 --property quiescent_read_exact --backend loom --cpus 1 --batch 2 --updates 2 --val 2 --tree 0,1 --charge 2 --read 1 --no-periodic";
const TREE_TRIGGER: &str = "--variant v6.8-tree --property eventual_conservation --backend loom --cpus 1 --batch 2 --updates 2 --val 2 --tree 0,1 --charge 2 --read 1 --no-periodic --settle 2 --settle-update";

/// Section 13 without the tree (v6.8; v6.17 is the same shape): the
/// reader's gate sees the count the update added after its counter store,
/// and the flush reads the counter without that store (message passing).
pub(super) fn trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, release, from) = sliced_witness(TRIGGER, "trigger", budget)?;
    const WITNESS: &str = "MP+poplainatomicadd+poatomicreadonce+trigger";
    let mut doc = wrapped(
        "docs/findings.md section 13, the protocol without the updated tree: \
         the updater stores its per-CPU counter and then adds to the memcg's \
         count (atomic_add, unordered); the reader's gate reads the count \
         (atomic_read) and the flush, inside the gate's if, then reads the \
         counter. Nothing orders either side, so a flush the count triggered \
         can miss the pages that raised it, and the counter's store and the \
         flush's load race. Not a kernel outcome: in v6.8 and v6.17 a flusher \
         reads only the counters of a memcg it found on the updated tree or \
         the lockless list, and finding it orders the reads (the two \
         rstat-*-found tests, Never); the finding stands through the \
         rstat-tree-trigger and rstat-llist-trigger tests.",
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
    let fixed = insert_after(&prog, "CPU 0", |i| stores(i, "m2_state0"), Instr::wmb())?;
    let fixed = insert_after_first(
        &fixed,
        "reader 0",
        |i| reads_atomic(i, "m1_thr"),
        Instr::rmb(),
    )?;
    out.push(finding(
        &fixed,
        "MP+fencewmbplainatomicadd+fencermbatomicreadonce+trigger",
        Lkmm {
            result: Never,
            race: false,
            no_race: Some(
                "the reader reads m2_state0 only inside its gate's if, that is after \
                 its atomic_read() returned 4, the value of CPU 0's second \
                 atomic_add(); the smp_wmb() after each counter store orders the \
                 store before that add's write (w-post-bounded), the write reaches \
                 the reader (rfe) and its smp_rmb() orders the READ_ONCE() after the \
                 atomic_read(), so each counter store is wr-visible to the load: \
                 the load reads 4, no execution leaves the two unordered, and \
                 exists is never met.",
            ),
        },
        wrapped(
            "A fix (no kernel has it): smp_wmb() between the updater's counter \
             store and its atomic_add(), smp_rmb() between the reader's \
             atomic_read() of the count and the flush. The model has no such \
             variant; the verdicts below are the test's.",
        ),
        Kind::Fix {
            of: WITNESS,
            change: "smp_wmb() after each of CPU 0's counter stores, smp_rmb() \
                     after reader 0's atomic_read() of m1_thr.",
        },
        release,
        budget,
    )?);
    Ok(out)
}

/// Section 13 with the tree (v6.8-tree): the documented witness, in which
/// the flush both misses the counter (message passing through the count)
/// and unlinks the memcg (store buffering on updated_next); and the
/// smp_mb() pair, which forbids the miss.
pub(super) fn tree_trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let (prog, release, from) = sliced_witness(TREE_TRIGGER, "tree-trigger", budget)?;
    let (_, property, cfg) = parse(TREE_TRIGGER)?;
    const WITNESS: &str = "SB+MP+poplainplain+poplainonce+rstat-tree-trigger";
    let mut doc = wrapped(
        "docs/findings.md section 13, v6.8-tree: the reader's gate sees the \
         count of both updates, the flush unlinks memcg 2 and reads its counter \
         without the second update (the documented witness). The on-list test \
         (data_race()) and the unlink are plain, as in the kernel.",
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
    let both = insert_after(&prog, "CPU 0", |i| stores(i, "m2_state0"), Instr::mb())?;
    let both = insert_after(
        &both,
        "reader 0",
        |i| stores(i, "m2_updated_next0"),
        Instr::mb(),
    )?;
    let verdict = loom_verdict(TREE_MB[0], property, &cfg, budget);
    let mut doc = wrapped(
        "The smp_mb() pair of v6.8-tree-mb on the kernel's accesses. The gate \
         saw the second update's count (exists), and the flusher's barrier, \
         after the unlink, orders the gate's load before the counter's (both \
         marked: hb), while the updater's orders its counter store before its \
         atomic_add(): the store is wr-visible to the load, which cannot read \
         the older value. So the miss is forbidden even with updated_next \
         plain; the store-buffering race on updated_next itself stays (the \
         flag), which section 15's candidate closes.",
    );
    doc.extend(wrapped(&format!(
        "flushcheck on the witness's configuration: {verdict}."
    )));
    out.push(finding(
        &both,
        "SB+MP+fencembplainplain+fencembplainonce+rstat-tree-trigger",
        lkmm(Never, true),
        doc,
        Kind::Fix {
            of: WITNESS,
            change: "smp_mb() after CPU 0's counter store and after reader 0's \
                     unlink.",
        },
        release,
        budget,
    )?);
    Ok(out)
}

/// Section 13's open question (v6.17-tree-mb): the reader's gate saw both
/// updates' counts, yet the flush finds the CPU's llist empty. No property
/// judges that outcome; the execution is found by its readers' outcome.
pub(super) fn llist_trigger(budget: Duration) -> Result<Vec<Entry>, String> {
    let suite = Suite::standard(&Sizes::default());
    let cfg = suite
        .entry("memcg-tree-trigger")
        .ok_or("the suite has no memcg-tree-trigger entry")?
        .cfg
        .clone();
    let outcome: ReaderOutcome = vec![(true, 0), (true, 4)];
    let steps = loom_execution_with(TREE_MB[1], &cfg, outcome, budget)?;
    let release = Variant::find(&crate::cli::registry(Vec::new())?, TREE_MB[1])?.release;
    let prog = program("llist-trigger", &steps, release)?;
    const WITNESS: &str = "MP+pocmpxchgatomicadd+poatomicreadacquire+rstat-llist-trigger";
    let mut doc = wrapped(
        "docs/findings.md section 13, the open question: with the smp_mb() pair \
         (v6.17-tree-mb), a reader whose gate saw both updates' counts finds \
         CPU 0's llist empty (smp_load_acquire of the head reads NULL, 1 here) \
         and flushes nothing. The updater's llist_add() is a fully ordered \
         cmpxchg, so its side is ordered; the reader's atomic_read() of the \
         count is not ordered before the acquire load of the head (an acquire \
         orders only what follows it, and the gate's if is a control \
         dependency, which LKMM orders before stores only: here the \
         spin_lock()'s write, not the head's load).",
    );
    doc.push("Sliced from the loom execution (memcg-tree-trigger, unbounded) of".into());
    doc.push("v6.17-tree-mb whose readers observe [(true, 0), (true, 4)].".into());
    let mut out = vec![finding(
        &prog,
        WITNESS,
        lkmm(Sometimes, false),
        doc,
        Kind::Witness,
        release,
        budget,
    )?];
    let fixed = insert_after_first(
        &prog,
        "reader 0",
        |i| reads_atomic(i, "m1_thr"),
        Instr::rmb(),
    )?;
    out.push(finding(
        &fixed,
        "MP+pocmpxchgatomicadd+fencermbatomicreadacquire+rstat-llist-trigger",
        lkmm(Never, false),
        wrapped(
            "What forbids it: smp_rmb() (or an acquire load of the count, \
             atomic_read_acquire()) between the gate's read and the flush. With \
             the updater's fully ordered cmpxchg this is message passing with \
             both sides ordered. The model's v6.17-tree-mb-rmb and \
             v6.17-tree-mb-acquire are these fixes; the verdicts below are the \
             test's.",
        ),
        Kind::Fix {
            of: WITNESS,
            change: "smp_rmb() after reader 0's atomic_read() of m1_thr.",
        },
        release,
        budget,
    )?);
    Ok(out)
}
