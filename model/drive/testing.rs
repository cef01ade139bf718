//! The entry point for `#[test]` functions of an outside crate: check one
//! variant in-process, quietly, and assert on the verdicts.
//!
//! ```ignore
//! use memcg_flush_model::drive::testing::Check;
//! use memcg_flush_model::Property;
//!
//! #[test]
//! fn my_change_keeps_every_flush() {
//!     Check::new(my_variant()).run().assert_holds();
//! }
//!
//! #[test]
//! fn my_mutant_fails_my_property() {
//!     Check::new(my_mutant())
//!         .property(&MY_PROPERTY)
//!         .run()
//!         .assert_violated(Property::of(&MY_PROPERTY));
//! }
//! ```
//!
//! A check runs the standard suite's entries of the variant's family
//! under their backends, as the default run plans them (an entry's
//! sampled SC searches only if its exhaustive DFS did not finish), on the
//! calling process and thread, with the model's own panics silenced
//! ([`crate::explore::QuietRun`]). docs/extending.md, section 1.

use std::time::Duration;

use crate::check::run::{run, PropertyVerdict, RunResult, Verdict};
use crate::check::{Sizes, Suite};
use crate::drive::explain::{witness, Target};
use crate::drive::plan::{Plan, Then};
use crate::explore::QuietRun;
use crate::observe::property::{Def, Property};
use crate::protocol::{catalogue, Variant};
use crate::vocab::BackendName;

/// A check of one variant: what to search, built by chained calls, then
/// [`Check::run`].
#[derive(Clone, Debug)]
pub struct Check {
    variant: Variant,
    extra: Vec<Variant>,
    properties: Vec<Property>,
    entries: Vec<String>,
    backends: Vec<BackendName>,
    cpus: Vec<usize>,
    sizes: Sizes,
    budget: Duration,
    own: Vec<Property>,
}

/// What to do when no search judged a property: register it, or select
/// entries and backends it applies to.
const NOT_JUDGED_HINT: &str = "a property of your own is judged only once registered \
     (`Check::property(&DEF)`); otherwise select entries and backends it applies to \
     (its Def's `backends` and `applies`; docs/properties.md for the crate's)";

impl Check {
    /// A check of `variant` on every standard suite entry of its family,
    /// every backend, every property, at the default run's sizes, 60 s per
    /// search at most.
    pub fn new(variant: Variant) -> Self {
        Check {
            variant,
            extra: Vec::new(),
            properties: Vec::new(),
            entries: Vec::new(),
            backends: Vec::new(),
            cpus: Vec::new(),
            sizes: Sizes::default(),
            budget: Duration::from_secs(60),
            own: Vec::new(),
        }
    }

    /// A property of the caller's own ([`Def`], a `static`), judged in
    /// every search it applies to, like the crate's. Registered for the
    /// whole process when the check runs, idempotently: every `#[test]`
    /// may add the properties it uses. Panics at [`Check::run`] if its name
    /// is empty or taken by another property.
    pub fn property(mut self, def: &'static Def) -> Self {
        self.own.push(Property::of(def));
        self
    }

    /// Another variant of the caller's own the checked one needs (its twin).
    pub fn with(mut self, other: Variant) -> Self {
        self.extra.push(other);
        self
    }

    /// Judge only these properties (default: every one that applies).
    pub fn properties(mut self, ps: &[Property]) -> Self {
        self.properties = ps.to_vec();
        self
    }

    /// Only the suite entries named (`flushcheck --suite-table` lists them; default: all).
    pub fn entries(mut self, names: &[&str]) -> Self {
        self.entries = names.iter().map(|n| n.to_string()).collect();
        self
    }

    /// Only these backends (default: all).
    pub fn backends(mut self, bs: &[BackendName]) -> Self {
        self.backends = bs.to_vec();
        self
    }

    /// Only the entries with one of these CPU counts (default: all).
    pub fn cpus(mut self, ns: &[usize]) -> Self {
        self.cpus = ns.to_vec();
        self
    }

    /// Schedules per sampled shuttle search (default 4,000).
    pub fn schedules(mut self, n: usize) -> Self {
        self.sizes.shuttle = n;
        self
    }

    /// Search sizes (schedules, loom bound, DFS cap, seed).
    pub fn sizes(mut self, sizes: Sizes) -> Self {
        self.sizes = sizes;
        self
    }

