//! Reporting: replay tokens ([`token`]), counterexamples as CPU-column
//! traces ([`counterexample`]), and LKMM litmus tests ([`litmus`]: the
//! export of a trace, litmus tests as data runnable under the backends, the
//! corpus of docs/litmus/ and herd7). Finding a counterexample is a
//! driver's job (crate::drive::explain); the texts built on the drivers'
//! results (mails, the findings listing, prices) are `crate::publish`'s,
//! a floor above them.

pub mod counterexample;
pub mod litmus;
pub mod program;
pub mod token;

pub use counterexample::{initial_state, Counterexample};
pub use token::{Replay, ReplayHow};
