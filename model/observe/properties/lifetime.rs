//! A memcg's death: nothing touches it once freed, its pages reach its
//! parent, and it leaves no CPU's updated tree holding it.

use crate::observe::coverage::Event;
use crate::observe::property::{always, checked, Check, Def, EVERY_BACKEND};
use crate::vocab::{Op, Var};

use super::hooks::LifeAt;

/// This file's properties, in report order.
pub static DEFS: &[&Def] = &[&NO_USE_AFTER_FREE, &STATS_SURVIVE_DEATH, &NO_LEAK];

/// `no_use_after_free`: no access to a memcg after it is freed.
pub static NO_USE_AFTER_FREE: Def = Def {
    name: "no_use_after_free",
    claim: "no access to a memcg or its per-CPU data after it is freed",
    source: "RCU and the css references: readers of objcg->memcg and flushers finish before css_free_rwork_fn runs",
    decided_by: "all backends: an access after the free in execution order (the free poisons the memcg's atomics, so loom orders it against every access)",
    backends: EVERY_BACKEND,
    applies: always,
    unchecked: checked,
    coverage: Event::ReaderAcrossRelease,
    premise: Some(Event::ChargeRacedDeath),
    race_needs_skip: false,
    refutable: false,
    check: Check::Life(|ctx, at| {
        let LifeAt::Access { actor, access: a } = *at else {
            return None;
        };
        // A memcg's updated-tree node is freed with the memcg from v6.16
        // (per-css rstat) and with its cgroup, later, up to v6.15; every
        // other word of the model's memcg is the memcg's.
        let tree = matches!(a.var, Var::UpdatedNext { .. } | Var::LlistNode { .. });
        let freed = if tree { ctx.rstat_freed } else { ctx.freed };
        let m = a.var.memcg().filter(|m| freed[*m as usize])?;
        // The model's tree walks test every node's word; a tree word that
        // says "off the tree" stands for a node the kernel's pointer walk
        // never reaches (rstat_css_list is walked by its pointers).
        let unreached = tree && a.op == Op::Read(0);
        (!unreached).then(|| {
            format!(
                "no_use_after_free: {actor} accessed {} of memcg {m} ({:?}) after memcg {m} was freed",
                a.var, a.op
            )
        })
    }),
};

/// `stats_survive_death`: after quiescence and a final flush, every page
/// charged to a memcg that died is in its parent's aggregate.
pub static STATS_SURVIVE_DEATH: Def = Def {
    name: "stats_survive_death",
    claim: "after quiescence and a final flush, every page charged to a memcg that died is in its parent's aggregate (the root's if the parent died too)",
    source: "a memcg's statistics are flushed into its parent before it is freed (css_release_work_fn, css_rstat_exit)",
    decided_by: "all backends: main's read after joining every thread and a final flush; loom also under weak memory",
    backends: EVERY_BACKEND,
    applies: always,
    unchecked: checked,
    coverage: Event::UpdateAfterRelease,
    premise: Some(Event::ChargeRacedDeath),
    race_needs_skip: false,
    refutable: false,
    check: Check::Life(|ctx, at| {
        let LifeAt::Final { memcg, value } = *at else {
            return None;
        };
        let expected = ctx.charged_to_subtree(memcg);
        (value != expected).then(|| {
            let late: i64 = ctx.late.iter().sum();
            let lost = expected - value;
            format!(
                "stats_survive_death: after every thread was joined and a final flush, memcg {memcg}'s \
                 aggregate is {value} where {expected} pages were charged to its subtree ({lost} lost; \
                 {late} of the pages were charged to a memcg after its release flush)"
            )
        })
    }),
};

/// `no_leak`: when `css_rstat_exit()` runs, the memcg is on no CPU's
/// updated tree.
pub static NO_LEAK: Def = Def {
    name: "no_leak",
    claim: "when css_rstat_exit() runs, the memcg is on no CPU's updated tree",
    source: "css_rstat_exit()'s WARN_ON_ONCE, which leaks the per-CPU rstat data",
    decided_by: "all backends: the exit check's reads of the tree",
    backends: EVERY_BACKEND,
    applies: always,
    unchecked: checked,
    coverage: Event::UpdateAfterRelease,
    premise: Some(Event::ChargeRacedDeath),
    race_needs_skip: false,
    refutable: false,
    check: Check::Life(|_, at| match *at {
        LifeAt::ExitCheck { memcg, on_tree } if on_tree > 0 => Some(format!(
            "no_leak: css_rstat_exit() of memcg {memcg} found it still on {on_tree} CPU's updated \
             tree (WARN_ON_ONCE: its per-CPU rstat data leaks)"
        )),
        _ => None,
    }),
};
