//! The integration tests: one crate, one module per subject, so that
//! `cargo test` builds and links one test binary. `cargo test --release
//! --test suite MODULE::` runs one module; the helpers and named
//! configurations the modules share are in [`common`].
//!
//! Builds with other cfgs add modules:
//! - `RUSTFLAGS="--cfg loom"`: the larger searches of [`loom_suite`]
//!   (minutes, loom only; without the cfg its two guards run and the rest
//!   is ignored) and the larger comparisons of `bounds` and `stateful`;
//! - `RUSTFLAGS="--cfg loom --cfg crossbeam_loom"`: `loom_epoch`
//!   (crossbeam-epoch under loom). Run only that module in that build
//!   (`-- loom_epoch::`): there crossbeam-epoch runs only under loom.
//!
//! Documented commands over 3 s are `#[ignore]`d (`docs`): run them with
//! `-- --ignored`.

/// As in `flushcheck`: the searches build and drop a scenario per
/// schedule, which the system allocator makes a quarter slower.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

mod architecture;
mod bench;
mod bounds;
mod c12;
mod c18_reply;
mod checking;
mod cli;
mod cutoff;
mod dfs_reduction;
mod docs;
mod eventual;
mod explain;
mod extending;
mod figures;
mod findings;
mod fuzz;
mod guest;
mod oracle;
mod real_kernels;
// The import graph of model/, for the architecture checks (its own
// engineer's file: lints allowed here rather than edited there).
#[allow(dead_code, clippy::unnecessary_to_owned)]
mod imports;
mod later_versions;
mod lifetime;
mod litmus;
mod litmus_corpus;
mod litmus_marking;
mod lkmm_shapes;
mod loom_gap;
mod loom_suite;
mod mail_form;
mod matrix;
mod mutants;
mod outside;
mod perf;
mod plan;
mod properties;
mod quoted;
mod read_window;
mod releases;
mod rstat_tree;
mod schemas;
mod shard;
mod stateful;
mod suite_shapes;
mod symmetry;
mod tree_trigger;
mod unseen;
mod unused_reads;
mod v6_4;

#[cfg(all(loom, crossbeam_loom))]
mod loom_epoch;
