//! The default `flushcheck` run, the README's main command: it must pass
//! (kernel versions and benign rewrites hold everything they claim, every
//! designated kill happens), reach later epochs, and print a table that
//! agrees with `--json`.

use serde_json::Value;

use crate::common;

fn find<'a>(cells: &'a [Value], variant: &str, property: &str, backend: &str) -> &'a Value {
    cells
        .iter()
        .find(|c| c["variant"] == variant && c["property"] == property && c["backend"] == backend)
        .unwrap_or_else(|| panic!("no cell {variant}/{property}/{backend}"))
}

#[test]
fn default_run_holds_for_the_kernel_and_kills_every_mutant() {
    let (code, cells) = common::flushcheck_json(&["--json"]);
    assert_eq!(code, 0, "a must-hold cell failed or a mutant survived");
    let variants: Vec<&str> = {
        let mut v: Vec<&str> = cells
            .iter()
            .map(|c| c["variant"].as_str().unwrap())
            .collect();
        v.dedup();
        v
    };
    assert!(variants.len() >= 2 + 10 + 3, "{variants:?}");
    for c in &cells {
        for field in [
            "verdict",
            "executions",
            "seconds",
            "search",
            "configs",
            "coverage",
        ] {
            assert!(!c[field].is_null(), "missing {field} in {c}");
        }
        assert_eq!(c["ok"], true, "{c}");
        let kind = c["kind"].as_str().unwrap();
        if matches!(kind, "kernel" | "benign") && c["expect"] == "holds" {
            assert_eq!(c["verdict"], "holds", "{c}");
        }
        if c["expect"] == "finding" {
            assert_eq!(c["verdict"], "violated", "{c}");
        }
        if c["expect"] == "killed" {
            let p = c["property"].as_str().unwrap();
            assert!(
                c["note"].as_str().unwrap().starts_with(&format!("{p}:")),
                "{c}"
            );
        }
    }
    // C1 and the same-schedule sense of 873f64b791a2's claim are refuted
    // for the kernel (docs/findings.md).
    for b in ["shuttle-random", "shuttle-pct", "shuttle-dfs"] {
        assert_eq!(
            find(&cells, "v6.0", "documented_error_bound", b)["verdict"],
            "violated"
        );
    }
    assert_eq!(
        find(
            &cells,
            "v6.0",
            "no_lost_flush_same_schedule",
            "shuttle-random"
        )["verdict"],
        "violated"
    );
    // The races happened, for v6.0, on every backend that can see them, and
    // the suite reached a later epoch (skip, reset, cross again).
    for b in ["loom", "shuttle-random", "shuttle-pct", "shuttle-dfs"] {
        let c = find(&cells, "v6.0", "no_lost_flush", b);
        assert!(c["coverage"].as_u64().unwrap() > 0, "{c}");
        assert!(c["later_epoch"].as_u64().unwrap() > 0, "{c}");
        assert!(c["configs"].as_array().unwrap().len() >= 3, "{c}");
    }
    // The later versions: the C12 finding is shown on v6.17 and the 2026
    // proposal, and v6.8 holds no_lost_flush against its no-skip twin.
    for v in ["v6.17", "scaled-2026"] {
        for p in ["no_lost_flush", "ancestors_flushable"] {
            let c = find(&cells, v, p, "shuttle-random");
            assert_eq!(c["expect"], "finding", "{c}");
            assert_eq!(c["verdict"], "violated", "{c}");
        }
    }
    for b in [
        "loom",
        "shuttle-random",
        "shuttle-pct",
        "shuttle-dfs",
        "std",
    ] {
        assert_eq!(find(&cells, "v6.8", "no_lost_flush", b)["verdict"], "holds");
    }
    // The exhaustive search is marked so, and says so.
    let dfs = find(&cells, "v6.0", "conservation", "shuttle-dfs");
    assert_eq!(dfs["exhaustive"], true, "{dfs}");
    // Shuttle is sequentially consistent: it cannot see a Relaxed trylock.
    assert_eq!(
        find(
            &cells,
            "mutant-relaxed-trylock",
            "flush_exclusion",
            "shuttle-random"
        )["verdict"],
        "holds"
    );
}

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
    let table = common::flushcheck(&args);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code_j, cells) = common::flushcheck_json(&json_args);
    assert_eq!(table.code, code_j);
    // 9 properties: the 8 of v5.19's family and ratelimited_skip_justified.
    assert_eq!(cells.len(), 3 * 9 * 2);
    for c in &cells {
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
        out.contains("configurations per property: no_lost_flush 10,"),
        "{out}"
    );
    assert!(out.contains("mutants killed 1/1"), "{out}");
    assert!(out.contains("flushcheck: the scenario suite"), "{out}");
}

#[test]
fn a_surviving_mutant_makes_the_exit_code_non_zero() {
    // With val 1 and batch 1 no update ever passes `x > MEMCG_CHARGE_BATCH`,
    // so the threshold never moves and the mutant survives: a run that
    // cannot kill a mutant must say so in its exit code.
    let out = common::flushcheck(&[
        "--variant",
        "mutant-skip-off-by-one",
        "--backend",
        "shuttle-random",
        "--val",
        "1",
        "--shuttle-iterations",
        "500",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("survived: mutant-skip-off-by-one (no_lost_flush on shuttle-random)"),
        "{}",
        out.stdout
    );
}
