//! Variants: a name, what is expected of it, the code that runs it, and its
//! facts as typed data.
//!
//! Everything the tool decides about a variant (which scenarios apply, its
//! twin's gate, whether its worst case can be derived, the trace legend,
//! which RCU it needs) is a field here, filled in by the catalogue
//! ([`crate::protocol::catalogue`]) or by a researcher's `Variant::new`
//! chain. Nothing outside the catalogue looks at a variant's name to decide
//! anything, so a variant registered through [`crate::cli::main_with`] gets
//! exactly what a catalogue variant gets.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::explore::BackendName;
use crate::kernel::marking::{self, Release};
use crate::observe::property::Property;
use crate::observe::twin::Gate;
use crate::protocol::lifetime::wing::LifeModel;
use crate::protocol::wing::FlushModel;
pub use crate::vocab::Family;

/// What a variant is, and so what the matrix expects of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Kernel code: must hold every property (but the refuted claims).
    Kernel,
    /// A deliberately broken variant: its designated killers must fire.
    Mutant,
    /// A rewrite that must hold every property, like the kernel.
    Benign,
    /// A variant the project has not seen (a reviewer's patch): it is
    /// expected to hold every property; a violation makes the run fail.
    Candidate,
    /// A performance bound for benchmarks; not in the checking matrix.
    Bound,
    /// A reference protocol that is not a kernel version (a version with
    /// its optimisation removed): run only as another variant's twin.
    Twin,
    /// A fix candidate for a finding (protocol/findings/): a variant of
    /// the affected version that must hold every property a kernel version
    /// must; left out of the default run (time), checked by `flushcheck
    /// findings --check` and when named with `--variant`.
    Fix,
}

impl Kind {
    /// Whether the matrix expects every property to hold.
    pub fn must_hold(self) -> bool {
        matches!(
            self,
            Kind::Kernel | Kind::Benign | Kind::Candidate | Kind::Fix
        )
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Kernel => "kernel",
            Kind::Mutant => "mutant",
            Kind::Benign => "benign",
            Kind::Candidate => "candidate",
            Kind::Bound => "bound",
            Kind::Twin => "twin",
            Kind::Fix => "fix",
        }
    }
}

/// The code of a variant: a flush protocol or a lifetime form.
#[derive(Clone)]
pub enum Code {
    /// A flush protocol (the global or the per-memcg lineage).
    Flush(Arc<FlushModel>),
    /// A lifetime form (a memcg's death).
    Life(Arc<LifeModel>),
}

/// How a variant's worst-case staleness can be derived exactly from its
/// arithmetic (`flushcheck bounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Derivation {
    /// v5.19's and v6.0's global threshold (check/derived.rs, `derive`).
    Global,
    /// A per-memcg version on a flat tree with its own trigger
    /// (`derive_per_memcg`).
    PerMemcg,
}

/// A property a mutant must be killed by, or a finding a kernel version
/// must show: on which backends, and on which suite entry if only one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Designation {
    /// The property.
    pub property: Property,
    /// The backends on which it must be violated.
    pub backends: Vec<BackendName>,
    /// The suite entry it must be violated on (`None`: any).
    pub entry: Option<String>,
}

/// The sampled SC backends.
pub const SAMPLED: &[BackendName] = &[BackendName::ShuttleRandom, BackendName::ShuttlePct];
/// The SC backends that search: sampled and exhaustive.
pub const SC: &[BackendName] = &[
    BackendName::ShuttleRandom,
    BackendName::ShuttlePct,
    BackendName::ShuttleDfs,
];
/// loom alone (weak memory).
pub const LOOM: &[BackendName] = &[BackendName::Loom];
/// Every backend that searches (not std).
pub const ALL_CHECKERS: &[BackendName] = &[
    BackendName::Loom,
    BackendName::ShuttleRandom,
    BackendName::ShuttlePct,
    BackendName::ShuttleDfs,
];

