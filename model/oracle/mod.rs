//! Real kernels as the oracle: the model's prediction for each real-kernel
//! scenario, and its comparison with what a kernel showed
//! (docs/real-kernels.md).
//!
//! A scenario ([`spec`], read from `model/oracle/scenarios.json`, the file the
//! probe runs too) is a task pinned to a CPU charging memcgs in known units
//! and reading memory.stat. [`charge`] turns each unit into the
//! `memcg_rstat_updated()` calls the kernel makes for it (derived from
//! the kernel source, per version: the LRU add batch, the objcg stock,
//! `memcg_state_val_in_pages()`); [`predict`] drives the model's protocol
//! of the matching lineage (v6.0 for Linux 6.1, v6.8 for 6.12) through the
//! same calls, reads and periodic flushes, and [`judge()`] compares the
//! prediction with the probe's records.

pub mod charge;
pub mod judge;
pub mod loss;
pub mod plan;
pub mod predict;
pub mod record;
pub mod replay;
pub mod spec;
pub mod trace;

pub use judge::{judge, Judged, Observation, Row, Verdict};
