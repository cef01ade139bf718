//! The vocabulary every layer speaks, at the ground of the house: it
//! imports nothing of the crate but [`crate::config`].
//!
//! - [`obs`]: observations, the kernel variables they name, the actors that
//!   make them, and the [`obs::Sink`] that receives them (LKMM's
//!   `linux-kernel.bell`: the events, not the axioms);
//! - [`platform`]: the interface the kernel idioms are written against and
//!   the backends implement;
//! - [`footprint`]: the hook through which idioms and observers tell the
//!   exhaustive search what a step touched; the search installs it.

pub mod backend;
pub mod family;
pub mod footprint;
pub mod life;
pub mod obs;
pub mod platform;

pub use backend::BackendName;
pub use family::Family;
pub use footprint::{GhostKind, GhostLoc};
pub use obs::{Access, Actor, Idiom, LifeEvent, LockName, Obs, Op, Sink, Tp, Var};
pub use platform::{BackendKind, ModelAtomic, ModelCell, ModelJoinHandle, Platform, ThreadCtx};
