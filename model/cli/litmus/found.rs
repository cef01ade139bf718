//! Section 13's trigger with the node found: the flusher reads a memcg's
//! counter only after finding the memcg on the CPU's updated tree (v6.8,
//! under the per-CPU lock) or lockless list (v6.17, cmpxchg against an
//! acquire load), and finding it orders the read after the counter store.
//! Written by hand from the kernel's order of operations (no trace has the
//! reader's outcome for every path); LKMM forbids the missed counter.

use std::time::Duration;

use crate::report::litmus::prog::{Instr, Observation, Program, Store};

use super::corpus::{wrapped, Entry};
use super::findings::{finding, Kind};

/// `*var = val`: the owner's `__this_cpu_add` of its counter.
fn per_cpu_add(var: &str, val: i64) -> Instr {
    Instr::Store {
        store: Store::Plain,
        var: var.to_string(),
        val,
    }
}

/// What both tests say of the data race herd7 flags on them.
const RACE: &str = "herd7 flags the counter's race in the executions where the flusher \
     does not find the node: there the kernel reads no counter, but a \
     litmus test's path is fixed and reads it anyway.";

/// v6.17: the updater's counter store, llist_add() (a fully ordered
/// cmpxchg of the head), the count; the flusher's gate, the acquire load
/// of the head that finds the node, the counter.
fn llist(budget: Duration) -> Result<Entry, String> {
    let prog = Program::new("llist-found")
        .init("lhead_first0", 1)
        .thread(
            "CPU 0",
            vec![
                per_cpu_add("m1_state0", 2),
                Instr::cmpxchg("lhead_first0", 1, 4, 0),
                Instr::atomic_add("m1_thr", 2),
            ],
        )
        .thread(
            "reader 0",
            vec![
                Instr::atomic_read("m1_thr", 0),
                Instr::lock("rstat_lock"),
                Instr::load_acquire("lhead_first0", 1),
                Instr::read_once("m1_state0", 2),
                Instr::unlock("rstat_lock"),
            ],
        )
        .reg(0, 0, 1)
        .reg(1, 0, 2)
        .reg(1, 1, 4)
        .reg(1, 2, 0);
    let mut doc = wrapped(
        "docs/findings.md section 13 with the node found (v6.17): the \
         reader's gate saw the update's count and the flusher's \
         smp_load_acquire() of CPU 0's llist head found the memcg's node \
         (4; 1 is NULL), which the updater's llist_add() put there with a \
         fully ordered cmpxchg after its counter store. The acquire load \
         reads that cmpxchg, so the flush reads the counter after the store: \
         a flush that finds the memcg cannot miss the pages that put it \
         there.",
    );
    doc.extend(wrapped(RACE));
    finding(
        &prog,
        "MP+pocmpxchgatomicadd+poatomicreadacquireonce+rstat-llist-found",
        Observation::Never,
        doc,
        Kind::Written,
        budget,
    )
}

/// v6.8: the updater's counter store, cgroup_rstat_updated() linking the
/// memcg under the per-CPU lock, the count; the flusher's gate, the
/// per-CPU lock under which it finds and unlinks the memcg, the counter.
fn tree(budget: Duration) -> Result<Entry, String> {
    let prog = Program::new("tree-found")
        .thread(
            "CPU 0",
            vec![
                per_cpu_add("m1_state0", 2),
                Instr::read_once("m1_updated_next0", 0),
                Instr::lock("rstat_cpu0"),
                Instr::write_once("m1_updated_next0", 1),
                Instr::unlock("rstat_cpu0"),
                Instr::atomic_add("m1_thr", 2),
            ],
        )
        .thread(
            "reader 0",
            vec![
                Instr::atomic_read("m1_thr", 0),
                Instr::lock("rstat_lock"),
                Instr::lock("rstat_cpu0"),
                Instr::read_once("m1_updated_next0", 1),
                Instr::write_once("m1_updated_next0", 0),
                Instr::unlock("rstat_cpu0"),
                Instr::read_once("m1_state0", 2),
                Instr::unlock("rstat_lock"),
            ],
        )
        .reg(0, 0, 0)
        .reg(1, 0, 2)
        .reg(1, 1, 1)
        .reg(1, 2, 0);
    let mut doc = wrapped(
        "docs/findings.md section 13 with the node found (v6.8): the \
         updater's cgroup_rstat_updated() found the memcg off CPU 0's \
         updated tree, updated_next 0, and linked it under the per-CPU lock \
         after its counter store; the reader's gate saw the count, and the \
         flusher, under the same lock, found the memcg linked (1) and \
         unlinked it. The lock orders the updater's critical section before \
         the flusher's, so the flush reads the counter after the store.",
    );
    doc.extend(wrapped(RACE));
    finding(
        &prog,
        "MP+polockatomicadd+poatomicreadlockonce+rstat-tree-found",
        Observation::Never,
        doc,
        Kind::Written,
        budget,
    )
}

/// Both tests with the node found.
pub fn found(budget: Duration) -> Result<Vec<Entry>, String> {
    Ok(vec![tree(budget)?, llist(budget)?])
}
