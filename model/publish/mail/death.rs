//! `death-lost-page` as a stable-only patch for the long-term trees that
//! still have `rstat_css_list` (5.15, 6.1, 6.6 and 6.12; v6.16 ended it
//! upstream with 5da3bfa029d6, a rework that does not backport): the
//! css's free calls its flush callback for every CPU and marks the parent
//! updated, and the list keeps its writers under `cgroup_mutex`. The model
//! behind it is the lifetime wing (`v6.8-life-fix-callback-at-free`, and
//! the two withdrawn candidates it replaces).

use crate::protocol::findings::{maintainers, Finding};
use crate::publish::kdiff::{Edit, Series, Tree};

use super::{diff_from, people, prose, signed_off_by, Ctx, Kind, Mail};

/// The newest long-term tree the loss is in: Debian's linux-source-6.12.
pub const SERIES: Series = Series {
    series: "6.12",
    package: "linux-source-6.12",
    suite: "trixie",
};

/// The release whose names the mail uses.
pub const RELEASE: &str = "v6.12";

/// The long-term trees with the loss, as read (the release and free paths
/// of kernel/cgroup/cgroup.c): 5.15.0, 6.1.0 and 6.1.192, 6.6.9, 6.12.0
/// and 6.12.117.
pub const LTS: &[&str] = &["5.15", "6.1", "6.6", "6.12"];

/// The name of the function the patch adds to kernel/cgroup/rstat.c.
pub const HELPER: &str = "cgroup_rstat_css_free_flush";

/// The patch's edits in `tree`.
pub fn edits(tree: &Tree) -> Result<Vec<Edit>, String> {
    let mut rstat = tree.edit("kernel/cgroup/rstat.c")?;
    let mut cgroup = tree.edit("kernel/cgroup/cgroup.c")?;
    let mut internal = tree.edit("kernel/cgroup/cgroup-internal.h")?;
    edit_rstat(&mut rstat)?;
    edit_cgroup(&mut cgroup)?;
    edit_internal(&mut internal)?;
    Ok(vec![internal, cgroup, rstat])
}

/// kernel/cgroup/rstat.c: the new function, before cgroup_rstat_init().
pub fn edit_rstat(e: &mut Edit) -> Result<(), String> {
    e.find_anywhere(
        "static DEFINE_SPINLOCK(cgroup_rstat_lock);",
        "(the global rstat lock of v5.7 to v6.15)",
    )?;
    let (init, _) = e.function("cgroup_rstat_init")?;
    let lines = [
        "/**",
        "* cgroup_rstat_css_free_flush - fold a css's per-cpu stats before it is freed",
        "* @css: the css, off its cgroup's rstat_css_list since its release",
        "*",
        "* An update that found @css under RCU before it went offline can reach",
        "* the per-cpu counters and cgroup_rstat_updated() after the release",
        "* flush has passed its cpu, and no later flush calls @css's callback.",
        "* css_free_rwork_fn() runs after a grace period, when every such update",
        "* has landed: fold them into @css and its parent's pending counts, and",
        "* mark the parent updated so that the next flush that covers it folds",
        "* those.",
        "*/",
    ];
    let mut add: Vec<String> = lines
        .iter()
        .map(|l| {
            if *l == "/**" {
                l.to_string()
            } else {
                format!(" {l}")
            }
        })
        .collect();
    add.extend([
        format!("void {HELPER}(struct cgroup_subsys_state *css)"),
        "{".into(),
        "\tstruct cgroup *parent = cgroup_parent(css->cgroup);".into(),
        "\tint cpu;".into(),
        String::new(),
        "\tspin_lock_irq(&cgroup_rstat_lock);".into(),
        "\tfor_each_possible_cpu(cpu)".into(),
        "\t\tcss->ss->css_rstat_flush(css, cpu);".into(),
        "\tif (parent)".into(),
        "\t\tcgroup_rstat_updated(parent, smp_processor_id());".into(),
        "\tspin_unlock_irq(&cgroup_rstat_lock);".into(),
        "}".into(),
        String::new(),
    ]);
    e.insert(init, add)
}

