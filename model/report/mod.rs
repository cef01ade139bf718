//! Reporting counterexamples: finding the shortest one, replay tokens, and
//! LKMM litmus export.

pub mod litmus;
