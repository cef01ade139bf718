//! The integration tests, one crate with one module per subject (one
//! build, one binary). `cargo test --release --test suite MODULE::` runs
//! one module; shared helpers and named configurations are in [`common`].
//!
//! Under `RUSTFLAGS="--cfg loom"` the loom suite ([`loom_suite`]) and the
//! larger comparisons of other modules are compiled in ([`loom_gap`] is
//! not loom-only: it runs in every build, in under a second); under `--cfg loom --cfg crossbeam_loom` also [`loom_epoch`]
//! (crossbeam-epoch under loom), which CI runs from its own build.

mod common;

mod bench;
mod bounds;
mod cli;
mod dfs_reduction;
mod docs;
mod explain;
mod extending;
mod figures;
mod fuzz;
#[allow(dead_code)]
mod imports;
mod later_versions;
mod lifetime;
mod litmus;
mod loom_gap;
mod matrix;
mod mutants;
mod perf;
mod properties;
mod rstat_tree;
mod shard;
mod stateful;
mod tree_trigger;
mod unseen;
mod v6_4;


