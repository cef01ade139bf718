//! The protocol: one folder per lineage of kernel versions, a small trait
//! that the scenario drives, one plumbing from a lineage's kernel functions
//! to that trait, and the variants.
//!
//! A version is Rust code written with the kernel-idiom layer
//! ([`crate::kernel`]). The global-threshold lineage ([`global`]: v5.19,
//! v6.0, v6.4) and the per-memcg lineage ([`per_memcg`]: v6.8, v6.17, the
//! rstat updated tree, the 2026 proposal) each keep their kernel functions
//! as the default methods of a `Memcontrol` trait, their versions, mutants
//! and twins, and their part of the catalogue. The lifetime wing
//! ([`lifetime`]) models a memcg's death with a protocol of its own. The
//! scenario sees a version only through [`Protocol`] (or
//! [`lifetime::LifeProtocol`]); everything a property needs comes from
//! observations ([`crate::vocab::obs`]).
//!
//! A variant (a mutant, a benign rewrite, a fix, a reviewer's patch) is a
//! small code difference from a version: a type implementing the lineage's
//! `Memcontrol` trait that overrides the kernel functions it changes.
//! [`Variant`] names it, says what is expected of it, and carries its facts
//! as data; [`catalogue`] lists every variant the default run checks.

#[doc(hidden)]
pub mod catalogue;
pub mod dialect;
#[doc(hidden)]
pub mod findings;
pub mod global;
pub mod lifetime;
pub mod memcg;
pub mod per_memcg;
pub mod variant;
pub mod wing;

pub use crate::vocab::Family;
pub use variant::{Code, Derivation, Designation, Kind, Variant};
pub use wing::{
    lineage_model, AnyModel, Env, FlushModel, FlushWing, Lineage, Model, Protocol, Wing,
};
