//! The lifetime model (issue 12): each mutant killed by its designated
//! property and backend, the kernel forms' verdicts and the v6.8 form's
//! loss pinned, the racy interleavings seen, and the two RCU
//! implementations agreeing.
//!
//! A lifetime variant runs like any other: one exploration per (variant,
//! entry, backend) judges `no_use_after_free`, `stats_survive_death` and
//! `no_leak` together.

use memcg_flush_model::check::{RunResult, Verdict};
use memcg_flush_model::observe::property::Property;
use memcg_flush_model::protocol::{catalogue, Family, Kind, Variant};

use crate::common::{self, assert_holds, capped, entry, entry_backend, explore, on_entry, suite};

/// The lifetime properties, in report order.
fn lifetime_properties() -> Vec<Property> {
    Property::of_family(Family::Lifetime).collect()
}

/// The lifetime variants of the catalogue.
fn forms() -> Vec<Variant> {
    catalogue::all()
        .into_iter()
        .filter(|v| v.family == Family::Lifetime)
        .collect()
}

/// The suite's lifetime entries.
fn life_entries() -> Vec<&'static str> {
    suite()
        .entries
        .iter()
        .filter(|e| e.applies_to(Family::Lifetime))
        .map(|e| e.name.as_str())
        .collect()
}

/// `r` judged exactly the lifetime properties.
fn judges_the_lifetime_properties(r: &RunResult) {
    let judged: Vec<Property> = r.verdicts.iter().map(|v| v.property).collect();
    assert_eq!(judged, lifetime_properties(), "{}", r.spec.variant);
}

#[test]
fn the_suite_has_three_lifetime_entries_and_the_catalogue_its_forms() {
    assert_eq!(life_entries(), ["life-child", "life-parent", "life-relink"]);
    let forms = forms();
    assert_eq!(forms.len(), 12, "{forms:?}");
    assert_eq!(forms.iter().filter(|v| v.kind == Kind::Kernel).count(), 3);
    // death-lost-page's fix candidate and the three withdrawn ones
    // (model/protocol/findings).
    assert_eq!(forms.iter().filter(|v| v.kind == Kind::Fix).count(), 4);
}

/// Each designated kill, searched as the matrix searches a mutant's
/// killer: the entry's search on the designated backend, stopping at the
/// killer's first violation.
#[test]
fn every_mutant_is_killed_by_its_designated_property_and_backend() {
    let mut killed = 0;
    for v in forms().into_iter().filter(|v| v.kind == Kind::Mutant) {
        assert!(!v.killed_by.is_empty(), "{}", v.name);
        for d in &v.killed_by {
            let e = entry(d.entry.as_deref().expect("a lifetime kill names its entry"));
            for b in &d.backends {
                let backend = capped(&v, entry_backend(e, b.name()));
                let x = explore(&v.name, &e.cfg, &backend, Some(d.property));
                let judged: Vec<Property> = x.verdicts.iter().map(|v| v.property).collect();
                assert_eq!(judged, lifetime_properties(), "{}", v.name);
                let (verdict, note) = x.verdict(d.property);
                assert_eq!(
                    verdict,
                    Verdict::Violated,
                    "{} ({} on {b}, {}): {note}",
                    v.name,
                    d.property,
                    e.name
                );
                assert!(note.starts_with(&format!("{}:", d.property)), "{note}");
                killed += 1;
            }
        }
    }
    assert_eq!(killed, 5);
}

#[test]
fn the_weak_memory_mutant_survives_every_sc_search() {
    // The grace period that does not order the readers' sections loses a
    // page only under weak memory: every SC interleaving keeps it.
    for e in ["life-child", "life-parent"] {
        let r = on_entry("mutant-life-gp-no-acquire", e, "shuttle-dfs");
        assert_holds(&r, Property::StatsSurviveDeath);
        assert!(r.exhaustive, "{e}: {:?}", r.stopped);
    }
}

