//! The lifetime wing's plumbing: what its scenario drives
//! ([`LifeProtocol`]), what that is built from ([`LifeInput`]), and a
//! [`Lifetime`] implementation as a model of the wing ([`model`]).

use std::sync::Arc;

use crate::kernel::rcu::{RcuFlavor, RcuThread};
use crate::protocol::lifetime::forms::{Life, Lifetime};
use crate::protocol::wing::{AnyModel, Env, Model, Wing};
use crate::vocab::Platform;

/// The lifetime wing: built from a [`LifeInput`], driven through
/// [`LifeProtocol`].
pub struct LifeWing;

/// What a lifetime protocol is built from for one execution.
pub struct LifeInput<P: Platform> {
    /// The statistics state's environment ([`Life::config`]).
    pub env: Env<P>,
    /// Which RCU implementation runs.
    pub flavor: RcuFlavor,
    /// References on the child ([`crate::protocol::lifetime::CHILD`]) held by charged folios.
    pub folio_refs: i64,
}

impl Wing for LifeWing {
    type Input<P: Platform> = LifeInput<P>;
    type Built<P: Platform> = Arc<dyn LifeProtocol<P>>;
}

/// A lifetime model, as a variant holds it.
pub type LifeModel = dyn AnyModel<LifeWing>;

/// What a lifetime scenario drives, on platform `P`.
pub trait LifeProtocol<P: Platform>: Send + Sync {
    /// The execution's state.
    fn life(&self) -> &Life<P>;
    /// One charge through the objcg.
    fn charge(&self, th: &RcuThread, val: i64);
    /// One charge of `memcg` through a folio's reference.
    fn charge_folio(&self, th: &RcuThread, memcg: u8, val: i64);
    /// The folio's reference on `memcg` put.
    fn put_folio(&self, th: &RcuThread, memcg: u8);
    /// A flush of the whole tree under RCU.
    fn flush_all(&self, th: &RcuThread);
    /// `cgroup_rmdir()` of `memcg`.
    fn rmdir(&self, th: &RcuThread, memcg: u8);
    /// A new memory css linked into `memcg`'s cgroup once the old one is
    /// offline ([`Lifetime::enable`]).
    fn enable(&self, memcg: u8);
    /// The new memory css of `memcg`'s cgroup charged
    /// ([`Lifetime::new_css_charged`]).
    fn new_css_charged(&self, memcg: u8);
}

/// One execution of a [`Lifetime`] implementation.
struct Running<L, P: Platform> {
    code: L,
    life: Life<P>,
}

impl<L: Lifetime, P: Platform> LifeProtocol<P> for Running<L, P> {
    fn life(&self) -> &Life<P> {
        &self.life
    }
    fn charge(&self, th: &RcuThread, val: i64) {
        self.code.mod_objcg_state(&self.life, th, val);
    }
    fn flush_all(&self, th: &RcuThread) {
        self.code.flush_all(&self.life, th);
    }
    fn charge_folio(&self, th: &RcuThread, memcg: u8, val: i64) {
        self.code.mod_folio_state(&self.life, th, memcg, val);
    }
    fn put_folio(&self, th: &RcuThread, memcg: u8) {
        self.code.folio_put(&self.life, th, memcg);
    }
    fn rmdir(&self, th: &RcuThread, memcg: u8) {
        self.code.rmdir(&self.life, th, memcg);
    }
    fn enable(&self, memcg: u8) {
        self.code.enable(&self.life, memcg);
    }
    fn new_css_charged(&self, memcg: u8) {
        self.code.new_css_charged(&self.life, memcg);
    }
}

struct Form<L>(L);

impl<L: Lifetime> Model<LifeWing> for Form<L> {
    fn build<P: Platform>(&self, input: LifeInput<P>) -> Arc<dyn LifeProtocol<P>> {
        let life = Life::new(
            input.env,
            input.flavor,
            self.0.rcu_defect(),
            input.folio_refs,
        );
        Arc::new(Running {
            code: self.0.clone(),
            life,
        })
    }
}

/// A [`Lifetime`] implementation as a lifetime model, ready for
/// [`crate::protocol::Variant::lifetime`].
pub fn model<L: Lifetime>(code: L) -> Arc<LifeModel> {
    Arc::new(Form(code))
}
