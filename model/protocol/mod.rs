//! The protocol: one module per kernel version, a small trait that the
//! scenario drives, and the catalogue of versions, mutants and benign
//! rewrites.
//!
//! A version is Rust code written with the kernel-idiom layer
//! ([`crate::kernel`]): [`v5_19`] is mm/memcontrol.c before 873f64b791a2,
//! [`v6_0`] is v5.19 with that patch, [`v6_4`] replaces the flush lock
//! with the `stats_flush_ongoing` flag, [`v6_8`] moves to per-memcg
//! thresholds. The scenario sees a version only
//! through [`Protocol`]: the update path, the reader's gate, a flush, the
//! periodic work and what a reader reads. Everything else a property needs
//! comes from observations ([`crate::observe`]).
//!
//! A variant (a mutant, a benign rewrite, a reviewer's patch) is a small
//! code difference from a version: a type implementing the version's
//! `Memcontrol` trait that overrides the one kernel function it changes
//! ([`mutants`], [`benign`], and `examples/` for a variant written outside
//! the crate). [`Variant`] names it, says what is expected of it, and
//! registers it with the matrix.

pub mod benign;
pub mod catalogue;
pub mod lifetime;
pub mod memcg;
pub mod mutants;
pub mod mutants_later;
pub mod mutants_v6_4;
pub mod proposal_2026;
pub mod rstat_llist;
pub mod rstat_tree;
pub mod v5_19;
pub mod v6_0;
pub mod v6_17;
pub mod v6_4;
pub mod v6_8;

use std::sync::Arc;

use crate::config::Config;
use crate::explore::{Bare, Loom, Platform, Shuttle, Std};
use crate::kernel::{read_once, Atomic, Var};

pub use catalogue::{Family, Kind, Variant};
use lifetime::{Life, LifeModel, LifeProtocol};

/// What the scenario drives: one kernel version (or a variant of one) for
/// one execution on platform `P`.
///
/// Each method runs on the calling model thread, which stands for a CPU
/// (the update path) or for a reader, the periodic worker or main.
pub trait Protocol<P: Platform>: Send + Sync + 'static {
    /// Update path: `__mod_memcg_state(memcg, idx, val)` on the calling
    /// CPU (interrupts off in the kernel).
    fn mod_memcg_state(&self, memcg: u8, val: i64);
    /// Reader path: `mem_cgroup_flush_stats()` for `memcg`: the gate, and
    /// the flush if the gate says so. Returns the gate's decision.
    fn mem_cgroup_flush_stats(&self, memcg: u8) -> bool;
    /// Ratelimited reader path: `mem_cgroup_flush_stats_ratelimited()`
    /// (`mem_cgroup_flush_stats_delayed()` before v6.4), which runs
    /// [`Protocol::mem_cgroup_flush_stats`] only once `jiffies_64` is past
    /// the next flush time the flushers stamp. Returns the threshold gate's
    /// decision, or `false` if the time gate said not yet.
    fn mem_cgroup_flush_stats_ratelimited(&self, memcg: u8) -> bool;
    /// Flush path: an unconditional flush of the whole tree. Returns
    /// whether this call flushed (a flusher that defers to a concurrent one
    /// returns `false`).
    fn flush(&self) -> bool;
    /// Periodic work: one run of `flush_memcg_stats_dwork()` (the scenario's
    /// worker re-queues it).
    fn periodic(&self);
    /// What a reader reads: `memcg_page_state(memcg, idx)`.
    fn memcg_page_state(&self, memcg: u8) -> i64;
}

/// What a protocol is built from for one execution: the configuration and
/// the kernel objects it shares with the scenario.
pub struct Env<P: Platform> {
    /// The scenario's configuration.
    pub cfg: Config,
    /// `jiffies_64`, advanced by the scenario's clock when time is
    /// modelled (`cfg.ticks > 0`).
    pub jiffies: Arc<Atomic<P>>,
}

impl<P: Platform> Env<P> {
    /// A fresh environment for `cfg`.
    pub fn new(cfg: &Config) -> Self {
        Env {
            cfg: cfg.clone(),
            jiffies: Arc::new(Atomic::new(Var::Jiffies, 0)),
        }
    }

    /// `jiffies_64`.
    ///
    /// NOTE(kernel): without abstract time (`cfg.ticks == 0`) time stands
    /// still at 0 and is not read, which saves a model operation.
    pub fn jiffies_64(&self) -> i64 {
        if self.cfg.ticks > 0 {
            read_once(&self.jiffies)
        } else {
            0
        }
    }