#[test]
fn v7_1_loses_nothing_at_death_and_frees_safely_on_every_sc_interleaving() {
    for v in ["v7.1-life", "v7.1-life-v1"] {
        for e in ["life-child", "life-parent"] {
            let r = on_entry(v, e, "shuttle-dfs");
            judges_the_lifetime_properties(&r);
            for p in lifetime_properties() {
                assert_holds(&r, p);
            }
            assert!(r.exhaustive, "{v} {e}: {:?}", r.stopped);
            if (v, e) == ("v7.1-life", "life-child") {
                // The races were there: a reader's section open across the
                // release, and a charge landing after the release flush.
                for p in [Property::NoUseAfterFree, Property::StatsSurviveDeath] {
                    let c = p.coverage_event();
                    assert!(r.count(c) > 0, "{p}: {} never happened", c.name());
                }
            }
        }
    }
}

#[test]
fn v6_8_loses_a_page_charged_after_the_release_flush() {
    // Up to v6.15 the release unlinks the css from rstat_css_list, so no
    // later flush runs the memcg callback (the memcg is freed, then the
    // cgroup's release flush and cgroup_rstat_exit() unlink it): a charge
    // that lands between the release flush and the free is dropped.
    let e = entry("life-child");
    let x = explore("v6.8-life", &e.cfg, &entry_backend(e, "shuttle-dfs"), None);
    let (verdict, note) = x.verdict(Property::StatsSurviveDeath);
    assert_eq!(verdict, Verdict::Violated, "{note}");
    assert!(
        note.starts_with(
            "stats_survive_death: after every thread was joined and a final flush, memcg 1's aggregate is 0 where 1 pages were charged to its subtree (1 lost; 0 of the pages were charged to a memcg after its release flush)"
        ),
        "{note}"
    );
    // The loss, measured over the same search: one page.
    assert_eq!(x.shared.measures.lost_at_death.value(), 1);
    // Nothing else goes wrong in that form.
    let parent = on_entry("v6.8-life", "life-parent", "shuttle-dfs");
    for p in [Property::NoUseAfterFree, Property::NoLeak] {
        assert_eq!(
            x.verdict(p).0,
            Verdict::Holds,
            "life-child {p}: {}",
            x.verdict(p).1
        );
        assert_holds(&parent, p);
    }
}

#[test]
fn v6_8_frees_the_memcg_before_its_cgroup_and_the_withdrawn_fix_uses_it_after_free() {
    // The kernel's order up to v6.15 (cgroup.c css_free_rwork_fn()): the
    // memcg's css is freed first, cgroup_rstat_exit() runs at the cgroup's
    // free. The candidate that moved list_del_rcu() into cgroup_rstat_exit()
    // leaves the freed memcg on rstat_css_list until then: every SC
    // interleaving of both entries touches it after its free.
    for e in ["life-child", "life-parent"] {
        let r = on_entry("v6.8-life-fix-del-at-free", e, "shuttle-dfs");
        assert!(r.exhaustive, "{e}: {:?}", r.stopped);
        let (v, note) = common::verdict(&r, Property::NoUseAfterFree);
        assert_eq!(v, Verdict::Violated, "{e}: {note}");
        assert!(
            note.contains("rstat_css_node.") && note.contains("after memcg 2 was freed"),
            "{e}: {note}"
        );
    }
    // A flush that pops the child's cgroup before cgroup_rstat_exit() walks
    // into the freed memcg and folds its poisoned counters.
    let r = on_entry("v6.8-life-fix-del-at-free", "life-child", "shuttle-dfs");
    let (v, note) = common::verdict(&r, Property::StatsSurviveDeath);
    assert_eq!(v, Verdict::Violated, "{note}");
    assert!(note.contains("memcg 1's aggregate is -"), "{note}");
}

