//! Replay tokens: everything needed to re-run one failing execution,
//! owned by the scheduler side (a loom checkpoint or a shuttle schedule),
//! as one printable word.

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::explore::ShuttleSchedule;
use crate::kernel::rcu::RcuFlavor;
use crate::observe::plan::ReaderOutcome;
use crate::observe::property::Property;
use crate::vocab::BackendName;

/// Everything needed to re-run one failing execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Format version of the token.
    pub v: u32,
    /// Variant name.
    pub variant: String,
    /// The violated property.
    pub property: Property,
    /// Configuration.
    pub cfg: Config,
    /// The reader outcome a loom `no_lost_flush` violation is about, if any.
    pub target: Option<ReaderOutcome>,
    /// The RCU implementation of a lifetime form, if chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcu: Option<RcuFlavor>,
    /// How to steer the backend.
    pub how: ReplayHow,
}

/// Backend-specific replay data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayHow {
    /// A loom checkpoint (loom's serialized branch path) and its bound.
    Loom {
        /// Preemption bound of the search that found it.
        bound: Option<usize>,
        /// loom's checkpoint.
        checkpoint: serde_json::Value,
    },
    /// A shuttle schedule.
    Shuttle {
        /// The recorded schedule.
        schedule: ShuttleSchedule,
    },
}

const TOKEN_PREFIX: &str = "fc2.";

impl Replay {
    /// The token printed after a trace: `fc2.` and base64url(JSON).
    pub fn token(&self) -> String {
        let json = serde_json::to_vec(self).expect("replay data serialises");
        format!(
            "{TOKEN_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
        )
    }

    /// Decode a token; the error is one line.
    pub fn from_token(token: &str) -> Result<Replay, String> {
        let body = token
            .trim()
            .strip_prefix(TOKEN_PREFIX)
            .ok_or_else(|| format!("replay token must start with {TOKEN_PREFIX:?}"))?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| format!("replay token is not valid base64url: {e}"))?;
        serde_json::from_slice(&json).map_err(|e| format!("replay token is not readable: {e}"))
    }

    /// The backend family, for messages.
    pub fn backend(&self) -> &'static str {
        match self.how {
            ReplayHow::Loom { .. } => BackendName::Loom.name(),
            ReplayHow::Shuttle { .. } => "shuttle",
        }
    }
}
