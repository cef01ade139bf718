//! The twin gate of the per-memcg lineage (v6.8 on).

use super::gate::TwinGate;
use crate::observe::ghost::{G_TWIN, G_TWIN_CPU};
use crate::vocab::footprint::{self, GhostKind};
use crate::vocab::obs::{renamed, Access, Actor, Obs, Op, Tp, Var};

/// The fold a CPU's update has pending at one level of a [`PerMemcgGate`].
#[derive(Clone, Copy, Debug, Hash)]
struct Fold {
    level: u8,
    /// The sum the fold adds, if taken when the counter crossed (v6.8's
    /// local `s`); `None` takes the counter when the fold lands (v6.17's
    /// `this_cpu_xchg()`).
    sum: Option<i64>,
    /// A reset of the level's atomic came while it was pending: if the
    /// variant never adds it (a skip), it landed before that reset and
    /// was erased.
    erased: bool,
}

/// A CPU's update in progress, as the twin counts it.
#[derive(Clone, Debug, Hash)]
struct TwinUpdate {
    /// The updated memcg and its ancestors, bottom-up.
    levels: Vec<u8>,
    /// Levels counted so far (`levels[..counted]`).
    counted: usize,
    /// The update's magnitude.
    inc: i64,
    /// A fold waiting for the variant's own fold step.
    fold: Option<Fold>,
    /// The levels whose per-CPU counter of this CPU a flusher reset since
    /// the update began (bit `level`): a count the variant never makes
    /// there landed before that reset and was erased.
    reset: u64,
    /// The twin's per-CPU counter at the level whose counter the variant
    /// has read and not yet written in this update: the first half of its
    /// `this_cpu_add_return()` (v6.8's `READ_ONCE`/`WRITE_ONCE` pair). The
    /// twin's count there is that value plus the update's, landing at the
    /// variant's write: a flusher's remote reset between the two is
    /// overwritten in the twin as in the variant.
    rmw: Option<(u8, i64)>,
}

/// The gate of a per-memcg twin (v6.8 on): per (memcg, CPU) counters that
/// every update counts at every level, folded into the memcg's atomic once
/// they reach `MEMCG_CHARGE_BATCH`, never skipped; a reader of a memcg
/// flushes when its atomic is above the trigger.
///
/// Placement, so that the twin's steps form a legal schedule of the twin
/// (docs/protocol.md), and only at the variant's writes and at the ends of
/// its calls, never at a read (a read that changes nothing must not move
/// the twin: tests/suite/unused_reads.rs). Where the variant makes the
/// twin's step, the twin makes it there: a level is counted at the
/// variant's first write of that level's per-CPU counter in the update, or
/// its first write of that level's atomic; a fold lands at the variant's
/// `atomic_add` at that level. So the variant's own schedule, where it
/// does not skip, is the twin's. The flusher's remote reset of a per-CPU
/// counter resets the twin's, and both it and the flusher's reset of an
/// atomic reset the twin's atomic (the callback's `if (atomic_read())
/// atomic_set(0)`, placed at the callback's first reset), when the walk
/// has read that counter (that memcg): the twin resets what its own
/// callbacks would.
///
/// A step the variant never makes (a level above v6.17's `break`, v6.8's
/// skipped add) the twin makes when the update moves on or ends, unless a
/// reset of its level came in between: then it was made just before that
/// reset, and erased. Any place after the update's per-CPU write is legal
/// for it, and this is the least eager, so that the twin does not ask a
/// reader to flush for pages a flush collected while the variant skipped.
#[derive(Clone)]
pub struct PerMemcgGate {
    cfg: crate::config::Config,
    trigger: i64,
    /// v6.8's fold adds the sum the counter reached; v6.17's adds what its
    /// `this_cpu_xchg()` finds.
    local_sum: bool,
    name: String,
    /// Per memcg, per CPU: the twin's `statc->stats_updates`.
    pc: Vec<Vec<i64>>,
    /// Per memcg: the twin's `vmstats->stats_updates`.
    atomic: Vec<i64>,
    /// Per CPU: the update in progress.
    cur: Vec<Option<TwinUpdate>>,
    /// Flushers inside a flush section, with the (memcg, CPU) counters
    /// their walk has read (bit `memcg * cpus + cpu`).
    open: Vec<(Actor, u64)>,
}

impl PerMemcgGate {
    /// A gate for `cfg` with reader trigger `trigger`.
    pub fn new(cfg: &crate::config::Config, trigger: i64, local_sum: bool, name: &str) -> Self {
        PerMemcgGate {
            cfg: cfg.clone(),
            trigger,
            local_sum,
            name: name.to_string(),
            pc: vec![vec![0; cfg.cpus]; cfg.memcgs()],
            atomic: vec![0; cfg.memcgs()],
            cur: vec![None; cfg.cpus],
            open: Vec::new(),
        }
    }

    /// Count `inc` at level `l` on CPU `c`; the fold it calls for, if any.
    fn count_level(&mut self, c: usize, l: u8, inc: i64) -> Option<Fold> {
        let pc = &mut self.pc[l as usize][c];
        *pc += inc;
        (*pc >= self.cfg.batch).then_some(Fold {
            level: l,
            sum: self.local_sum.then_some(*pc),
            erased: false,
        })
    }

