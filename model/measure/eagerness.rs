//! How eagerly a reader flushes under a threshold trigger (the 2026
//! thread's request for "performance tests to make sure we're not flushing
//! too eagerly"): flushes per 1000 charges on a deterministic schedule,
//! beside the count the protocol's arithmetic predicts, and a check that no
//! reader begins a flush with the trigger's worth of pages or fewer
//! pending ([`FLUSH_NOT_TOO_EAGER`]), on that schedule and by exhaustive
//! search.
//!
//! The schedule: 1-page charges to the root, round-robin over the first
//! `active` CPUs (a job on `active` of `nr_cpus` CPUs), and a reader calling
//! `mem_cgroup_flush_stats()` after every `read_every` charges; no periodic
//! flush (it adds one flush per 2 s whatever the trigger).

use std::time::Duration;

use serde::Serialize;

use crate::check::on_fresh_thread;
use crate::check::run::{explore_variant, monitor_plan};
use crate::config::Config;
use crate::explore::{Backend, Bare, Outcome, Platform, Shard};
use crate::observe::coverage::Event;
use crate::observe::properties::At;
use crate::observe::property::{checked, Check, Def, Property, IN_EXECUTION_ORDER};
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::protocol::{Env, Variant};
use crate::vocab::{Actor, BackendName, Family};

/// `flush_not_too_eager`: a reader decides to flush only with more pages
/// pending (charged, not in the aggregate) at the memcg it reads than the
/// trigger. Not in the suite's registry: [`exhaustive`] and [`measure`]
/// judge it.
pub static FLUSH_NOT_TOO_EAGER: Def = Def {
    name: "flush_not_too_eager",
    claim: "a reader decides to flush only with more pages pending than the trigger",
    source: "the 2026 thread: \"make sure we're not flushing too eagerly\"",
    decided_by: "shuttle/std: pending pages in execution order",
    backends: IN_EXECUTION_ORDER,
    applies: |s| s.family == Family::PerMemcg,
    unchecked: checked,
    coverage: Event::StaleNoFlush,
    // Not judged on the suite's entries, so none is blind to it.
    premise: None,
    race_needs_skip: false,
    refutable: false,
    check: Check::Flush(|ctx, at| {
        let At::Flushing { actor, memcg } = *at else {
            return None;
        };
        if !ctx.sc || !matches!(actor, Actor::Reader(_)) {
            return None;
        }
        let pending = ctx.ghost.staleness(memcg);
        (pending <= ctx.trigger).then(|| {
            format!(
                "flush_not_too_eager: {actor} decided to flush memcg {memcg} with {pending} pages \
                 pending, not above the trigger {}",
                ctx.trigger
            )
        })
    }),
};

/// The property handle of [`FLUSH_NOT_TOO_EAGER`].
pub fn flush_not_too_eager() -> Property {
    Property::of(&FLUSH_NOT_TOO_EAGER)
}

/// Charges between two reader flushes on the deterministic schedule, from
/// the arithmetic: a flush zeroes every counter; CPU c folds `batch` pages
/// on each `batch`-th charge it gets, so in round `q + 1` (the charges
/// `q·B·J + 1 ..= (q + 1)·B·J` for `J = active`) the J folds land on the last
/// J charges; the atomic first exceeds `T` at fold `T / B + 1 = q·J + r + 1`,
/// on charge `(q + 1)·B·J - J + 1 + r`, and the next read at or after it
/// flushes. For one active CPU it is `T + B`.
pub fn predicted_interval(trigger: i64, batch: i64, active: usize, read_every: usize) -> i64 {
    let j = active as i64;
    let m = trigger / batch;
    let (q, r) = (m / j, m % j);
    let i = (q + 1) * batch * j - j + 1 + r;
    let k = read_every as i64;
    k * ((i + k - 1) / k)
}

impl Eagerness {
    /// Whether every flush came exactly [`Eagerness::interval`] charges
    /// after the previous one (or the start).
    pub fn exact(&self) -> bool {
        self.flushes > 0
            && self.last_flush_at == self.flushes * self.interval as u64
            && self.charges < (self.flushes + 1) * self.interval as u64
    }
}

/// One deterministic run.
#[derive(Clone, Debug, Serialize)]
pub struct Eagerness {
    /// Variant name.
    pub variant: String,
    /// `nr_cpus`.
    pub cpus: usize,
    /// CPUs that charge.
    pub active: usize,
    /// `MEMCG_CHARGE_BATCH`.
    pub batch: i64,
    /// The reader's trigger (pages).
    pub trigger: i64,
    /// Charges between two reads.
    pub read_every: usize,
    /// Charges in all.
    pub charges: u64,
    /// Reader calls.
    pub reads: u64,
    /// Reader calls that flushed.
    pub flushes: u64,
    /// The charge after which the last flush came (0: none).
    pub last_flush_at: u64,
    /// Flushes per 1000 charges, measured.
    pub per_1000: f64,
    /// Charges between two flushes, from [`predicted_interval`].
    pub interval: i64,
    /// Flushes per 1000 charges, from it.
    pub predicted_per_1000: f64,
    /// Fewest pages pending when a reader flushed (`None`: none flushed).
    pub min_pending_at_flush: Option<i64>,
    /// Most pages pending when a reader did not flush.
    pub max_pending_at_skip: i64,
    /// The first flush with no more pages pending than the trigger
    /// ([`FLUSH_NOT_TOO_EAGER`] on this schedule), if any.
    pub violation: Option<String>,
}

