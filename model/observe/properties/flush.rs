//! What a flush must do: not lose a flush a reader needed, lose no update,
//! never go backwards, run alone, and leave a quiescent reader exact.

use crate::observe::coverage::Event;
use crate::observe::property::{
    always, checked, Check, Def, Property, Subject, EVERY_BACKEND, IN_EXECUTION_ORDER,
};
use crate::observe::twin::TwinGate;
use crate::vocab::Actor;

use super::hooks::{At, Ctx};

/// This file's properties, in report order.
pub static DEFS: &[&Def] = &[
    &NO_LOST_FLUSH,
    &CONSERVATION,
    &MONOTONIC_READS,
    &FLUSH_EXCLUSION,
    &NO_LOST_FLUSH_SAME_SCHEDULE,
    &QUIESCENT_READ_EXACT,
    &EVENTUAL_CONSERVATION,
];

fn has_twin(s: &Subject) -> bool {
    s.has_twin
}

/// `no_lost_flush`: skipping never costs a reader a flush its no-skip twin
/// would have done.
pub static NO_LOST_FLUSH: Def = Def {
    name: "no_lost_flush",
    claim: "at every reader decision, if the no-skip twin's gate over the same history would flush at every point from the reader's call to the decision, the variant flushes",
    source: "873f64b791a2: \"Increasing this var further is redundant\"",
    decided_by: "shuttle/std: the twin's gate over the same history; loom: every outcome dominated by one of the twin's",
    backends: EVERY_BACKEND,
    applies: has_twin,
    unchecked: checked,
    coverage: Event::SkipRacedReset,
    premise: Some(Event::TwinFlushed),
    race_needs_skip: true,
    refutable: false,
    check: Check::Flush(|ctx, at| lost_flush(Property::of(&NO_LOST_FLUSH), 0, ctx, at)),
};

/// `no_lost_flush_same_schedule`: the same, with the twin's skipped add on
/// the variant's own schedule (a finding, not a claim the kernel makes).
pub static NO_LOST_FLUSH_SAME_SCHEDULE: Def = Def {
    name: "no_lost_flush_same_schedule",
    claim: "as no_lost_flush, with the twin's skipped add landing at the skipping CPU's next step: the twin on the same schedule",
    source: "the same-schedule sense of 873f64b791a2's claim",
    decided_by: "shuttle/std only: a schedule-for-schedule comparison, meaningless under weak memory",
    backends: IN_EXECUTION_ORDER,
    applies: has_twin,
    unchecked: checked,
    coverage: Event::SkipRacedReset,
    premise: Some(Event::TwinFlushed),
    race_needs_skip: true,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        lost_flush(Property::of(&NO_LOST_FLUSH_SAME_SCHEDULE), 1, ctx, at)
    }),
};

/// A reader decided not to flush although twin `k`'s gate (0: the
/// outcome twin, 1: the same-schedule one) would have, at every point of
/// the reader's gate read window (observe/window.rs). Under loom the
/// property is decided from outcome sets instead (drive/differential.rs),
/// so the gate's comparison runs only in execution order.
fn lost_flush(p: Property, k: usize, ctx: &Ctx, at: &At) -> Option<String> {
    let At::Skipped { actor, memcg } = *at else {
        return None;
    };
    let twin: Option<&dyn TwinGate> = [ctx.twin, ctx.same_schedule][k];
    let t = twin.filter(|t| {
        ctx.sc && t.would_flush(memcg) && ctx.windows.flushed_throughout(actor, k, memcg)
    })?;
    let n = ctx.cfg.cpus as i64;
    let saw = ctx
        .ghost
        .gate_read(actor)
        .map_or(String::new(), |(k, t)| match k {
            None => {
                format!(" (its gate read stats_flush_threshold = {t}; num_online_cpus() = {n})")
            }
            Some(m) => format!(" (its gate read memcg {m}'s vmstats->stats_updates = {t})"),
        });
    Some(format!(
        "{}: {} decided not to flush{saw}, but {} and would flush",
        p.name(),
        ctx.who(actor, memcg),
        t.describe()
    ))
}

/// `conservation`: after all updates and one more flush, every aggregate
/// holds every update charged to its subtree.
pub static CONSERVATION: Def = Def {
    name: "conservation",
    claim: "after all updates and one more flush, the aggregate equals the sum of the updates",
    source:
        "rstat: \"After this function returns, all cgroups in the subtree have up-to-date ->stat\"",
    decided_by: "all backends; loom also under weak memory",
    backends: EVERY_BACKEND,
    applies: always,
    unchecked: checked,
    coverage: Event::UpdateBehindFlusher,
    premise: Some(Event::Charged),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Final { memcg, value } = *at else {
            return None;
        };
        let expected = ctx.ghost.written_total(memcg);
        (value != expected).then(|| {
            let (which, below) = if memcg == 0 {
                ("memcg->vmstats.state".to_string(), "")
            } else {
                (
                    format!("memcg {memcg}'s vmstats.state"),
                    " charged to its subtree",
                )
            };
            format!(
                "conservation: after all updates and a final flush, {which} = {value}, \
                 but the updates{below} sum to {expected}"
            )
        })
    }),
};

