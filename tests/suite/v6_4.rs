//! v6.4 (v6.4-v6.7): `stats_flush_ongoing` for the flush lock, the
//! ratelimited reader, its twin and mutants, and the two claims of its
//! section in docs/findings.md: C9 as `ratelimited_skip_justified`, and B7
//! quantified (how stale a reader whose flush was skipped can be).
//!
//! The loom side of the `read || xchg` idiom is in tests/suite/litmus.rs.

use std::time::Duration;

use memcg_flush_model::check::Verdict;
use memcg_flush_model::explore::BackendName;
use memcg_flush_model::measure::bounds::{measure_exhaustive, measure_sampled, timed_configs};
use memcg_flush_model::observe::coverage::Event;
use memcg_flush_model::observe::plan::FLUSH_TIME;
use memcg_flush_model::protocol::Kind;
use memcg_flush_model::{Config, Property};

use crate::common::{self, entry, on_config, on_entry, random, reg, token, variant, verdict};

#[test]
fn v6_4_is_in_the_catalogue_with_its_twin() {
    let v = variant("v6.4");
    assert_eq!(v.twin.as_deref(), Some("v6.4-no-skip"));
    let t = variant("v6.4-no-skip");
    assert_eq!(t.kind, Kind::Twin);
    // At least two mutants of v6.4, each with a designated killer.
    let mutants: Vec<_> = reg()
        .iter()
        .filter(|m| m.name.starts_with("mutant-v6.4-"))
        .collect();
    assert!(mutants.len() >= 2, "{}", mutants.len());
    assert!(mutants.iter().all(|m| !m.killed_by.is_empty()));
}

#[test]
fn v6_4_mutants_are_killed_by_their_designated_properties() {
    let cases = [
        (
            "mutant-v6.4-no-xchg",
            Property::FlushExclusion,
            "pair",
            "loom",
        ),
        (
            "mutant-v6.4-no-xchg",
            Property::FlushExclusion,
            "pair",
            "shuttle-random",
        ),
        (
            "mutant-v6.4-ongoing-never-cleared",
            Property::Conservation,
            "pair",
            "shuttle-random",
        ),
        (
            "mutant-v6.4-clear-before-reset",
            Property::FlushExclusion,
            "pair",
            "shuttle-pct",
        ),
        (
            "mutant-v6.4-stamp-at-ratelimit",
            Property::RatelimitedSkipJustified,
            "timed-ratelimited",
            "shuttle-random",
        ),
    ];
    for (m, p, name, backend) in cases {
        // The catalogue designates this killer on this backend, so the
        // default run checks the same kill.
        let b = BackendName::parse(backend).expect("a backend");
        assert!(
            variant(m).killer(p, b, Some(name)),
            "{m}: the catalogue does not designate {p} on {backend} ({name})"
        );
        let r = on_entry(m, name, backend);
        let (verdict, note) = verdict(&r, p);
        assert_eq!(
            verdict,
            Verdict::Violated,
            "{m} on {name}/{backend}: {note}"
        );
        assert!(note.starts_with(&format!("{}:", p.name())), "{note}");
    }
}

#[test]
fn v6_4_holds_no_lost_flush_against_its_twin_on_every_interleaving() {
    for name in ["no-periodic", "two-flushers"] {
        let r = on_entry("v6.4", name, "shuttle-dfs");
        assert!(r.exhaustive, "{name}: the search was cut short");
        for p in [
            Property::NoLostFlush,
            Property::FlushExclusion,
            Property::Conservation,
        ] {
            // One flusher runs beside the updates on no-periodic (main
            // flushes after joining): no section can overlap another, and
            // flush_exclusion is not judged there.
            if p == Property::FlushExclusion && name == "no-periodic" {
                assert!(r.verdict(p).is_none(), "{p} judged on {name}");
                continue;
            }
            let (v, note) = verdict(&r, p);
            assert_eq!(v, Verdict::Holds, "v6.4 {p} on {name}: {note}");
        }
    }
    // The twin itself flushes at least as often as v6.4: it holds too.
    let r = on_entry("v6.4-no-skip", "two-flushers", "shuttle-dfs");
    assert_eq!(verdict(&r, Property::NoLostFlush).0, Verdict::Holds);
}

/// The periodic work goes through `do_flush_stats()`, so it too returns at
/// once while another flush is ongoing: in some executions it skips.
#[test]
fn v6_4_periodic_work_is_skipped_while_a_flush_is_ongoing() {
    let r = on_entry("v6.4", "pair", "shuttle-random");
    assert!(
        r.count(Event::PeriodicSkipped) > 0,
        "the periodic work never skipped"
    );
    // And every execution still ends with a flush that sees every update.
    assert_eq!(verdict(&r, Property::Conservation).0, Verdict::Holds);
}

