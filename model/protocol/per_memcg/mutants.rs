//! Deliberately broken variants of v6.8, v6.17 and the 2026 proposal. Each
//! is one kernel function of the v6.8 lineage's [`Memcontrol`] overridden,
//! the changed line marked `MUTANT:`; everything else delegates to the
//! version's own code. [`variants`] is their part of the catalogue.

use crate::config::Config;
use crate::kernel::marking;
use crate::kernel::{
    atomic64_add, atomic64_read, read_once, this_cpu_add_return_shared, this_cpu_xchg_shared,
    trace_flush_begin, trace_flush_end, trace_memcg_flush_stats, write_once,
};
use crate::observe::Property;
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::per_memcg::proposal_2026::{self, trigger_ilog2};
use crate::protocol::per_memcg::v6_17;
use crate::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use crate::protocol::variant::{batch_times_cpus, Kind, Variant, ALL_CHECKERS, SAMPLED, SC};
use crate::vocab::Platform;

/// v6.8's updater with the skip test as `skip` decides, the rest as v6.8.
fn v6_8_updater<P: Platform>(mm: &State<P>, memcg: u8, val: i64, skip: impl Fn(i64) -> bool) {
    if val == 0 {
        return;
    }
    let mut level = Some(memcg);
    while let Some(m) = level {
        level = mm.parent_mem_cgroup(m);
        let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
        let s = read_once(&statc.stats_updates) + val.abs();
        write_once(&statc.stats_updates, s);
        if s < mm.MEMCG_CHARGE_BATCH() {
            continue;
        }
        if !skip(atomic64_read(&mm.memcg(m).vmstats.stats_updates)) {
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
        }
        write_once(&statc.stats_updates, 0);
    }
}

/// v6.8 updater: the skip test off by one (`>=` where the reader needs
/// `>`): an atomic sitting exactly at the trigger is never added to again.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8SkipAtTrigger;

impl Memcontrol for V6_8SkipAtTrigger {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let trigger = self.memcg_vmstats_flush_threshold(mm);
        // MUTANT: `>=` for memcg_vmstats_needs_flush()'s `>`.
        v6_8_updater(mm, memcg, val, |a| a >= trigger);
    }
}

/// v6.8 reader: the gate reads the root's atomic whatever memcg is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8GateOnRoot;

impl Memcontrol for V6_8GateOnRoot {
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        // MUTANT: ROOT_MEM_CGROUP for memcg.
        let needs_flush = self.memcg_vmstats_needs_flush(mm, ROOT_MEM_CGROUP);
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
}

/// v6.8 flusher: a subtree flush runs the callback of its target only, so
/// deltas below it never reach its aggregate.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8FlushTargetOnly;

impl Memcontrol for V6_8FlushTargetOnly {
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        crate::kernel::spin_lock(&mm.cgroup_rstat_lock);
        trace_flush_begin(mm.memcg(root));
        for cpu in 0..mm.env.cfg.cpus {
            // MUTANT: `root` alone for subtree_post_order(root).
            self.mem_cgroup_css_rstat_flush(mm, root, cpu);
        }
        trace_flush_end(mm.memcg(root));
        crate::kernel::spin_unlock(&mm.cgroup_rstat_lock);
    }
}

/// v6.8 flusher: no `cgroup_rstat_lock` (C11 says flushing "is serialized
/// by the underlying global rstat lock").
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_8NoRstatLock;

impl Memcontrol for V6_8NoRstatLock {
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        // MUTANT: no spin_lock(&cgroup_rstat_lock) / spin_unlock().
        trace_flush_begin(mm.memcg(root));
        let order = mm.subtree_post_order(root);
        for cpu in 0..mm.env.cfg.cpus {
            for &m in &order {
                self.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
        }
        trace_flush_end(mm.memcg(root));
    }
}

/// v6.17's updater with the break test as `flushable` decides and the
/// levels it walks limited to `levels`.
fn v6_17_updater<P: Platform>(
    mm: &State<P>,
    memcg: u8,
    val: i64,
    levels: usize,
    flushable: impl Fn(u8) -> bool,
) {
    if val == 0 {
        return;
    }
    let mut level = Some(memcg);
    for _ in 0..levels {
        let Some(m) = level else { break };
        level = mm.parent_mem_cgroup(m);
        let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
        if flushable(m) {
            break;
        }
        let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
        if s < mm.MEMCG_CHARGE_BATCH() {
            continue;
        }
        let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
        atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
    }
}

/// v6.17 updater: the break off by one (`>=` where the reader needs `>`).
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_17BreakAtTrigger;