/// kernel/cgroup/cgroup.c: the call in css_free_rwork_fn(), before
/// `ss->css_free(css)`.
pub fn edit_cgroup(e: &mut Edit) -> Result<(), String> {
    let f = e.function("css_free_rwork_fn")?;
    let at = e.find(f, "ss->css_free(css);", "in css_free_rwork_fn()")?;
    let release = e.function("css_release_work_fn")?;
    e.find(
        release,
        "list_del_rcu(&css->rstat_css_node);",
        "in css_release_work_fn(): a tree without rstat_css_list (v6.16 or later) does not \
         need this patch",
    )?;
    let indent: String = e.lines()[at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    e.insert(
        at,
        vec![
            format!("{indent}if (ss->css_rstat_flush)"),
            format!("{indent}\t{HELPER}(css);"),
        ],
    )
}

/// kernel/cgroup/cgroup-internal.h: the declaration, after
/// cgroup_rstat_exit()'s.
pub fn edit_internal(e: &mut Edit) -> Result<(), String> {
    let at = e.find_anywhere(
        "void cgroup_rstat_exit(struct cgroup *cgrp);",
        "(the rstat declarations)",
    )?;
    e.insert(
        at + 1,
        vec![format!("void {HELPER}(struct cgroup_subsys_state *css);")],
    )
}

/// The mail.
pub fn mail(f: &Finding, ctx: &Ctx) -> Result<Mail, String> {
    let paras = vec![
        format!(
            "[ Stable-only: upstream ended this in v6.16 with 5da3bfa029d6 (\"cgroup: use \
             separate rstat trees for each subsystem\"), a rework that does not backport. \
             For {}.y; the same change applies to each. ]",
            LTS.join(".y, ")
        ),
        "css_release_work_fn() flushes the cgroup and then takes the css off \
         cgrp->rstat_css_list, a grace period before css_free_rwork_fn() frees it. An \
         update that found the memcg under rcu_read_lock() before it went offline \
         (__mod_objcg_mlstate() through obj_cgroup_memcg(), for the slab statistics the \
         objcg stock holds) can add to the memcg's per-cpu counters and reach \
         cgroup_rstat_updated() after the release flush has passed its CPU. No later flush \
         calls the memcg's callback, the css being off the list: the memcg is freed with \
         the update in its counters, and its parent's and every ancestor's memory.stat \
         miss it for good. When the objects are freed later and uncharged from the parent \
         the objcg was reparented to, the parent's counter goes below the truth."
            .to_string(),
        "The window spans offline, the last css_put(), the release work being run and its \
         flush: milliseconds. On !PREEMPT_RT these updates run with interrupts disabled \
         (mod_objcg_state() holds the objcg stock's local_lock_irqsave()), so it takes an \
         NMI on that CPU between the per-cpu add and cgroup_rstat_updated(), the host \
         preempting the vCPU there, or PREEMPT_RT. Each CPU caught in the window loses one \
         update of the dying memcg: the slab bytes the stock pushed, up to about a page."
            .to_string(),
        "Fix it in css_free_rwork_fn(), before ss->css_free(): take cgroup_rstat_lock, call \
         the css's flush callback for every possible CPU, and mark the parent cgroup \
         updated so that the next flush that covers it folds what the callback passed up. \
         rstat_css_list is left alone, so its writers, init_and_link_css() and \
         css_release_work_fn(), still both run under cgroup_mutex."
            .to_string(),
        "Two other ways do not work. Deleting the css from the list at the free instead, \
         under cgroup_rstat_lock, races init_and_link_css() when the memory controller is \
         enabled again in the parent's cgroup.subtree_control while the old memcg waits \
         to be freed: the list can keep the freed css, and the next flush of the cgroup \
         calls its callback. Calling the callback without marking the parent updated \
         loses the update again when a flush ran between it and the free: that flush \
         took the parent off the tree, and the delta stays in the parent's state_pending."
            .to_string(),
    ];
    let (mut to, mut cc, _) = maintainers::recipients(f.files);
    let (mm_to, mm_cc, _) = maintainers::recipients(&["mm/memcontrol.c"]);
    let mut all: Vec<String> = Vec::new();
    for p in to
        .drain(..)
        .chain(mm_to)
        .chain([people::JP.to_string()])
        .chain(cc.drain(..).chain(mm_cc))
    {
        if !all.contains(&p) {
            all.push(p);
        }
    }
    // Stable-only: the stable list, linux-mm, cgroups and the maintainers;
    // not the mm tree, nor linux-kernel.
    all.retain(|p| p != maintainers::MM_TREE && !p.starts_with("linux-kernel@"));
    let diff = diff_from(ctx, &SERIES, edits)?;
    Ok(Mail {
        id: f.id,
        kind: Kind::StablePatch,
        subject: format!(
            "[PATCH {}.y] cgroup: fold a css's per-cpu stats when it is freed",
            SERIES.series
        ),
        to: vec![people::STABLE.to_string()],
        cc: all,
        in_reply_to: None,
        references: Vec::new(),
        release: RELEASE,
        body: prose(&paras),
        trailers: vec![
            format!("Fixes: {}", f.fixes_tag.unwrap_or_default()),
            signed_off_by(ctx),
        ],
        diff: Some(diff),
        notes: prose(&[
            "Found with memcg-flush-model: `flushcheck lifetime --backend \
                        shuttle-dfs` checks every form on every interleaving: v6.8-life \
                        loses the update, v6.8-life-fix-callback-at-free (this change) \
                        holds, v6.8-life-fix-flush-at-css-free and \
                        v6.8-life-fix-callback-only (the two other ways) fail."
                .to_string(),
        ]),
        limit: 60,
    })
}
