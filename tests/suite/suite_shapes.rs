//! The suite reaches what variants inspect. Each of these entries catches
//! a mutant of its kind, asserted by property name and backend: a reader
//! two and three levels above the charged memcg (`memcg-deep`) catches a
//! break rule that inspects only the parent; uncharges (`uncharge`,
//! `memcg-uncharge`, the only entries with a negative value, on which a
//! counter that adds the signed value differs from one that adds its
//! magnitude) catch a counter that adds the signed value; four CPUs
//! (`four-cpus`) catch a walk that stops at CPU 3. The mutants are written here, against
//! the public API, as a candidate's author would write them.

use memcg_flush_model::drive::testing::Check;
use memcg_flush_model::explore::{BackendName, Platform};
use memcg_flush_model::kernel::{
    atomic64_add, atomic_add, atomic_read, spin_lock, spin_unlock, this_cpu_add_return,
    this_cpu_add_return_shared, this_cpu_write, this_cpu_xchg_shared, trace_flush_begin,
    trace_flush_end,
};
use memcg_flush_model::observe::Property;
use memcg_flush_model::protocol::global::v5_19;
use memcg_flush_model::protocol::per_memcg::v6_17;
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Kind, Variant};

fn per_memcg(name: &str, twin: &str, code: impl Memcontrol + Clone) -> Variant {
    Variant::new(name, Kind::Candidate, name, v6_8::model(code))
        .per_memcg(batch_times_cpus)
        .twin(twin)
}

/// The verdict of `p` under `backend` over the runs of `v` on `entry`.
fn verdicts(v: Variant, entry: &str, backends: &[BackendName], p: Property) -> Vec<String> {
    let r = Check::new(v)
        .entries(&[entry])
        .backends(backends)
        .properties(&[p])
        .run();
    r.runs()
        .iter()
        .filter_map(|run| {
            run.verdict(p)
                .map(|x| format!("{} {}", run.spec.backend.name(), x.verdict.name()))
        })
        .collect()
}

fn assert_violated_on(v: Variant, entry: &str, backend: BackendName, p: Property) {
    let name = v.name.clone();
    let got = verdicts(v, entry, &[backend], p);
    assert!(
        got.iter()
            .any(|g| *g == format!("{} violated", backend.name())),
        "{name} on {entry}: {p} under {}: {got:?}",
        backend.name()
    );
}

/// v6.17's count at level `m`: add `n` to the per-CPU counter, fold it into
/// the atomic at the batch.
pub(crate) fn count_and_fold<P: Platform>(mm: &State<P>, m: u8, n: i64) {
    let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
    let s = this_cpu_add_return_shared(&statc.stats_updates, n);
    if s < mm.MEMCG_CHARGE_BATCH() {
        return;
    }
    let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
    atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
}

/// v6.17 leaving the walk at a flushable level whose parent is flushable
/// too, wrong where the grandparent is not. The exhaustive searches of
/// `memcg-dfs` and `memcg-tree-trigger` find it too; `memcg-deep`, whose
/// readers sit two and three levels above the charged memcg, is where a
/// sampled search does.
#[derive(Clone, Copy)]
struct BreakIfParent;

impl Memcontrol for BreakIfParent {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let parent_ok = level.is_none_or(|p| self.memcg_vmstats_needs_flush(mm, p));
            if self.memcg_vmstats_needs_flush(mm, m) && parent_ok {
                break;
            }
            count_and_fold(mm, m, val.abs());
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

#[test]
fn a_break_that_inspects_only_the_parent_is_caught_by_a_reader_above_it() {
    let v = per_memcg("break-if-parent", "v6.17-no-break", BreakIfParent);
    assert_violated_on(
        v,
        "memcg-deep",
        BackendName::ShuttleRandom,
        Property::NoLostFlush,
    );
}

/// v6.17 whose per-CPU count adds the signed value, not its magnitude.
#[derive(Clone, Copy)]
struct SignedPerMemcg;

impl Memcontrol for SignedPerMemcg {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            // MUTANT: val, not abs(val).
            count_and_fold(mm, m, val);
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// v6.0 whose per-CPU count adds the signed value.
#[derive(Clone, Copy)]
struct SignedGlobal;

impl v5_19::Memcontrol for SignedGlobal {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &v5_19::State<P>, _memcg: u8, val: i64) {
        // MUTANT: val, not abs(val).
        let x = this_cpu_add_return(&mm.stats_updates, val);
        if x > mm.MEMCG_CHARGE_BATCH() {
            if atomic_read(&mm.stats_flush_threshold) <= mm.num_online_cpus() {
                atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

#[test]
fn a_counter_that_adds_the_signed_value_is_caught_by_uncharges() {
    let global = Variant::new(
        "signed-v6.0",
        Kind::Candidate,
        "v6.0 counting the signed value",
        v5_19::model(SignedGlobal),
    )
    .twin("v5.19");
    assert_violated_on(
        global,
        "uncharge",
        BackendName::ShuttleRandom,
        Property::NoLostFlush,
    );
    let memcg = per_memcg("signed-v6.17", "v6.17-no-break", SignedPerMemcg);
    assert_violated_on(
        memcg,
        "memcg-uncharge",
        BackendName::ShuttleRandom,
        Property::NoLostFlush,
    );
}

/// v6.8 whose flush walks `min(nr_cpus, 3)` CPUs: code that depends on the
/// CPU id, right on up to three CPUs.
#[derive(Clone, Copy)]
struct WalkThreeCpus;

impl Memcontrol for WalkThreeCpus {
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        let order = mm.subtree_post_order(root);
        // MUTANT: at most three CPUs.
        for cpu in 0..mm.env.cfg.cpus.min(3) {
            for &m in &order {
                self.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
        }
        trace_flush_end(mm.memcg(root));
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

#[test]
fn a_cpu_id_bug_past_three_cpus_is_caught_on_four() {
    let v = per_memcg("walk-three-cpus", "v6.8-no-skip", WalkThreeCpus);
    // Right on every entry of up to three CPUs.
    let three = Check::new(v.clone())
        .cpus(&[1, 2, 3])
        .backends(&[BackendName::ShuttleDfs])
        .properties(&[Property::Conservation])
        .run();
    assert!(!three.violated(Property::Conservation));
    assert_violated_on(
        v,
        "four-cpus",
        BackendName::ShuttleRandom,
        Property::Conservation,
    );
}

/// v6.17 without the break whose walk stops below the root: the root's
/// per-CPU counts never grow, so its reader never flushes.
#[derive(Clone, Copy)]
struct SkipRoot;

impl Memcontrol for SkipRoot {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            // MUTANT: the root is not counted.
            if m != 0 {
                count_and_fold(mm, m, val.abs());
            }
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The reader's contract (`quiescent_reader_flushes`, no walk compared)
/// holds for the walk without the break on `memcg-quiet` and fails a walk
/// that never counts the root there, exhaustively; on `memcg-fold-skew` it
/// shows C12's race-free form for v6.17 (pinned in the catalogue).
#[test]
fn the_readers_contract_catches_a_walk_that_skips_the_root() {
    let p = Property::QuiescentReaderFlushes;
    let r = crate::common::on_entry("v6.17-no-break", "memcg-quiet", "shuttle-dfs");
    crate::common::assert_holds(&r, p);
    let v = per_memcg("skip-root", "v6.17-no-break", SkipRoot);
    assert_violated_on(v, "memcg-quiet", BackendName::ShuttleDfs, p);
    let r = crate::common::on_entry("v6.17", "memcg-fold-skew", "shuttle-dfs");
    crate::common::assert_killed(&r, p);
}