impl Memcontrol for V6_17BreakAtTrigger {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let trigger = self.memcg_vmstats_flush_threshold(mm);
        // MUTANT: `>=` for memcg_vmstats_needs_flush()'s `>`.
        v6_17_updater(mm, memcg, val, usize::MAX, |m| {
            atomic64_read(&mm.memcg(m).vmstats.stats_updates) >= trigger
        });
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// v6.17 updater: counts at the updated memcg only, never walking up.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_17TargetOnly;

impl Memcontrol for V6_17TargetOnly {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        // MUTANT: one level for the whole ancestor walk.
        v6_17_updater(mm, memcg, val, 1, |m| self.memcg_vmstats_needs_flush(mm, m));
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// v6.17 flusher: the per-CPU callbacks without the rstat lock.
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_17Unlocked;

impl Memcontrol for V6_17Unlocked {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        let order = mm.subtree_post_order(root);
        for cpu in 0..mm.env.cfg.cpus {
            // MUTANT: no __css_rstat_lock() / __css_rstat_unlock().
            trace_flush_begin(mm.memcg(root));
            for &m in &order {
                self.mem_cgroup_css_rstat_flush(mm, m, cpu);
            }
            trace_flush_end(mm.memcg(root));
        }
    }
}

/// 2026 proposal, reader: the gate one batch above the updater's break.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledReaderOffByOne;

impl Memcontrol for ScaledReaderOffByOne {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ilog2(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        let cfg = &mm.env.cfg;
        // MUTANT: ilog2(n) + 2 for ilog2(n) + 1 in the reader's gate.
        let trigger = cfg.batch * (proposal_2026::ilog2(cfg.cpus as i64) + 2);
        let needs_flush = atomic64_read(&mm.memcg(memcg).vmstats.stats_updates) > trigger;
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// 2026 proposal, updater: the break off by one.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledBreakAtTrigger;

impl Memcontrol for ScaledBreakAtTrigger {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ilog2(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        let trigger = self.memcg_vmstats_flush_threshold(mm);
        // MUTANT: `>=` for `>`.
        v6_17_updater(mm, memcg, val, usize::MAX, |m| {
            atomic64_read(&mm.memcg(m).vmstats.stats_updates) >= trigger
        });
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The catalogue's entries for these mutants, each with the properties
/// that must kill it and on which backends.
pub fn variants() -> Vec<Variant> {
    let mutant = |name: &str, summary: &str, model, trigger: fn(&Config) -> i64, twin: &str| {
        Variant::new(name, Kind::Mutant, summary, model)
            .per_memcg(trigger)
            .twin(twin)
    };
    vec![
        mutant(
            "mutant-v6.8-skip-at-trigger",
            "v6.8 updater: skip the add once the atomic is >= the trigger (the reader needs >)",
            v6_8::model(V6_8SkipAtTrigger),
            batch_times_cpus,
            "v6.8-no-skip",
        )
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-v6.8-gate-on-root",
            "v6.8 reader: the gate reads the root's atomic instead of the target's",
            v6_8::model(V6_8GateOnRoot),
            batch_times_cpus,
            "v6.8-no-skip",
        )
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-v6.8-flush-target-only",
            "v6.8 flusher: a subtree flush runs the callback of the target only",
            v6_8::model(V6_8FlushTargetOnly),
            batch_times_cpus,
            "v6.8-no-skip",
        )
        .killed_by(Property::Conservation, ALL_CHECKERS),
        mutant(
            "mutant-v6.8-no-rstat-lock",
            "v6.8 flusher: subtree flushes without cgroup_rstat_lock (C11)",
            v6_8::model(V6_8NoRstatLock),
            batch_times_cpus,
            "v6.8-no-skip",
        )
        .killed_by(Property::FlushExclusion, SAMPLED),
        mutant(
            "mutant-v6.17-break-at-trigger",
            "v6.17 updater: break once the atomic is >= the trigger (the reader needs >)",
            v6_8::model(V6_17BreakAtTrigger),
            batch_times_cpus,
            "v6.17-no-break",
        )
        .release(&marking::V6_17)
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-v6.17-target-only",
            "v6.17 updater: counts at the updated memcg only, never at its ancestors",
            v6_8::model(V6_17TargetOnly),
            batch_times_cpus,
            "v6.17-no-break",
        )
        .release(&marking::V6_17)
        .killed_by(Property::NoLostFlush, SC)
        // The reader's contract, no walk compared: a root never counted
        // leaves its quiescent reader with everything pending.
        .killed_by(
            Property::QuiescentReaderFlushes,
            &[crate::vocab::BackendName::ShuttleDfs],
        ),
        mutant(
            "mutant-v6.17-unlocked-callbacks",
            "v6.17 flusher: the per-CPU callbacks run without the rstat lock",
            v6_8::model(V6_17Unlocked),
            batch_times_cpus,
            "v6.17-no-break",
        )
        .release(&marking::V6_17)
        .killed_by(Property::FlushExclusion, SAMPLED),
        mutant(
            "mutant-scaled-2026-reader-off-by-one",
            "2026 proposal, reader: flushes above BATCH * (ilog2(n) + 2)",
            v6_8::model(ScaledReaderOffByOne),
            proposal_2026::trigger_ilog2,
            "scaled-2026-no-break",
        )
        .release(&marking::V6_17)
        .killed_by(Property::NoLostFlush, SC),
        mutant(
            "mutant-scaled-2026-break-at-trigger",
            "2026 proposal, updater: break once the atomic is >= the trigger",
            v6_8::model(ScaledBreakAtTrigger),
            proposal_2026::trigger_ilog2,
            "scaled-2026-no-break",
        )
        .release(&marking::V6_17)
        .killed_by(Property::NoLostFlush, SC),
    ]
}
