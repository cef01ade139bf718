//! Issue 11: the rstat per-CPU updated tree and its store-buffering race
//! (C4, C13, C15; docs/findings.md). Per-backend verdicts, the `stays_lost`
//! counts, the mutant, and the witness's replay and litmus export.

use memcg_flush_model::check::{RunResult, Verdict};
use memcg_flush_model::observe::Event;
use memcg_flush_model::Property;

use crate::common::{self, entry, loom, on_config};

const ENTRY: &str = "memcg-tree-sb";

/// The matrix's run of `variant` on the tree entry under `backend`.
fn on_tree_entry(variant: &str, backend: &str) -> RunResult {
    common::on_entry(variant, ENTRY, backend)
}

fn verdict(r: &RunResult, p: Property) -> Verdict {
    r.verdict(p)
        .unwrap_or_else(|| panic!("{p} not judged for {}", r.spec.variant))
        .verdict
}

fn both(r: &RunResult) -> (Verdict, Verdict) {
    (
        verdict(r, Property::Conservation),
        verdict(r, Property::EventualConservation),
    )
}

/// The expected shape: lost under loom without the barrier pair, not with
/// it; never under SC (every interleaving), with or without it.
#[test]
fn per_backend_verdicts_on_the_store_buffering_race() {
    use Verdict::*;
    for (tree, mb) in [
        ("v6.8-tree", "v6.8-tree-mb"),
        ("v6.17-tree", "v6.17-tree-mb"),
    ] {
        let r = on_tree_entry(tree, "loom");
        assert_eq!(both(&r), (Violated, Violated), "{tree}: {r:?}");
        let r = on_tree_entry(mb, "loom");
        assert_eq!(both(&r), (Holds, Holds), "{mb}: {r:?}");
    }
    for v in ["v6.8-tree", "v6.8-tree-mb", "v6.17-tree", "v6.17-tree-mb"] {
        let dfs = on_tree_entry(v, "shuttle-dfs");
        assert!(dfs.exhaustive, "{v}: the DFS did not finish");
        assert_eq!(both(&dfs), (Holds, Holds), "{v}: {dfs:?}");
        // The updater did race with the flusher under SC: the holds is not
        // vacuous.
        assert!(dfs.count(Event::UpdateBehindFlusher) > 0, "{v}: {dfs:?}");
    }
    // Without the tree (every memcg visited on every CPU), nothing is lost.
    for v in ["v6.8", "v6.17"] {
        let flat = on_tree_entry(v, "loom");
        assert_eq!(both(&flat), (Holds, Holds), "{v}: {flat:?}");
    }
}

/// `stays_lost`: a loss of the race survives every later flush and is
/// brought back only by a later update of the same memcg on the same CPU
/// ("temporary inaccuracies", C4; "the subsequent flusher will flush those
/// stats", C13).
#[test]
fn stays_lost_until_the_next_update_on_that_cpu() {
    let entry = entry(ENTRY);
    let loom = loom(Some(2));
    // k = 1 + 2 flushes after the updates (the entry), and 1 + 8.
    for settle in [entry.cfg.settle, 8] {
        let cfg = entry.cfg.clone().settle(settle);
        for (tree, mb) in [
            ("v6.8-tree", "v6.8-tree-mb"),
            ("v6.17-tree", "v6.17-tree-mb"),
        ] {
            let r = on_config(tree, &cfg, loom.clone());
            let lost = r.count(Event::LostAtFinal);
            eprintln!(
                "{tree} settle {settle}: {} executions, lost_at_final {lost}, recovered_by_flush {}, \
                 lost_after_settle {}, recovered_by_update {}, lost_after_update {}",
                r.executions,
                r.count(Event::RecoveredByFlush),
                r.count(Event::LostAfterSettle),
                r.count(Event::RecoveredByUpdate),
                r.count(Event::LostAfterUpdate),
            );
            assert!(lost > 0, "{tree}: {r:?}");
            assert_eq!(r.count(Event::RecoveredByFlush), 0, "{tree}: {r:?}");
            assert_eq!(r.count(Event::LostAfterSettle), lost, "{tree}: {r:?}");
            assert_eq!(r.count(Event::RecoveredByUpdate), lost, "{tree}: {r:?}");
            assert_eq!(r.count(Event::LostAfterUpdate), 0, "{tree}: {r:?}");
            let r = on_config(mb, &cfg, loom.clone());
            assert_eq!(r.count(Event::LostAtFinal), 0, "{mb}: {r:?}");
        }
    }
}

