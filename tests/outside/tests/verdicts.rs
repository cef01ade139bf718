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

fn never_violated(
    _: &memcg_flush_model::observe::properties::Ctx,
    _: &memcg_flush_model::observe::properties::At,
) -> Option<String> {
    None
}

/// A property of one's own that was never registered is judged by no
/// search; the failure says how to register it.
#[test]
fn an_unregistered_property_says_how_to_register_it() {
    use memcg_flush_model::observe::coverage::Event;
    use memcg_flush_model::observe::property::{Check as Monitor, Def};
    static UNREGISTERED: Def = Def::new(
        "outside_unregistered",
        "a property no check registers",
        Event::ReadDuringFlush,
        Monitor::Flush(never_violated),
    );
    let failed = std::panic::catch_unwind(|| {
        small(Check::new(restated()))
            .properties(&[Property::of(&UNREGISTERED)])
            .run()
            .assert_holds()
    });
    let message = failed.expect_err("assert_holds must fail");
    let message = message
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert!(
        message.contains("no search judged [outside_unregistered]")
            && message.contains("Check::property(&DEF)"),
        "{message}"
    );
}
