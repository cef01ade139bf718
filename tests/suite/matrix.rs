//! The matrix on small selections of variants and backends, through the
//! binary: the table agrees with `--json`, the summary counts, and a
//! surviving mutant fails the run. (The default run, the README's main
//! command, is run once by a test of its own.)
//!
//! A mutant's cells other than its designated killers' need not be run
//! (the matrix may stop searching a mutant once its killers fired), so
//! only those are asserted for a mutant.

use memcg_flush_model::explore::BackendName;

use crate::common::{self, variant};

/// Same seeds, same searches: the table shows what the JSON says, and the
/// summary counts configurations per property.
#[test]
fn table_agrees_with_json_and_summarises() {
    let args = [
        "--variant",
        "v6.0,mutant-skip-off-by-one,benign-cas-skip",
        "--backend",
        "shuttle-random,shuttle-pct",
        "--shuttle-iterations",
        "1000",
    ];
    let mut table_args = args.to_vec();
    table_args.push("--cells");
    let table = common::flushcheck(&table_args);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code_j, cells) = common::flushcheck_json(&json_args);
    assert_eq!(table.code, code_j);
    assert_eq!(code_j, 0, "{}", table.stdout);
    // 9 properties: the 8 of v5.19's family and ratelimited_skip_justified,
    // on each backend, for the kernel version and the benign rewrite.
    for v in ["v6.0", "benign-cas-skip"] {
        let mine = cells.iter().filter(|c| c["variant"] == v).count();
        assert_eq!(mine, 9 * 2, "{v}");
    }
    // The mutant's designated killers, on each backend.
    let mutant = variant("mutant-skip-off-by-one");
    let killers: Vec<_> = cells
        .iter()
        .filter(|c| c["variant"] == mutant.name.as_str())
        .filter(|c| {
            mutant.killed_by.iter().any(|d| {
                c["property"] == d.property.name()
                    && d.backends
                        .iter()
                        .any(|b| c["backend"] == b.name() && *b != BackendName::ShuttleDfs)
            })
        })
        .collect();
    assert_eq!(killers.len(), 2 * 2, "{killers:?}");
    for c in &killers {
        assert_eq!(c["expect"], "killed", "{c}");
        assert_eq!(c["verdict"], "violated", "{c}");
    }
    let asserted = cells
        .iter()
        .filter(|c| c["variant"] != mutant.name.as_str())
        .chain(killers.iter().copied());
    for c in asserted {
        let row = table
            .stdout
            .lines()
            .find(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() >= 6
                    && f[0] == c["variant"]
                    && f[1] == c["property"]
                    && f[2] == c["backend"]
            })
            .unwrap_or_else(|| panic!("no table row for {c}"));
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(f[3].trim_end_matches('*'), c["verdict"], "{row}");
        assert_eq!(f[5], c["executions"].to_string(), "{row}");
    }
    let out = &table.stdout;
    assert!(
        out.contains("configurations per property: no_lost_flush 13,"),
        "{out}"
    );
    assert!(out.contains("mutants killed 1/1"), "{out}");
    assert!(!out.contains("flushcheck: the scenario suite"), "{out}");
}

