//! Issue 41: a read that changes nothing changes no verdict. Every kernel
//! version and every fix candidate runs each suite entry of its lineage
//! twice on the same schedules (shuttle random and PCT, the same seeds):
//! once as it is, once with a read of every atomic (each threshold, the
//! flush time, each aggregate) by every actor before every step
//! (`RunSpec::unused_reads`, model/observe/noise.rs). Every property's
//! verdict must be the same, but `ancestors_flushable`'s, whose claim is
//! about what an updater's read finds (it is the harness's negative test).

use std::collections::BTreeMap;

use memcg_flush_model::check::run::run;
use memcg_flush_model::check::{RunSpec, Verdict};
use memcg_flush_model::drive::testing::Check;
use memcg_flush_model::explore::{Backend, BackendName, Platform};
use memcg_flush_model::kernel::atomic64_read;
use memcg_flush_model::protocol::per_memcg::v6_17;
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Code, Kind, Variant};
use memcg_flush_model::{Config, Property};

/// The property whose claim is about a read: excluded from the
/// comparison, and the test that the comparison can fail.
const ABOUT_A_READ: &str = "ancestors_flushable";

fn backends(iterations: usize) -> [Backend; 2] {
    [
        crate::common::random(iterations),
        crate::common::pct(iterations),
    ]
}

/// Each property's verdict on one run of `variant` on `cfg`, with or
/// without the unused reads.
fn verdicts(
    variant: &str,
    entry: &str,
    cfg: &Config,
    b: &Backend,
    reads: bool,
) -> Vec<(Property, Verdict, String)> {
    let mut spec = RunSpec::new(variant, entry, cfg, b.clone(), 120.0);
    spec.unused_reads = reads;
    let r = run(&spec, crate::common::reg()).expect("runs");
    r.verdicts
        .iter()
        .map(|v| (v.property, v.verdict, v.note.clone().unwrap_or_default()))
        .collect()
}

/// The verdicts that differ with the unused reads, one line each, over
/// `variants` on every entry of their lineage; and how many verdicts were
/// violations (so that the comparison is not only of holds).
fn differences(variants: &[&str], iterations: usize, skip: &[&str]) -> (Vec<String>, usize) {
    let mut diffs = Vec::new();
    let mut violated = 0;
    for name in variants {
        let v = crate::common::variant(name);
        for e in crate::common::suite()
            .entries
            .iter()
            .filter(|e| e.applies_to(v.family))
        {
            for b in backends(iterations) {
                let plain = verdicts(name, &e.name, &e.cfg, &b, false);
                let noisy: BTreeMap<Property, (Verdict, String)> =
                    verdicts(name, &e.name, &e.cfg, &b, true)
                        .into_iter()
                        .map(|(p, v, n)| (p, (v, n)))
                        .collect();
                for (p, verdict, note) in plain {
                    if skip.contains(&p.name()) {
                        continue;
                    }
                    violated += usize::from(verdict == Verdict::Violated);
                    let (nv, nn) = &noisy[&p];
                    if *nv != verdict {
                        diffs.push(format!(
                            "{name} {p} on {} ({}): {} [{note}] -> {} with unused reads [{nn}]",
                            e.name,
                            b.name(),
                            verdict.name(),
                            nv.name()
                        ));
                    }
                }
            }
        }
    }
    (diffs, violated)
}

/// Every kernel version and fix candidate of the flush protocol.
fn kernels_and_fixes() -> Vec<&'static str> {
    crate::common::reg()
        .iter()
        .filter(|v| matches!(v.kind, Kind::Kernel | Kind::Fix))
        .filter(|v| matches!(v.code, Code::Flush(_)))
        .map(|v| v.name.as_str())
        .collect()
}

#[test]
fn unused_reads_change_no_verdict_of_any_kernel_version_or_fix() {
    let variants = kernels_and_fixes();
    assert!(variants.len() >= 20, "{variants:?}");
    let (diffs, violated) = differences(&variants, 40, &[ABOUT_A_READ]);
    assert!(
        diffs.is_empty(),
        "{} verdicts moved with unused reads:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    // The findings (c12's lost flush, the refuted claims) are among them.
    assert!(violated > 20, "only {violated} violations compared");
}

/// The comparison can fail: `ancestors_flushable` is judged at an
/// updater's read of an atomic, so an updater reading an atomic that is
/// flushable above one that is not moves its verdict.
#[test]
fn a_property_judged_at_a_read_moves_with_unused_reads() {
    let (diffs, _) = differences(&["v6.8"], 40, &[]);
    assert!(
        diffs
            .iter()
            .any(|d| d.contains(&format!("{ABOUT_A_READ} on"))),
        "{diffs:?}"
    );
    assert!(diffs.iter().all(|d| d.contains(ABOUT_A_READ)), "{diffs:?}");
}

#[test]
fn unused_reads_are_refused_under_loom() {
    let cfg = crate::common::cfg::pair_3_2();
    let mut spec = RunSpec::new("v6.0", "test", &cfg, crate::common::loom(Some(1)), 10.0);
    spec.unused_reads = true;
    let Err(e) = run(&spec, crate::common::reg()) else {
        panic!("unused reads under loom were not refused");
    };
    assert!(
        e.contains("unused reads run in execution order only"),
        "{e}"
    );
}

/// v6.17 without the `break` (its twin, restated), with `reads`: before
/// counting each level, a read of the root's atomic and of the level's own
/// that nothing uses. These are steps of the variant, not observations: the
/// schedules differ from the plain form's, the verdicts may not.
#[derive(Clone, Copy)]
struct NoBreak {
    reads: bool,
}

impl Memcontrol for NoBreak {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            if self.reads {
                let _ = atomic64_read(&mm.memcg(0).vmstats.stats_updates);
                let _ = atomic64_read(&mm.memcg(m).vmstats.stats_updates);
            }
            crate::suite_shapes::count_and_fold(mm, m, val.abs());
        }
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The false alarm, as a variant's author writes it: the no-break
/// walk with an unused read of the root's atomic at each level was flagged
/// by `no_lost_flush` (the twin counted the levels the read passed). Every
/// property that is not a refuted claim holds for both forms on every
/// per-memcg entry, exhaustive searches included.
#[test]
fn a_walk_with_unused_reads_is_judged_as_the_walk_without_them() {
    let form = |name: &str, reads| {
        Variant::new(name, Kind::Candidate, name, v6_8::model(NoBreak { reads }))
            .per_memcg(batch_times_cpus)
            .twin("v6.17-no-break")
    };
    for v in [form("no-break", false), form("no-break-reads", true)] {
        let name = v.name.clone();
        let r = Check::new(v)
            .backends(&[
                BackendName::ShuttleRandom,
                BackendName::ShuttlePct,
                BackendName::ShuttleDfs,
            ])
            .allow_inconclusive()
            .run();
        let mut judged = 0;
        for run in r.runs() {
            for pv in &run.verdicts {
                if pv.property.refutable_claim() {
                    continue;
                }
                judged += 1;
                assert_ne!(
                    pv.verdict,
                    Verdict::Violated,
                    "{name}: {} on {} ({}): {}",
                    pv.property,
                    run.spec.entry,
                    run.spec.backend.name(),
                    pv.note.clone().unwrap_or_default()
                );
            }
        }
        assert!(judged > 50, "{name}: {judged} verdicts");
    }
}
