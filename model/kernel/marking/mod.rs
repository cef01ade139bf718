//! How the kernel marks each shared-memory access the model makes, per
//! release: a table of access sites, each with the kernel's own marking
//! (plain, `data_race()`, `READ_ONCE()`, `WRITE_ONCE()`, a per-CPU
//! operation, an atomic), the function, and the file and line it was read
//! at. The litmus export ([`crate::report::litmus`]) consults it, so an
//! exported test marks an access exactly as the release does, not as the
//! model's idiom layer happens to run it.
//!
//! Why the model's idiom is not enough: the model runs every shared word as
//! an atomic (a plain access would be undefined behaviour in Rust), so a
//! plain C access and a `data_race()` read are relaxed atomics under loom,
//! and `READ_ONCE()` is one too. LKMM tells them apart: plain accesses take
//! part in no ordering relation and make data races (tools/memory-model,
//! Documentation/access-marking.txt and explanation.txt, "PLAIN ACCESSES
//! AND DATA RACES"). The rstat tree's on-list test is `data_race()` in the
//! kernel and `READ_ONCE()`-like in the model; this table is what says so.
//!
//! A site is matched by the kernel variable it touches ([`VarKind`]), who
//! touches it ([`By`]), the kind of access ([`Kind`]), the model's idiom
//! there, and, where the kernel marks the same variable differently under
//! a lock and outside it, whether the per-CPU `cgroup_rstat_cpu_lock` is
//! held. An access no entry matches is the variant's own code (a mutant's,
//! a candidate's), and the export keeps the model's idiom for it.
//!
//! Locks and barriers are not in the tables: their LKMM primitive is the
//! kernel's (`raw_spin_lock_irqsave()` is `spin_lock()` to LKMM, interrupts
//! not being modelled).
//!
//! Sources (whole trees in the search tool's store, docs/kernel-later.md's
//! list; line numbers are of these snapshots):
//! - v6.4: `julianw1010/WASP-linux-6.4.0@ff0057e91bb8`
//! - v6.8: `vivo50kff/linux-6.8@bc4fae0d3fa3`
//! - v6.12: `shilei-massclouds/linux-6.12@e02d6450498d`
//! - v6.17: `busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8` (under
//!   `linux/`)
//!
//! v5.19 and v6.0 have no stored tree; their `flush_next_time` marking is
//! read from the context lines of the 2023 patches that changed it (the
//! v6.4 series, `WRITE_ONCE(flush_next_time, ...)` replacing
//! `flush_next_time = ...`).

mod global;
mod site;
mod v6_17;
mod v6_8;

pub use site::{By, Kind, Mark, Marking, Release, VarKind, ON_LIST_RACE};

pub use global::GLOBAL;
pub use v6_17::V6_17;
pub use v6_8::{V6_8, V6_8_TREE_CANDIDATE};

/// Every table.
pub const RELEASES: [&Release; 4] = [&GLOBAL, &V6_8, &V6_8_TREE_CANDIDATE, &V6_17];

/// The table named `name`.
pub fn by_name(name: &str) -> Option<&'static Release> {
    RELEASES.iter().copied().find(|r| r.name == name)
}
