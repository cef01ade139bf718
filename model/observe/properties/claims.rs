//! Claims made for later versions: the per-memcg lineage's error margin,
//! its "ancestors are flushable" invariant and its threshold bound (v6.8
//! on), and v6.4's claim that the races on `flush_next_time` are harmless.

use crate::observe::coverage::Event;
use crate::observe::plan::FLUSH_TIME;
use crate::observe::property::{checked, Check, Def, Subject, EVERY_BACKEND, IN_EXECUTION_ORDER};
use crate::vocab::{Actor, Family};

use super::hooks::At;

/// This file's properties, in report order.
pub static DEFS: &[&Def] = &[
    &PER_MEMCG_ERROR_BOUND,
    &ANCESTORS_FLUSHABLE,
    &STATS_UPDATES_BOUND,
    &RATELIMITED_SKIP_JUSTIFIED,
];

fn per_memcg(s: &Subject) -> bool {
    s.family == Family::PerMemcg
}

/// `per_memcg_error_bound` (C10): a reader that skips misses at most
/// `NR_CPUS * MEMCG_CHARGE_BATCH * NR_MEMCGS` pages.
pub static PER_MEMCG_ERROR_BOUND: Def = Def {
    name: "per_memcg_error_bound",
    claim: "a reader that skips the flush misses at most NR_CPUS * MEMCG_CHARGE_BATCH * NR_MEMCGS pages",
    source: "8d59d2214c23, C10",
    decided_by: "shuttle/std: staleness in execution order, per memcg; not run under loom",
    backends: IN_EXECUTION_ORDER,
    applies: per_memcg,
    unchecked: checked,
    coverage: Event::StaleNoFlush,
    premise: Some(Event::StaleAtDecision),
    race_needs_skip: false,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        let At::Skipped { actor, memcg } = *at else {
            return None;
        };
        let cfg = &ctx.cfg;
        let bound = cfg.batch * cfg.cpus as i64 * cfg.memcgs() as i64;
        let stale = ctx.ghost.staleness(memcg);
        (ctx.sc && stale > bound).then(|| {
            let key = ctx.ghost.gate_read(actor).and_then(|(k, _)| k);
            let split = ctx.ghost.split(key, memcg);
            format!(
                "per_memcg_error_bound: a reader of memcg {memcg} skipped the flush with {stale} pages \
                 missing (residue {}, counted {}, skipped {}, other {}) > NR_CPUS * MEMCG_CHARGE_BATCH \
                 * NR_MEMCGS = {bound}",
                split[0], split[1], split[2], split[3]
            )
        })
    }),
};

/// `ancestors_flushable` (C12), where the updater relies on it: whenever
/// an updater reads a memcg's atomic and finds it flushable (v6.17's
/// `break`, v6.8's skip), every ancestor's atomic is above the trigger at
/// that instant.
pub static ANCESTORS_FLUSHABLE: Def = Def {
    name: "ancestors_flushable",
    claim: "when an updater finds a memcg flushable (v6.17's break, v6.8's skip), each of its ancestors is flushable too",
    source: "v6.17: \"If @memcg is already flushable then all its ancestors are flushable as well\", C12",
    decided_by: "shuttle/std: the ancestors' atomics in execution order at the updater's read; not run under loom, where no single instant orders them",
    backends: IN_EXECUTION_ORDER,
    // A claim about a tree, on configurations whose updates can make a
    // memcg flushable: more pages than the trigger
    // (MEMCG_CHARGE_BATCH * nr_cpus).
    applies: |s| per_memcg(s) && s.cfg.memcgs() >= 2 && can_become_flushable(s.cfg),
    unchecked: checked,
    coverage: Event::AddErasedByReset,
    premise: Some(Event::FlushableDuringUpdate),
    race_needs_skip: false,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        let At::ThresholdRead {
            memcg: Some(m),
            value,
        } = *at
        else {
            return None;
        };
        let t = ctx.trigger;
        if ctx.family != Family::PerMemcg || !ctx.sc || value <= t {
            return None;
        }
        ctx.ghost.read_all();
        let of = |x: u8| ctx.ghost.domains.get(&Some(x)).map_or(0, |d| d.threshold);
        let a = ctx
            .cfg
            .ancestry(m)
            .into_iter()
            .skip(1)
            .find(|a| of(*a) <= t)?;
        Some(format!(
            "ancestors_flushable: an updater found memcg {m}'s vmstats->stats_updates = {value} \
             > {t} (flushable) while its ancestor memcg {a}'s = {} <= {t}",
            of(a)
        ))
    }),
};

