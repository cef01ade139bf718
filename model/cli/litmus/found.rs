//! Section 13's trigger with the node found: the flusher reads a memcg's
//! counter only after finding the memcg on the CPU's updated tree (v6.8,
//! under the per-CPU lock) or lockless list (v6.17, cmpxchg against an
//! acquire load), and finding it orders the read after the counter store.
//! Written by hand from the kernel's order of operations, with the kernel's
//! tests (`if`) and marking: the flusher reads the counter only if it found
//! the node, the updater links it only if its on-list test found it off.
//! LKMM forbids the missed counter, with no data race.

use std::time::Duration;

use crate::kernel::marking::{V6_17, V6_8};
use crate::report::litmus::prog::{Instr, Load, Observation, Program, Store};

use super::corpus::{wrapped, Entry};
use super::findings::{finding, Kind, Lkmm};

/// `*var = val; // kernel`: a plain store as the kernel spells it.
fn plain_store(var: &str, val: i64, kernel: &'static str) -> Instr {
    Instr::Store {
        store: Store::Plain(Some(kernel)),
        var: var.to_string(),
        val,
    }
}

/// `r<reg> = *var; // kernel`: a plain load as the kernel spells it.
fn plain_load(var: &str, reg: usize, kernel: &'static str) -> Instr {
    Instr::Load {
        load: Load::Plain(Some(kernel)),
        var: var.to_string(),
        reg,
    }
}

/// `if (r<reg> == val) { body }`.
fn when(reg: usize, val: i64, body: Vec<Instr>) -> Instr {
    Instr::If {
        reg,
        eq: true,
        val,
        body,
    }
}

/// `if (r<reg> != val) { body }`.
fn unless(reg: usize, val: i64, body: Vec<Instr>) -> Instr {
    Instr::If {
        reg,
        eq: false,
        val,
        body,
    }
}

/// v6.17: the updater's counter store (this_cpu_add()), llist_add() (a
/// fully ordered cmpxchg of the head), the count; the flusher's gate, the
/// acquire load of the head, and the counter only if that load found the
/// node.
fn llist(budget: Duration) -> Result<Entry, String> {
    let prog = Program::new("llist-found")
        .init("lhead_first0", 1)
        .thread(
            "CPU 0",
            vec![
                plain_store("m1_state0", 2, "this_cpu_add()"),
                Instr::cmpxchg("lhead_first0", 1, 4, 0),
                Instr::atomic_add("m1_thr", 2),
            ],
        )
        .thread(
            "reader 0",
            vec![
                Instr::atomic_read("m1_thr", 0),
                when(
                    0,
                    2,
                    vec![
                        Instr::lock("rstat_lock"),
                        Instr::load_acquire("lhead_first0", 1),
                        when(1, 4, vec![Instr::read_once("m1_state0", 2)]),
                        Instr::unlock("rstat_lock"),
                    ],
                ),
            ],
        )
        .reg(0, 0, 1)
        .reg(1, 0, 2)
        .reg(1, 1, 4)
        .reg(1, 2, 0);
    let doc = wrapped(
        "docs/findings.md section 13 with the node found (v6.17): the \
         reader's gate saw the update's count and the flusher's \
         smp_load_acquire() of CPU 0's llist head found the memcg's node \
         (4; 1 is NULL), which the updater's llist_add() put there with a \
         fully ordered cmpxchg after its counter store. The acquire load \
         reads that cmpxchg, so the flush reads the counter after the store: \
         a flush that finds the memcg cannot miss the pages that put it \
         there. Left out: llist_on_list() and the claim before llist_add(), \
         and the node's next pointer, which the same cmpxchg and acquire \
         order.",
    );
    finding(
        &prog,
        "MP+poplaincmpxchgatomicadd+poatomicreadacquireonce+rstat-llist-found",
        Lkmm {
            result: Observation::Never,
            race: false,
            no_race: Some(
                "the flusher reads m1_state0 only if its acquire load found the \
                 node, that is read the cmpxchg's write. The counter store is \
                 po-before the cmpxchg, which is fully ordered (strong-fence), \
                 the cmpxchg's write reaches the acquire load (rfe) and the \
                 acquire orders the READ_ONCE() after it, so the store is \
                 wr-visible to the load, which reads 2: no execution leaves the \
                 two unordered, and exists is never met.",
            ),
        },
        doc,
        Kind::Written,
        &V6_17,
        budget,
    )
}

/// v6.8: the updater's counter store (__this_cpu_add()), cgroup_rstat_
/// updated()'s data_race() on-list test and, if the memcg is off the tree,
/// its link under the per-CPU lock, then the count; the flusher's gate, the
/// per-CPU lock under which it tests and unlinks the memcg, and the counter
/// only if it found the memcg on the tree.
fn tree(budget: Duration) -> Result<Entry, String> {
    let on = "m1_updated_next0";
    let prog = Program::new("tree-found")
        .thread(
            "CPU 0",
            vec![
                plain_store("m1_state0", 2, "__this_cpu_add()"),
                plain_load(on, 0, "data_race()"),
                when(
                    0,
                    0,
                    vec![
                        Instr::lock("rstat_cpu0"),
                        plain_store(on, 1, "="),
                        Instr::unlock("rstat_cpu0"),
                    ],
                ),
                Instr::atomic_add("m1_thr", 2),
            ],
        )
        .thread(
            "reader 0",
            vec![
                Instr::atomic_read("m1_thr", 0),
                when(
                    0,
                    2,
                    vec![
                        Instr::lock("rstat_lock"),
                        Instr::lock("rstat_cpu0"),
                        plain_load(on, 1, "plain read"),
                        unless(1, 0, vec![plain_store(on, 0, "= NULL")]),
                        Instr::unlock("rstat_cpu0"),
                        unless(1, 0, vec![Instr::read_once("m1_state0", 2)]),
                        Instr::unlock("rstat_lock"),
                    ],
                ),
            ],
        )
        .reg(0, 0, 0)
        .reg(1, 0, 2)
        .reg(1, 1, 1)
        .reg(1, 2, 0);
    let doc = wrapped(
        "docs/findings.md section 13 with the node found (v6.8): the \
         updater's cgroup_rstat_updated() found the memcg off CPU 0's \
         updated tree (updated_next 0) and linked it under the per-CPU lock \
         after its counter store; the reader's gate saw the count, and the \
         flusher, under the same lock, found the memcg linked (1) and \
         unlinked it. The lock orders the updater's critical section before \
         the flusher's, so the flush reads the counter after the store.",
    );
    finding(
        &prog,
        "MP+poplainlockatomicadd+poatomicreadlockonce+rstat-tree-found",
        Lkmm {
            result: Observation::Never,
            race: false,
            no_race: Some(
                "the flusher writes m1_updated_next0 and reads m1_state0 only if \
                 it found the memcg linked, that is read CPU 0's link under \
                 rstat_cpu0; then CPU 0's critical section precedes the \
                 flusher's, and everything CPU 0 did before its spin_unlock() \
                 (the counter store, the data_race() test) is ordered before \
                 everything the flusher does after its spin_lock() (po-rel, \
                 rfe, acq-po: rw-xbstar and wr-vis). The test cannot read the \
                 flusher's 0 (that would need the link after it), and the \
                 link and the flusher's accesses share the lock: no execution \
                 leaves a plain access unordered against the other thread's, \
                 and the counter load reads 2.",
            ),
        },
        doc,
        Kind::Written,
        &V6_8,
        budget,
    )
}

/// Both tests with the node found.
pub fn found(budget: Duration) -> Result<Vec<Entry>, String> {
    Ok(vec![tree(budget)?, llist(budget)?])
}