/// The candidate that unlinks the css at its free under cgroup_rstat_lock
/// holds while nobody else writes the list, and is withdrawn: a memory css
/// linked into the same cgroup under cgroup_mutex (init_and_link_css())
/// races the unlink, and the list keeps the freed css.
#[test]
fn the_unlink_at_free_races_a_new_css_and_the_callback_at_free_holds() {
    let e = entry("life-relink");
    let dfs = entry_backend(e, "shuttle-dfs");
    let x = explore(
        "v6.8-life-fix-flush-at-css-free",
        &e.cfg,
        &dfs,
        Some(Property::NoUseAfterFree),
    );
    let (v, note) = x.verdict(Property::NoUseAfterFree);
    assert_eq!(v, Verdict::Violated, "{note}");
    assert!(
        note.contains("of memcg 2") && note.contains("after memcg 2 was freed"),
        "{note}"
    );
    // The kernel's own unlink, at the release under cgroup_mutex, does not
    // race the new css: v6.8-life loses the page but touches nothing freed.
    let k = on_entry("v6.8-life", "life-relink", "shuttle-dfs");
    assert!(k.exhaustive, "{:?}", k.stopped);
    assert_holds(&k, Property::NoUseAfterFree);
    assert_eq!(
        common::verdict(&k, Property::StatsSurviveDeath).0,
        Verdict::Violated
    );
    // The replacement: the callback for every CPU at the free, the parent
    // marked updated, the list left to its cgroup_mutex writers. Nothing
    // lost, nothing touched, on every SC interleaving of every entry.
    for e in life_entries() {
        let r = on_entry("v6.8-life-fix-callback-at-free", e, "shuttle-dfs");
        assert!(r.exhaustive, "{e}: {:?}", r.stopped);
        for p in lifetime_properties() {
            assert_holds(&r, p);
        }
    }
    // Without marking the parent updated the callback's delta can stay in
    // the parent's state_pending: a flush between the late charge and the
    // free has taken the parent off every tree.
    let c = entry("life-child");
    let x = explore(
        "v6.8-life-fix-callback-only",
        &c.cfg,
        &entry_backend(c, "shuttle-dfs"),
        Some(Property::StatsSurviveDeath),
    );
    let (v, note) = x.verdict(Property::StatsSurviveDeath);
    assert_eq!(v, Verdict::Violated, "{note}");
}

/// (Not in the `crossbeam_loom` build, where crossbeam-epoch runs only
/// under loom: the loom_epoch module compares the flavours there.)
#[cfg(not(crossbeam_loom))]
#[test]
#[cfg_attr(not(loom), ignore = "8 s: under --cfg loom, or run with --ignored")]
fn the_flag_rcu_and_crossbeam_epoch_give_the_same_verdicts() {
    use crate::common::reg;
    use memcg_flush_model::check::run::{run, RunSpec};
    use memcg_flush_model::kernel::RcuFlavor;
    // Every lifetime scenario both can run: each variant (but the RCU
    // defect, which only the flag RCU has), entry and property, under
    // shuttle's random and PCT schedulers.
    let mut compared = 0;
    for v in forms().into_iter().filter(|v| !v.flag_rcu_only) {
        for e in life_entries() {
            for b in ["shuttle-random", "shuttle-pct"] {
                let backend = capped(&v, entry_backend(entry(e), b));
                let verdicts: Vec<Vec<(Property, Verdict)>> = [RcuFlavor::Flag, RcuFlavor::Epoch]
                    .into_iter()
                    .map(|f| {
                        let mut spec =
                            RunSpec::new(&v.name, e, &entry(e).cfg, backend.clone(), 300.0);
                        spec.rcu = Some(f);
                        let r = run(&spec, reg()).expect("runs");
                        judges_the_lifetime_properties(&r);
                        r.verdicts.iter().map(|x| (x.property, x.verdict)).collect()
                    })
                    .collect();
                assert_eq!(
                    verdicts[0], verdicts[1],
                    "{} {e} {b}: flag {:?}, epoch {:?}",
                    v.name, verdicts[0], verdicts[1]
                );
                compared += verdicts[0].len();
            }
        }
    }
    // (variant, entry, property, backend) pairs.
    // 11 variants (the fix candidate of death-lost-page and the three
    // withdrawn ones among them), three entries.
    assert_eq!(compared, 11 * 3 * 3 * 2);
}

