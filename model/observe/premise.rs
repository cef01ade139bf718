//! The premise events of the properties that have no race event of their
//! own ([`crate::observe::property::Def::premise`]): counted from the
//! observations and the ghost state, never from where a variant reads, so
//! that what an entry can show does not depend on how a variant is written.

use crate::observe::coverage::{Coverage, Event};
use crate::observe::ghost::Ghost;
use crate::observe::plan::{MonitorPlan, FLUSH_TIME};
use crate::observe::properties::contract::overdue_bound;
use crate::vocab::obs::{Access, Actor, Obs, Op, Tp, Var};
use crate::vocab::Family;

/// Count the premises `obs` by `actor` shows under `plan`, given the
/// ghost state and whether every thread has been joined (`quiescent`).
pub fn hit(
    cov: &Coverage,
    plan: &MonitorPlan,
    (actor, obs, ghost, quiescent): (Actor, &Obs, &Ghost, bool),
) {
    // The pages a per-memcg gate may leave unflushed with nothing reset.
    let overdue = (plan.family == Family::PerMemcg).then(|| overdue_bound(plan.trigger, &plan.cfg));
    // Any step of an update (its counter, its fold, its updated-tree link)
    // while a flush section is open.
    if let (Obs::Access(_), Actor::Cpu(_)) = (obs, actor) {
        if !ghost.open.is_empty() {
            cov.hit(Event::UpdateDuringFlush);
        }
        if ghost.any_flushable() {
            cov.hit(Event::FlushableDuringUpdate);
        }
    }
    match *obs {
        Obs::UpdateDone { val, .. } if val != 0 => cov.hit(Event::Charged),
        Obs::Trace(Tp::FlushStats { memcg, .. })
            if actor.is_reader() && ghost.staleness(memcg) != 0 =>
        {
            cov.hit(Event::StaleAtDecision);
            if actor == Actor::Main && quiescent {
                cov.hit(Event::QuiescentStale);
                if overdue.is_some_and(|b| ghost.staleness(memcg) > b) {
                    cov.hit(Event::QuiescentOverdue);
                }
            }
        }
        Obs::Access(Access {
            var: Var::Threshold { .. },
            op: Op::Add { val, .. },
            ..
        }) if val != 0 && matches!(actor, Actor::Cpu(_)) => cov.hit(Event::ThresholdAdded),
        Obs::Read { .. } if actor.is_reader() && ghost.stale_ticks() > 0 => {
            cov.hit(Event::StaleForTicks)
        }
        // Where a skip would not be justified (ratelimited_skip_justified):
        // no flush of the whole tree in the last 2 * FLUSH_TIME ticks (the
        // periodic work late, `timed-late`), or none yet.
        Obs::Trace(Tp::FlushRatelimited { jiffies, .. })
            if actor.is_reader()
                && ghost
                    .root_flush_at
                    .is_none_or(|t| jiffies > t + 2 * FLUSH_TIME) =>
        {
            cov.hit(Event::RatelimitedLate)
        }
        _ => {}
    }
}
