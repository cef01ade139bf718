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
use crate::check::{Entry, Sizes, Suite};
use crate::config::Config;
use crate::drive::explain::{witness, Target};
use crate::drive::plan::{Plan, Then};
use crate::explore::{Backend, QuietRun};
use crate::observe::property::{Def, Property};
use crate::protocol::{catalogue, Variant};
use crate::vocab::{BackendName, Family};

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
    allow_inconclusive: bool,
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
            allow_inconclusive: false,
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

    /// Only the entries with one of these CPU counts (default: all). A
    /// count no standard entry of the variant's lineage has gets entries
    /// derived for it ([`derive_for_cpus`]): each entry of the lineage
    /// with that many CPUs, searched by its sampled searches only.
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

    /// Time budget per search (default 60 s). A search it cuts short is
    /// inconclusive, and [`Verdicts::assert_holds`] fails on it.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Let [`Verdicts::assert_holds`] pass although some search of an
    /// asserted property was inconclusive (cut short by the budget or a
    /// cap, or not decidable on its configuration): it then asserts only
    /// that nothing was violated.
    pub fn allow_inconclusive(mut self) -> Self {
        self.allow_inconclusive = true;
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
        let family = self.variant.family;
        let named: Vec<Entry> = standard
            .entries
            .into_iter()
            .filter(|e| self.entries.is_empty() || self.entries.contains(&e.name))
            .collect();
        let mut entries: Vec<Entry> = named
            .iter()
            .filter(|e| self.cpus.is_empty() || self.cpus.contains(&e.cfg.cpus))
            .cloned()
            .collect();
        for &n in &self.cpus {
            if !entries
                .iter()
                .any(|e| e.cfg.cpus == n && e.applies_to(family))
            {
                let derived = derive_for_cpus(&named, family, n).unwrap_or_else(|why| {
                    let mut have: Vec<usize> = named
                        .iter()
                        .filter(|e| e.applies_to(family))
                        .map(|e| e.cfg.cpus)
                        .collect();
                    have.sort_unstable();
                    have.dedup();
                    panic!(
                        "Check::cpus(&[{n}]): {why}; the suite's entries of this lineage have {:?} CPUs",
                        have
                    )
                });
                entries.extend(derived);
            }
        }
        let suite = Suite { entries };
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
            "the selection runs no search of {:?} (entries {:?}, cpus {:?}, backends {:?}); \
             entries derived for a CPU count of no standard entry run under {} only",
            self.variant.name,
            self.entries,
            self.cpus,
            self.backends,
            DERIVED_BACKENDS.map(|b| b.name()).join(", ")
        );
        Verdicts {
            variant: self.variant,
            registry,
            properties: self.properties,
            runs,
            budget: self.budget,
            allow_inconclusive: self.allow_inconclusive,
        }
    }
}

/// The searches an entry derived for another CPU count keeps: the sampled
/// ones (an exhaustive search's cost grows with the CPUs past its
/// budget; docs/cutoff.md, section 4).
const DERIVED_BACKENDS: [BackendName; 3] = [
    BackendName::ShuttleRandom,
    BackendName::ShuttlePct,
    BackendName::Std,
];

/// Entries of `family` derived from `entries` for `n` CPUs: each entry
/// with `cpus = n`, named `<entry>@<n>cpus`, searched by its sampled
/// searches, where the configuration is valid for them; an error saying
/// why if none is (`n` out of the model's range: `Config::validate`).
pub fn derive_for_cpus(entries: &[Entry], family: Family, n: usize) -> Result<Vec<Entry>, String> {
    let mut why = format!("no entry of the selection runs {n} CPUs");
    let derived: Vec<Entry> = entries
        .iter()
        .filter(|e| e.applies_to(family))
        .filter_map(|e| {
            let cfg = Config {
                cpus: n,
                ..e.cfg.clone()
            };
            let backends: Vec<Backend> = e
                .backends
                .iter()
                .filter(|b| DERIVED_BACKENDS.contains(&b.id()))
                .filter(|b| match cfg.validate(b.max_threads(), b.name()) {
                    Ok(()) => true,
                    Err(e) => {
                        why = e;
                        false
                    }
                })
                .cloned()
                .collect();
            (!backends.is_empty()).then(|| Entry {
                name: format!("{}@{n}cpus", e.name),
                why: format!("{} (derived for {n} CPUs, sampled)", e.why),
                cfg,
                backends,
                families: e.families.clone(),
            })
        })
        .collect();
    if derived.is_empty() {
        Err(why)
    } else {
        Ok(derived)
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
    allow_inconclusive: bool,
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

    /// Every inconclusive verdict of an asserted property, with its run: a
    /// search cut short (by the budget or a cap) without a counterexample,
    /// or a property its configuration cannot decide. Its note says why.
    pub fn inconclusive(&self) -> Vec<(&RunResult, &PropertyVerdict)> {
        self.runs
            .iter()
            .flat_map(|r| r.verdicts.iter().map(move |v| (r, v)))
            .filter(|(_, v)| v.verdict == Verdict::Inconclusive && self.selected(v.property))
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
    /// violated anywhere, none is inconclusive ([`Verdicts::inconclusive`];
    /// unless [`Check::allow_inconclusive`]) and at least one is judged;
    /// the message has the first violation's trace, or names the
    /// inconclusive searches and how to raise their budget.
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
        let cut = self.inconclusive();
        if !cut.is_empty() && !self.allow_inconclusive {
            let list: Vec<String> = cut
                .iter()
                .map(|(r, v)| {
                    format!(
                        "{} on {} under {}: {}",
                        v.property.name(),
                        r.spec.entry,
                        r.spec.backend.name(),
                        v.note.as_deref().unwrap_or("")
                    )
                })
                .collect();
            panic!(
                "{}: inconclusive: {}; {}",
                self.variant.name,
                list.join("; "),
                crate::drive::cut_short_advice(
                    self.budget,
                    ".budget(Duration::from_secs(N))",
                    ".allow_inconclusive()"
                )
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
