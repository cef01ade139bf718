//! The lifetime model under loom with crossbeam-epoch as its RCU (issue 12).
//!
//! Only in a build where crossbeam-epoch runs on loom's atomics
//! (docs/running.md), and only this module of that build:
//!
//! ```text
//! CARGO_TARGET_DIR=target/loom-epoch RUSTFLAGS="--cfg loom --cfg crossbeam_loom" \
//!     cargo test --release --test suite loom_epoch:: -- --nocapture
//! ```
//!
//! crossbeam-epoch's grace period costs loom hundreds of operations (every
//! `pin()` and `flush()` is modelled), so the suite's `life-child` does not
//! finish at bound 1 (4.3 million executions in 600 s). This suite runs the
//! smallest scenario that still needs RCU: one CPU charging the child once
//! through the objcg under `rcu_read_lock()` while `rmdir 2` removes it, no
//! flusher; the forms and the mutants about RCU, at preemption bound 1, one
//! exploration per RCU flavour judging every lifetime property. The
//! verdicts with crossbeam-epoch must equal the verdicts with the flag RCU.

use std::time::Instant;

use memcg_flush_model::check::run::{run, RunSpec};
use memcg_flush_model::check::Verdict;
use memcg_flush_model::kernel::RcuFlavor;

use crate::common::{entry, loom, reg};

#[test]
fn crossbeam_epoch_under_loom_agrees_with_the_flag_rcu() {
    let cfg = entry("life-child").cfg.clone().periodic(false);
    let mut rows = Vec::new();
    for v in [
        "v6.8-life",
        "v7.1-life",
        "mutant-life-free-without-gp",
        "mutant-life-deref-outside-rcu",
    ] {
        let start = Instant::now();
        let r: Vec<_> = [RcuFlavor::Flag, RcuFlavor::Epoch]
            .into_iter()
            .map(|f| {
                let mut spec = RunSpec::new(v, "life-rcu", &cfg, loom(Some(1)), 600.0);
                spec.rcu = Some(f);
                run(&spec, reg()).expect("runs")
            })
            .collect();
        for (f, e) in r[0].verdicts.iter().zip(&r[1].verdicts) {
            assert_eq!(f.property, e.property);
            println!(
                "{v} life-rcu {}: flag {} ({} executions), epoch {} ({} executions), {:.1} s",
                f.property,
                f.verdict.name(),
                r[0].executions,
                e.verdict.name(),
                r[1].executions,
                start.elapsed().as_secs_f64()
            );
            assert_ne!(e.verdict, Verdict::Inconclusive, "{:?}", e.note);
            rows.push((v, f.property, f.verdict, e.verdict));
        }
    }
    assert_eq!(rows.len(), 4 * 3);
    let differ: Vec<_> = rows.iter().filter(|r| r.2 != r.3).collect();
    assert!(differ.is_empty(), "{differ:?}");
}
