//! The eventual-conservation ledger (`observe::eventual`): which flush or
//! update recovers a loss, from the settle points it is told about.

use memcg_flush_model::observe::coverage::Event;
use memcg_flush_model::observe::eventual::Eventual;

#[test]
fn a_loss_the_flushes_never_recover_and_the_update_does() {
    let mut e = Eventual::default();
    e.at_final(true);
    e.settled(1, true);
    e.settled(2, true);
    e.settled(3, false);
    assert_eq!(e.stays_lost(), Some(Some(3)));
    assert_eq!(
        e.events(2, true),
        vec![
            Event::LostAtFinal,
            Event::LostAfterSettle,
            Event::RecoveredByUpdate
        ]
    );
}

#[test]
fn a_loss_the_second_flush_recovers() {
    let mut e = Eventual::default();
    e.at_final(true);
    e.settled(1, true);
    e.settled(2, false);
    assert_eq!(e.stays_lost(), Some(Some(2)));
    assert_eq!(
        e.events(2, false),
        vec![Event::LostAtFinal, Event::RecoveredByFlush]
    );
    let exact = Eventual::default();
    assert_eq!(exact.stays_lost(), None);
    assert!(exact.events(2, true).is_empty());
}
