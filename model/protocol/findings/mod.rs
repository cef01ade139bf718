//! Findings as data: what the model showed about the kernel, one value per
//! finding, each with an identifier (`c12-lost-flush`), its class, the
//! claim it refutes (quoted briefly and attributed), the releases it
//! affects and the commit that introduced the behaviour, its minimal
//! witness (variant, configuration, what shows it and on which backend),
//! what a user sees, the window's preconditions, what the model abstracts
//! away that could matter, and its fix candidates or, for a wrong bound,
//! the corrected comment.
//!
//! The data lives with the protocol because it names variants; the
//! searches that replay a witness and check a candidate are in
//! `drive/findings.rs`, the prices in `measure/price.rs`, the mail-ready
//! report in `cli/mail.rs`. Kernel facts are tagged as docs/claims.md
//! tags them: `[V]` read in a commit, mail or tree, `[I]` inferred.

mod behaviour;
mod bounds;
mod configs;
pub mod maintainers;
pub mod releases;

use crate::config::Config;
use crate::observe::property::Property;
use crate::vocab::BackendName;

/// What kind of thing a finding is, for a maintainer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Kernel code that misbehaves as released.
    KernelBug,
    /// A comment, commit message or review statement that is wrong, where
    /// the code does what it was meant to.
    CommentInaccuracy,
    /// Behaviour the kernel documents or accepts by design.
    KnownAccepted,
    /// Behaviour of released kernels that a later release removed.
    FixedUpstream,
    /// A corner only a weakly ordered CPU reaches, where nothing is lost:
    /// one read transiently stale.
    Theoretical,
}

impl Class {
    /// The class as a report names it.
    pub fn name(self) -> &'static str {
        match self {
            Class::KernelBug => "kernel bug",
            Class::CommentInaccuracy => "comment inaccuracy",
            Class::KnownAccepted => "known and accepted",
            Class::FixedUpstream => "fixed upstream",
            Class::Theoretical => "theoretical (weakly ordered CPUs only)",
        }
    }

    /// The subject prefix of its report: a bug report where code
    /// misbehaves (fixed upstream: for the stable trees), a request for
    /// comments where the code does what was meant.
    pub fn prefix(self) -> &'static str {
        match self {
            Class::KernelBug | Class::FixedUpstream => "[BUG]",
            Class::CommentInaccuracy | Class::KnownAccepted | Class::Theoretical => "[RFC]",
        }
    }
}

/// A claim, quoted briefly, with who made it and where.
#[derive(Clone, Copy, Debug)]
pub struct Claim {
    /// The words, quoted.
    pub quote: &'static str,
    /// Who wrote them, and where (a file and function, a commit, a mail).
    pub source: &'static str,
}

/// How a witness shows the finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// A property's violation, found by the search of `backend`.
    Property {
        /// The property.
        property: Property,
        /// The backend whose search shows it.
        backend: BackendName,
    },
    /// A reader outcome only weak memory gives: under loom, a reader whose
    /// gate fired reads fewer pages than the count that fired it stood for
    /// (no property judges what a reader that flushed reads).
    TriggeredRead,
    /// A staleness maximum of `flushcheck bounds --exhaustive`: a reader
    /// whose gate fired but whose flush was skipped reads every update
    /// stale.
    SkippedFlush,
}

impl Shown {
    /// The backend whose search shows it.
    pub fn backend(self) -> BackendName {
        match self {
            Shown::Property { backend, .. } => backend,
            Shown::TriggeredRead => BackendName::Loom,
            Shown::SkippedFlush => BackendName::ShuttleDfs,
        }
    }

    /// What shows it, in a few words.
    pub fn what(self) -> String {
        match self {
            Shown::Property { property, .. } => property.name().to_string(),
            Shown::TriggeredRead => "reader outcome: a triggered flush reads short".into(),
            Shown::SkippedFlush => "staleness after a skipped flush".into(),
        }
    }
}

/// A finding's minimal witness.
#[derive(Clone, Copy, Debug)]
pub struct Witness {
    /// The variant that shows it.
    pub variant: &'static str,
    /// The configuration (the smallest the model found).
    pub cfg: fn() -> Config,
    /// The `flushcheck` command that shows it directly (the same search
    /// `flushcheck findings --replay` runs).
    pub command: &'static str,
    /// What shows it.
    pub shown: Shown,
    /// loom's preemption bound for the weak-memory searches, on the
    /// witness and the larger configuration (`None`: unbounded).
    pub loom_bound: Option<usize>,
}