/// `eventual_conservation`: after the updates stop, the final flush and
/// `--settle` more flushes, every aggregate is exact.
pub static EVENTUAL_CONSERVATION: Def = Def {
    name: "eventual_conservation",
    claim: "after the updates stop, the final flush and --settle more flushes, the aggregate equals the sum of the updates",
    source: "rstat, 2025: \"the subsequent flusher will flush those stats\" (C13)",
    decided_by: "all backends, on entries with --settle; loom also under weak memory, the only backend that can show the tree's store-buffering loss",
    backends: EVERY_BACKEND,
    applies: |s| s.cfg.settle > 0,
    unchecked: checked,
    coverage: Event::UpdateBehindFlusher,
    premise: Some(Event::UpdateDuringFlush),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Settled {
            flushes,
            memcg,
            value,
        } = *at
        else {
            return None;
        };
        let expected = ctx.ghost.written_total(memcg);
        (flushes == ctx.cfg.settle && value != expected).then(|| {
            format!(
                "eventual_conservation: after all updates, the final flush and {flushes} more, \
                 memcg {memcg}'s vmstats.state = {value}, but the updates sum to {expected}"
            )
        })
    }),
};

/// `monotonic_reads`: with non-negative updates, a reader never sees a
/// statistic go down.
pub static MONOTONIC_READS: Def = Def {
    name: "monotonic_reads",
    claim: "with non-negative updates, a reader never sees a statistic go down",
    source: "lockless READ_ONCE readers of a single-writer aggregate",
    decided_by: "all backends; loom also under weak memory",
    backends: EVERY_BACKEND,
    // Stated for non-negative updates: with uncharges a statistic goes down
    // legitimately, so on such a configuration it is not judged (rather
    // than judged inconclusive by definition). Without readers, main's one
    // read of each memcg has nothing earlier to go down from.
    applies: |s| s.cfg.non_negative() && s.cfg.readers > 0,
    unchecked: checked,
    coverage: Event::ReadDuringFlush,
    premise: Some(Event::ReadAgain),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Read {
            actor,
            value,
            floor: Some(prev),
            ..
        } = *at
        else {
            return None;
        };
        (ctx.cfg.non_negative() && value < prev).then(|| {
            format!("monotonic_reads: {actor} read memcg->vmstats.state = {prev}, then {value}")
        })
    }),
};

/// `flush_exclusion`: one flusher at a time, and flush sections ordered by
/// happens-before (the latter decided by loom's data-race detector on the
/// flusher's plain fields).
pub static FLUSH_EXCLUSION: Def = Def {
    name: "flush_exclusion",
    claim: "at most one flusher is inside the flush section, and flush sections are ordered by happens-before",
    source: "aa48e47e3906: \"let only one flusher active at a time\"",
    decided_by: "occupancy of flush sections everywhere; happens-before between them only under loom",
    backends: EVERY_BACKEND,
    // Two flushers that can run at once (main flushes only after joining
    // every thread): with fewer, no section can overlap another.
    applies: |s| s.cfg.readers + usize::from(s.cfg.periodic) >= 2,
    unchecked: checked,
    coverage: Event::TrylockContended,
    premise: Some(Event::TrylockContended),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|_, at| match *at {
        At::FlushBegan { open } if open > 1 => Some(format!(
            "flush_exclusion: {open} flushers inside the flush section at once"
        )),
        _ => None,
    }),
};

/// `quiescent_read_exact` (B9): a read after every update completed sees
/// them all.
pub static QUIESCENT_READ_EXACT: Def = Def {
    name: "quiescent_read_exact",
    claim: "a reader that runs after every update has completed reads them all",
    source: "what LTP memcg_stat_rss expects (B9)",
    decided_by: "all backends: main's read after joining every thread",
    backends: EVERY_BACKEND,
    // B9's sibling setting needs a tree.
    applies: |s| s.cfg.memcgs() >= 2,
    unchecked: checked,
    coverage: Event::StaleNoFlush,
    premise: Some(Event::QuiescentStale),
    race_needs_skip: false,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        let At::Read {
            actor: Actor::Main,
            memcg,
            value,
            decided,
            ..
        } = *at
        else {
            return None;
        };
        let expected = ctx.ghost.written_total(memcg);
        (ctx.quiescent && value != expected).then(|| {
            let gate = if decided == Some(true) {
                "its flush ran"
            } else {
                "its gate did not flush"
            };
            format!(
                "quiescent_read_exact: after every update completed, a read of memcg {memcg} \
                 returned {value} where the updates charged to its subtree sum to {expected} ({gate})"
            )
        })
    }),
};
