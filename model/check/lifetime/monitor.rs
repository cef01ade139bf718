//! The lifetime monitor: judges `no_use_after_free`, `stats_survive_death`
//! and `no_leak` from observations, counts the races, records witnesses.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::explore::dfs::{self, GhostKind, GhostLoc};
use crate::observe::coverage::Event;
use crate::observe::obs::{Actor, LifeEvent, Obs, Op, Sink, Var};
use crate::observe::property::Property;
use crate::observe::record::step_text;
use crate::protocol::lifetime::{CHILD, PARENT};
use crate::protocol::memcg::ROOT_MEM_CGROUP;

/// What every execution of one exploration reports into.
pub struct LifeShared {
    /// The property whose violation fails the execution.
    pub armed: Property,
    /// Record a witness trace.
    pub tracing: bool,
    counts: [AtomicU64; 2],
    lost: Mutex<BTreeMap<String, i64>>,
}

impl LifeShared {
    pub(super) fn new(armed: Property, tracing: bool) -> Self {
        LifeShared {
            armed,
            tracing,
            counts: Default::default(),
            lost: Mutex::new(BTreeMap::new()),
        }
    }

    /// How often the armed property's racy interleaving occurred.
    pub fn coverage(&self, e: Event) -> u64 {
        match e {
            Event::ReaderAcrossRelease => self.counts[0].load(Ordering::Relaxed),
            Event::UpdateAfterRelease => self.counts[1].load(Ordering::Relaxed),
            _ => 0,
        }
    }

    /// The largest loss seen at each memcg read after death ("memcg m").
    pub fn max_lost(&self) -> BTreeMap<String, i64> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[derive(Default)]
pub(super) struct ExecState {
    freed: [bool; 3],
    released: [bool; 3],
    holding: Vec<(Actor, u8)>,
    charged: [i64; 3],
    late: [i64; 3],
    violated: Vec<(Property, String)>,
    trace: Vec<String>,
    hits: [bool; 2],
}

pub(super) struct LifeMonitor {
    pub(super) shared: Arc<LifeShared>,
    pub(super) state: Mutex<ExecState>,
}

impl LifeMonitor {
    fn violate(s: &mut ExecState, p: Property, msg: String) {
        if !s.violated.iter().any(|(q, _)| *q == p) {
            s.violated.push((p, msg));
        }
    }

