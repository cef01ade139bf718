//! Measuring the protocol: the worst case derived from its arithmetic
//! ([`derived`]), staleness maxima over searches ([`bounds`]), the hot path
//! on real threads ([`mod@bench`]) and the checkers' own speed ([`perf`]).

pub mod bench;
pub mod bounds;
pub mod derived;
pub mod perf;
