//! The lifetime wing: a memcg's death (offline, release, free) racing
//! updaters that reach it through an RCU-protected pointer and a flusher.
//!
//! [`forms`] holds the lifetime steps as the default methods of the
//! [`forms::Lifetime`] trait and the state of one execution
//! ([`forms::Life`]), with the kernel's forms; [`fixes`] the fix
//! candidates of `death-lost-page`; [`mutants`] one small difference each.
//! The wing has a protocol of its own ([`LifeProtocol`], in [`wing`]),
//! built through the same plumbing as the flush protocol
//! ([`crate::protocol::Model`] for [`LifeWing`]); its scenario is
//! check/lifetime.rs and its monitor observe/lifetime.rs.

pub mod css_list;
pub mod fixes;
pub mod forms;
pub mod mutants;
pub mod state;
pub mod wing;

use crate::explore::BackendName;
use crate::observe::Property;
use crate::protocol::variant::{Kind, Variant};

pub use forms::{Life, Lifetime, CHILD, PARENT};
pub use wing::{model, LifeInput, LifeModel, LifeProtocol, LifeWing};

/// The wing's variants: the kernel's forms, then the mutants.
pub fn catalogue() -> Vec<Variant> {
    use BackendName::*;
    let mut all = vec![
        Variant::lifetime(
            "v6.8-life",
            Kind::Kernel,
            "v5.13-v6.15 (v6.0 and v6.8 included): release flush, list_del_rcu; the memcg freed; the cgroup's release flush and exit flush, after it, without the memcg callback",
            model(forms::V6_8Life),
        )
        .finding_on(Property::StatsSurviveDeath, ShuttleDfs, "life-child")
        .finding_on(Property::StatsSurviveDeath, Loom, "life-child")
        .finding_on(Property::StatsSurviveDeath, ShuttleDfs, "life-relink")
        // Its per-CPU spin locks multiply loom's branches: life-child at
        // bound 2 passes 570,000 executions in 120 s.
        .loom_cap(1),
        Variant::lifetime(
            "v7.1-life",
            Kind::Kernel,
            "v6.17-v7.1.5: release flush, grace period, css_rstat_exit() flushes again",
            model(forms::V7_1Life),
        ),
        Variant::lifetime(
            "v7.1-life-v1",
            Kind::Kernel,
            "v7.1.5 on cgroup v1: updates redirected to the nearest live ancestor, offline after a grace period with forced flushes",
            model(forms::V7_1LifeV1),
        ),
        Variant::lifetime(
            "v6.8-life-fix-callback-at-free",
            Kind::Fix,
            "death-lost-page: v6.8-life whose css free calls the memcg callback for every CPU under cgroup_rstat_lock and puts the parent cgroup on an updated tree, the release and its list_del_rcu() under cgroup_mutex unchanged",
            model(fixes::V6_8LifeCallbackAtFree {
                parent_updated: true,
            }),
        )
        .loom_cap(1),
        Variant::lifetime(
            "v6.8-life-fix-callback-only",
            Kind::Fix,
            "death-lost-page, withdrawn: v6.8-life-fix-callback-at-free without putting the parent cgroup on an updated tree: the callback's delta can stay in the parent's state_pending with the parent on no tree",
            model(fixes::V6_8LifeCallbackAtFree {
                parent_updated: false,
            }),
        )
        .finding_on(Property::StatsSurviveDeath, BackendName::ShuttleDfs, "life-child")
        .loom_cap(1),
        Variant::lifetime(
            "v6.8-life-fix-flush-at-css-free",
            Kind::Fix,
            "death-lost-page, withdrawn: v6.8-life keeping the memcg on rstat_css_list until its css's free, which flushes and unlinks it under cgroup_rstat_lock only: a css linked into the same cgroup under cgroup_mutex races the unlink",
            model(fixes::V6_8LifeFlushAtCssFree),
        )
        // Withdrawn: init_and_link_css() and the unlink exclude nothing.
        .finding_on(Property::NoUseAfterFree, BackendName::ShuttleDfs, "life-relink")
        .finding_on(Property::StatsSurviveDeath, BackendName::ShuttleDfs, "life-relink")
        .loom_cap(1),
        Variant::lifetime(
            "v6.8-life-fix-del-at-free",
            Kind::Fix,
            "death-lost-page, withdrawn: v6.8-life with list_del_rcu() moved into cgroup_rstat_exit(), which runs after the memcg is freed: the freed memcg stays on rstat_css_list",
            model(fixes::V6_8LifeDelAtFree),
        )
        // Withdrawn: the freed memcg is walked and unlinked after its free.
        .refutes(Property::NoUseAfterFree)
        .refutes(Property::StatsSurviveDeath)
        .loom_cap(1),
    ];
    all.extend(mutants::variants());
    all
}