/// A kernel version, a mutant, a benign rewrite, a twin, a lifetime form,
/// a fix candidate or a reviewer's candidate.
#[derive(Clone)]
pub struct Variant {
    /// Name used on the command line and in reports.
    pub name: String,
    /// What is expected of it.
    pub kind: Kind,
    /// The commit (kernel), what is broken (mutant) or what changed.
    pub summary: String,
    /// The code.
    pub code: Code,
    /// The protocol family: which scenarios and properties apply.
    pub family: Family,
    /// The no-skip twin `no_lost_flush` compares it with (a variant name,
    /// resolved in the registry of the run).
    pub twin: Option<String>,
    /// Its own gate, if other variants can name it as their twin.
    pub gate: Option<Gate>,
    /// The reader's trigger on a configuration (per-memcg family): the
    /// value a memcg's `vmstats->stats_updates` must exceed.
    pub trigger: Option<fn(&Config) -> i64>,
    /// For mutants: each property that must kill it and where.
    pub killed_by: Vec<Designation>,
    /// For kernel versions: the properties a finding says it violates, and
    /// where the matrix must see the violation.
    pub findings: Vec<Designation>,
    /// Whether (and how) its worst case can be derived exactly.
    pub derivation: Option<Derivation>,
    /// The variant `flushcheck bounds` compares every other with.
    pub baseline: bool,
    /// Whether it flushes only what the rstat per-CPU updated tree holds,
    /// and with or without the `smp_mb()` pair (`Some(true)`: with), for
    /// `flushcheck bench --barrier`.
    pub updated_tree: Option<bool>,
    /// The most preemptions loom is given for it, whatever the entry's
    /// bound (a form whose spin locks multiply loom's branches).
    pub loom_cap: Option<usize>,
    /// Whether it runs only on the reader-flag RCU (a defect of the RCU
    /// implementation that crossbeam-epoch cannot carry).
    pub flag_rcu_only: bool,
    /// How the kernel release it stands for marks each access (the litmus
    /// export's table, [`crate::kernel::marking`]): by default v5.19-v6.7's
    /// for the global family, v6.8's for the per-memcg one.
    pub release: &'static Release,
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("family", &self.family)
            .field("twin", &self.twin)
            .field("killed_by", &self.killed_by)
            .field("findings", &self.findings)
            .finish()
    }
}

/// `MEMCG_CHARGE_BATCH * num_online_cpus()`, the trigger from v6.8 on.
pub fn batch_times_cpus(cfg: &Config) -> i64 {
    cfg.batch * cfg.cpus as i64
}

impl Variant {
    /// A flush-protocol variant named `name` running `model` (a lineage's
    /// `model()`, such as [`crate::protocol::global::v5_19::model`]), in
    /// the global family until told otherwise.
    pub fn new(
        name: impl Into<String>,
        kind: Kind,
        summary: impl Into<String>,
        model: Arc<FlushModel>,
    ) -> Self {
        Variant::with_code(name, kind, summary, Code::Flush(model), Family::Global)
    }

    /// A lifetime variant running `model` (see
    /// [`crate::protocol::lifetime::model`]).
    pub fn lifetime(
        name: impl Into<String>,
        kind: Kind,
        summary: impl Into<String>,
        model: Arc<LifeModel>,
    ) -> Self {
        Variant::with_code(name, kind, summary, Code::Life(model), Family::Lifetime)
    }

    fn with_code(
        name: impl Into<String>,
        kind: Kind,
        summary: impl Into<String>,
        code: Code,
        family: Family,
    ) -> Self {
        Variant {
            name: name.into(),
            kind,
            summary: summary.into(),
            code,
            family,
            twin: None,
            gate: None,
            trigger: None,
            killed_by: Vec::new(),
            findings: Vec::new(),
            derivation: None,
            baseline: false,
            updated_tree: None,
            loom_cap: None,
            flag_rcu_only: false,
            release: &marking::GLOBAL,
        }
    }

    /// A per-memcg protocol (v6.8 on) whose readers flush above
    /// `trigger(cfg)`. The variant's own code decides with its own test;
    /// the trigger tells the observers what that test is (it must agree):
    /// the ghost state counts an updater's read of a memcg's atomic above
    /// it as finding the memcg flushable, the checks read it as
    /// `Ctx::trigger` (`ancestors_flushable`, `stats_updates_bound`,
    /// `per_memcg_error_bound`), a variant naming this one as its twin
    /// gates on it, and `flushcheck bounds` derives its worst case from it
    /// (docs/extending.md, section 3).
    pub fn per_memcg(mut self, trigger: fn(&Config) -> i64) -> Self {
        self.family = Family::PerMemcg;
        self.trigger = Some(trigger);
        if std::ptr::eq(self.release, &marking::GLOBAL) {
            self.release = &marking::V6_8;
        }
        self
    }

    /// Compare it with the no-skip twin `twin` (`no_lost_flush`).
    pub fn twin(mut self, twin: impl Into<String>) -> Self {
        self.twin = Some(twin.into());
        self
    }

