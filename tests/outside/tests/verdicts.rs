//! The test API from an outside crate: `cargo test --release`.

use memcg_flush_model::testing::Check;
use memcg_flush_model::vocab::BackendName;
use memcg_flush_model::Property;
use outside_variants::{never_counts, restated};

/// Two entries and the exhaustive searches keep this to seconds.
fn small(c: Check) -> Check {
    c.entries(&["pair", "epochs-reader"])
        .backends(&[BackendName::ShuttleDfs, BackendName::Loom])
}

#[test]
fn restated_v6_0_keeps_every_flush() {
    small(Check::new(restated())).run().assert_holds();
}

#[test]
fn never_counting_loses_a_flush() {
    small(Check::new(never_counts()))
        .run()
        .assert_violated(Property::NoLostFlush);
}

/// The failure an author sees: run by tests/suite/extending.rs with
/// `--ignored`, which checks that it fails and prints the trace.
#[test]
#[ignore = "fails on purpose"]
fn never_counting_fails_assert_holds() {
    small(Check::new(never_counts())).run().assert_holds();
}
