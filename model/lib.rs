//! A model of the Linux kernel's memcg statistics flush protocol
//! (mm/memcontrol.c), checked under loom, shuttle and real threads.
//!
//! Commit 873f64b791a2 (v6.0) made `memcg_rstat_updated()` skip its
//! `atomic_add` to `stats_flush_threshold` once the threshold is above
//! `num_online_cpus()`. This crate models each kernel version as a module
//! of kernel-like code ([`protocol`]), runs it under three backends chosen
//! at run time ([`explore`]), checks named properties as monitors over what
//! the protocol observably does ([`observe`]), on a suite of
//! configurations ([`check`]), and proves each property can fail with
//! deliberately broken variants.
//!
//! Layout:
//! - [`explore`]: the only module naming loom, shuttle and std; schedulers,
//!   the exhaustive search, replay.
//! - [`kernel`]: kernel idioms (`atomic_read`, `spin_trylock`, per-CPU
//!   data, tracepoints), each access reported as an observation.
//! - [`protocol`]: the [`protocol::Protocol`] trait, one module per
//!   version, mutants, benign rewrites, the catalogue.
//! - [`observe`]: observations, ghost state, twins, properties, coverage,
//!   measures, traces.
//! - [`check`]: the scenario, the suite, runs and the matrix.
//! - [`measure`]: staleness bounds, the derived worst case, benchmarks.
//! - [`report`]: counterexamples, replay tokens, litmus export.
//! - [`cli`]: `flushcheck`, one subcommand per file; [`cli::main_with`]
//!   runs it with extra variants.
//!
//! See `docs/model.md` for the map from model steps to kernel code and
//! `docs/extending.md` for writing a variant outside the crate.

#![deny(missing_docs)]

pub mod check;
pub mod cli;
pub mod config;
pub mod drive;
pub mod explore;
pub mod kernel;
pub mod measure;
pub mod observe;
pub mod protocol;
pub mod report;
pub mod vocab;

pub use check::run::Verdict;
pub use config::Config;
pub use drive::{Cell, Plan};
pub use explore::{Backend, Platform};
pub use observe::Property;
pub use protocol::{Kind, Variant};
