//! Checking: the scenario every backend runs ([`scenario`]), the suite of
//! configurations ([`suite`]), one run of a variant on one configuration
//! under one backend with every property judged ([`run`]), and the matrix
//! that sums runs up into (variant, property, backend) cells ([`matrix`]).

pub mod differential;
pub mod fuzz;
pub mod lifetime;
pub mod matrix;
pub mod run;
pub mod scenario;
pub mod suite;

pub use matrix::{
    matrix_ok, merge_shards, run_matrix, Cell, ConfigVerdict, Executor, Expect, Matrix, Plan,
};
pub use run::{judged, monitor_plan, on_fresh_thread, RunResult, RunSpec, Verdict};
pub use scenario::FlushScenario;
pub use suite::{Entry, Sizes, Suite};
