//! What a property is: one value ([`Def`]) holding its name, its claim and
//! where the claim comes from, which backends decide it, to which variants
//! and configurations it applies, its coverage event, whether it is a claim
//! the model refutes for the kernel, and its check. The definitions
//! themselves are in [`crate::observe::properties`], one named definition
//! each, as LKMM names each axiom once in `linux-kernel.cat`.
//!
//! [`Property`] is a handle on a definition: copied around, compared and
//! serialized by name. Violation messages start with the property's name,
//! so that tests and reports can attribute a failure ([`crate::observe::properties::attribute`]).

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Serialize, Serializer};

use crate::config::Config;
use crate::observe::coverage::Event;
use crate::observe::properties::hooks;
use crate::vocab::{BackendName, Family};

/// What a run is, as far as a property's applicability goes.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The variant's family.
    pub family: Family,
    /// Whether the variant names a no-skip twin.
    pub has_twin: bool,
    /// The configuration.
    pub cfg: &'a Config,
    /// The backend searching it.
    pub backend: BackendName,
}

/// A property's check, called by its wing's monitor at each hook point
/// ([`hooks::At`] for the flush protocol, [`hooks::LifeAt`] for
/// the lifetime wing); a violation is a message starting with the
/// property's name.
#[derive(Clone, Copy)]
pub enum Check {
    /// A check of the flush monitor.
    Flush(fn(&hooks::Ctx<'_>, &hooks::At) -> Option<String>),
    /// A check of the lifetime monitor.
    Life(fn(&hooks::LifeCtx<'_>, &hooks::LifeAt) -> Option<String>),
}

/// One property, whole.
pub struct Def {
    /// The name used in messages, reports and on the command line.
    pub name: &'static str,
    /// The claim, in one line.
    pub claim: &'static str,
    /// Where the claim comes from (a commit, a comment, a test), quoted
    /// briefly.
    pub source: &'static str,
    /// What a "holds" of each backend means for it.
    pub decided_by: &'static str,
    /// The backends whose searches decide it.
    pub backends: &'static [BackendName],
    /// The variants and configurations it applies to (beyond its
    /// backends).
    pub applies: fn(&Subject) -> bool,
    /// Why a run that finished without a violation still cannot say
    /// "holds" (a precondition of the check the configuration misses).
    pub unchecked: fn(&Subject) -> Option<&'static str>,
    /// The coverage event showing that its racy interleaving happened.
    pub coverage: Event,
    /// The premise: the event without which it cannot fail (a late
    /// periodic flusher for a ratelimited reader's skip, the twin flushing
    /// for `no_lost_flush`). An entry judging it where the premise never
    /// happened, for a variant that must hold, is blind to it
    /// ([`crate::drive::cells::blind`]). `None`: no premise named, never
    /// counted blind.
    pub premise: Option<Event>,
    /// Whether that race needs an update to skip its add: a run in which
    /// nothing skipped (v5.19 never does) cannot show it, and a "holds"
    /// there is not flagged as "race not seen".
    pub race_needs_skip: bool,
    /// Whether it states a claim the model refutes for the kernel itself,
    /// so that a kernel version's violation is a finding, not a failure.
    pub refutable: bool,
    /// The check.
    pub check: Check,
}

/// A definition built from its name, claim, coverage event and check, the
/// rest defaulted: every backend decides it, it applies to every run, has
/// no precondition, its race needs no skip, and it is not a claim the
/// model refutes for the kernel. Each method sets one field; all are
/// `const`, so a definition stays a `static`:
///
/// ```text
/// static MINE: Def = Def::new("mine", "a reader ...", Event::ReadDuringFlush, Check::Flush(mine))
///     .source("the commit that claims it")
///     .backends(IN_EXECUTION_ORDER);
/// ```
impl Def {
    /// The definition with every other field defaulted.
    pub const fn new(
        name: &'static str,
        claim: &'static str,
        coverage: Event,
        check: Check,
    ) -> Def {
        Def {
            name,
            claim,
            source: "",
            decided_by: "every backend: its search finished without a violation",
            backends: EVERY_BACKEND,
            applies: always,
            unchecked: checked,
            coverage,
            premise: None,
            race_needs_skip: false,
            refutable: false,
            check,
        }
    }
    /// Where the claim comes from.
    pub const fn source(mut self, source: &'static str) -> Def {
        self.source = source;
        self
    }
    /// What a "holds" of each backend means for it.
    pub const fn decided_by(mut self, decided_by: &'static str) -> Def {
        self.decided_by = decided_by;
        self
    }
    /// The backends whose searches decide it.
    pub const fn backends(mut self, backends: &'static [BackendName]) -> Def {
        self.backends = backends;
        self
    }
    /// The runs it applies to.
    pub const fn applies(mut self, applies: fn(&Subject) -> bool) -> Def {
        self.applies = applies;
        self
    }
    /// Why a run without a violation still cannot say "holds".
    pub const fn unchecked(mut self, unchecked: fn(&Subject) -> Option<&'static str>) -> Def {
        self.unchecked = unchecked;
        self
    }
    /// Its premise ([`Def::premise`]).
    pub const fn premise(mut self, premise: Event) -> Def {
        self.premise = Some(premise);
        self
    }
    /// Its race needs an update to skip its add ([`Def::race_needs_skip`]).
    pub const fn race_needs_skip(mut self) -> Def {
        self.race_needs_skip = true;
        self
    }
    /// It states a claim the model refutes for the kernel itself.
    pub const fn refutable(mut self) -> Def {
        self.refutable = true;
        self
    }
}

/// Every backend.
pub const EVERY_BACKEND: &[BackendName] = &BackendName::ALL;
/// The sequentially consistent backends and std: properties measured in
/// execution order, which under loom is not the order loads observe.
pub const IN_EXECUTION_ORDER: &[BackendName] = &[
    BackendName::ShuttleRandom,
    BackendName::ShuttlePct,
    BackendName::ShuttleDfs,
    BackendName::Std,
];

/// Applies to every variant and configuration of its backends.
pub fn always(_: &Subject) -> bool {
    true
}

/// Has no precondition.
pub fn checked(_: &Subject) -> Option<&'static str> {
    None
}

/// A property: a handle on its [`Def`].
#[derive(Clone, Copy)]
pub struct Property(&'static Def);

impl Property {
    /// The handle of `def`.
    pub const fn of(def: &'static Def) -> Self {
        Property(def)
    }

    /// Its definition.
    pub fn def(self) -> &'static Def {
        self.0
    }

    /// The name used in messages, reports and on the command line.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Whether a run of `subject` judges it: its backends, its family and
    /// its own applicability.
    pub fn judged(self, subject: &Subject) -> bool {
        let family_ok = match self.0.check {
            Check::Life(_) => subject.family == Family::Lifetime,
            Check::Flush(_) => subject.family != Family::Lifetime,
        };
        family_ok && self.0.backends.contains(&subject.backend) && (self.0.applies)(subject)
    }

    /// The coverage event showing its race happened.
    pub fn coverage_event(self) -> Event {
        self.0.coverage
    }

    /// Whether a kernel version's violation of it is a finding.
    pub fn refutable_claim(self) -> bool {
        self.0.refutable
    }

    /// The claim, in one line, with where it comes from.
    pub fn claim(self) -> String {
        format!("{} ({})", self.0.claim, self.0.source)
    }

    /// What a "holds" verdict of each backend means for it.
    pub fn decided_by(self) -> &'static str {
        self.0.decided_by
    }
}

impl PartialEq for Property {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Property {}

impl PartialOrd for Property {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Property {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.name.cmp(other.0.name)
    }
}

impl Hash for Property {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.name.hash(h);
    }
}

impl fmt::Debug for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Property {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A one-line violation message that starts with the property's name.
pub fn explain(p: Property, message: &str) -> String {
    let line = first_line(message);
    if line.starts_with(&format!("{}:", p.name())) {
        line
    } else if line.starts_with("data race") {
        format!(
            "{}: two flush sections not ordered by happens-before ({line})",
            p.name()
        )
    } else {
        format!("{}: {line}", p.name())
    }
}

/// The first non-empty line of a message.
pub fn first_line(message: &str) -> String {
    // loom starts some messages with a newline (LOOM_LOCATION).
    message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}
