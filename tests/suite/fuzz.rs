//! `flushcheck fuzz`: what it prints, that it shrinks what it finds, and
//! that what it prints replays.

use std::collections::BTreeMap;

use memcg_flush_model::drive::fuzz::{draw, neighbours, Bounds};
use memcg_flush_model::Config;

use crate::common;

/// Each field of a printed configuration (`cpus=2 batch=1 ... periodic=on`)
/// as a number: vals as their count and their largest, periodic as 0/1,
/// ticks and late 0 when not printed.
fn fields(line: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::from([("ticks".to_string(), 0), ("late".to_string(), 0)]);
    for tok in line.split_whitespace() {
        let Some((k, v)) = tok.split_once('=') else {
            break;
        };
        match k {
            "val" => {
                let vals: Vec<i64> = v.split(',').map(|x| x.parse().unwrap()).collect();
                out.insert("vals".into(), vals.len() as i64);
                out.insert("max_val".into(), *vals.iter().max().unwrap());
            }
            "periodic" => {
                out.insert(k.into(), i64::from(v == "on"));
            }
            _ => {
                out.insert(k.into(), v.parse().unwrap());
            }
        }
    }
    out
}

fn after<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{stdout}"))
        .trim()
}

#[test]
fn fuzz_prints_the_bounds_and_what_it_tried() {
    let out = common::flushcheck(&["fuzz", "--seconds", "3", "--variant", "v6.0"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("bounds: cpus 1..=3, batch 1..=3, updates 1..=5"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.lines().any(|l| l.starts_with("config 0: cpus=")));
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("  v6.0 ") && l.contains("schedules") && l.contains("holds")),
        "{}",
        out.stdout
    );
    let summary = after(&out.stdout, "fuzz: ");
    let n: u64 = summary.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n >= 1, "{summary}");
    assert!(summary.contains("must-hold violations 0"), "{summary}");
}

#[test]
fn fuzz_shrinks_a_mutant_kill_and_the_token_replays() {
    let out = common::flushcheck(&[
        "fuzz",
        "--variant",
        "mutant-skip-off-by-one",
        "--property",
        "no_lost_flush",
        "--seconds",
        "10",
    ]);
    // A kill of a mutant is what it is for: not a failure.
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("kill: mutant-skip-off-by-one killed by no_lost_flush"),
        "{}",
        out.stdout
    );
    let first = fields(after(&out.stdout, "first:"));
    let smallest = fields(after(&out.stdout, "smallest:"));
    assert_eq!(first.len(), 10, "{first:?}");
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        smallest.keys().collect::<Vec<_>>()
    );
    for (k, a) in &first {
        assert!(smallest[k] <= *a, "{k}: shrunk {} > first {a}", smallest[k]);
    }
    let token = after(&out.stdout, "replay: flushcheck replay ");
    assert!(token.starts_with("fc2."), "{token}");
    let replay = common::flushcheck(&["replay", token]);
    assert_eq!(replay.code, 0, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay
            .stdout
            .starts_with("mutant-skip-off-by-one / no_lost_flush"),
        "{}",
        replay.stdout
    );
    assert_eq!(
        after(&replay.stdout, "config:"),
        after(&out.stdout, "smallest:").split("  (").next().unwrap()
    );
}

#[test]
fn fuzz_rejects_bad_input_in_one_line() {
    for (args, names) in [
        (&["--seconds", "0"][..], "--seconds 0"),
        (&["--max-cpus", "9"][..], "--max-cpus 9"),
        (&["--shuttle-iterations", "0"][..], "--shuttle-iterations 0"),
        (&["--variant", "v7.0"][..], "\"v7.0\""),
        (
            &["--variant", "no-global-accounting"][..],
            "no-global-accounting",
        ),
        (
            &["--property", "documented_error_bound"][..],
            "documented_error_bound",
        ),
    ] {
        let mut a = vec!["fuzz"];
        a.extend_from_slice(args);
        let out = common::flushcheck(&a);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(names), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn fuzz_json_is_the_report_alone() {
    let out = common::flushcheck(&["fuzz", "--seconds", "1", "--variant", "v5.19", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = crate::schemas::data(&out.stdout, "fuzz");
    assert!(v["configs"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["tried"][0]["variant"], "v5.19");
    assert!(out.stderr.contains("bounds: "), "{}", out.stderr);
}

#[test]
fn draws_are_reproducible_valid_and_shrink_monotonically() {
    let b = Bounds {
        max_cpus: 3,
        max_updates: 5,
        always_time: false,
    };
    let le = |n: &Config, c: &Config| {
        n.cpus <= c.cpus
            && n.batch <= c.batch
            && n.updates <= c.updates
            && n.vals.len() <= c.vals.len()
            && n.vals.iter().max() <= c.vals.iter().max()
            && n.readers <= c.readers
            && n.reads <= c.reads
            && (!n.periodic || c.periodic)
            && n.ticks <= c.ticks
            && n.late <= c.late
    };
    let mut timed = 0;
    for k in 0..500 {
        let c = draw(1, k, &b);
        assert_eq!(c, draw(1, k, &b));
        c.validate(usize::MAX, "shuttle").unwrap();
        assert!(
            (1..=3).contains(&c.cpus) && (1..=5).contains(&c.updates),
            "{c}"
        );
        timed += usize::from(c.ticks > 0);
        for (what, n) in neighbours(&c) {
            assert!(le(&n, &c) && n != c, "{what}: {c} -> {n}");
            n.validate(usize::MAX, "shuttle").unwrap();
        }
    }
    // Abstract time on about 1 in 5.
    assert!((60..=140).contains(&timed), "{timed}");
    assert_ne!(draw(1, 0, &b), draw(2, 0, &b));
}

#[test]
fn a_must_hold_violation_stops_the_run_shrunk() {
    use memcg_flush_model::cli::registry;
    use memcg_flush_model::drive::fuzz::{fuzz, FuzzSpec};
    use memcg_flush_model::protocol::Family;
    use memcg_flush_model::{Kind, Property};
    use std::time::Duration;

    // The off-by-one mutant posing as a reviewer's candidate: it must hold.
    let mut v = crate::common::variant("mutant-skip-off-by-one").clone();
    v.name = "candidate-off-by-one".into();
    v.kind = Kind::Candidate;
    v.killed_by.clear();
    let reg = registry(vec![v.clone()]).unwrap();
    let spec = FuzzSpec {
        seed: 1,
        budget: Duration::from_secs(20),
        shrink_budget: Duration::from_secs(20),
        variants: vec![v],
        properties: Property::of_family(Family::Global).collect(),
        iterations: 2_000,
        bounds: Bounds {
            max_cpus: 3,
            max_updates: 5,
            always_time: false,
        },
        explain_runs: 2,
        keep_going: false,
        jobs: 2,
    };
    let mut events = 0;
    let r = fuzz(&spec, &reg, &mut |_| events += 1).unwrap();
    assert!(r.must_hold_violated());
    assert!(
        r.stopped
            .starts_with("stopped at the first must-hold violation"),
        "{}",
        r.stopped
    );
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert!(f.must_hold && !f.designated);
    assert!(!f.steps.is_empty(), "{f:?}");
    assert_eq!(f.steps.last().unwrap().cfg, f.shrunk);
    let c = f.counterexample.as_ref().expect("a schedule");
    assert_eq!(c.cfg, f.shrunk);
    assert_eq!(c.variant, "candidate-off-by-one");
    assert!(events > 3);
}
