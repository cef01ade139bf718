//! Each property check fails with a message that starts with its name, and
//! passes on the values the kernel allows.

use memcg_flush_model::property::{
    attribute, conservation, explain, flush_exclusion, monotonic_reads, no_lost_flush,
};
use memcg_flush_model::Property;

#[test]
#[should_panic(expected = "no_lost_flush: reader saw stats_flush_threshold = 2")]
fn no_lost_flush_fails_when_baseline_would_flush_and_variant_would_not() {
    no_lost_flush(2, 3, 2);
}

#[test]
fn no_lost_flush_passes_when_both_or_neither_flush() {
    no_lost_flush(3, 5, 2);
    no_lost_flush(1, 2, 2);
    no_lost_flush(0, 0, 2);
}

#[test]
#[should_panic(expected = "conservation: after all updates and a final flush")]
fn conservation_fails_on_a_lost_update() {
    conservation(2, 5);
}

#[test]
fn conservation_passes_on_equal_sums() {
    conservation(5, 5);
    conservation(-3, -3);
}

#[test]
#[should_panic(expected = "monotonic_reads: reader 0 read memcg->vmstats.state = 3, then 2")]
fn monotonic_reads_fails_when_a_read_goes_down() {
    monotonic_reads(0, 3, 2);
}

#[test]
fn monotonic_reads_passes_on_equal_or_larger() {
    monotonic_reads(0, 3, 3);
    monotonic_reads(0, 3, 4);
}

#[test]
#[should_panic(expected = "flush_exclusion: 2 flushers")]
fn flush_exclusion_fails_on_two_flushers() {
    flush_exclusion(2);
}

#[test]
fn flush_exclusion_passes_on_one_flusher() {
    flush_exclusion(1);
}

#[test]
fn panics_are_attributed_by_name_and_loom_races_to_flush_exclusion() {
    for p in Property::ALL {
        assert_eq!(attribute(&format!("{}: x", p.name())), Some(p));
    }
    let race = "Causality violation: Concurrent read and write accesses to `UnsafeCell`.";
    assert_eq!(attribute(race), Some(Property::FlushExclusion));
    assert!(explain(Property::FlushExclusion, race).starts_with("flush_exclusion: "));
    assert_eq!(
        attribute("model: the final flush could not take stats_flush_lock"),
        None
    );
}

#[test]
fn property_names_round_trip_and_unknown_names_are_rejected() {
    for p in Property::ALL {
        assert_eq!(Property::by_name(p.name()), Ok(p));
    }
    let err = Property::by_name("no_lost_flushes").unwrap_err();
    assert!(
        err.contains("\"no_lost_flushes\"") && err.contains("no_lost_flush"),
        "{err}"
    );
}