/// C9: the race on `flush_next_time` only makes a ratelimited reader flush
/// earlier. Judged on the suite's entry and on a variation with a late
/// periodic work and a plain reader beside the ratelimited one; in both,
/// the race itself (a reader due while a flush of the whole tree has not
/// stamped the time yet) happens.
#[test]
fn c9_holds_on_v6_4_and_its_race_happens() {
    let e = entry("timed-ratelimited");
    let base = e.cfg.clone();
    let mixed = base.clone().readers(2).ratelimited(1).late(1);
    for cfg in [base, mixed] {
        for b in &e.backends {
            let r = on_config("v6.4", &cfg, b.clone());
            let (v, note) = verdict(&r, Property::RatelimitedSkipJustified);
            assert_eq!(v, Verdict::Holds, "{cfg} {}: {note}", b.name());
            assert!(
                r.count(Event::RatelimitedRacedStamp) > 0,
                "{cfg} {}: the flush_next_time race never happened",
                b.name()
            );
            assert!(r.count(Event::RatelimitedSkip) > 0, "{cfg}: no skip");
        }
    }
}

/// C9's negative: a ratelimited reader that stamps `flush_next_time`
/// without flushing makes the others skip with no flush behind the stamp;
/// the witness replays.
#[test]
fn c9_fails_when_a_reader_stamps_the_time_and_the_witness_replays() {
    let out = common::flushcheck(&[
        "explain",
        "--variant",
        "mutant-v6.4-stamp-at-ratelimit",
        "--property",
        "ratelimited_skip_justified",
        "--backend",
        "shuttle-random",
        "--cpus",
        "1",
        "--updates",
        "1",
        "--val",
        "1",
        "--readers",
        "2",
        "--ticks",
        "2",
        "--ratelimited",
        "2",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("violated: ratelimited_skip_justified: reader"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("-> not due, skip"), "{}", out.stdout);
    let again = common::flushcheck(&["replay", &token(&out.stdout)]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again
            .stdout
            .contains("violated: ratelimited_skip_justified:"),
        "{}",
        again.stdout
    );
    // v6.4 itself holds on the same configuration.
    let cfg = Config::timed()
        .cpus(1)
        .updates(1)
        .vals(&[1])
        .readers(2)
        .ticks(2)
        .ratelimited(2);
    let r = on_config("v6.4", &cfg, random(4000));
    assert_eq!(
        verdict(&r, Property::RatelimitedSkipJustified).0,
        Verdict::Holds
    );
}

/// B7 in pages, exhaustively: a reader whose gate decided to flush and
/// whose flush was skipped for one in progress can read an aggregate
/// missing every update of the execution, on every configuration where
/// its gate can open. The skip of the add (873f64b791a2) plays no part:
/// the no-skip twin reaches the same figure.
#[test]
fn b7_a_skipped_flush_can_miss_every_update() {
    let base = Config::bounds()
        .cpus(1)
        .batch(1)
        .readers(1)
        .reads(1)
        .periodic(true);
    let configs = [
        base.clone().updates(2).vals(&[1]),
        base.clone().updates(3).vals(&[1]),
        base.clone().updates(2).vals(&[3]),
        base.updates(4).vals(&[1]),
    ];
    for cfg in &configs {
        let total: i64 = (0..cfg.cpus * cfg.updates)
            .map(|i| cfg.vals[i % cfg.vals.len()])
            .sum();
        for name in ["v6.4", "v6.4-no-skip"] {
            let b = measure_exhaustive(
                cfg,
                variant(name),
                reg(),
                1_000_000,
                Duration::from_secs(120),
            );
            assert!(b.exhaustive, "{name} {cfg}: cut short");
            assert_eq!(b.stale_after_skip, total, "{name} {cfg}");
            assert!(!b.skip_witness.is_empty());
        }
    }
}

/// B7 in time (sampled: abstract time runs under shuttle's random and PCT
/// schedulers only): the oldest update missing at a read after a skipped
/// flush is FLUSH_TIME ticks old with the periodic work on time, and one
/// tick more per tick of lateness.
#[test]
fn b7_in_time_a_skipped_flush_misses_updates_flush_time_plus_lateness_old() {
    for cfg in timed_configs() {
        let b = measure_sampled(&cfg, variant("v6.4"), reg(), 4000);
        // No older than any other read.
        assert_eq!(b.skip_age, FLUSH_TIME + cfg.late as i64, "{cfg}");
        assert_eq!(b.stale_ticks, b.skip_age, "{cfg}");
    }
}

#[test]
fn ratelimited_flag_is_validated_by_value() {
    let cases: [(&[&str], &str); 2] = [
        (
            &[
                "--variant",
                "v6.4",
                "--ticks",
                "4",
                "--backend",
                "shuttle-random",
                "--ratelimited",
                "2",
            ],
            "--ratelimited 2: more ratelimited readers than --readers 1",
        ),
        (
            &["--variant", "v6.4", "--ratelimited", "1"],
            "--ratelimited 1: the ratelimited reader compares jiffies_64 with flush_next_time; add --ticks N",
        ),
    ];
    for (args, want) in cases {
        let out = common::flushcheck(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let lines: Vec<_> = out.stderr.lines().collect();
        assert_eq!(lines, [format!("flushcheck: error: {want}")], "{args:?}");
    }
}