/// The mutant that reads the counters before unlinking loses an update
/// under every memory model, barriers or not.
#[test]
fn read_before_unlink_is_killed_under_sc_and_loom() {
    for backend in ["loom", "shuttle-dfs"] {
        let r = on_tree_entry("mutant-tree-read-before-unlink", backend);
        assert_eq!(
            both(&r),
            (Verdict::Violated, Verdict::Violated),
            "{backend}: {r:?}"
        );
        assert_eq!(r.count(Event::RecoveredByFlush), 0, "{backend}: {r:?}");
    }
}

/// The witness replays, and its race exports as the store-buffering litmus
/// test: the updater writes its counter and then finds its memcg still on
/// the tree, the flusher unlinks it and then reads the old counter.
#[test]
fn the_witness_replays_and_exports_as_store_buffering() {
    let out = common::flushcheck(&[
        "explain",
        "--variant",
        "v6.8-tree",
        "--property",
        "conservation",
        "--backend",
        "loom",
        "--cpus",
        "1",
        "--updates",
        "2",
        "--val",
        "1",
        "--readers",
        "0",
        "--periodic",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("violated: conservation:"),
        "{}",
        out.stdout
    );
    // The slice is the store-buffering test: the updater's counter store
    // then its load of updated_next, the flusher's unlink then its load of
    // the counter, from the state after the first update (issue 20),
    // marked as the kernel marks them: the test a data_race() read, the
    // unlink a plain store, the counter a plain per-CPU add (issue 40).
    for lines in [
        [
            "\t*state0 = 2; // __this_cpu_add()",
            "\tr0 = *updated_next0; // data_race()",
        ],
        [
            "\t*updated_next0 = 0; // = NULL",
            "\tr0 = READ_ONCE(*state0);",
        ],
    ] {
        let at = out
            .stdout
            .find(lines[0])
            .unwrap_or_else(|| panic!("no {:?} in:\n{}", lines[0], out.stdout));
        assert!(
            out.stdout[at..].contains(lines[1]),
            "{:?} does not follow {:?}:\n{}",
            lines[1],
            lines[0],
            out.stdout
        );
    }
    // Both loads return the old values: the store-buffering outcome.
    assert!(
        out.stdout.contains("{ state0=1; updated_next0=1; }")
            && out
                .stdout
                .contains("exists (0:r0=1 /\\ 1:r0=1 /\\ updated_next0=0)")
            && out.stdout.contains(" * Result: Sometimes DATARACE"),
        "{}",
        out.stdout
    );
    let token = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: flushcheck replay "))
        .unwrap_or_else(|| panic!("no replay line in:\n{}", out.stdout));
    let again = common::flushcheck(&["replay", token]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again.stdout.contains("violated: conservation:"),
        "{}",
        again.stdout
    );
}

/// v6.17's form: the race is on the llist node (`llist_on_list()` against
/// `init_llist_node()`), and the exported test is the same store buffering
/// on `lnode.next`, from the state after the first update (on the list:
/// 1, NULL, in the model's encoding).
#[test]
fn the_llist_witness_exports_as_store_buffering_on_the_node() {
    let out = common::flushcheck(&[
        "explain",
        "--variant",
        "v6.17-tree",
        "--property",
        "conservation",
        "--backend",
        "loom",
        "--cpus",
        "1",
        "--updates",
        "2",
        "--val",
        "1",
        "--readers",
        "0",
        "--periodic",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for needle in [
        "{ lnode_next0=1; state0=1; }",
        "\t*state0 = 2; // this_cpu_add()\n\tr0 = READ_ONCE(*lnode_next0);",
        "\tWRITE_ONCE(*lnode_next0, 0);",
        "\tr0 = READ_ONCE(*state0);",
        "exists (0:r0=1 /\\ 1:r0=1)",
    ] {
        assert!(
            out.stdout.contains(needle),
            "no {needle:?} in:\n{}",
            out.stdout
        );
    }
}

/// `flushcheck bench --barrier` runs the four tree variants on real threads
/// and reports each rate and the with/without ratios (no timing asserted).
#[test]
fn bench_barrier_reports_the_four_tree_variants() {
    let out = common::flushcheck(&[
        "bench",
        "--barrier",
        "--threads",
        "1,2",
        "--updates",
        "4096",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = crate::schemas::data(&out.stdout, "bench-barrier");
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for r in rows {
        for f in [
            "v6_8_tree",
            "v6_8_tree_mb",
            "v6_17_tree",
            "v6_17_tree_mb",
            "ratio_v6_8",
            "ratio_v6_17",
        ] {
            assert!(r[f].as_f64().expect(f) > 0.0, "{f}: {r}");
        }
    }
}
