//! The reader's contract, stated without any walk: what a reader may
//! expect of `mem_cgroup_flush_stats()` whatever a variant counts and
//! however it walks the tree (issue 41). A fix candidate passes it for
//! what its reader does, not for being the walk the comparison with a twin
//! restores.

use crate::observe::coverage::Event;
use crate::observe::property::{Check, Def, Subject, IN_EXECUTION_ORDER};
use crate::vocab::{Actor, Family};

use super::hooks::At;

/// This file's properties, in report order.
pub static DEFS: &[&Def] = &[&QUIESCENT_READER_FLUSHES];

/// The pages a per-memcg gate may leave unflushed with nothing reset: its
/// trigger `trigger` in the atomic, and below the batch on every CPU.
pub fn overdue_bound(trigger: i64, cfg: &crate::config::Config) -> i64 {
    trigger + cfg.cpus as i64 * (cfg.batch - 1)
}

/// `quiescent_reader_flushes`: with no flush before it, a quiescent
/// reader whose subtree has more pages pending than the trigger plus what
/// every CPU may hold below the batch decides to flush.
pub static QUIESCENT_READER_FLUSHES: Def = Def {
    name: "quiescent_reader_flushes",
    claim: "with no flush before it, main's quiescent reader of a memcg whose subtree has more than the trigger + nr_cpus * (MEMCG_CHARGE_BATCH - 1) pages pending decides to flush",
    source: "8d59d2214c23: a reader flushes once its memcg's pending updates exceed the threshold (memcg_vmstats_needs_flush())",
    decided_by: "shuttle/std: the pages charged to the subtree minus its aggregate (no flush has run), at main's decision, in execution order; no walk is compared",
    backends: IN_EXECUTION_ORDER,
    // Per-memcg gates, on configurations where nothing flushes before the
    // quiescent read (no reader, no periodic work): nothing resets a
    // count, so every walk that counts each update at every level leaves
    // at most the trigger in the atomic and less than a batch per CPU.
    applies: |s: &Subject| {
        s.family == Family::PerMemcg
            && s.cfg.readers == 0
            && !s.cfg.periodic
            && s.cfg.ticks == 0
            && s.cfg.non_negative()
    },
    unchecked: crate::observe::property::checked,
    coverage: Event::QuiescentOverdue,
    premise: Some(Event::QuiescentOverdue),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Skipped {
            actor: Actor::Main,
            memcg,
        } = *at
        else {
            return None;
        };
        let bound = overdue_bound(ctx.trigger, ctx.cfg);
        let pending = ctx.ghost.staleness(memcg);
        (ctx.sc && ctx.quiescent && ctx.family == Family::PerMemcg && pending > bound).then(|| {
            format!(
                "quiescent_reader_flushes: with no flush before it, main's reader of memcg {memcg} \
                 decided not to flush with {pending} pages pending > trigger {} + nr_cpus * \
                 (MEMCG_CHARGE_BATCH - 1) = {bound}",
                ctx.trigger
            )
        })
    }),
};
