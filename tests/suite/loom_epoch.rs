//! The lifetime model under loom with crossbeam-epoch as its RCU (issue 12).
//!
//! Only in a build where crossbeam-epoch runs on loom's atomics
//! (docs/running.md):
//!
//! ```text
//! CARGO_TARGET_DIR=target/loom-epoch RUSTFLAGS="--cfg loom --cfg crossbeam_loom" \
//!     cargo test --release --test loom_epoch
//! ```
//!
//! crossbeam-epoch's grace period costs loom hundreds of operations (every
//! `pin()` and `flush()` is modelled), so the suite's `life-child` does not
//! finish at bound 1 (4.3 million executions in 600 s). This suite runs the
//! smallest scenario that still needs RCU: one CPU charging the child once
//! through the objcg under `rcu_read_lock()` while `rmdir 2` removes it, no
//! flusher; the forms and the mutants about RCU, every property, at
//! preemption bound 1. The verdict with crossbeam-epoch must equal the
//! verdict with the flag RCU.

use std::time::Duration;

use memcg_flush_model::check::lifetime::{catalogue, entries, explore_life};
use memcg_flush_model::check::Verdict;
use memcg_flush_model::explore::Backend;
use memcg_flush_model::kernel::RcuFlavor;
use memcg_flush_model::observe::property::Property;
use std::time::Instant;

#[test]
fn crossbeam_epoch_under_loom_agrees_with_the_flag_rcu() {
    let loom = Backend::Loom {
        preemption_bound: Some(1),
    };
    let mut e = entries().remove(0);
    e.name = "life-rcu";
    e.periodic = false;
    let mut rows = Vec::new();
    let variants = [
        "v6.8-life",
        "v7.1-life",
        "mutant-life-free-without-gp",
        "mutant-life-deref-outside-rcu",
    ];
    for v in catalogue()
        .into_iter()
        .filter(|v| variants.contains(&v.name))
    {
        {
            let start = Instant::now();
            for p in Property::LIFETIME {
                let r: Vec<_> = [RcuFlavor::Flag, RcuFlavor::Epoch]
                    .into_iter()
                    .map(|f| explore_life(&v, &e, &loom, p, f, Duration::from_secs(600), false))
                    .collect();
                println!(
                    "{} {} {p}: flag {} ({} executions), epoch {} ({} executions), {:.1} s",
                    v.name,
                    e.name,
                    r[0].verdict.name(),
                    r[0].executions,
                    r[1].verdict.name(),
                    r[1].executions,
                    start.elapsed().as_secs_f64()
                );
                assert_ne!(r[1].verdict, Verdict::Inconclusive, "{:?}", r[1].note);
                rows.push((v.name, e.name, p, r[0].verdict, r[1].verdict));
            }
        }
    }
    let differ: Vec<_> = rows.iter().filter(|r| r.3 != r.4).collect();
    assert!(differ.is_empty(), "{differ:?}");
}
