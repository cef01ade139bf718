//! Protocol families: what a variant's threshold counts, and so which
//! scenarios and properties apply to it. A word of the vocabulary because
//! observers, suites and variants all speak it.

use serde::{Deserialize, Serialize};

/// The protocol family a variant belongs to: what its threshold counts, and
/// so which scenarios of the suite apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// One global threshold in batches (v5.16-v6.7).
    Global,
    /// One threshold per memcg in pages, subtree flushes (v6.8 on).
    PerMemcg,
    /// A memcg's death under RCU (the lifetime wing).
    Lifetime,
}

impl Family {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Global => "global",
            Family::PerMemcg => "per-memcg",
            Family::Lifetime => "lifetime",
        }
    }
}