    /// Let other variants name this one as their twin, through `gate`.
    pub fn gate(mut self, gate: Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// A mutant must be killed by `property` on each of `backends`.
    pub fn killed_by(mut self, property: Property, backends: &[BackendName]) -> Self {
        self.killed_by.push(Designation {
            property,
            backends: backends.to_vec(),
            entry: None,
        });
        self
    }

    /// A mutant must be killed by `property` on `backend` on suite entry
    /// `entry`.
    pub fn killed_on(mut self, property: Property, backend: BackendName, entry: &str) -> Self {
        self.killed_by.push(Designation {
            property,
            backends: vec![backend],
            entry: Some(entry.into()),
        });
        self
    }

    /// A kernel version violates `property` (a finding), and the matrix
    /// must show it on each of `backends`.
    pub fn finding(mut self, property: Property, backends: &[BackendName]) -> Self {
        self.findings.push(Designation {
            property,
            backends: backends.to_vec(),
            entry: None,
        });
        self
    }

    /// A kernel version violates `property`, but no backend is required
    /// to show it in the default run (rare on the suite's searches): a
    /// violation is a finding, a hold is no failure.
    pub fn refutes(mut self, property: Property) -> Self {
        self.findings.push(Designation {
            property,
            backends: Vec::new(),
            entry: None,
        });
        self
    }

    /// A finding the matrix must show on `backend` on suite entry `entry`.
    pub fn finding_on(mut self, property: Property, backend: BackendName, entry: &str) -> Self {
        self.findings.push(Designation {
            property,
            backends: vec![backend],
            entry: Some(entry.into()),
        });
        self
    }

    /// Its worst case can be derived exactly, by `how`.
    pub fn derivable(mut self, how: Derivation) -> Self {
        self.derivation = Some(how);
        self
    }

    /// The baseline of `flushcheck bounds`.
    pub fn baseline(mut self) -> Self {
        self.baseline = true;
        self
    }

    /// It flushes what the rstat updated tree holds, with the `smp_mb()`
    /// pair if `barrier_pair`.
    pub fn updated_tree(mut self, barrier_pair: bool) -> Self {
        self.updated_tree = Some(barrier_pair);
        self
    }

    /// The release table its litmus exports mark accesses by (see
    /// [`Variant::release`]).
    pub fn release(mut self, release: &'static Release) -> Self {
        self.release = release;
        self
    }

    /// loom is given at most `bound` preemptions for it.
    pub fn loom_cap(mut self, bound: usize) -> Self {
        self.loom_cap = Some(bound);
        self
    }

    /// It runs on the reader-flag RCU only.
    pub fn flag_rcu_only(mut self) -> Self {
        self.flag_rcu_only = true;
        self
    }

    /// The reader's trigger on `cfg`: `num_online_cpus()` batches for the
    /// global family.
    pub fn trigger_on(&self, cfg: &Config) -> i64 {
        self.trigger.map_or(cfg.cpus as i64, |t| t(cfg))
    }

    /// The flush-protocol model.
    ///
    /// # Panics
    /// If the variant is a lifetime form.
    pub fn flush_model(&self) -> &Arc<FlushModel> {
        match &self.code {
            Code::Flush(m) => m,
            Code::Life(_) => panic!("model: {} is a lifetime form", self.name),
        }
    }

    /// The lifetime model.
    ///
    /// # Panics
    /// If the variant is a flush protocol.
    pub fn life_model(&self) -> &Arc<LifeModel> {
        match &self.code {
            Code::Life(m) => m,
            Code::Flush(_) => panic!("model: {} is not a lifetime form", self.name),
        }
    }

    /// Whether `property` is a designated killer of this mutant on
    /// `backend` (on `entry`, when the designation names one).
    pub fn killer(&self, property: Property, backend: BackendName, entry: Option<&str>) -> bool {
        designated(&self.killed_by, property, backend, entry)
    }

    /// Whether a finding pins `property` on `backend` (on `entry`, when it
    /// names one).
    pub fn pinned(&self, property: Property, backend: BackendName, entry: Option<&str>) -> bool {
        designated(&self.findings, property, backend, entry)
    }

    /// Look a variant up by name in `variants`; the error lists the names
    /// allowed.
    pub fn find(variants: &[Variant], name: &str) -> Result<Variant, String> {
        variants
            .iter()
            .find(|v| v.name == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                format!(
                    "unknown variant {name:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

fn designated(
    list: &[Designation],
    property: Property,
    backend: BackendName,
    entry: Option<&str>,
) -> bool {
    list.iter().any(|d| {
        d.property == property
            && d.backends.contains(&backend)
            && match (&d.entry, entry) {
                (Some(e), Some(x)) => e == x,
                _ => true,
            }
    })
}
