//! Drivers: what combines runs (crate::check::run) into answers. The
//! matrix runs every variant on every suite entry under every backend and
//! sums the runs up into cells ([`matrix`], [`cells`], with the loom form
//! of `no_lost_flush` in [`differential`]); [`fuzz`] draws configurations
//! and shrinks what fails; [`explain`] searches for the shortest
//! counterexample of one property; [`findings`] replays a finding's witness
//! and checks its fix candidates, [`forms`] its further forms.

pub mod cells;
pub mod differential;
pub mod explain;
pub mod findings;
pub mod forms;
pub mod fuzz;
pub mod matrix;
pub mod plan;
pub mod testing;

pub use cells::{
    cut_short_advice, mark_not_checked, matrix_ok, merge_shards, Cell, ConfigVerdict, Expect,
    NotChecked,
};
pub use matrix::{run_matrix, Executor, Matrix};
pub use plan::{NotRun, Plan};
