//! Reporting: replay tokens ([`token`]), counterexamples as CPU-column
//! traces ([`counterexample`]), and their LKMM litmus export ([`litmus`]).
//! Finding a counterexample is a driver's job (crate::drive::explain).

pub mod counterexample;
pub mod litmus;
pub mod token;

pub use counterexample::{initial_state, Counterexample};
pub use token::{Replay, ReplayHow};
