//! Reporting: replay tokens ([`token`]), counterexamples as CPU-column
//! traces ([`counterexample`]), and LKMM litmus tests ([`litmus`]: the
//! export of a trace, litmus tests as data runnable under the backends, the
//! corpus of docs/litmus/ and herd7), the findings' mails ([`mail`], with
//! diffs made from a kernel tree by [`kdiff`]) and listing ([`findings`]),
//! the candidates' price ([`price`]). Finding a counterexample is a
//! driver's job (crate::drive::explain); model/cli parses and dispatches.

pub mod counterexample;
pub mod findings;
pub mod kdiff;
pub mod litmus;
pub mod mail;
pub mod price;
pub mod program;
pub mod token;

pub use counterexample::{initial_state, Counterexample};
pub use token::{Replay, ReplayHow};