#[test]
fn a_surviving_mutant_makes_the_exit_code_non_zero() {
    // One schedule of each entry does not reach the later epoch the
    // cached hint needs: a run that
    // cannot kill a mutant on the suite that pins its kill must say so in
    // its exit code.
    let out = common::flushcheck(&[
        "--variant",
        "mutant-cached-flushable",
        "--backend",
        "shuttle-random",
        "--shuttle-iterations",
        "1",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("survived: mutant-cached-flushable (no_lost_flush on shuttle-random)"),
        "{}",
        out.stdout
    );
}

/// On a configuration of the user's own no kill is pinned: with val 1 and
/// batch 1 no update passes `x > MEMCG_CHARGE_BATCH`, the mutant cannot be
/// killed, and the run says the kill is not checked here and exits 0.
#[test]
fn a_custom_configuration_does_not_judge_pinned_kills() {
    let out = common::flushcheck(&[
        "--variant",
        "mutant-skip-off-by-one",
        "--backend",
        "shuttle-random",
        "--val",
        "1",
        "--shuttle-iterations",
        "200",
    ]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("not checked on this configuration"),
        "{}",
        out.stdout
    );
}

/// `--suite-table` prints the suite the default output leaves out.
#[test]
fn the_suite_table_is_behind_a_flag() {
    let args = [
        "--entry",
        "pair",
        "--variant",
        "v6.0",
        "--backend",
        "shuttle-dfs",
    ];
    let plain = common::flushcheck(&args);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(
        !plain.stdout.contains("the scenario suite"),
        "{}",
        plain.stdout
    );
    let with: Vec<&str> = args.iter().copied().chain(["--suite-table"]).collect();
    let table = common::flushcheck(&with);
    assert!(
        table
            .stdout
            .contains("flushcheck: the scenario suite\n  pair "),
        "{}",
        table.stdout
    );
}

/// Selections exit like configurations: a run of part of the suite
/// (`--entry`), of some backends (`--backend`), of one shard of the
/// schedules (`--shard`) or of some cells (`--variant`, `--property`)
/// judges what it selects and exits 0 when that is as expected; a kill or
/// finding pinned on what the selection leaves out reads "not checked
/// here". Every selection flag the README gives the default command is
/// run here (with few variants, to keep each to a second or two).
#[test]
fn every_selection_flag_the_readme_shows_exits_0() {
    let runs = [
        // The README's `--entry pair`: mutants killed on other entries.
        "--entry pair --variant v6.0,mutant-cached-flushable,mutant-aggregate-rebuilt,mutant-no-trylock",
        "--entry pair,epochs --variant v5.19,mutant-relaxed-trylock --property flush_exclusion,no_lost_flush",
        // The README's shard command, on two entries.
        "--backend shuttle-random --shard 0/4 --entry pair,three-cpus \
         --variant v6.0,mutant-keep-residue-on-skip,mutant-loser-resets --json",
        "--backend loom --entry memcg-pair --variant v6.17,mutant-v6.17-unlocked-callbacks",
        "--cpus 9 --backend shuttle-pct --variant v6.0 --shuttle-iterations 200",
        "--entry life-child --backend shuttle-dfs \
         --variant v6.8-life,mutant-life-free-without-gp,mutant-life-no-exit-flush",
    ];
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let selection = [
        "--entry",
        "--variant",
        "--property",
        "--backend",
        "--shard",
        "--cpus",
    ];
    // Every selection flag the README names, in a command or in the text.
    let shown: Vec<&str> = selection
        .into_iter()
        .filter(|f| readme.contains(&format!("{f} ")))
        .collect();
    assert_eq!(
        shown.len(),
        selection.len(),
        "the README's selections: {shown:?}"
    );
    for flag in &shown {
        assert!(
            runs.iter()
                .any(|r| r.split_whitespace().any(|w| w == *flag)),
            "the README shows {flag}: run it here"
        );
    }
    for (i, cmd) in runs.iter().enumerate() {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = common::flushcheck(&args);
        assert_eq!(out.code, 0, "{cmd}:\n{}{}", out.stdout, out.stderr);
        if args.contains(&"--json") {
            continue;
        }
        if i == 0 {
            let line = out
                .stdout
                .lines()
                .find(|l| l.contains("mutant-cached-flushable "))
                .unwrap_or("");
            assert!(
                line.contains(
                    "not checked here: no_lost_flush (shuttle-random, shuttle-pct, shuttle-dfs)"
                ),
                "{}",
                out.stdout
            );
            assert!(out.stdout.contains("mutant survivals 0"), "{}", out.stdout);
        }
    }
}
