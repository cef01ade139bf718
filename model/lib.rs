//! A model of the Linux kernel's memcg statistics flush protocol
//! (mm/memcontrol.c), checked under loom, shuttle and real threads.
//!
//! Commit 873f64b791a2 (v6.0) made `memcg_rstat_updated()` skip its
//! `atomic_add` to `stats_flush_threshold` once the threshold is above
//! `num_online_cpus()`. This crate models each kernel version as a module
//! of kernel-like code ([`protocol`]), runs it under three backends chosen
//! at run time ([`explore`]), checks named properties as monitors over what
//! the protocol observably does ([`observe`]), on a suite of
//! configurations ([`check`]) combined by drivers ([`drive`]), and proves
//! each property can fail with deliberately broken variants.
//!
//! Layout, in floors: a module imports only from the floors below it
//! (docs/model.md, section 2, has the import graph and a paragraph per
//! file).
//! - floor 0: [`config`] (the configuration and its builder) and [`vocab`]
//!   (observations, the [`Platform`] interface, the footprint hook,
//!   families, backend names).
//! - floor 1: [`explore`], the only module naming loom, shuttle and std
//!   (the backends, our schedulers, the exhaustive search, replay);
//!   [`kernel`], kernel idioms (`atomic_read`, `spin_trylock`, per-CPU
//!   data, RCU, tracepoints), each access reported as an observation;
//!   [`observe`], the monitors, ghost state, twins, coverage, traces, and
//!   the properties, one named definition each.
//! - floor 2: [`protocol`], the kernel versions per lineage (global
//!   threshold, per memcg) and the lifetime wing, with their mutants,
//!   twins and benign rewrites, the plumbing to the scenario, the variants
//!   and the catalogue; [`report`], replay tokens, counterexamples, litmus
//!   export.
//! - floor 3: [`check`], one run: the scenarios, the suite, a run, the
//!   derived worst case.
//! - floor 3 also: [`oracle`], the model's predictions for the real-kernel
//!   scenarios (model/oracle/scenarios.json) and their comparison with what a
//!   kernel showed.
//! - floor 4: [`drive`], what combines runs (the plan, the matrix, cells,
//!   the loom differential, fuzzing, explain's search); [`measure`],
//!   staleness bounds, benchmarks, checker speed, figures; [`guest`], the
//!   VM harness that boots Debian's kernels under qemu with the probe as
//!   `/init`.
//! - floor 5: [`publish`], the texts made from those results: each
//!   finding's mail (with a diff made from the user's kernel tree), the
//!   findings listing, the candidates' price.
//! - floor 6: [`cli`], `flushcheck`, one subcommand per file (argument
//!   parsing and dispatch); [`main_with`] runs it with extra variants.
//!
//! See `docs/model.md` for the map from model steps to kernel code and
//! `docs/extending.md` for writing a variant outside the crate.

//! # What is stable
//!
//! What a variant, a property or a test outside the crate needs is
//! documented here: the lineage traits and kernel versions
//! ([`protocol`]), the kernel idioms ([`kernel`]), properties and coverage
//! events ([`observe`]; of the ghost state a property's check reads, the
//! read side, [`observe::ghost`]), configurations ([`config`], [`check`]), backends
//! ([`explore::Backend`]), the `#[test]` entry point ([`testing`]) and [`main_with`] (`cli::main_with`), which runs
//! `flushcheck` with variants and properties of one's own. Modules and items hidden
//! from this documentation (`drive`, `measure`, `report`, `publish`, `oracle`,
//! `guest`, `cli`'s subcommands, the search engines under
//! `explore`, the findings data and the monitors' internals) are public
//! only for this crate's binary and its own test suite: they are unstable
//! and may change in any release.

#![deny(missing_docs)]

pub mod check;
#[doc(hidden)]
pub mod cli;
pub mod config;
#[doc(hidden)]
pub mod drive;
pub mod explore;
#[doc(hidden)]
pub mod guest;
pub mod kernel;
#[doc(hidden)]
pub mod measure;
pub mod observe;
#[doc(hidden)]
pub mod oracle;
pub mod protocol;
#[doc(hidden)]
pub mod publish;
#[doc(hidden)]
pub mod report;
pub mod vocab;

pub use check::run::Verdict;
pub use cli::{main_with, main_with_properties, registry};
pub use config::Config;
/// The `#[test]` entry point for variants outside the crate (`Check`,
/// `Verdicts`; docs/extending.md).
pub use drive::testing;
#[doc(hidden)]
pub use drive::{Cell, Plan};
pub use explore::{Backend, Platform};
pub use observe::Property;
pub use protocol::{Kind, Variant};
