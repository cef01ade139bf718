//! The default `flushcheck` run: the README's main command. It must pass
//! (kernel variants hold everywhere, every designated kill happens), and
//! `--json` must agree with the table.

use serde_json::Value;

mod common;

fn flushcheck(args: &[&str]) -> (i32, String, String) {
    let r = common::flushcheck(args);
    (r.code, r.stdout, r.stderr)
}

fn cells(json: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(json)
        .expect("valid JSON")
        .as_array()
        .expect("an array of cells")
        .clone()
}

fn find<'a>(cells: &'a [Value], variant: &str, property: &str, backend: &str) -> &'a Value {
    cells
        .iter()
        .find(|c| c["variant"] == variant && c["property"] == property && c["backend"] == backend)
        .unwrap_or_else(|| panic!("no cell {variant}/{property}/{backend}"))
}

#[test]
fn default_matrix_passes_with_kernel_holds_and_mutant_kills() {
    let (code, out, err) = flushcheck(&["--json"]);
    assert_eq!(code, 0, "flushcheck failed:\n{out}\n{err}");
    let cells = cells(&out);
    assert_eq!(
        cells.len(),
        7 * (4 * 4 + 2 * 3 + 2),
        "7 variants x (4 properties x 4 backends + 2 staleness properties x 3 non-loom backends \
         + flush_time_bound x 2 shuttle backends)"
    );
    for c in &cells {
        for field in [
            "variant",
            "property",
            "backend",
            "verdict",
            "executions",
            "seconds",
        ] {
            assert!(!c[field].is_null(), "missing {field} in {c}");
        }
    }
    for v in ["v5.19", "v6.0"] {
        for c in cells.iter().filter(|c| c["variant"] == v) {
            // C1 is the kernel's own claim, refuted (docs/findings.md) by
            // the shuttle searches; std's real threads may not hit it.
            if c["property"] == "documented_error_bound" {
                if c["backend"] != "std" {
                    assert_eq!(c["verdict"], "violated", "{c}");
                }
            } else {
                assert_eq!(c["verdict"], "holds", "{c}");
            }
            assert!(c["executions"].as_u64().unwrap() > 0, "{c}");
        }
    }
    let kills = [
        (
            "mutant-skip-off-by-one",
            "no_worse_than_baseline",
            "shuttle-random",
        ),
        (
            "mutant-skip-off-by-one",
            "no_worse_than_baseline",
            "shuttle-pct",
        ),
        ("mutant-skip-off-by-one", "no_lost_flush", "shuttle-random"),
        ("mutant-skip-off-by-one", "no_lost_flush", "shuttle-pct"),
        ("mutant-load-store-bump", "no_lost_flush", "shuttle-random"),
        ("mutant-load-store-bump", "no_lost_flush", "shuttle-pct"),
        ("mutant-no-trylock", "flush_exclusion", "loom"),
        ("mutant-no-trylock", "flush_exclusion", "shuttle-random"),
        ("mutant-no-trylock", "flush_exclusion", "shuttle-pct"),
        ("mutant-no-locks", "conservation", "shuttle-random"),
        ("mutant-no-locks", "conservation", "shuttle-pct"),
        ("mutant-no-locks", "monotonic_reads", "shuttle-random"),
        ("mutant-no-locks", "monotonic_reads", "shuttle-pct"),
        ("mutant-no-locks", "flush_exclusion", "loom"),
        ("mutant-relaxed-trylock", "flush_exclusion", "loom"),
    ];
    for (v, p, b) in kills {
        let c = find(&cells, v, p, b);
        assert_eq!(c["verdict"], "violated", "{c}");
        assert!(
            c["note"].as_str().unwrap().starts_with(&format!("{p}:")),
            "{c}"
        );
    }
    // Shuttle is sequentially consistent: it cannot see the Relaxed trylock.
    assert_eq!(
        find(
            &cells,
            "mutant-relaxed-trylock",
            "flush_exclusion",
            "shuttle-random"
        )["verdict"],
        "holds"
    );
    // Coverage: the racy interleaving of each property happened for v6.0 on loom.
    for p in [
        "no_lost_flush",
        "conservation",
        "monotonic_reads",
        "flush_exclusion",
    ] {
        let c = find(&cells, "v6.0", p, "loom");
        assert!(c["coverage"].as_u64().unwrap() > 0, "no coverage: {c}");
        assert_eq!(
            c["exhaustive"], false,
            "preemption-bounded search is not exhaustive: {c}"
        );
        assert!(
            c["search"].as_str().unwrap().contains("preemption bound 2"),
            "{c}"
        );
    }
}

/// Same seeds, same searches: the table must show what the JSON says.
#[test]
fn json_agrees_with_table() {
    let args = [
        "--backend",
        "shuttle-random,shuttle-pct",
        "--shuttle-iterations",
        "2000",
    ];
    let (code_t, table, _) = flushcheck(&args);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code_j, json, _) = flushcheck(&json_args);
    assert_eq!(code_t, code_j);
    let cells = cells(&json);
    assert_eq!(cells.len(), 7 * 7 * 2);
    for c in &cells {
        let row = table
            .lines()
            .find(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() >= 5
                    && f[0] == c["variant"]
                    && f[1] == c["property"]
                    && f[2] == c["backend"]
            })
            .unwrap_or_else(|| panic!("no table row for {c}"));
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(f[3].trim_end_matches('*'), c["verdict"], "{row}");
        assert_eq!(f[4], c["executions"].to_string(), "{row}");
    }
}

#[test]
fn a_surviving_mutant_makes_the_exit_code_non_zero() {
    // With val 1 and batch 1 no update ever passes `x > MEMCG_CHARGE_BATCH`,
    // so the threshold never moves, nothing is skipped, and the mutant
    // survives: a run that cannot kill a mutant must say so in its exit code.
    let (code, out, _) = flushcheck(&[
        "--variant",
        "mutant-skip-off-by-one",
        "--property",
        "no_lost_flush",
        "--backend",
        "shuttle-random",
        "--batch",
        "1",
        "--val",
        "1",
        "--shuttle-iterations",
        "500",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("survived: mutant-skip-off-by-one (no_lost_flush on shuttle-random)"),
        "{out}"
    );
}