    pub(super) fn finish(&self) {
        let s = std::mem::take(&mut *self.state.lock().unwrap_or_else(|e| e.into_inner()));
        for (i, hit) in s.hits.iter().enumerate() {
            if *hit {
                self.shared.counts[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some((_, msg)) = s.violated.iter().find(|(p, _)| *p == self.shared.armed) {
            let mut text = msg.clone();
            if self.shared.tracing {
                text.push_str("\nwitness:\n");
                for l in &s.trace {
                    let _ = writeln!(text, "  {l}");
                }
            }
            panic!("{text}");
        }
    }
}

fn subtree(m: u8) -> &'static [u8] {
    match m {
        ROOT_MEM_CGROUP => &[0, PARENT, CHILD],
        PARENT => &[PARENT, CHILD],
        _ => &[CHILD],
    }
}

/// Ghost locations the depth-first search orders steps by: a memcg's freed
/// mark against every access to it, its release against every charge.
const G_FREED: GhostLoc = 300;
const G_RELEASED: GhostLoc = 310;

impl Sink for LifeMonitor {
    fn digest(&self, state: &mut dyn std::hash::Hasher) -> bool {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut words: Vec<u64> = Vec::new();
        words.extend(
            s.freed
                .iter()
                .chain(&s.released)
                .chain(&s.hits)
                .map(|b| *b as u64),
        );
        words.extend(s.charged.iter().chain(&s.late).map(|v| *v as u64));
        words.extend(s.holding.iter().map(|(a, m)| {
            let a = match a {
                Actor::Cpu(c) => *c as u64,
                _ => 99,
            };
            a << 8 | *m as u64
        }));
        words.push(u64::MAX);
        words.extend(s.violated.iter().map(|(p, _)| *p as u64));
        for w in words {
            state.write_u64(w);
        }
        true
    }

    fn observe(&self, actor: Actor, obs: Obs) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.shared.tracing {
            if let Some(t) = step_text(&obs, false) {
                s.trace.push(format!("{:<10} {t}", actor.to_string()));
            }
            if s.trace.len() > 20_000 {
                let tail = s.trace[s.trace.len() - 60..].join("\n  ");
                drop(s);
                panic!("model: an execution ran away (a wait that never ends?); its last steps:\n  {tail}");
            }
        }
        match obs {
            Obs::Access(a) => {
                if let Some(m) = a.var.memcg() {
                    dfs::ghost(G_FREED + m as GhostLoc, GhostKind::Read);
                }
                if let Some(m) = a.var.memcg().filter(|m| s.freed[*m as usize]) {
                    // The model's tree walk tests every node's word; a word
                    // that says "off the tree" stands for a node the
                    // kernel's pointer walk never reaches.
                    let off_tree = matches!(a.var, Var::UpdatedNext { .. } | Var::LlistNode { .. })
                        && a.op == Op::Read(0);
                    if !off_tree {
                        let msg = format!(
                            "no_use_after_free: {actor} accessed {} of memcg {m} ({:?}) after memcg {m} was freed",
                            a.var, a.op
                        );
                        Self::violate(&mut s, Property::NoUseAfterFree, msg);
                    }
                }
                if let (Var::State { memcg, .. }, Op::Add { val, .. }) = (a.var, a.op) {
                    dfs::ghost(G_RELEASED + memcg as GhostLoc, GhostKind::Read);
                    if actor.is_cpu() && s.released[memcg as usize] {
                        s.late[memcg as usize] += val;
                        s.hits[1] = true;
                    }
                }
            }
            Obs::Life(LifeEvent::Deref { memcg }) => s.holding.push((actor, memcg)),
            Obs::Life(LifeEvent::Unlocked) => s.holding.retain(|(a, _)| *a != actor),
            Obs::Life(LifeEvent::Released { memcg }) => {
                dfs::ghost(G_RELEASED + memcg as GhostLoc, GhostKind::Write);
                s.released[memcg as usize] = true;
                if s.holding.iter().any(|(_, m)| *m == memcg) {
                    s.hits[0] = true;
                }
            }
            Obs::Life(LifeEvent::Freed { memcg }) => {
                dfs::ghost(G_FREED + memcg as GhostLoc, GhostKind::Write);
                s.freed[memcg as usize] = true;
            }
            Obs::Life(LifeEvent::ExitCheck { memcg, on_tree }) if on_tree > 0 => {
                let msg = format!(
                    "no_leak: css_rstat_exit() of memcg {memcg} found it still on {on_tree} CPU's updated tree (WARN_ON_ONCE: its per-CPU rstat data leaks)"
                );
                Self::violate(&mut s, Property::NoLeak, msg);
            }
            Obs::UpdateDone { memcg, val } => s.charged[memcg as usize] += val,
            Obs::Final { memcg, value } => {
                let expected: i64 = subtree(memcg).iter().map(|m| s.charged[*m as usize]).sum();
                if value != expected {
                    let late: i64 = s.late.iter().sum();
                    let lost = expected - value;
                    {
                        let mut l = self.shared.lost.lock().unwrap_or_else(|e| e.into_inner());
                        let e = l.entry(format!("memcg {memcg}")).or_insert(0);
                        *e = (*e).max(lost);
                    }
                    let msg = format!(
                        "stats_survive_death: after every thread was joined and a final flush, memcg {memcg}'s aggregate is {value} where {expected} pages were charged to its subtree ({lost} lost; {late} of the pages were charged to a memcg after its release flush)"
                    );
                    Self::violate(&mut s, Property::StatsSurviveDeath, msg);
                }
            }
            _ => {}
        }
    }
}