/// What a fix candidate is expected to do on the finding's witnesses (the
/// tests pin it, `flushcheck findings --check` re-runs it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Holds the finding's property (or outcome) exhaustively on the
    /// finding's witness and on a larger configuration, and every
    /// must-hold property on the default suite.
    Fixes,
    /// Still shows the finding: compared, not proposed.
    Refuted,
}

/// One fix candidate of a finding.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// The variant (a [`crate::protocol::Kind::Fix`]).
    pub variant: &'static str,
    /// The change, in words.
    pub change: &'static str,
    /// What the model shows it does.
    pub expected: Expected,
    /// A configuration of its own on which a refuted candidate shows the
    /// finding, checked beside the finding's ([`Finding::scale`] and the
    /// witness): a form the finding's configurations do not reach.
    pub refuted_on: Option<fn() -> Config>,
}

/// The corrected statement of a wrong bound.
#[derive(Clone, Copy, Debug)]
pub struct CorrectedBound {
    /// The comment as it should read.
    pub comment: &'static str,
    /// How the exact bound follows from the code.
    pub derivation: &'static str,
    /// The exhaustive search that confirms it (`flushcheck` arguments).
    pub confirm: &'static str,
}

/// One finding.
#[derive(Clone, Copy, Debug)]
pub struct Finding {
    /// The identifier (`c12-lost-flush`).
    pub id: &'static str,
    /// A mail subject, without the list prefix.
    pub subject: &'static str,
    /// The class.
    pub class: Class,
    /// The claim it refutes.
    pub claim: Claim,
    /// The releases affected, as a range ([`releases::Releases::affected`]).
    pub affected: &'static str,
    /// The commit that introduced the behaviour, and its release.
    pub introduced: &'static str,
    /// The first affected release.
    pub first: &'static str,
    /// The last affected release: the one before the release that ended
    /// it, else the newest read (or "none").
    pub last: &'static str,
    /// What ended it upstream, if anything did: `release: what`.
    pub closed_by: Option<&'static str>,
    /// The witness.
    pub witness: Witness,
    /// A larger configuration the fix candidates are also checked on,
    /// exhaustively (`None`: the witness's own suffices).
    pub larger: Option<fn() -> Config>,
    /// The configurations at scale (2 and 3 CPUs, witnesses larger than the
    /// minimal one) every fix candidate is also checked on.
    pub scale: &'static [fn() -> Config],
    /// Further forms of the same finding (another mechanism, another
    /// witness), each replayed and reported beside the first.
    pub also: &'static [Witness],
    /// The `Fixes:` tag's commit, as `12-hex-digit ("subject")`, where the
    /// introducing commit is known.
    pub fixes_tag: Option<&'static str>,
    /// The kernel files a fix would touch: their MAINTAINERS entries give
    /// the mail's `To:` and `Cc:`.
    pub files: &'static [&'static str],
    /// Whether it needs weak memory (only loom shows it).
    pub weak_memory: bool,
    /// How it happens, in kernel terms.
    pub mechanism: &'static str,
    /// What a user sees.
    pub impact: &'static str,
    /// How much, at `MEMCG_CHARGE_BATCH` = 64 and real CPU counts.
    pub magnitude: &'static str,
    /// How likely.
    pub likelihood: &'static str,
    /// What the window needs: interrupts, lock fairness, per-CPU op
    /// atomicity (x86 against arm64).
    pub preconditions: &'static str,
    /// What the model abstracts away that could matter here.
    pub abstractions: &'static str,
    /// Fix candidates (behavioural findings).
    pub fixes: &'static [Candidate],
    /// The corrected bound (wrong bounds).
    pub bound: Option<CorrectedBound>,
}

impl Finding {
    /// The command that shows the witness.
    pub fn replay_command(&self) -> String {
        format!("flushcheck findings --replay {}", self.id)
    }
}

/// Every finding, in report order.
pub fn all() -> Vec<Finding> {
    let mut v = behaviour::findings();
    v.extend(bounds::findings());
    v
}

/// The finding named `id`; the error lists the identifiers allowed.
pub fn by_id(id: &str) -> Result<Finding, String> {
    let all = all();
    all.iter().find(|f| f.id == id).copied().ok_or_else(|| {
        let ids: Vec<&str> = all.iter().map(|f| f.id).collect();
        format!("unknown finding {id:?}: expected one of {}", ids.join(", "))
    })
}
