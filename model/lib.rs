//! A model of the Linux kernel's memcg statistics flush protocol
//! (mm/memcontrol.c, v5.19 and v6.0), checked under loom, shuttle and real
//! threads.
//!
//! Commit 873f64b791a2 (v6.0) made `memcg_rstat_updated()` skip its
//! `atomic_add` to `stats_flush_threshold` once the threshold is above
//! `num_online_cpus()`. This crate states what that patch claims as
//! [`property`] functions, runs one model source ([`memcontrol`]) under
//! three backends chosen at run time ([`platform`]), and proves each
//! property can fail with deliberately broken [`variant`]s.
//!
//! Layout:
//! - [`platform`]: the only module naming loom, shuttle and std threads.
//! - [`kernel`]: kernel primitives (`atomic_read`, `spin_trylock`, ...) and
//!   their memory-ordering mapping.
//! - [`memcontrol`]: the protocol, function by function.
//! - [`variant`]: kernel versions and mutants as data.
//! - [`property`] and [`ghost`]: properties, ghost state, coverage events.
//! - [`scenario`] and [`check`]: the racing threads, and the matrix runner.
//!
//! See `docs/model.md` for the map from model steps to kernel code.

#![deny(missing_docs)]

pub mod bench;
pub mod bounds;
pub mod check;
pub mod config;
pub mod derived;
pub mod explain;
pub mod ghost;
pub mod kernel;
pub mod litmus;
pub mod memcontrol;
pub mod perf;
pub mod platform;
pub mod property;
pub mod scenario;
pub mod trace;
pub mod variant;

pub use check::{check_cell, run_matrix, Cell, Plan, Verdict};
pub use config::Config;
pub use platform::Backend;
pub use property::Property;
pub use variant::Variant;
