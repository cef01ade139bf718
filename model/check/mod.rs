//! Checking one run: the scenarios every backend runs (the flush protocol's
//! [`scenario`], the lifetime wing's [`lifetime`]), the suite of
//! configurations ([`suite`]), one run of a variant on one configuration
//! under one backend with every applicable property judged ([`run`]), and
//! the derived worst case the baseline property compares with
//! ([`derived`], pure arithmetic). The drivers that combine runs (the
//! matrix, fuzzing, explain's search) are crate::drive, above.

#[doc(hidden)]
pub mod derived;
pub mod lifetime;
pub mod run;
#[doc(hidden)]
pub mod scenario;
pub mod suite;

pub use run::{judged, monitor_plan, on_fresh_thread, RunResult, RunSpec, Verdict};
pub use scenario::FlushScenario;
pub use suite::{Entry, Sizes, Suite};
