//! The lifetime suite: entries, variants, backends and which RCU each
//! search uses.

use std::sync::Arc;

use crate::explore::run::Backend;
use crate::explore::BackendKind;
use crate::kernel::rcu::RcuFlavor;
use crate::observe::property::Property;
use crate::protocol::lifetime::{self, mutants, LifeModel};
use crate::protocol::Kind;

/// One lifetime configuration.
#[derive(Clone, Debug)]
pub struct LifeEntry {
    /// Name, as `--entry` takes it.
    pub name: &'static str,
    /// Updater CPUs.
    pub cpus: usize,
    /// 1-page charges per CPU.
    pub updates: usize,
    /// Whether a periodic flush of the whole tree races the death.
    pub periodic: bool,
    /// Whether the parent is removed too, concurrently.
    pub parent_dies: bool,
    /// Whether the CPU charges through a folio's reference on the child
    /// (then puts it) instead of through the objcg under RCU.
    pub folio: bool,
    /// loom's preemption bound here (the grace period's wait multiplies
    /// loom's branches: unbounded does not finish).
    pub loom_bound: usize,
    /// What it shows.
    pub about: &'static str,
}

/// The lifetime entries.
pub fn entries() -> Vec<LifeEntry> {
    vec![
        LifeEntry {
            name: "life-child",
            cpus: 1,
            updates: 1,
            periodic: true,
            parent_dies: false,
            folio: false,
            loom_bound: 2,
            about: "the child dies while a CPU charges through the objcg and the periodic work flushes",
        },
        LifeEntry {
            name: "life-parent",
            cpus: 1,
            updates: 1,
            periodic: false,
            parent_dies: true,
            folio: true,
            loom_bound: 2,
            about: "child and parent are removed concurrently while a CPU charges the child once through a folio's reference, then puts it",
        },
    ]
}

/// A lifetime variant: a form or a mutant of one, and what is expected.
#[derive(Clone)]
pub struct LifeVariant {
    /// Name.
    pub name: &'static str,
    /// Kernel form or mutant.
    pub kind: Kind,
    /// The code.
    pub model: Arc<dyn LifeModel>,
    /// One line.
    pub about: &'static str,
    /// A mutant's designated killer: property, backend, entry.
    pub killed_by: Option<(Property, &'static str, &'static str)>,
    /// A kernel form's pinned findings: property, backend, entry.
    pub findings: Vec<(Property, &'static str, &'static str)>,
    /// Whether it needs the flag RCU (a defect of the RCU implementation).
    pub flag_rcu_only: bool,
    /// The most preemptions loom is given for it (the v6.8 form's per-CPU
    /// spin locks multiply loom's branches: life-child at bound 2 passes
    /// 570,000 executions in 120 s).
    pub loom_cap: usize,
}

/// The lifetime variants.
pub fn catalogue() -> Vec<LifeVariant> {
    let v = |name, kind, model, about| LifeVariant {
        name,
        kind,
        model,
        about,
        killed_by: None,
        findings: Vec::new(),
        flag_rcu_only: false,
        loom_cap: usize::MAX,
    };
    let mut out = vec![
        LifeVariant {
            findings: vec![
                (Property::StatsSurviveDeath, "shuttle-dfs", "life-child"),
                (Property::StatsSurviveDeath, "loom", "life-child"),
            ],
            loom_cap: 1,
            ..v(
                "v6.8-life",
                Kind::Kernel,
                lifetime::model(lifetime::V6_8Life),
                "v4.18-v6.14 (v6.0 and v6.8 included): release flush, list_del_rcu, exit flush without the memcg callback",
            )
        },
        v(
            "v7.1-life",
            Kind::Kernel,
            lifetime::model(lifetime::V7_1Life),
            "v6.17-v7.1.5: release flush, grace period, css_rstat_exit() flushes again",
        ),
        v(
            "v7.1-life-v1",
            Kind::Kernel,
            lifetime::model(lifetime::V7_1LifeV1),
            "v7.1.5 on cgroup v1: updates redirected to the nearest live ancestor, offline after a grace period with forced flushes",
        ),
    ];
    let m = |name, model, about, killer: (Property, &'static str, &'static str)| LifeVariant {
        killed_by: Some(killer),
        ..v(name, Kind::Mutant, model, about)
    };
    let (dfs, random) = ("shuttle-dfs", "shuttle-random");
    let uaf = Property::NoUseAfterFree;
    out.extend([
        m(
            "mutant-life-free-without-gp",
            lifetime::model(mutants::FreeWithoutGracePeriod),
            "v7.1 freeing with queue_work(), no grace period",
            (uaf, dfs, "life-child"),
        ),
        m(
            "mutant-life-no-exit-flush",
            lifetime::model(mutants::NoExitFlush),
            "v7.1 whose css_rstat_exit() does not flush",
            (Property::NoLeak, dfs, "life-child"),
        ),
        m(
            "mutant-life-deref-outside-rcu",
            lifetime::model(mutants::DerefOutsideRcu),
            "v7.1 whose updater charges the memcg after rcu_read_unlock()",
            (uaf, random, "life-child"),
        ),
        m(
            "mutant-life-early-parent-put",
            lifetime::model(mutants::EarlyParentPut),
            "v7.1 putting the parent when the child goes offline, before the child is freed",
            (uaf, dfs, "life-parent"),
        ),
    ]);
    out.push(LifeVariant {
        flag_rcu_only: true,
        ..m(
            "mutant-life-gp-no-acquire",
            lifetime::model(mutants::GracePeriodWithoutOrdering),
            "v7.1 on an RCU whose grace period does not order the readers' sections (weak memory only)",
            (Property::NoUseAfterFree, "loom", "life-child"),
        )
    });
    out
}

/// The backends of the lifetime suite; loom's bound is each entry's
/// ([`LifeEntry::loom_bound`]) unless [`for_entry`] is given another.
pub fn backends() -> Vec<Backend> {
    vec![
        Backend::Loom {
            preemption_bound: None,
        },
        Backend::ShuttleRandom {
            iterations: 2000,
            seed: 1,
        },
        Backend::ShuttlePct {
            iterations: 2000,
            depth: 3,
            seed: 1,
        },
        Backend::ShuttleDfs {
            max_schedules: 1_000_000,
            sleep_sets: true,
            stateful: true,
        },
        Backend::Std { iterations: 500 },
    ]
}

/// `backend` as run for `variant` on `entry`: loom at the entry's bound
/// (at most the variant's cap), or at `loom_bound` if given.
pub fn for_entry(
    backend: &Backend,
    entry: &LifeEntry,
    variant: &LifeVariant,
    loom_bound: Option<Option<usize>>,
) -> Backend {
    match backend {
        Backend::Loom { .. } => Backend::Loom {
            preemption_bound: loom_bound.unwrap_or(Some(entry.loom_bound.min(variant.loom_cap))),
        },
        b => b.clone(),
    }
}

/// The RCU flavour an exploration uses unless told: crossbeam-epoch where
/// the backend can see it, except for the depth-first search, whose state
/// and independence reasoning see only the backend's own atomics.
pub fn flavor_for(backend: &Backend, variant: &LifeVariant) -> RcuFlavor {
    let kind = match backend {
        Backend::Loom { .. } => BackendKind::Loom,
        Backend::Std { .. } => BackendKind::Std,
        _ => BackendKind::Shuttle,
    };
    if variant.flag_rcu_only || matches!(backend, Backend::ShuttleDfs { .. }) {
        RcuFlavor::Flag
    } else {
        RcuFlavor::default_for(kind)
    }
}
