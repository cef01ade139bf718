//! A matrix plan: which variants, entries, properties and backends, and the
//! searches that decide them ([`Plan::tasks`]).
//!
//! A focused plan (the default) spends time only where a verdict depends
//! on it:
//! - a mutant is searched only by its designated killers, entry after
//!   entry, each search stopping at the first violation of a designated
//!   property (armed), and the next entry only while a designated property
//!   has not fired; its other cells are not run;
//! - a variant that must hold gets every search, but the sampled SC ones
//!   (shuttle random and PCT) of an entry only where the stateful DFS of
//!   that entry did not settle the SC verdict exhaustively: what the DFS
//!   showed for every SC schedule, a sample cannot change;
//! - a twin is searched under loom once, for every variant that names it
//!   (the outcomes the loom form of `no_lost_flush` compares with); as a
//!   variant of its own only when named on the command line;
//! - the catalogue's kernel versions, benign rewrites and proposed fix
//!   candidates, whose verdicts the tests pin, are sampled with
//!   [`Plan::catalogue_share`] of each sampled search's schedules (a
//!   quarter by default: 1,000 instead of 4,000, 500 instead of 2,000 on
//!   the lifetime entries); a candidate (a variant from outside) and a
//!   mutant get them all. Quartering changed no verdict of the default run
//!   (measured side by side, docs/performance.md);
//! - a fix candidate of a finding that is not weak-memory only is searched
//!   by loom at preemption bound 0 in the default run (the weak-memory
//!   outcomes of every thread order; its SC races are the other
//!   backends'): `v6.8-fix-gate-or-root`'s extra read of the root's count
//!   takes loom from 9,436 executions to 179,736 at bound 1 on
//!   memcg-two-readers.
//!
//! An unfocused plan (`--full`) searches every (variant, entry, backend).

use std::time::Duration;

use crate::check::run::{scenario_matches, RunSpec};
use crate::check::suite::{Entry, Suite};
use crate::explore::{Backend, Shard};
use crate::observe::property::Property;
use crate::protocol::findings::Expected;
use crate::protocol::{Kind, Variant};
use crate::vocab::BackendName;

/// Everything a matrix run needs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The configurations and their searches.
    pub suite: Suite,
    /// Variants to check.
    pub variants: Vec<Variant>,
    /// Every variant known (twins are looked up here).
    pub registry: Vec<Variant>,
    /// Properties to report.
    pub properties: Vec<Property>,
    /// Backends to run; empty for all.
    pub backends: Vec<BackendName>,
    /// Time budget per exploration.
    pub budget: Duration,
    /// Worker processes.
    pub jobs: usize,
    /// The part of every shuttle search to run.
    pub shard: Shard,
    /// Search only where a verdict depends on it ([`Plan::tasks`]);
    /// `false` searches every (variant, entry, backend).
    pub focused: bool,
    /// In a focused plan, a kernel version's, benign rewrite's or fix
    /// candidate's sampled SC search runs one `catalogue_share`-th of its
    /// schedules (1: all), and a fix of an SC behaviour is searched by loom
    /// at bound 0 when it is above 1. The command line keeps 4 for the
    /// default run only: with `--variant`, a configuration of its own or
    /// `--full`, every search runs whole.
    pub catalogue_share: usize,
    /// The suite `suite` was selected from (`--entry`), when it is part of
    /// one: kills and findings pinned on entries left out are "not checked
    /// here" ([`crate::drive::cells::mark_not_checked`]).
    pub selected_from: Option<Suite>,
}

impl Plan {
    /// The default plan: the standard suite, every variant of `registry`
    /// but benchmark bounds, twins (which are searched as the twins of
    /// the variants that name them) and the fix candidates a finding
    /// refutes ([`proposed_fix`]: those are compared by `flushcheck
    /// findings --check`), every property and backend, focused.
    pub fn new(suite: Suite, registry: Vec<Variant>) -> Self {
        Plan {
            suite,
            variants: registry
                .iter()
                .filter(|v| match v.kind {
                    Kind::Bound | Kind::Twin => false,
                    Kind::Fix => proposed_fix(&v.name),
                    _ => true,
                })
                .cloned()
                .collect(),
            registry,
            properties: Property::all().collect(),
            backends: Vec::new(),
            budget: Duration::from_secs(60),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            shard: Shard::default(),
            focused: true,
            catalogue_share: 4,
            selected_from: None,
        }
    }