/// Run the deterministic schedule for `variant` with `cpus` CPUs, `active`
/// of them charging, `charges` 1-page charges and a read every
/// `read_every`.
pub fn measure(
    variant: &Variant,
    cpus: usize,
    active: usize,
    batch: i64,
    charges: usize,
    read_every: usize,
) -> Eagerness {
    let cfg = Config::default()
        .cpus(cpus)
        .batch(batch)
        .updates(charges / active.max(1))
        .vals(&[1]);
    let trigger = variant.trigger_on(&cfg);
    let model = variant.flush_model().clone();
    let c = cfg.clone();
    let (reads, flushes, last, min_flush, max_skip) = on_fresh_thread(move || {
        let proto = model.build::<Bare>(Env::new(&c));
        let (mut reads, mut flushes, mut last, mut min_flush, mut max_skip) =
            (0u64, 0u64, 0u64, None, 0i64);
        for n in 1..=charges {
            Bare::set_actor(Actor::Cpu((n - 1) % active));
            proto.mod_memcg_state(ROOT_MEM_CGROUP, 1);
            if n % read_every == 0 {
                Bare::set_actor(Actor::Reader(0));
                let pending = n as i64 - proto.memcg_page_state(ROOT_MEM_CGROUP);
                reads += 1;
                if proto.mem_cgroup_flush_stats(ROOT_MEM_CGROUP) {
                    flushes += 1;
                    last = n as u64;
                    min_flush = Some(min_flush.map_or(pending, |m: i64| m.min(pending)));
                } else {
                    max_skip = max_skip.max(pending);
                }
            }
        }
        (reads, flushes, last, min_flush, max_skip)
    });
    let interval = predicted_interval(trigger, batch, active, read_every);
    let violation = min_flush.filter(|&p| p <= trigger).map(|p| {
        format!(
            "{}: a reader flushed with {p} pages pending, not above the trigger {trigger}",
            FLUSH_NOT_TOO_EAGER.name
        )
    });
    Eagerness {
        variant: variant.name.clone(),
        cpus,
        active,
        batch,
        trigger,
        read_every,
        charges: charges as u64,
        reads,
        flushes,
        last_flush_at: last,
        per_1000: flushes as f64 * 1000.0 / charges as f64,
        interval,
        predicted_per_1000: 1000.0 / interval as f64,
        min_pending_at_flush: min_flush,
        max_pending_at_skip: max_skip,
        violation,
    }
}

/// One exhaustive check of [`FLUSH_NOT_TOO_EAGER`].
#[derive(Clone, Debug, Serialize)]
pub struct EagerCheck {
    /// Variant name.
    pub variant: String,
    /// The configuration.
    pub cfg: Config,
    /// The backend.
    pub backend: BackendName,
    /// The search.
    pub search: String,
    /// Executions explored.
    pub executions: u64,
    /// Whether the search finished and covered every sequentially
    /// consistent execution.
    pub exhaustive: bool,
    /// The first violation, if any.
    pub violation: Option<String>,
    /// The trigger on the configuration.
    pub trigger: i64,
}

impl EagerCheck {
    /// The pages pending at the violating flush, if any.
    pub fn pending(&self) -> Option<i64> {
        pending_in(self.violation.as_deref()?)
    }
}

/// The pages pending that a violation message of [`FLUSH_NOT_TOO_EAGER`]
/// reports.
pub fn pending_in(msg: &str) -> Option<i64> {
    let (before, _) = msg.split_once(" pages pending")?;
    before.rsplit(' ').next()?.parse().ok()
}

/// Check [`FLUSH_NOT_TOO_EAGER`] for `variant` on `cfg` by the stateful
/// depth-first search (every sequentially consistent interleaving), capped
/// at `max_schedules` and `budget`.
pub fn exhaustive(
    cfg: &Config,
    variant: &Variant,
    registry: &[Variant],
    max_schedules: usize,
    budget: Duration,
) -> Result<EagerCheck, String> {
    let dfs = Backend::ShuttleDfs {
        max_schedules,
        sleep_sets: true,
        stateful: true,
        symmetry: false,
        workers: 1,
    };
    let p = flush_not_too_eager();
    let plan = monitor_plan(variant, registry, cfg, &dfs, vec![p])?;
    let (e, shared) = explore_variant(variant, plan, &dfs, Shard::default(), budget, None, None);
    let finished = matches!(e.outcome, Outcome::Finished);
    Ok(EagerCheck {
        variant: variant.name.clone(),
        cfg: cfg.clone(),
        backend: dfs.id(),
        search: dfs.search(),
        executions: e.executions,
        exhaustive: finished && dfs.exhaustive(),
        violation: shared.violation(p),
        trigger: variant.trigger_on(cfg),
    })
}

/// The configurations [`exhaustive`] is run on by the reply, where no
/// flush can overlap a charge before the reader's only decision: 1 CPU at
/// batch 2 (where dropping `MEMCG_CHARGE_BATCH` from the gate matters) and
/// 2 CPUs at batch 1; 1-page updates, no periodic flush.
pub fn exhaustive_configs() -> Vec<Config> {
    let base = Config::bounds().readers(1).reads(1);
    vec![
        base.clone().cpus(1).batch(2).updates(4),
        base.cpus(2).batch(1).updates(2),
    ]
}

/// A configuration whose reader flushes twice, so that its first flush can
/// race a charge: the atomic may then count a fold the flush has already
/// read, and the second flush begin with fewer than `T` pages pending.
pub fn racy_config() -> Config {
    Config::bounds()
        .cpus(1)
        .batch(1)
        .updates(4)
        .readers(1)
        .reads(2)
}
