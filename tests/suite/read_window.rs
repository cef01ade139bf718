//! Issue 32: an entry must be able to show what it is for (the no-skip
//! twin flushing, or no lost flush can show there), and `no_lost_flush`
//! judges a gate that reads more than once over its read window, so that a
//! correct gate holds whatever order it reads in.

use std::time::Duration;

use memcg_flush_model::check::{Entry, Sizes, Suite};
use memcg_flush_model::cli::registry;
use memcg_flush_model::drive::cells::blind;
use memcg_flush_model::drive::{run_matrix, Cell, Executor, Plan};
use memcg_flush_model::explore::{Backend, BackendName, Platform};
use memcg_flush_model::kernel::{atomic64_read, trace_memcg_flush_stats};
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Family, Kind, Variant};

/// The cells of `variants` on `entries`, in this process; loom and std
/// left out when `quick` (fewer searches can only see less, so an entry
/// that is not blind without them is not blind with them).
fn cells(variants: Vec<Variant>, entries: Vec<Entry>, quick: bool) -> Vec<Cell> {
    let builtin = registry(Vec::new()).expect("the catalogue");
    let extra: Vec<Variant> = variants
        .iter()
        .filter(|v| !builtin.iter().any(|b| b.name == v.name))
        .cloned()
        .collect();
    let reg = registry(extra).expect("unique names");
    let mut plan = Plan::new(Suite::standard(&Sizes::default()), reg);
    plan.suite.entries = entries
        .into_iter()
        .map(|mut e| {
            if quick {
                e.backends
                    .retain(|b| !matches!(b.id(), BackendName::Loom | BackendName::Std));
            }
            e
        })
        .collect();
    plan.variants = variants;
    plan.budget = Duration::from_secs(60);
    plan.jobs = 2;
    run_matrix(&plan, &Executor::InProcess, &|_, _, _| {}).cells
}

fn entries(family: Family) -> Vec<Entry> {
    crate::common::suite()
        .entries
        .iter()
        .filter(|e| e.applies_to(family))
        .cloned()
        .collect()
}

#[test]
fn no_entry_of_the_default_suite_is_blind() {
    let mut found = Vec::new();
    for (v, family) in [("v6.0", Family::Global), ("v6.8", Family::PerMemcg)] {
        let c = cells(
            vec![crate::common::variant(v).clone()],
            entries(family),
            true,
        );
        assert!(c.iter().any(|c| c.property.name() == "no_lost_flush"));
        found.extend(blind(&c));
    }
    assert!(found.is_empty(), "blind entries: {found:?}");
}

#[test]
fn an_entry_whose_counts_stop_at_the_trigger_is_blind() {
    // memcg-three-cpus as it was: 3 one-page updates per CPU at batch 2
    // reach exactly BATCH * 3, so even the twin never flushes.
    let mut e = crate::common::entry("memcg-three-cpus").clone();
    e.cfg.updates = 3;
    e.backends
        .retain(|b| matches!(b, Backend::ShuttleRandom { .. }));
    let c = cells(vec![crate::common::variant("v6.8").clone()], vec![e], false);
    let b = blind(&c);
    assert!(
        b.iter().any(
            |l| l.starts_with("no_lost_flush on memcg-three-cpus: twin_flushed never happened")
        ),
        "{b:?}"
    );
    assert!(
        b.iter().all(|l| l.contains(" on memcg-three-cpus: ")),
        "{b:?}"
    );
}

/// A correct gate that reads two counters, the memcg's own then its
/// parent's (`parent_first`: the other way round), and flushes if either is
/// above the trigger.
#[derive(Clone, Copy)]
struct TwoReads {
    parent_first: bool,
}

impl Memcontrol for TwoReads {
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let t = self.memcg_vmstats_flush_threshold(mm);
        let mut order = vec![Some(memcg), mm.parent_mem_cgroup(memcg)];
        if self.parent_first {
            order.reverse();
        }
        let mut needs_flush = false;
        for m in order.into_iter().flatten() {
            needs_flush |= atomic64_read(&mm.memcg(m).vmstats.stats_updates) > t;
        }
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
}

#[test]
fn a_gate_that_reads_twice_holds_no_lost_flush_in_either_order() {
    let gate = |name: &str, parent_first| {
        Variant::new(
            name,
            Kind::Candidate,
            name,
            v6_8::model(TwoReads { parent_first }),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.8-no-skip")
    };
    let c = cells(
        vec![
            gate("two-reads-own-first", false),
            gate("two-reads-parent-first", true),
        ],
        entries(Family::PerMemcg),
        // loom decides no_lost_flush from outcome sets, not the gate
        // comparison judged here, and does not finish memcg-two-readers
        // with the second read within the budget.
        true,
    );
    let judged: Vec<&Cell> = c
        .iter()
        .filter(|c| c.property.name() == "no_lost_flush")
        .collect();
    for v in ["two-reads-own-first", "two-reads-parent-first"] {
        assert!(judged.iter().any(|c| c.variant == v), "{v}: not judged");
    }
    let bad: Vec<String> = judged
        .iter()
        .filter(|c| c.verdict.name() != "holds")
        .map(|c| format!("{} {}: {:?}", c.variant, c.backend, c.note))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
}
