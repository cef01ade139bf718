//! Observers: everything that is not kernel state.
//!
//! The protocol reports observations ([`obs`]); a [`monitor::Monitor`] per
//! execution turns them into ghost state ([`ghost`]), the no-skip twin's
//! gate ([`twin`]), coverage and measures ([`coverage`]), the trace
//! ([`record`]), and checks the properties ([`property`]) on them. Nothing
//! here reads a protocol's fields.

pub mod coverage;
pub mod eventual;
pub mod ghost;
pub mod monitor;
pub mod obs;
pub mod property;
pub mod record;
pub mod twin;

pub use coverage::{Coverage, Event, Max, Measures, Split};
pub use monitor::{fmt_outcome, Monitor, MonitorPlan, ReaderOutcome, Shared};
pub use obs::{Access, Actor, Idiom, LockName, Obs, Op, Sink, Tp, Var};
pub use property::Property;
pub use record::Step;
pub use twin::{GateFactory, GlobalGate, Placement, TwinGate};
