//! Observers: everything that is not kernel state. Imports nothing of the
//! crate but the vocabulary and the configuration.
//!
//! The protocol reports observations (crate::vocab::obs); a monitor per
//! execution turns them into ghost state ([`ghost`]), the no-skip twin's
//! gate ([`twin`]), coverage and measures ([`coverage`]), the trace
//! ([`record`]), and calls the properties' checks on them: the flush
//! protocol's [`monitor::Monitor`] and the lifetime wing's
//! [`lifetime::LifeMonitor`]. A property is one definition
//! ([`property::Def`]) in [`properties`]. Nothing here reads a protocol's
//! fields.

pub mod coverage;
#[doc(hidden)]
pub mod eventual;
pub mod ghost;
pub mod lifetime;
#[doc(hidden)]
pub mod listing;
#[doc(hidden)]
pub mod monitor;
pub mod noise;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod premise;
pub mod properties;
pub mod property;
#[doc(hidden)]
pub mod record;
#[doc(hidden)]
pub mod twin;
pub mod window;

pub use coverage::{Coverage, Event, Max, Measures, Split};
pub use lifetime::LifeMonitor;
pub use monitor::Monitor;
pub use plan::{fmt_outcome, MonitorPlan, ReaderOutcome, Shared, TwinPlan};
pub use property::Property;
pub use record::Step;
pub use twin::{Gate, GlobalGate, PerMemcgGate, Placement, TwinGate};
