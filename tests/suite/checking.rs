//! `testing::Check` and the default run read a search cut short the same
//! way (inconclusive; `assert_holds()` fails on it unless allowed), and
//! `Check::cpus(&[n])` runs entries derived for a CPU count no standard
//! entry has instead of running nothing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use memcg_flush_model::check::run::Verdict;
use memcg_flush_model::check::Sizes;
use memcg_flush_model::drive::testing::Check;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::vocab::BackendName;
use memcg_flush_model::Property;

use crate::common::flushcheck;

/// v6.0 from the catalogue under a name of the caller's own, as a
/// candidate (a `Check` refuses a catalogue name).
fn v6_0_as(name: &str) -> Variant {
    let v = memcg_flush_model::cli::registry(Vec::new())
        .expect("catalogue")
        .into_iter()
        .find(|v| v.name == "v6.0")
        .expect("v6.0");
    Variant {
        name: name.into(),
        kind: Kind::Candidate,
        ..v
    }
}

/// The panic message of `f`, if it panicked.
fn panic_of(f: impl FnOnce()) -> Option<String> {
    catch_unwind(AssertUnwindSafe(f)).err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// An exhaustive search capped at 5 schedules on `pair` is cut short.
fn capped(name: &str) -> Check {
    Check::new(v6_0_as(name))
        .entries(&["pair"])
        .backends(&[BackendName::ShuttleDfs])
        .properties(&[Property::Conservation])
        .sizes(Sizes {
            dfs_cap: 5,
            ..Sizes::default()
        })
}

#[test]
fn a_cut_search_fails_assert_holds_unless_allowed() {
    let r = capped("capped-v6.0").run();
    let cut = r.inconclusive();
    assert_eq!(cut.len(), 1, "{:?}", r.runs());
    assert_eq!(cut[0].1.verdict, Verdict::Inconclusive);
    assert!(!r.violated(Property::Conservation));
    let msg = panic_of(|| r.assert_holds()).expect("assert_holds passed a cut search");
    assert!(
        msg.starts_with("capped-v6.0: inconclusive: conservation on pair under shuttle-dfs: "),
        "{msg}"
    );
    assert!(
        msg.contains("raise the budget per search with .budget(Duration::from_secs(N)) (now 60 s)"),
        "{msg}"
    );
    assert!(msg.contains(".allow_inconclusive()"), "{msg}");
    // Allowed: nothing was violated, so it passes.
    capped("capped-allowed")
        .allow_inconclusive()
        .run()
        .assert_holds();
}

#[test]
fn the_default_run_says_inconclusive_for_the_same_cut_search() {
    let r = flushcheck(&[
        "--variant",
        "v6.0",
        "--entry",
        "pair",
        "--backend",
        "shuttle-dfs",
        "--property",
        "conservation",
        "--dfs-cap",
        "5",
        "--in-process",
    ]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains(" v6.0 "))
        .unwrap_or_else(|| panic!("no line for v6.0: {}{}", r.stdout, r.stderr));
    assert!(
        line.contains("INCONCLUSIVE: conservation (shuttle-dfs) [pair: "),
        "{line}"
    );
    assert!(
        line.contains("raise the budget per search with --budget N (now 60 s)"),
        "{line}"
    );
    assert!(!line.contains("NOT AS EXPECTED"), "{line}");
    // Not a pass: the run exits 1, as assert_holds fails.
    assert_eq!(r.code, 1, "{}", r.stdout);
}

#[test]
fn check_cpus_runs_entries_derived_for_a_count_the_suite_lacks() {
    let r = Check::new(v6_0_as("four-cpu-v6.0"))
        .entries(&["pair"])
        .cpus(&[4])
        .backends(&[BackendName::ShuttleRandom])
        .properties(&[Property::Conservation])
        .schedules(50)
        .run();
    assert!(!r.runs().is_empty());
    for run in r.runs() {
        assert_eq!(run.spec.entry, "pair@4cpus");
        assert_eq!(run.spec.cfg.cpus, 4);
    }
    r.assert_holds();
    // A count the model cannot run is refused in one line naming it and
    // what the suite has.
    let msg = panic_of(|| {
        Check::new(v6_0_as("zero-cpu-v6.0")).cpus(&[0]).run();
    })
    .expect("refused");
    assert!(
        msg.starts_with("Check::cpus(&[0]): --cpus 0: need at least 1 CPU; the suite's entries"),
        "{msg}"
    );
}
