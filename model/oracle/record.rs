//! The records of a real-kernel check: what one boot printed
//! ([`Observation`]) and one judged row per scenario ([`Row`]).

use serde::{Deserialize, Serialize};

use super::replay::Judged;
use super::spec::{Done, Hello, ReadRecord, Start};

/// What one boot of a kernel printed: the probe's records, parsed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Observation {
    /// The guest's facts (release, CPUs, kprobes).
    pub hello: Hello,
    /// Where each scenario's charges began.
    pub starts: Vec<Start>,
    /// Every read, in order.
    pub reads: Vec<ReadRecord>,
    /// How each scenario ended.
    pub done: Vec<Done>,
    /// The kernel's trace of the whole boot (`FCE` lines), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<super::trace::Event>,
    /// The C reproducer's run, if the harness asked for one.
    #[serde(default)]
    pub repro: super::trace::Repro,
}

/// A row's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The observation is one the model predicts.
    Agree,
    /// The observation differs from every prediction, unexplained.
    Disagree,
    /// The scenario did not run to the end (its error says why).
    Failed,
}

/// One scenario on one boot: what the model predicts, what the kernel
/// showed, and the verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// `6.1.192`, `6.12.107`, ...
    pub kernel: String,
    /// vCPUs (`num_online_cpus()`).
    pub cpus: usize,
    /// Scenario name.
    pub scenario: String,
    /// The observable compared, one phrase.
    pub observable: String,
    /// The model's prediction of it.
    pub predicted: String,
    /// What the kernel showed.
    pub observed: String,
    /// The verdict.
    pub verdict: Verdict,
    /// For `Disagree` and `Failed`: why, one line; for an agreement, what
    /// was compared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// How it was judged: `exact` (the kernel's trace replayed),
    /// `calibrated` (the same, with one unseen input set once per boot),
    /// or `fitted` (no trace: the old start-state search, a diagnosis).
    #[serde(default = "fitted")]
    pub judged: Judged,
    /// Whether the row tells the release's protocol from the others: the
    /// same trace replayed with another lineage's protocol (v6.0, v6.8,
    /// v6.17) disagrees. A row that every lineage agrees with is an
    /// agreement that does not discriminate.
    #[serde(default)]
    pub discriminating: bool,
}

fn fitted() -> Judged {
    Judged::Fitted
}