/// Whether the updates of `cfg` can carry a memcg's count above
/// `MEMCG_CHARGE_BATCH * nr_cpus`, so that an updater may find it
/// flushable.
fn can_become_flushable(cfg: &crate::config::Config) -> bool {
    let pages: i64 = (0..cfg.cpus)
        .flat_map(|c| (0..cfg.updates).map(move |k| cfg.val(c, k).abs()))
        .sum();
    pages > cfg.batch * cfg.cpus as i64
}

/// `stats_updates_bound` (C14, literally): a memcg's atomic stays below
/// `nr_cpus * MEMCG_CHARGE_BATCH`.
pub static STATS_UPDATES_BOUND: Def = Def {
    name: "stats_updates_bound",
    claim: "a memcg's vmstats->stats_updates stays below nr_cpus * MEMCG_CHARGE_BATCH",
    source: "v6.17 nmi-safe series, C14",
    decided_by:
        "all backends: every value written to a memcg's atomic (RMW results are exact under loom)",
    backends: EVERY_BACKEND,
    applies: per_memcg,
    unchecked: checked,
    coverage: Event::Skip,
    premise: Some(Event::ThresholdAdded),
    race_needs_skip: false,
    refutable: true,
    check: Check::Flush(|ctx, at| {
        let At::ThresholdWritten {
            memcg: Some(m),
            new,
        } = *at
        else {
            return None;
        };
        let bound = ctx.cfg.batch * ctx.cfg.cpus as i64;
        (ctx.family == Family::PerMemcg && new >= bound).then(|| {
            format!(
                "stats_updates_bound: memcg {m}'s vmstats->stats_updates = {new} >= nr_cpus * \
                 MEMCG_CHARGE_BATCH = {bound}"
            )
        })
    }),
};

/// `ratelimited_skip_justified` (C9): a ratelimited reader skips only if a
/// flush of the whole tree really ran at most `2 * FLUSH_TIME` ticks
/// before.
pub static RATELIMITED_SKIP_JUSTIFIED: Def = Def {
    name: "ratelimited_skip_justified",
    claim: "a ratelimited reader skips the flush only if a flush of the whole tree really ran at most 2 * FLUSH_TIME ticks before, so a race on flush_next_time can only make it flush earlier",
    source: "3cd9992b9302: the races are \"actually harmless, all we might get is the occasional earlier flush\", C9",
    decided_by: "shuttle: the jiffies a skipping reader compared against the ticks at which flush sections of the whole tree were open, in execution order; ratelimited readers need abstract time, which runs under shuttle only; global family",
    backends: IN_EXECUTION_ORDER,
    // v6.4's flush_next_time, read by ratelimited readers, which need
    // abstract time. (v6.8's flush_last_time is stamped before the flusher
    // takes the rstat lock, where the monitor sees its flush begin.)
    applies: |s| s.cfg.ratelimited > 0 && s.cfg.ticks > 0 && s.family == Family::Global,
    unchecked: checked,
    coverage: Event::RatelimitedRacedStamp,
    premise: Some(Event::RatelimitedLate),
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::RatelimitSkipped { actor, jiffies } = *at else {
            return None;
        };
        let last = ctx.ghost.root_flush_at;
        let justified = last.is_some_and(|t| jiffies <= t + 2 * FLUSH_TIME);
        (ctx.sc && ctx.cfg.ticks > 0 && !justified).then(|| skip_message(actor, jiffies, last))
    }),
};

fn skip_message(actor: Actor, jiffies: i64, last: Option<i64>) -> String {
    let last = last.map_or("no flush of the whole tree has run".to_string(), |t| {
        format!("the last flush of the whole tree ran at tick {t}")
    });
    format!(
        "ratelimited_skip_justified: {actor} skipped the flush at jiffies_64 = {jiffies}, but {last}, \
         more than 2 * FLUSH_TIME earlier"
    )
}
