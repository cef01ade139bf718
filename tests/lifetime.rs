//! The lifetime model (issue 12): each mutant killed by its designated
//! property and backend, the kernel forms' verdicts and the v6.8 form's
//! loss pinned, the racy interleavings seen, and the two RCU
//! implementations agreeing.

use std::time::Duration;

mod common;

use memcg_flush_model::check::lifetime::{
    backends, catalogue, entries, explore_life, flavor_for, for_entry, LifeEntry, LifeRun,
    LifeVariant,
};
use memcg_flush_model::check::Verdict;
use memcg_flush_model::explore::Backend;
use memcg_flush_model::kernel::RcuFlavor;
use memcg_flush_model::observe::property::Property;

fn variant(name: &str) -> LifeVariant {
    catalogue()
        .into_iter()
        .find(|v| v.name == name)
        .expect("variant")
}

fn entry(name: &str) -> LifeEntry {
    entries()
        .into_iter()
        .find(|e| e.name == name)
        .expect("entry")
}

fn backend(name: &str) -> Backend {
    backends()
        .into_iter()
        .find(|b| b.name() == name)
        .expect("backend")
}

fn run(v: &str, e: &str, b: &str, p: Property) -> LifeRun {
    let (v, e) = (variant(v), entry(e));
    let b = for_entry(&backend(b), &e, &v, None);
    let flavor = flavor_for(&b, &v);
    explore_life(&v, &e, &b, p, flavor, Duration::from_secs(300), false)
}

#[test]
fn every_mutant_is_killed_by_its_designated_property_and_backend() {
    let mut killed = 0;
    for v in catalogue().into_iter().filter(|v| v.killed_by.is_some()) {
        let (p, b, e) = v.killed_by.unwrap();
        let r = run(v.name, e, b, p);
        assert_eq!(
            r.verdict,
            Verdict::Violated,
            "{} ({p} on {b}, {e}): {:?}",
            v.name,
            r.note
        );
        assert!(
            r.note
                .as_deref()
                .unwrap()
                .starts_with(&format!("{}:", p.name())),
            "{}: {:?}",
            v.name,
            r.note
        );
        killed += 1;
    }
    assert_eq!(killed, 5);
}

#[test]
fn the_weak_memory_mutant_survives_every_sc_search() {
    // The grace period that does not order the readers' sections loses a
    // page only under weak memory: every SC interleaving keeps it.
    for e in ["life-child", "life-parent"] {
        let r = run(
            "mutant-life-gp-no-acquire",
            e,
            "shuttle-dfs",
            Property::StatsSurviveDeath,
        );
        assert_eq!(r.verdict, Verdict::Holds, "{e}: {:?}", r.note);
        assert!(r.exhaustive, "{e}");
    }
}

#[test]
fn v7_1_loses_nothing_at_death_and_frees_safely_on_every_sc_interleaving() {
    for v in ["v7.1-life", "v7.1-life-v1"] {
        for e in ["life-child", "life-parent"] {
            for p in Property::LIFETIME {
                let r = run(v, e, "shuttle-dfs", p);
                assert_eq!(r.verdict, Verdict::Holds, "{v} {e} {p}: {:?}", r.note);
                assert!(r.exhaustive, "{v} {e} {p}");
            }
        }
    }
    // The races were there: a reader's section open across the release,
    // and a charge landing after the release flush.
    let uaf = run(
        "v7.1-life",
        "life-child",
        "shuttle-dfs",
        Property::NoUseAfterFree,
    );
    assert!(uaf.coverage > 0);
    let late = run(
        "v7.1-life",
        "life-child",
        "shuttle-dfs",
        Property::StatsSurviveDeath,
    );
    assert!(late.coverage > 0);
}

#[test]
fn v6_8_loses_a_page_charged_after_the_release_flush() {
    // Up to v6.14 the release unlinks the css from rstat_css_list, so the
    // free's flush no longer runs the memcg callback: a charge that lands
    // between the release flush and the free is dropped.
    let r = run(
        "v6.8-life",
        "life-child",
        "shuttle-dfs",
        Property::StatsSurviveDeath,
    );
    assert_eq!(r.verdict, Verdict::Violated);
    let note = r.note.unwrap();
    assert!(
        note.starts_with(
            "stats_survive_death: after every thread was joined and a final flush, memcg 1's aggregate is 0 where 1 pages were charged to its subtree (1 lost; 0 of the pages were charged to a memcg after its release flush)"
        ),
        "{note}"
    );
    assert_eq!(r.lost.get("memcg 1"), Some(&1));
    // Nothing else goes wrong in that form.
    for p in [Property::NoUseAfterFree, Property::NoLeak] {
        for e in ["life-child", "life-parent"] {
            let r = run("v6.8-life", e, "shuttle-dfs", p);
            assert_eq!(r.verdict, Verdict::Holds, "{e} {p}: {:?}", r.note);
        }
    }
}

#[test]
fn the_flag_rcu_and_crossbeam_epoch_give_the_same_verdicts() {
    // Every lifetime scenario both can run: each variant (but the RCU
    // defect, which only the flag RCU has), entry and property, under
    // shuttle's random and PCT schedulers.
    let mut compared = 0;
    for v in catalogue().into_iter().filter(|v| !v.flag_rcu_only) {
        for e in entries() {
            for p in Property::LIFETIME {
                for b in ["shuttle-random", "shuttle-pct"] {
                    let b = backend(b);
                    let verdicts: Vec<Verdict> = [RcuFlavor::Flag, RcuFlavor::Epoch]
                        .into_iter()
                        .map(|f| {
                            explore_life(&v, &e, &b, p, f, Duration::from_secs(300), false).verdict
                        })
                        .collect();
                    assert_eq!(
                        verdicts[0], verdicts[1],
                        "{} {} {p} {}: flag {:?}, epoch {:?}",
                        v.name, e.name, b, verdicts[0], verdicts[1]
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 7 * 2 * 3 * 2);
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
            .contains("unknown lifetime variant \"v9-life\""),
        "{}",
        unknown.stderr
    );
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
    assert!(cells
        .iter()
        .all(|c| c["verdict"] == "holds" && c["exhaustive"] == true));
}

#[test]
fn epoch_rcu_is_refused_where_the_backend_cannot_see_it() {
    let e = RcuFlavor::Epoch
        .check(memcg_flush_model::explore::BackendKind::Loom)
        .unwrap_err();
    assert!(
        e.starts_with("--rcu epoch: loom cannot see crossbeam-epoch"),
        "{e}"
    );
    assert_eq!(
        RcuFlavor::parse("srcu").unwrap_err(),
        "--rcu srcu: expected flag or epoch"
    );
}
