//! Splitting shuttle-random searches into shards runs exactly the schedules
//! of the unsplit search: merged shard results equal the single run, down
//! to the coverage counts, which depend on every schedule. (A mutant's
//! cells other than its designated killer's need not be run, so only that
//! one is compared for the mutant.)

use serde_json::Value;

use crate::common::{self, flushcheck_json as json};

const BASE: &[&str] = &[
    "--backend",
    "shuttle-random",
    "--variant",
    "v5.19,v6.0,mutant-no-trylock",
    "--shuttle-iterations",
    "1500",
    "--json",
];

#[test]
#[cfg_attr(not(loom), ignore = "8 s: under --cfg loom, or run with --ignored")]
fn merged_shards_equal_the_unsplit_search() {
    let (code, whole) = json(BASE);
    assert_eq!(code, 0);
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let mut files = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let mut args = BASE.to_vec();
        args.extend(["--shard", &shard]);
        let out = common::flushcheck(&args);
        let f = dir.join(format!("shard{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f);
    }
    let mut args = vec!["merge".to_string(), "--json".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let out = common::flushcheck(&args);
    assert_eq!(Some(out.code), Some(0), "{}", out.stderr);
    let merged: Vec<Value> = crate::schemas::data(&out.stdout, "matrix")
        .as_array()
        .unwrap()
        .clone();
    // The kernel versions' cells, all of them, and the mutant's designated
    // killer (its other cells need not be run).
    let asserted = |c: &&Value| {
        c["kind"] == "kernel"
            || (c["variant"] == "mutant-no-trylock" && c["property"] == "flush_exclusion")
    };
    let whole: Vec<&Value> = whole.iter().filter(asserted).collect();
    let merged: Vec<&Value> = merged.iter().filter(asserted).collect();
    assert_eq!(merged.len(), whole.len());
    assert_eq!(whole.len(), 2 * 9 + 1, "{whole:?}");
    for w in &whole {
        let m = merged
            .iter()
            .find(|m| m["variant"] == w["variant"] && m["property"] == w["property"])
            .unwrap();
        assert_eq!(m["verdict"], w["verdict"], "{m}\n{w}");
        if w["verdict"] == "holds" {
            assert_eq!(m["executions"], w["executions"], "{m}\n{w}");
            assert_eq!(
                m["coverage"], w["coverage"],
                "same schedules, same races: {m}\n{w}"
            );
        }
    }
    let killer = whole.iter().find(|c| c["kind"] == "mutant").unwrap();
    assert_eq!(killer["verdict"], "violated", "{killer}");
}

#[test]
fn a_missing_shard_makes_the_merge_inconclusive() {
    let (_, part) = json(&[
        "--backend",
        "shuttle-random",
        "--variant",
        "v6.0",
        "--shuttle-iterations",
        "1000",
        "--json",
        "--shard",
        "0/2",
    ]);
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), serde_json::to_vec(&part).unwrap()).unwrap();
    let out = common::flushcheck(&["merge", "--json", f.path().to_str().unwrap()]);
    assert_eq!(Some(out.code), Some(1));
    let merged = crate::schemas::data(&out.stdout, "matrix");
    for c in merged.as_array().unwrap() {
        // A violation found by one shard needs no other shard: C1 is
        // refuted for v6.0 by shard 0 alone.
        if c["verdict"] == "violated" {
            assert!(c["property"] != "no_lost_flush", "{c}");
            continue;
        }
        assert_eq!(c["verdict"], "inconclusive", "{c}");
        assert!(
            c["note"]
                .as_str()
                .unwrap()
                .contains("shards missing: [1] of 2"),
            "{c}"
        );
    }
}

#[test]
fn shard_flags_are_checked() {
    let out = common::flushcheck(&["--shard", "3/3"]);
    assert_eq!(Some(out.code), Some(2));
    assert!(out
        .stderr
        .contains("--shard 3/3: expected I/N with 0 <= I < N"));
    let out = common::flushcheck(&["--shard", "0/2"]);
    assert_eq!(Some(out.code), Some(2));
    assert!(
        out.stderr
            .contains("only shuttle random and PCT searches can be split"),
        "{}",
        out.stderr
    );
}