    /// `num_online_cpus()`.
    ///
    /// NOTE(kernel): CPU hotplug is not modelled; the value is constant.
    /// Reader and flusher threads run on CPUs that this count leaves out; in
    /// the kernel they would share CPUs with updaters but could not run
    /// inside an updater's interrupts-off `__mod_memcg_state()`. The model
    /// allows those extra interleavings (an over-approximation).
    pub fn num_online_cpus(&self) -> i64 {
        self.cfg.cpus as i64
    }

    /// `MEMCG_CHARGE_BATCH`.
    ///
    /// NOTE(kernel): 32U in v5.19 and v6.0, 64U from v6.1; a small
    /// configurable value here ("This shouldn't impact logic, but allows
    /// loom to test more edge cases", as tokio says of its shrunk
    /// constants).
    pub fn memcg_charge_batch(&self) -> i64 {
        self.cfg.batch
    }
}

/// A kernel version or variant that can be built on every platform.
///
/// Implement this (or use a version's `model()` helper, such as
/// [`v5_19::model`]) to make a protocol runnable by the matrix.
pub trait Model: Send + Sync + 'static {
    /// The protocol for one execution on platform `P`.
    fn build<P: Platform>(&self, env: Env<P>) -> Arc<dyn Protocol<P>>;
}

/// [`Model`] in object-safe form: one constructor per platform.
pub trait DynModel: Send + Sync + 'static {
    /// Build for loom.
    fn loom(&self, env: Env<Loom>) -> Arc<dyn Protocol<Loom>>;
    /// Build for shuttle.
    fn shuttle(&self, env: Env<Shuttle>) -> Arc<dyn Protocol<Shuttle>>;
    /// Build for std threads.
    fn std(&self, env: Env<Std>) -> Arc<dyn Protocol<Std>>;
    /// Build for the benchmark.
    fn bare(&self, env: Env<Bare>) -> Arc<dyn Protocol<Bare>>;
}

impl<M: Model> DynModel for M {
    fn loom(&self, env: Env<Loom>) -> Arc<dyn Protocol<Loom>> {
        self.build(env)
    }
    fn shuttle(&self, env: Env<Shuttle>) -> Arc<dyn Protocol<Shuttle>> {
        self.build(env)
    }
    fn std(&self, env: Env<Std>) -> Arc<dyn Protocol<Std>> {
        self.build(env)
    }
    fn bare(&self, env: Env<Bare>) -> Arc<dyn Protocol<Bare>> {
        self.build(env)
    }
}

/// Building a [`DynModel`] (or a [`lifetime::LifeModel`]) on a platform
/// chosen by type.
pub trait Build: Platform {
    /// The protocol `model` stands for, for one execution.
    fn build(model: &dyn DynModel, env: Env<Self>) -> Arc<dyn Protocol<Self>>;
    /// The lifetime protocol `model` stands for, for one execution.
    fn build_life(model: &dyn LifeModel, life: Life<Self>) -> Arc<dyn LifeProtocol<Self>>;
}

impl Build for Loom {
    fn build(model: &dyn DynModel, env: Env<Self>) -> Arc<dyn Protocol<Self>> {
        model.loom(env)
    }
    fn build_life(model: &dyn LifeModel, life: Life<Self>) -> Arc<dyn LifeProtocol<Self>> {
        model.loom(life)
    }
}

impl Build for Shuttle {
    fn build(model: &dyn DynModel, env: Env<Self>) -> Arc<dyn Protocol<Self>> {
        model.shuttle(env)
    }
    fn build_life(model: &dyn LifeModel, life: Life<Self>) -> Arc<dyn LifeProtocol<Self>> {
        model.shuttle(life)
    }
}

impl Build for Std {
    fn build(model: &dyn DynModel, env: Env<Self>) -> Arc<dyn Protocol<Self>> {
        model.std(env)
    }
    fn build_life(model: &dyn LifeModel, life: Life<Self>) -> Arc<dyn LifeProtocol<Self>> {
        model.std(life)
    }
}

impl Build for Bare {
    fn build(model: &dyn DynModel, env: Env<Self>) -> Arc<dyn Protocol<Self>> {
        model.bare(env)
    }
    /// # Panics
    /// Always: the lifetime model is checked, never benchmarked.
    fn build_life(_model: &dyn LifeModel, _life: Life<Self>) -> Arc<dyn LifeProtocol<Self>> {
        panic!("model: the lifetime model does not run on the benchmark platform")
    }
}