    /// Time budget per search (default 60 s).
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Run every planned search, in order, on this process. Panics, naming
    /// what is allowed, on a selection that names an unknown entry, a name
    /// already in the catalogue, or a selection that runs nothing.
    pub fn run(self) -> Verdicts {
        crate::observe::properties::register(self.own.iter().map(|p| p.def()).collect())
            .unwrap_or_else(|e| panic!("{e}"));
        let _quiet = QuietRun::start();
        let mine: Vec<Variant> = self.extra.iter().chain([&self.variant]).cloned().collect();
        let registry = catalogue::registry(mine).unwrap_or_else(|e| panic!("{e}"));
        let standard = Suite::standard(&self.sizes);
        for name in &self.entries {
            if standard.entry(name).is_none() {
                let known: Vec<&str> = standard.entries.iter().map(|e| e.name.as_str()).collect();
                panic!("no suite entry {name:?}; entries: {}", known.join(", "));
            }
        }
        let suite = Suite {
            entries: standard
                .entries
                .into_iter()
                .filter(|e| self.entries.is_empty() || self.entries.contains(&e.name))
                .filter(|e| self.cpus.is_empty() || self.cpus.contains(&e.cfg.cpus))
                .collect(),
        };
        let mut plan = Plan::new(suite, registry.clone());
        plan.variants = vec![self.variant.clone()];
        plan.backends = self.backends.clone();
        plan.budget = self.budget;
        plan.catalogue_share = 1;
        plan.validate().unwrap_or_else(|e| panic!("{e}"));
        let mut runs = Vec::new();
        for task in plan.tasks() {
            let mut fired: Vec<Property> = Vec::new();
            for (i, step) in task.steps.iter().filter(|s| !s.hidden).enumerate() {
                let r = run(&step.spec, &registry).unwrap_or_else(|e| panic!("{e}"));
                fired.extend(
                    r.verdicts
                        .iter()
                        .filter(|v| v.verdict == Verdict::Violated)
                        .map(|v| v.property),
                );
                let settled = i == 0 && task.then == Then::UnlessDfsSettles && r.exhaustive;
                runs.push(r);
                let killed = match &task.then {
                    Then::UntilKilled(ps) => ps.iter().all(|p| fired.contains(p)),
                    _ => false,
                };
                if settled || killed {
                    break;
                }
            }
        }
        assert!(
            !runs.is_empty(),
            "the selection runs no search of {:?} (entries {:?}, cpus {:?}, backends {:?})",
            self.variant.name,
            self.entries,
            self.cpus,
            self.backends
        );
        Verdicts {
            variant: self.variant,
            registry,
            properties: self.properties,
            runs,
            budget: self.budget,
        }
    }
}

/// What a [`Check`] found: one [`RunResult`] per search.
#[derive(Clone, Debug)]
pub struct Verdicts {
    variant: Variant,
    registry: Vec<Variant>,
    properties: Vec<Property>,
    runs: Vec<RunResult>,
    budget: Duration,
}

impl Verdicts {
    /// Every search's result.
    pub fn runs(&self) -> &[RunResult] {
        &self.runs
    }

    /// Whether `p` is asserted on: a property given to
    /// [`Check::properties`], or with none given, every property but the
    /// claims the model refutes for the kernel itself
    /// ([`Property::refutable_claim`]), as the default run expects of a
    /// candidate.
    fn selected(&self, p: Property) -> bool {
        if self.properties.is_empty() {
            !p.refutable_claim()
        } else {
            self.properties.contains(&p)
        }
    }

    /// Every violated verdict of an asserted property, with its run.
    pub fn violations(&self) -> Vec<(&RunResult, &PropertyVerdict)> {
        self.runs
            .iter()
            .flat_map(|r| r.verdicts.iter().map(move |v| (r, v)))
            .filter(|(_, v)| v.verdict == Verdict::Violated && self.selected(v.property))
            .collect()
    }

    /// Whether some search violated `p` (asserted or not).
    pub fn violated(&self, p: Property) -> bool {
        self.runs
            .iter()
            .flat_map(|r| &r.verdicts)
            .any(|v| v.property == p && v.verdict == Verdict::Violated)
    }

    /// The CPU-column trace of `p`'s violation in `r`, found again by the
    /// same search with traces on (a sampled search finds the same
    /// schedule: its seed is fixed).
    pub fn trace(&self, r: &RunResult, p: Property) -> String {
        let t = Target {
            cfg: &r.spec.cfg,
            variant: &self.variant,
            registry: &self.registry,
            property: p,
            rcu: r.spec.rcu,
        };
        match witness(&t, &r.spec.backend, self.budget) {
            Ok((_, Some(c))) => c.diagram(100),
            Ok((_, None)) => "(the traced search did not find it again)".into(),
            Err(e) => format!("(no trace: {e})"),
        }
    }

    /// Panic unless no asserted property ([`Verdicts::violations`]) is
    /// violated anywhere and at least one is judged; the message has the
    /// first violation's trace.
    pub fn assert_holds(&self) {
        let _quiet = QuietRun::start();
        if let Some((r, v)) = self.violations().first() {
            panic!(
                "{} violates {} on {} under {}: {}\ntrace:\n{}",
                self.variant.name,
                v.property.name(),
                r.spec.entry,
                r.spec.backend.name(),
                v.note.as_deref().unwrap_or(""),
                self.trace(r, v.property)
            );
        }
        let judged = self
            .runs
            .iter()
            .flat_map(|r| &r.verdicts)
            .any(|v| self.selected(v.property));
        assert!(
            judged,
            "{}: no search judged {:?}: {NOT_JUDGED_HINT}",
            self.variant.name, self.properties
        );
    }

    /// Panic unless some search violated `p`; the message lists what each
    /// search concluded on `p`.
    pub fn assert_violated(&self, p: Property) {
        if self.violated(p) {
            return;
        }
        let seen: Vec<String> = self
            .runs
            .iter()
            .filter_map(|r| {
                r.verdict(p).map(|v| {
                    format!(
                        "{} {}: {}",
                        r.spec.entry,
                        r.spec.backend.name(),
                        v.verdict.name()
                    )
                })
            })
            .collect();
        if seen.is_empty() {
            panic!(
                "{} does not violate {}: no search judged it; {NOT_JUDGED_HINT}",
                self.variant.name,
                p.name()
            );
        }
        panic!(
            "{} does not violate {} (searches judging it: {})",
            self.variant.name,
            p.name(),
            seen.join("; ")
        );
    }
}
