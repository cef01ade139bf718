//! The lifetime wing's monitor: which memcgs are freed and released, who
//! holds a memcg found under RCU, what was charged where; it calls the
//! lifetime properties' checks ([`crate::observe::properties::lifetime`])
//! and counts their races. Results go into the same [`Shared`] as the flush
//! monitor's, so that a run judges both wings alike.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::observe::coverage::Event;
use crate::observe::plan::Shared;
use crate::observe::properties::hooks::{LifeAt, LifeCtx};
use crate::observe::property::{Check, Property};
use crate::observe::record::{step_text, Step};
use crate::vocab::footprint::{self, GhostKind, GhostLoc};
use crate::vocab::obs::{Actor, LifeEvent, Obs, Op, Sink, Var};

/// Memcgs of the lifetime scenarios: root, parent, child.
const MEMCGS: usize = 3;

#[derive(Default)]
struct ExecState {
    freed: [bool; MEMCGS],
    /// Per memcg: its updated-tree node freed.
    rstat_freed: [bool; MEMCGS],
    released: [bool; MEMCGS],
    /// Updaters inside a read-side critical section, with the memcg they
    /// found.
    holding: Vec<(Actor, u8)>,
    charged: [i64; MEMCGS],
    late: [i64; MEMCGS],
    /// CPUs with a charge in progress (bit `cpu`): from its first step to
    /// its `UpdateDone`.
    charging: u64,
    /// The races seen: a reader across a release, an update after one, a
    /// death while a charge was in progress.
    hits: [bool; 3],
    violated: Vec<(Property, String)>,
}

/// The state of a stateful search: everything but the messages (the
/// violated properties themselves are hashed).
impl std::hash::Hash for ExecState {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let ExecState {
            freed,
            rstat_freed,
            released,
            holding,
            charged,
            late,
            charging,
            hits,
            violated,
        } = self;
        (
            freed,
            rstat_freed,
            released,
            holding,
            charged,
            late,
            charging,
            hits,
        )
            .hash(h);
        for (p, _) in violated {
            p.hash(h);
        }
    }
}

/// The monitor of one lifetime execution.
pub struct LifeMonitor {
    shared: Arc<Shared>,
    state: Mutex<ExecState>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ghost locations the depth-first search orders steps by: a memcg's freed
/// mark against every access to it, its release against every charge.
const G_FREED: GhostLoc = 300;
const G_RELEASED: GhostLoc = 310;

impl LifeMonitor {
    /// A monitor for a new execution reporting into `shared`.
    pub fn new(shared: Arc<Shared>) -> Arc<Self> {
        if shared.plan.trace {
            lock(&shared.trace).clear();
        }
        Arc::new(LifeMonitor {
            shared,
            state: Mutex::new(ExecState::default()),
        })
    }

    /// End of the execution: file violations and the races seen.
    pub fn finish(&self) {
        let s = std::mem::take(&mut *lock(&self.state));
        for (hit, e) in s.hits.iter().zip([
            Event::ReaderAcrossRelease,
            Event::UpdateAfterRelease,
            Event::ChargeRacedDeath,
        ]) {
            if *hit {
                self.shared.coverage.hit(e);
            }
        }
        let mut v = lock(&self.shared.violations);
        for (p, msg) in s.violated {
            v.entry(p).or_insert(msg);
        }
    }

    fn check(&self, s: &ExecState, at: LifeAt) -> Vec<(Property, String)> {
        let ctx = LifeCtx {
            freed: &s.freed,
            rstat_freed: &s.rstat_freed,
            charged: &s.charged,
            late: &s.late,
        };
        self.shared
            .plan
            .checks
            .iter()
            .filter_map(|p| match p.def().check {
                Check::Life(f) => f(&ctx, &at).map(|msg| (*p, msg)),
                Check::Flush(_) => None,
            })
            .collect()
    }

