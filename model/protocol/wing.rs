//! The plumbing every lineage and wing shares: what the scenario drives
//! ([`Protocol`]), what a protocol is built from ([`Env`]), how code of a
//! wing is built on the platform a backend picks at run time ([`Model`],
//! [`AnyModel`]), and the one adapter from a lineage's kernel functions to
//! [`Protocol`] ([`Lineage`], [`lineage_model`]).

use std::any::Any;
use std::sync::Arc;

use crate::config::Config;
use crate::explore::{Bare, Loom, Shuttle, Std};
use crate::kernel::{read_once, Atomic, Var};
use crate::vocab::{BackendKind, Platform};

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
    /// The scenario's configuration, shared by every execution.
    pub cfg: Arc<Config>,
    /// `jiffies_64`, advanced by the scenario's clock when time is
    /// modelled (`cfg.ticks > 0`).
    pub jiffies: Arc<Atomic<P>>,
}

impl<P: Platform> Env<P> {
    /// A fresh environment for `cfg`.
    pub fn new(cfg: &Config) -> Self {
        Env::new_shared(Arc::new(cfg.clone()))
    }

    /// A fresh environment for a configuration shared with the scenario.
    pub fn new_shared(cfg: Arc<Config>) -> Self {
        Env {
            cfg,
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

/// A wing of the model: what one of its protocols is built from for one
/// execution, and what the scenario then drives. The flush protocol
/// ([`FlushWing`]) and the lifetime model ([`crate::protocol::lifetime::LifeWing`]) are the
/// two; both reach the backends through the same plumbing ([`Model`],
/// [`AnyModel`]).
pub trait Wing: 'static {
    /// What a protocol is built from on platform `P`.
    type Input<P: Platform>: 'static;
    /// What the scenario drives on platform `P`.
    type Built<P: Platform>: 'static;
}

/// The flush protocol's wing: built from an [`Env`], driven through
/// [`Protocol`].
pub struct FlushWing;

impl Wing for FlushWing {
    type Input<P: Platform> = Env<P>;
    type Built<P: Platform> = Arc<dyn Protocol<P>>;
}

/// Code of wing `W` that can be built on every platform.
pub trait Model<W: Wing>: Send + Sync + 'static {
    /// The protocol for one execution on platform `P`.
    fn build<P: Platform>(&self, input: W::Input<P>) -> W::Built<P>;
}

/// [`Model`] in object-safe form: the platform travels as its
/// [`BackendKind`] and the values as [`Any`].
pub trait AnyModel<W: Wing>: Send + Sync + 'static {
    /// Build for the platform of `kind` from `input` (a `W::Input<P>`),
    /// returning a `W::Built<P>`.
    fn build_any(&self, kind: BackendKind, input: Box<dyn Any>) -> Box<dyn Any>;
}

fn build_on<W: Wing, M: Model<W>, P: Platform>(m: &M, input: Box<dyn Any>) -> Box<dyn Any> {
    let input = *input
        .downcast::<W::Input<P>>()
        .unwrap_or_else(|_| panic!("model: input built for another platform"));
    Box::new(m.build::<P>(input))
}

impl<W: Wing, M: Model<W>> AnyModel<W> for M {
    fn build_any(&self, kind: BackendKind, input: Box<dyn Any>) -> Box<dyn Any> {
        match kind {
            BackendKind::Loom => build_on::<W, M, Loom>(self, input),
            BackendKind::Shuttle => build_on::<W, M, Shuttle>(self, input),
            BackendKind::Std => build_on::<W, M, Std>(self, input),
            BackendKind::Bare => build_on::<W, M, Bare>(self, input),
        }
    }
}

impl<W: Wing> dyn AnyModel<W> {
    /// Build for platform `P`.
    ///
    /// # Panics
    /// If `P` is not the platform of its [`Platform::BACKEND_KIND`] (one
    /// platform type per kind, as in explore/platform).
    pub fn build<P: Platform>(&self, input: W::Input<P>) -> W::Built<P> {
        *self
            .build_any(P::BACKEND_KIND, Box::new(input))
            .downcast::<W::Built<P>>()
            .unwrap_or_else(|_| panic!("model: a platform type other than its kind's"))
    }
}

/// A flush-protocol model, as a variant holds it.
pub type FlushModel = dyn AnyModel<FlushWing>;

/// A lineage's kernel functions as the scenario calls them: one
/// implementation per lineage, mapping [`Protocol`]'s entry points to that
/// lineage's `Memcontrol` functions. [`lineage_model`] then makes any
/// implementation runnable on every platform.
pub trait Lineage: Clone + Send + Sync + 'static {
    /// The lineage's kernel globals for one execution.
    type State<P: Platform>: Send + Sync + 'static;
    /// Every global at its initial value.
    fn state<P: Platform>(&self, env: Env<P>) -> Self::State<P>;
    /// See [`Protocol::mod_memcg_state`].
    fn mod_memcg_state<P: Platform>(&self, mm: &Self::State<P>, memcg: u8, val: i64);
    /// See [`Protocol::mem_cgroup_flush_stats`].
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &Self::State<P>, memcg: u8) -> bool;
    /// See [`Protocol::mem_cgroup_flush_stats_ratelimited`].
    fn mem_cgroup_flush_stats_ratelimited<P: Platform>(
        &self,
        mm: &Self::State<P>,
        memcg: u8,
    ) -> bool;
    /// See [`Protocol::flush`].
    fn flush<P: Platform>(&self, mm: &Self::State<P>) -> bool;
    /// See [`Protocol::periodic`].
    fn periodic<P: Platform>(&self, mm: &Self::State<P>);
    /// See [`Protocol::memcg_page_state`].
    fn memcg_page_state<P: Platform>(&self, mm: &Self::State<P>, memcg: u8) -> i64;
}

/// One execution of a lineage implementation.
struct Running<L: Lineage, P: Platform> {
    code: L,
    mm: L::State<P>,
}

impl<L: Lineage, P: Platform> Protocol<P> for Running<L, P> {
    fn mod_memcg_state(&self, memcg: u8, val: i64) {
        self.code.mod_memcg_state(&self.mm, memcg, val);
    }
    fn mem_cgroup_flush_stats(&self, memcg: u8) -> bool {
        self.code.mem_cgroup_flush_stats(&self.mm, memcg)
    }
    fn mem_cgroup_flush_stats_ratelimited(&self, memcg: u8) -> bool {
        self.code
            .mem_cgroup_flush_stats_ratelimited(&self.mm, memcg)
    }
    fn flush(&self) -> bool {
        self.code.flush(&self.mm)
    }
    fn periodic(&self) {
        self.code.periodic(&self.mm);
    }
    fn memcg_page_state(&self, memcg: u8) -> i64 {
        self.code.memcg_page_state(&self.mm, memcg)
    }
}

struct OnLineage<L>(L);

impl<L: Lineage> Model<FlushWing> for OnLineage<L> {
    fn build<P: Platform>(&self, env: Env<P>) -> Arc<dyn Protocol<P>> {
        Arc::new(Running {
            code: self.0.clone(),
            mm: self.0.state(env),
        })
    }
}

/// A lineage implementation as a model of the flush protocol, ready for
/// [`crate::protocol::Variant::new`] (each lineage's `model()` wraps its `Memcontrol`
/// implementations in its [`Lineage`] and calls this).
pub fn lineage_model<L: Lineage>(code: L) -> Arc<FlushModel> {
    Arc::new(OnLineage(code))
}
