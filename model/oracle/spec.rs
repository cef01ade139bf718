//! The real-kernel scenarios as data, shared with the probe: this module
//! is `probe/src/scenario.rs`, included, and its scenarios are
//! `probe/scenarios.json` (docs/real-kernels.md, section 2).

include!("../../probe/src/scenario.rs");