    /// Whether the plan runs searches of backend `b`.
    pub fn runs_backend(&self, b: &Backend) -> bool {
        self.backends.is_empty() || self.backends.contains(&b.id())
    }

    /// Check the plan: every entry's configuration fits its backends, and
    /// every twin named exists.
    pub fn validate(&self) -> Result<(), String> {
        for e in &self.suite.entries {
            for b in e.backends.iter().filter(|b| self.runs_backend(b)) {
                if e.cfg.ticks > 0
                    && !matches!(
                        b,
                        Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
                    )
                {
                    return Err(format!(
                        "--ticks {}: abstract time runs under shuttle-random and shuttle-pct only; add --backend shuttle-random,shuttle-pct",
                        e.cfg.ticks
                    ));
                }
                e.cfg.validate(b.max_threads(), b.name()).map_err(|why| {
                    // Say which of the entry's backends would run it.
                    let fit: Vec<&str> = e
                        .backends
                        .iter()
                        .filter(|o| e.cfg.validate(o.max_threads(), o.name()).is_ok())
                        .map(|o| o.name())
                        .collect();
                    if fit.is_empty() || fit.len() == e.backends.len() {
                        why
                    } else {
                        format!(
                            "{why}; {} would run it: add --backend {}",
                            fit.join(", "),
                            fit.join(",")
                        )
                    }
                })?;
                let shuttle = matches!(
                    b,
                    Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
                );
                if self.shard.count > 1 && !shuttle {
                    return Err(format!(
                        "--shard {}/{}: only shuttle random and PCT searches can be split; add --backend shuttle-random,shuttle-pct",
                        self.shard.index, self.shard.count
                    ));
                }
            }
        }
        for v in &self.variants {
            if let Some(t) = &v.twin {
                let twin = Variant::find(&self.registry, t)?;
                if twin.gate.is_none() {
                    return Err(format!(
                        "variant {:?} names {t:?} as its twin, which has no gate",
                        v.name
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One search of a plan: the run, its variant (resolved once), and whether
/// it is a twin's search that no cell reports (`hidden`).
#[derive(Clone, Debug)]
pub struct Step {
    /// The run.
    pub spec: RunSpec,
    /// Its variant.
    pub variant: Variant,
    /// A twin's loom search, for the differential only.
    pub hidden: bool,
}

/// How the searches of a task depend on each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Then {
    /// Run every step.
    All,
    /// The first step is an entry's exhaustive DFS; the others (that
    /// entry's sampled SC searches) run only if it did not finish.
    UnlessDfsSettles,
    /// A mutant's searches by one backend, entry after entry, until each of
    /// these designated properties has been violated.
    UntilKilled(Vec<Property>),
}

/// Searches one worker runs in order.
#[derive(Clone, Debug)]
pub struct Task {
    /// The searches.
    pub steps: Vec<Step>,
    /// How later steps depend on earlier ones.
    pub then: Then,
}

/// A run not searched by a focused plan, and why.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct NotRun {
    /// Variant.
    pub variant: String,
    /// Suite entry.
    pub entry: String,
    /// Backend.
    pub backend: BackendName,
    /// Why.
    pub why: String,
}

impl Plan {
    fn spec(&self, v: &Variant, e: &Entry, b: &Backend) -> RunSpec {
        let loom_cap = if self.reduced(v) && v.kind == Kind::Fix && !weak_memory_fix(&v.name) {
            // A fix of an SC behaviour, in the default run: the weak-memory
            // outcomes of every thread order; the SC races are the other
            // backends'.
            Some(0)
        } else {
            v.loom_cap
        };
        let backend = match (b, loom_cap) {
            (Backend::Loom { preemption_bound }, Some(cap)) => Backend::Loom {
                preemption_bound: Some(preemption_bound.map_or(cap, |p| p.min(cap))),
            },
            (Backend::ShuttleRandom { iterations, seed }, _) => Backend::ShuttleRandom {
                iterations: self.sample(v, *iterations),
                seed: *seed,
            },
            (
                Backend::ShuttlePct {
                    iterations,
                    depth,
                    seed,
                },
                _,
            ) => Backend::ShuttlePct {
                iterations: self.sample(v, *iterations),
                depth: *depth,
                seed: *seed,
            },
            _ => b.clone(),
        };
        let mut spec = RunSpec::new(&v.name, &e.name, &e.cfg, backend, self.budget.as_secs_f64());
        spec.shard = self.shard;
        spec.collect = matches!(b, Backend::Loom { .. }) && v.twin.is_some();
        spec
    }

    /// Whether this plan searches `v` in the default run's reduced form
    /// ([`Plan::catalogue_share`]): a focused, unsharded plan with a share
    /// above 1, and `v` a kernel version, benign rewrite or fix candidate.
    pub fn reduced(&self, v: &Variant) -> bool {
        let pinned = matches!(v.kind, Kind::Kernel | Kind::Benign | Kind::Fix);
        self.focused && pinned && self.shard.count == 1 && self.catalogue_share > 1
    }

    /// The schedules a sampled search of `v` runs, of `iterations`.
    pub fn sample(&self, v: &Variant, iterations: usize) -> usize {
        if self.reduced(v) {
            (iterations / self.catalogue_share).max(1)
        } else {
            iterations
        }
    }

    fn step(&self, v: &Variant, e: &Entry, b: &Backend, hidden: bool) -> Step {
        Step {
            spec: self.spec(v, e, b),
            variant: v.clone(),
            hidden,
        }
    }

    /// The entries `v` runs on, with their backends this plan runs.
    fn entries_of<'a>(
        &'a self,
        v: &'a Variant,
    ) -> impl Iterator<Item = (&'a Entry, Vec<&'a Backend>)> {
        self.suite
            .entries
            .iter()
            .filter(move |e| e.applies_to(v.family))
            .map(|e| {
                (
                    e,
                    e.backends.iter().filter(|b| self.runs_backend(b)).collect(),
                )
            })
    }

    /// The searches of the plan, grouped into tasks, slow ones first.
    pub fn tasks(&self) -> Vec<Task> {
        let focused = self.focused && self.shard.count == 1;
        let mut tasks = Vec::new();
        for v in &self.variants {
            if focused && v.kind == Kind::Mutant {
                tasks.extend(self.mutant_tasks(v));
                continue;
            }
            for (e, backends) in self.entries_of(v) {
                let dfs = backends
                    .iter()
                    .find(|b| b.id() == BackendName::ShuttleDfs)
                    .filter(|_| focused);
                let settles = |b: &Backend| {
                    matches!(
                        b,
                        Backend::ShuttleRandom { .. } | Backend::ShuttlePct { .. }
                    ) && scenario_matches(v, b.id(), BackendName::ShuttleDfs)
                };
                match dfs {
                    Some(d) => {
                        let mut steps = vec![self.step(v, e, d, false)];
                        steps.extend(
                            backends
                                .iter()
                                .filter(|b| settles(b))
                                .map(|b| self.step(v, e, b, false)),
                        );
                        tasks.push(Task {
                            steps,
                            then: Then::UnlessDfsSettles,
                        });
                        for b in backends
                            .iter()
                            .filter(|b| b.id() != BackendName::ShuttleDfs && !settles(b))
                        {
                            tasks.push(single(self.step(v, e, b, false)));
                        }
                    }
                    None => {
                        for b in &backends {
                            tasks.push(single(self.step(v, e, b, false)));
                        }
                    }
                }
            }
        }
        // The twins' loom searches the differential needs, once each.
        let names: Vec<&str> = self.variants.iter().map(|v| v.name.as_str()).collect();
        let mut twins: Vec<&str> = self
            .variants
            .iter()
            .filter_map(|v| v.twin.as_deref())
            .filter(|t| !names.contains(t))
            .collect();
        twins.sort();
        twins.dedup();
        for t in twins {
            let Ok(twin) = Variant::find(&self.registry, t) else {
                continue;
            };
            for (e, backends) in self.entries_of(&twin) {
                let needed = self
                    .variants
                    .iter()
                    .any(|v| v.twin.as_deref() == Some(t) && e.applies_to(v.family));
                for b in backends
                    .iter()
                    .filter(|b| matches!(b, Backend::Loom { .. }))
                {
                    if needed {
                        tasks.push(single(self.step(&twin, e, b, true)));
                    }
                }
            }
        }
        // Slow searches first, so the pool drains evenly.
        tasks.sort_by_key(|t| match t.steps[0].spec.backend {
            Backend::Loom { .. } => 0,
            Backend::ShuttleDfs { .. } => 1,
            _ => 2,
        });
        tasks
    }

    /// A mutant's tasks: one per designated backend, its entries in suite
    /// order (only the designated entry, if a designation names one), each
    /// search armed with the designated properties not yet fired.
    fn mutant_tasks(&self, v: &Variant) -> Vec<Task> {
        let mut out = Vec::new();
        for b in BackendName::ALL {
            let designated: Vec<Property> = v
                .killed_by
                .iter()
                .filter(|d| d.backends.contains(&b))
                .map(|d| d.property)
                .collect();
            if designated.is_empty() {
                continue;
            }
            let entry_of = |p: Property| {
                v.killed_by
                    .iter()
                    .find(|d| d.property == p && d.backends.contains(&b))
                    .and_then(|d| d.entry.clone())
            };
            let mut steps = Vec::new();
            for (e, backends) in self.entries_of(v) {
                let Some(search) = backends.iter().find(|x| x.id() == b) else {
                    continue;
                };
                let here: Vec<Property> = designated
                    .iter()
                    .copied()
                    .filter(|p| entry_of(*p).is_none_or(|x| x == e.name))
                    .collect();
                if here.is_empty() {
                    continue;
                }
                let mut s = self.step(v, e, search, false);
                s.spec.arm = here;
                steps.push(s);
            }
            if !steps.is_empty() {
                out.push(Task {
                    steps,
                    then: Then::UntilKilled(designated),
                });
            }
        }
        out
    }

    /// Every (variant, entry, backend) a focused plan leaves out by
    /// design, before any search (the DFS's settling is known only after):
    /// a mutant's searches by backends that do not kill it.
    pub fn left_out(&self) -> Vec<NotRun> {
        if !self.focused || self.shard.count > 1 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for v in self.variants.iter().filter(|v| v.kind == Kind::Mutant) {
            for (e, backends) in self.entries_of(v) {
                for b in backends {
                    if !v.killed_by.iter().any(|d| d.backends.contains(&b.id())) {
                        out.push(NotRun {
                            variant: v.name.clone(),
                            entry: e.name.clone(),
                            backend: b.id(),
                            why: "not a designated killer of this mutant".into(),
                        });
                    }
                }
            }
        }
        out
    }
}

/// Whether `name` is a fix candidate every finding it is offered for
/// expects to fix (docs/findings.md, section 18): those the default run
/// checks; the refuted ones are compared by `flushcheck findings --check`.
pub fn proposed_fix(name: &str) -> bool {
    let mut offered = crate::protocol::findings::all()
        .into_iter()
        .flat_map(|f| f.fixes.iter())
        .filter(|c| c.variant == name)
        .peekable();
    offered.peek().is_some() && offered.all(|c| c.expected == Expected::Fixes)
}

/// Whether `name` is a fix candidate of a finding that needs weak memory.
fn weak_memory_fix(name: &str) -> bool {
    crate::protocol::findings::all()
        .iter()
        .any(|f| f.weak_memory && f.fixes.iter().any(|c| c.variant == name))
}

fn single(step: Step) -> Task {
    Task {
        steps: vec![step],
        then: Then::All,
    }
}
