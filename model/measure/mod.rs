//! Measuring the protocol: staleness maxima over searches beside the worst
//! case derived from its arithmetic ([`bounds`], with
//! [`crate::check::derived`]), the hot path
//! on real threads ([`mod@bench`]), the checkers' own speed ([`perf`]) and
//! the stateful exhaustive search beside the stateless one ([`exhaustive`]),
//! and the figures of the findings ([`figures`]).

pub mod bench;
pub mod bounds;
pub mod exhaustive;
pub mod figures;
pub mod perf;
pub mod price;