#[test]
fn the_command_line_checks_its_input_and_prints_json() {
    let bad = common::flushcheck(&["lifetime", "--witness", "v7.1-life:no_leak"]);
    assert_eq!(bad.code, 2);
    assert_eq!(
        bad.stderr.trim(),
        "flushcheck: error: --witness v7.1-life:no_leak: expected VARIANT:PROPERTY:BACKEND:ENTRY"
    );
    let unknown = common::flushcheck(&["lifetime", "--variant", "v9-life"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .stderr
            .contains("lifetime: unknown variant \"v9-life\": expected one of v6.8-life,"),
        "{}",
        unknown.stderr
    );
    // Only the lifetime forms may be named.
    let flush = common::flushcheck(&["lifetime", "--variant", "v6.0"]);
    assert_eq!(flush.code, 2, "{}", flush.stderr);
    let (code, cells) = common::flushcheck_json(&[
        "lifetime",
        "--variant",
        "v7.1-life",
        "--backend",
        "shuttle-dfs",
        "--json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(cells.len(), 3);
    for (c, p) in cells.iter().zip(lifetime_properties()) {
        assert_eq!(c["property"], p.name(), "{c}");
        assert_eq!(c["verdict"], "holds", "{c}");
        assert_eq!(c["exhaustive"], true, "{c}");
        assert_eq!(c["configs"].as_array().map(Vec::len), Some(3), "{c}");
    }
}

/// `--witness` prints the violation as a CPU-column trace, as `explain`
/// prints one of the flush protocol.
#[test]
fn a_witness_prints_as_a_cpu_column_trace() {
    let out = common::flushcheck(&[
        "lifetime",
        "--witness",
        "v6.8-life:stats_survive_death:shuttle-dfs:life-child",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The result first: no line of the search's own panics before it.
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let first = out.stdout.lines().next().unwrap_or("");
    assert!(
        first.starts_with("v6.8-life on life-child under shuttle DFS")
            && first.contains("(flag RCU): violated after"),
        "{first}"
    );
    assert!(
        out.stdout
            .contains("\n{ v6.8-life: memcgs 0 (root), 1 (parent), 2 (child)"),
        "no initial state:\n{}",
        out.stdout
    );
    // One column per thread, the steps numbered in execution order.
    let header = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("CPU 0"));
    assert!(
        header.is_some_and(|h| h.contains("periodic") && h.contains("rmdir 2")),
        "no CPU columns:\n{}",
        out.stdout
    );
    assert!(
        out.stdout.lines().any(|l| l.trim_start().starts_with("1 ")),
        "no numbered steps:\n{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("violated: stats_survive_death: "),
        "{}",
        out.stdout
    );
    // The kernel's free order up to v6.15: the memcg, then the cgroup's
    // cgroup_rstat_exit() and the cgroup.
    let at = |s: &str| {
        out.stdout
            .find(s)
            .unwrap_or_else(|| panic!("no {s:?}:\n{}", out.stdout))
    };
    assert!(
        at("memcg 2 FREED") < at("exit(2)") && at("exit(2)") < at("cgroup 2 FREED"),
        "{}",
        out.stdout
    );
}

#[cfg(not(crossbeam_loom))]
#[test]
fn epoch_rcu_is_refused_where_the_backend_cannot_see_it() {
    use memcg_flush_model::explore::BackendKind;
    use memcg_flush_model::kernel::RcuFlavor;
    let e = RcuFlavor::Epoch.check(BackendKind::Loom).unwrap_err();
    assert!(
        e.starts_with("--rcu epoch: loom cannot see crossbeam-epoch"),
        "{e}"
    );
    assert_eq!(
        RcuFlavor::parse("srcu").unwrap_err(),
        "--rcu srcu: expected flag or epoch"
    );
}