    fn fold_now(&mut self, c: usize, f: Fold) {
        let l = f.level as usize;
        let s = f.sum.unwrap_or(self.pc[l][c]);
        self.pc[l][c] = 0;
        if s != 0 {
            footprint::footprint(G_TWIN, GhostKind::Add);
            self.atomic[l] += s;
        }
    }

    /// Land CPU `c`'s pending fold: at the variant's own add (`by_variant`),
    /// or, when the variant moved on without it, now, or never if a reset
    /// of its level erased it meanwhile (the per-CPU counter was taken
    /// then, so it is 0 either way).
    fn settle(&mut self, c: usize, by_variant: bool) {
        if let Some(f) = self.cur[c].as_mut().and_then(|u| u.fold.take()) {
            if f.erased && !by_variant {
                self.pc[f.level as usize][c] = 0;
            } else {
                self.fold_now(c, f);
            }
        }
    }

    /// Count CPU `c`'s update at the levels from the first not yet counted
    /// up to `upto` (an index into its levels); levels below `upto` fold at
    /// once (the variant passed them without a step), the fold at `upto`
    /// waits for the variant's own fold step unless `fold_all`. A level the
    /// variant passed without a step whose counter was reset since the
    /// update began is not counted: the count landed before the reset.
    /// `at_upto`: the variant writes level `upto` now.
    fn count_up_to(&mut self, c: usize, upto: usize, fold_all: bool, at_upto: bool) {
        self.settle(c, false);
        let Some(u) = self.cur[c].clone() else {
            return;
        };
        for k in u.counted..=upto.min(u.levels.len().saturating_sub(1)) {
            let passed = k < upto || !at_upto;
            if passed && u.reset >> u.levels[k] & 1 == 1 {
                continue;
            }
            if let Some(f) = self.count_level(c, u.levels[k], u.inc) {
                if k < upto || fold_all {
                    self.fold_now(c, f);
                } else if let Some(cur) = self.cur[c].as_mut() {
                    cur.fold = Some(f);
                }
            }
        }
        if let Some(cur) = self.cur[c].as_mut() {
            cur.counted = cur.counted.max(upto + 1);
        }
    }

    /// The variant's update on CPU `c` touched level `l`.
    fn reach(&mut self, c: usize, l: u8) {
        let Some(u) = self.cur[c].as_ref() else {
            return;
        };
        match u.levels.iter().position(|x| *x == l) {
            Some(i) if i >= u.counted => self.count_up_to(c, i, false, true),
            _ => {}
        }
    }

    /// The twin's `atomic_set(&memcg->vmstats->stats_updates, 0)` of
    /// level `l`: a fold pending at `l` that the variant never adds
    /// landed before it ([`PerMemcgGate::settle`]).
    fn reset_atomic(&mut self, l: u8) {
        for u in self.cur.iter_mut().flatten() {
            if let Some(f) = u.fold.as_mut().filter(|f| f.level == l) {
                f.erased = true;
            }
        }
        footprint::footprint(G_TWIN, GhostKind::Write);
        self.atomic[l as usize] = 0;
    }

    /// CPU `c`'s update ended (or the next one began): land every count
    /// and fold still owed.
    fn finish(&mut self, c: usize) {
        if let Some(n) = self.cur[c].as_ref().map(|u| u.levels.len()) {
            if n > 0 {
                self.count_up_to(c, n - 1, true, false);
            }
        }
        self.settle(c, false);
        self.cur[c] = None;
    }
}

impl TwinGate for PerMemcgGate {
    fn boxed_clone(&self) -> Option<Box<dyn TwinGate>> {
        Some(Box::new(self.clone()))
    }
    /// The counters, the updates in progress and the open sections; the
    /// configuration and the trigger are fixed for the execution.
    fn digest(&self, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        (&self.pc, &self.atomic, &self.cur, &self.open).hash(&mut state);
        true
    }

    fn digest_cpu(&self, c: usize, mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        for pc in &self.pc {
            pc[c].hash(&mut state);
        }
        self.cur[c].hash(&mut state);
        let cpus = self.cfg.cpus;
        for (_, walked) in &self.open {
            let bits = (0..self.pc.len())
                .map(|m| (walked >> (m * cpus + c)) & 1)
                .fold(0u64, |acc, b| acc << 1 | b);
            bits.hash(&mut state);
        }
        true
    }

    fn digest_renamed(&self, rename: &[usize], mut state: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        self.atomic.hash(&mut state);
        self.open.len().hash(&mut state);
        for (a, _) in &self.open {
            renamed(*a, rename).hash(&mut state);
        }
        true
    }

