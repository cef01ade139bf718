//! The backends by name: what a cell, a mutant's designated killer, a
//! finding or a property's decider names. Their search parameters are
//! explore's (`Backend`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A backend by name, without its search parameters: what a cell, a
/// mutant's designated killer or a finding names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendName {
    /// loom.
    Loom,
    /// shuttle's random scheduler.
    ShuttleRandom,
    /// shuttle's PCT scheduler.
    ShuttlePct,
    /// flushcheck's depth-first scheduler on shuttle.
    ShuttleDfs,
    /// std threads.
    Std,
}

impl BackendName {
    /// Every backend, in report order.
    pub const ALL: [BackendName; 5] = [
        BackendName::Loom,
        BackendName::ShuttleRandom,
        BackendName::ShuttlePct,
        BackendName::ShuttleDfs,
        BackendName::Std,
    ];

    /// The name used in tables, JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BackendName::Loom => "loom",
            BackendName::ShuttleRandom => "shuttle-random",
            BackendName::ShuttlePct => "shuttle-pct",
            BackendName::ShuttleDfs => "shuttle-dfs",
            BackendName::Std => "std",
        }
    }

    /// Look a backend up by name; the error is one line listing the names.
    pub fn parse(s: &str) -> Result<BackendName, String> {
        BackendName::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = BackendName::ALL.iter().map(|b| b.name()).collect();
                format!(
                    "unknown backend {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// Whether it runs every operation sequentially consistently.
    pub fn sequentially_consistent(self) -> bool {
        !matches!(self, BackendName::Loom | BackendName::Std)
    }
}

impl fmt::Display for BackendName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}