    fn record(&self, actor: Actor, obs: &Obs) {
        if !self.shared.plan.trace {
            return;
        }
        let mut t = lock(&self.shared.trace);
        if let Some(text) = step_text(obs, false) {
            let access = match obs {
                Obs::Access(a) => Some(*a),
                _ => None,
            };
            t.push(Step {
                actor,
                text,
                access,
            });
        }
        if t.len() > 20_000 {
            let tail: Vec<String> = t[t.len() - 60..]
                .iter()
                .map(|s| format!("{:<10} {}", s.actor.to_string(), s.text))
                .collect();
            drop(t);
            panic!(
                "model: an execution ran away (a wait that never ends?); its last steps:\n  {}",
                tail.join("\n  ")
            );
        }
    }
}

impl Sink for LifeMonitor {
    fn digest(&self, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        lock(&self.state).hash(&mut state);
        true
    }

    fn observe(&self, actor: Actor, obs: Obs) {
        self.record(actor, &obs);
        let mut guard = lock(&self.state);
        let s: &mut ExecState = &mut guard;
        if let Actor::Cpu(c) = actor {
            match obs {
                Obs::UpdateDone { .. } => s.charging &= !(1 << c),
                _ => s.charging |= 1 << c,
            }
        }
        if let Obs::Life(LifeEvent::Offline { .. }) = obs {
            s.hits[2] |= s.charging != 0;
        }
        let found = match obs {
            Obs::Access(a) => {
                if let Some(m) = a.var.memcg() {
                    footprint::footprint(G_FREED + m as GhostLoc, GhostKind::Read);
                }
                if let (Var::State { memcg, .. }, Op::Add { val, .. }) = (a.var, a.op) {
                    footprint::footprint(G_RELEASED + memcg as GhostLoc, GhostKind::Read);
                    if actor.is_cpu() && s.released[memcg as usize] {
                        s.late[memcg as usize] += val;
                        s.hits[1] = true;
                    }
                }
                self.check(s, LifeAt::Access { actor, access: a })
            }
            Obs::Life(LifeEvent::Deref { memcg }) => {
                s.holding.push((actor, memcg));
                Vec::new()
            }
            Obs::Life(LifeEvent::Unlocked) => {
                s.holding.retain(|(a, _)| *a != actor);
                Vec::new()
            }
            Obs::Life(LifeEvent::Released { memcg }) => {
                footprint::footprint(G_RELEASED + memcg as GhostLoc, GhostKind::Write);
                s.released[memcg as usize] = true;
                if s.holding.iter().any(|(_, m)| *m == memcg) {
                    s.hits[0] = true;
                }
                Vec::new()
            }
            Obs::Life(LifeEvent::Freed { memcg, rstat }) => {
                footprint::footprint(G_FREED + memcg as GhostLoc, GhostKind::Write);
                s.freed[memcg as usize] = true;
                s.rstat_freed[memcg as usize] |= rstat;
                Vec::new()
            }
            Obs::Life(LifeEvent::CgroupFreed { memcg }) => {
                footprint::footprint(G_FREED + memcg as GhostLoc, GhostKind::Write);
                s.rstat_freed[memcg as usize] = true;
                Vec::new()
            }
            Obs::Life(LifeEvent::ExitCheck { memcg, on_tree }) => {
                self.check(s, LifeAt::ExitCheck { memcg, on_tree })
            }
            Obs::UpdateDone { memcg, val } => {
                s.charged[memcg as usize] += val;
                Vec::new()
            }
            Obs::Final { memcg, value } => {
                let ctx = LifeCtx {
                    freed: &s.freed,
                    rstat_freed: &s.rstat_freed,
                    charged: &s.charged,
                    late: &s.late,
                };
                let lost = ctx.charged_to_subtree(memcg) - value;
                if lost != 0 {
                    self.shared
                        .measures
                        .lost_at_death
                        .offer(lost, || self.shared.steps());
                }
                self.check(s, LifeAt::Final { memcg, value })
            }
            _ => Vec::new(),
        };
        let mut armed_hit = None;
        for (p, msg) in found {
            if s.violated.iter().any(|(q, _)| *q == p) {
                continue;
            }
            if self.shared.plan.armed.contains(&p) {
                armed_hit = Some(msg.clone());
            }
            s.violated.push((p, msg));
        }
        drop(guard);
        if let Some(msg) = armed_hit {
            panic!("{msg}");
        }
    }
}