    fn observe(&mut self, actor: Actor, obs: &Obs) {
        let cpus = self.cfg.cpus;
        match (*obs, actor) {
            (
                Obs::Access(Access {
                    var: Var::State { memcg, cpu },
                    op: Op::Add { val, .. },
                    ..
                }),
                Actor::Cpu(c),
            ) if c == cpu as usize && c < cpus && (memcg as usize) < self.atomic.len() => {
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.finish(c);
                self.cur[c] = Some(TwinUpdate {
                    levels: self.cfg.ancestry(memcg),
                    counted: 0,
                    inc: val.abs(),
                    fold: None,
                    reset: 0,
                    rmw: None,
                });
            }
            (Obs::UpdateDone { .. }, Actor::Cpu(c)) if c < cpus => {
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.finish(c);
            }
            (
                Obs::Access(Access {
                    var:
                        Var::StatsUpdates {
                            memcg: Some(l),
                            cpu,
                        },
                    op,
                    ..
                }),
                _,
            ) if (cpu as usize) < cpus && (l as usize) < self.atomic.len() => {
                let c = cpu as usize;
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                let bit = 1u64 << (l as usize * cpus + c);
                footprint::footprint(G_TWIN, GhostKind::Read);
                let walked = self.open.iter().any(|(a, w)| *a == actor && w & bit != 0);
                if actor == Actor::Cpu(c) {
                    // Counted at the owner's write, from the twin's counter
                    // as the owner's read found it ([`TwinUpdate::rmw`]).
                    let pc = self.pc[l as usize][c];
                    let Some(u) = self.cur[c].as_mut() else {
                        return;
                    };
                    if op.written().is_none() {
                        u.rmw = Some((l, pc));
                        return;
                    }
                    let uncounted = u.levels[u.counted.min(u.levels.len())..].contains(&l);
                    if let Some((_, base)) = u.rmw.take().filter(|(x, _)| *x == l && uncounted) {
                        self.pc[l as usize][c] = base;
                    }
                    self.reach(c, l);
                } else if op.written() == Some(0) && walked {
                    // The flusher's remote reset, in the callback of (l, c):
                    // what CPU c's update in progress has not counted at l
                    // by the variant's step is erased ([`TwinUpdate::reset`]);
                    // the callback's reset of the atomic follows.
                    if let Some(u) = self.cur[c].as_mut() {
                        u.reset |= 1 << l;
                    }
                    self.pc[l as usize][c] = 0;
                    self.reset_atomic(l);
                }
            }
            (
                Obs::Access(Access {
                    var: Var::Threshold { memcg: Some(l) },
                    op,
                    ..
                }),
                Actor::Cpu(c),
            ) if c < cpus && (l as usize) < self.atomic.len() => {
                // Only a write moves the twin: the updater's reads of an
                // atomic (v6.8's skip test, v6.17's break test, or a read
                // that changes nothing) leave it where it is.
                if op.written().is_none() {
                    return;
                }
                footprint::footprint(G_TWIN_CPU + c as u32, GhostKind::Write);
                self.reach(c, l);
                let pending_here = self.cur[c]
                    .as_ref()
                    .and_then(|u| u.fold)
                    .is_some_and(|f| f.level == l);
                if pending_here {
                    self.settle(c, true);
                }
            }
            (
                Obs::Access(Access {
                    var: Var::Threshold { memcg: Some(l) },
                    op,
                    ..
                }),
                _,
            ) if (l as usize) < self.atomic.len() => {
                // The callback's `atomic_set(0)`, in a section whose walk
                // read memcg `l`: the twin's code resets its own atomic
                // there. (Its `atomic_read()` moves nothing: the twin's
                // reset was placed at the callback's per-CPU reset.)
                let mask = ((1u64 << self.cfg.cpus) - 1) << (l as usize * self.cfg.cpus);
                let walked = self.open.iter().any(|(a, w)| *a == actor && w & mask != 0);
                if walked && op.written() == Some(0) {
                    self.reset_atomic(l);
                }
            }
            (
                Obs::Access(Access {
                    var: Var::State { memcg, cpu },
                    op: Op::Read(_),
                    ..
                }),
                _,
            ) if (cpu as usize) < cpus => {
                let bit = 1u64 << (memcg as usize * cpus + cpu as usize);
                if let Some(s) = self.open.iter_mut().find(|(a, _)| *a == actor) {
                    if s.1 & bit == 0 {
                        footprint::footprint(G_TWIN, GhostKind::Write);
                        s.1 |= bit;
                    }
                }
            }
            (Obs::Trace(Tp::FlushBegin { .. }), _) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                self.open.push((actor, 0));
            }
            (Obs::Trace(Tp::FlushEnd), _) => {
                footprint::footprint(G_TWIN, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|(a, _)| *a == actor) {
                    self.open.remove(i);
                }
            }
            _ => {}
        }
    }

    fn flushable(&self, memcg: u8) -> bool {
        self.atomic
            .get(memcg as usize)
            .is_some_and(|a| *a > self.trigger)
    }

    fn describe(&self) -> String {
        let atomics: Vec<String> = self.atomic.iter().map(|a| a.to_string()).collect();
        format!(
            "{}'s gate over the same history has vmstats->stats_updates = [{}] (per memcg), \
             trigger {}",
            self.name,
            atomics.join(", "),
            self.trigger
        )
    }
}
