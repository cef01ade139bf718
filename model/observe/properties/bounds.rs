//! The documented staleness bounds of the global-threshold lineage: how
//! many pages a reader that skips the flush may miss, and for how long.

use crate::observe::coverage::Event;
use crate::observe::plan::FLUSH_TIME;
use crate::observe::property::{checked, Check, Def, Subject, IN_EXECUTION_ORDER};
use crate::vocab::Family;

use super::hooks::At;

/// This file's properties, in report order.
pub static DEFS: &[&Def] = &[
    &DOCUMENTED_ERROR_BOUND,
    &NO_WORSE_THAN_BASELINE,
    &FLUSH_TIME_BOUND,
];

/// `documented_error_bound` (C1): a reader that skips misses at most
/// `MEMCG_CHARGE_BATCH * nr_cpus` pages.
///
/// mm/memcontrol.c (since 11192d9c124d): stats "will be out of sync by
/// atmost (MEMCG_CHARGE_BATCH * nr_cpus) but only for 2 seconds".
pub static DOCUMENTED_ERROR_BOUND: Def = Def {
    name: "documented_error_bound",
    claim: "a reader that skips the flush misses at most MEMCG_CHARGE_BATCH * nr_cpus pages",
    source: "mm/memcontrol.c, C1",
    decided_by: "shuttle/std: staleness in execution order; not run under loom, where a relaxed \
                 atomic_read may return an older threshold than execution order shows",
    backends: IN_EXECUTION_ORDER,
    applies: |_| true,
    unchecked: checked,
    coverage: Event::StaleNoFlush,
    premise: Some(Event::StaleAtDecision),
    race_needs_skip: false,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        let At::Skipped { actor, memcg } = *at else {
            return None;
        };
        let documented = ctx.cfg.batch * ctx.cfg.cpus as i64;
        let stale = ctx.ghost.staleness(memcg);
        (ctx.sc && stale > documented).then(|| {
            let split = ctx.ghost.split(gate_key(ctx, actor), memcg);
            format!(
                "documented_error_bound: a reader skipped the flush with {stale} pages missing from \
                 memcg->vmstats.state (residue {}, counted {}, skipped {}, lost {}) > \
                 MEMCG_CHARGE_BATCH * nr_cpus = {documented}",
                split[0], split[1], split[2], split[3]
            )
        })
    }),
};

/// The threshold domain `actor`'s gate last read.
fn gate_key(ctx: &super::hooks::Ctx, actor: crate::vocab::Actor) -> Option<u8> {
    ctx.ghost.gate_read(actor).and_then(|(k, _)| k)
}

/// `no_worse_than_baseline`: skipping never leaves more pages behind the
/// threshold gate than v5.19's derived worst case on the same
/// configuration (the quantitative form of 873f64b791a2's claim).
pub static NO_WORSE_THAN_BASELINE: Def = Def {
    name: "no_worse_than_baseline",
    claim: "the pages the threshold gate answers for never exceed v5.19's derived worst case",
    source: "the quantitative form of 873f64b791a2's claim",
    decided_by: "shuttle/std: staleness in execution order; not run under loom, where a relaxed \
                 atomic_read may return an older threshold than execution order shows",
    backends: IN_EXECUTION_ORDER,
    // The baseline is v5.19's derived worst case, a global-threshold bound
    // derived for non-negative updates only: with uncharges it is not
    // judged (rather than judged inconclusive by definition).
    applies: |s: &Subject| s.family == Family::Global && s.cfg.non_negative(),
    unchecked: checked,
    coverage: Event::Skip,
    premise: Some(Event::StaleAtDecision),
    race_needs_skip: true,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Skipped { actor, memcg } = *at else {
            return None;
        };
        // With a flush section open, v5.19's reader would lose the trylock
        // and read stale data whatever its gate said: only decisions with
        // no flush running are comparable. Of those, a twin reader placed
        // at any point of the call would answer for that point's
        // staleness: the least over the window is judged
        // (observe/window.rs), so no read the gate makes moves the point.
        let b = ctx.baseline_since_reset?;
        if !ctx.sc || !ctx.ghost.open.is_empty() {
            return None;
        }
        let gated = ctx
            .windows
            .least_gated(actor)
            .flatten()
            .unwrap_or_else(|| ctx.ghost.gated(memcg));
        (gated > b).then(|| {
            let split = ctx.ghost.split(gate_key(ctx, actor), memcg);
            format!(
                "no_worse_than_baseline: a reader skipped the flush with {gated} pages behind the \
                 threshold gate (residue {}, counted {}, skipped {}), more than the {b} \
                 v5.19 can leave on this configuration",
                split[0], split[1], split[2]
            )
        })
    }),
};

/// `flush_time_bound` (C2, C16): with abstract time, no read misses an
/// update that returned more than `FLUSH_TIME` ticks earlier.
pub static FLUSH_TIME_BOUND: Def = Def {
    name: "flush_time_bound",
    claim: "with abstract time, no read misses an update that returned more than FLUSH_TIME ticks earlier",
    source: "\"flush the stats every 2 seconds\", C2/C16",
    decided_by: "shuttle: age in ticks, in execution order; abstract time runs under shuttle only",
    backends: IN_EXECUTION_ORDER,
    // The claim is the periodic work's period: where its timer fires late
    // (`--late`), reads miss updates FLUSH_TIME + late ticks old by design
    // (`flushcheck bounds` measures that), so it is judged on time only.
    applies: |s| s.cfg.ticks > 0 && s.cfg.late == 0,
    unchecked: checked,
    coverage: Event::UpdateBehindFlusher,
    premise: Some(Event::StaleForTicks),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Read { .. } = *at else {
            return None;
        };
        let age = ctx.ghost.stale_ticks();
        (ctx.sc && ctx.cfg.ticks > 0 && age > FLUSH_TIME).then(|| {
            format!(
                "flush_time_bound: a read of memcg->vmstats.state misses an update that returned {age} \
                 ticks earlier, more than FLUSH_TIME = {FLUSH_TIME}"
            )
        })
    }),
};
