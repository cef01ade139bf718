//! Reporting counterexamples: finding the shortest one, replay tokens
//! ([`explain`]), and LKMM litmus export ([`litmus`]).

pub mod explain;
pub mod litmus;
pub mod litmus_corpus;
pub mod litmus_herd;
pub mod litmus_prog;
pub mod litmus_shapes;
