//! Measuring the protocol: staleness maxima over searches beside the worst
//! case derived from its arithmetic ([`bounds`], with
//! [`crate::check::derived`]), the hot path
//! on real threads ([`mod@bench`]), the checkers' own speed ([`perf`]) and
//! the stateful exhaustive search beside the stateless one ([`exhaustive`]),
//! the figures of the findings ([`figures`]), and the 2026 thread's four
//! triggers: their worst cases ([`scaled`]) and how eagerly a reader
//! flushes ([`eagerness`]).

pub mod bench;
pub mod bounds;
pub mod eagerness;
pub mod exhaustive;
pub mod figures;
pub mod perf;
pub mod price;
pub mod scaled;
