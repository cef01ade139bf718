//! Ghost state: what the monitors know about one execution, built from
//! observations only.
//!
//! The interpretation of variables follows [`crate::observe::obs::Var`]:
//! `State` adds by a CPU are updates, `State` reads inside a flush section
//! are the walk, `Aggregate` writes are the flushed value, and for the
//! global-threshold lineage (v5.16-v6.7) `StatsUpdates` and `Threshold`
//! (with no memcg) are the per-CPU residue and `stats_flush_threshold`.
//!
//! Every update of ghost state declares its footprint to the exhaustive
//! search ([`crate::explore::dfs`]) under one of the locations below, so
//! that the sleep-set reduction never swaps two steps whose ghost effects
//! do not commute.

use crate::explore::dfs::{self, GhostKind, GhostLoc};
use crate::observe::coverage::Split;
use crate::observe::obs::{Access, Actor, Idiom, LockName, Obs, Op, Tp, Var};

/// Every update's running sum (commutative adds).
pub const G_WRITTEN: GhostLoc = 1;
/// The aggregate as flushers write it.
pub const G_AGG: GhostLoc = 2;
/// The threshold-lineage split: counted and skipped since the last reset.
pub const G_THR: GhostLoc = 3;
/// Flush sections: who is inside, who has walked.
pub const G_SECTION: GhostLoc = 4;
/// Abstract time: now, stamps and what the aggregate accounts for.
pub const G_TIME: GhostLoc = 5;
/// A twin gate's threshold.
pub const G_TWIN: GhostLoc = 6;
/// Per CPU: the residue (`+ cpu`).
pub const G_RESIDUE: GhostLoc = 100;
/// Per CPU: a twin gate's per-CPU counter (`+ cpu`).
pub const G_TWIN_CPU: GhostLoc = 200;

/// The per-CPU state of the later-epoch coverage event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Epoch {
    /// Nothing pending.
    Fresh,
    /// Skipped an add since the last reset.
    Skipped,
    /// Skipped, then a reset followed.
    SkippedThenReset,
}

/// The update a CPU is in the middle of (global-threshold lineage).
#[derive(Clone, Copy, Debug, Default, Hash)]
struct InUpdate {
    /// The threshold value the update read, if it read it.
    read: Option<i64>,
    /// Whether it wrote the threshold.
    wrote: bool,
    /// Whether it already accounted a batch (added or skipped).
    accounted: bool,
}

/// Situations a step just produced, for coverage (see
/// [`crate::observe::coverage::Event`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Happened {
    /// An update skipped its add.
    pub skip: bool,
    /// A skip raced with a reset.
    pub skip_raced_reset: bool,
    /// A flush section ended without an update already written.
    pub update_behind_flusher: bool,
    /// A reset erased an add made during the flush.
    pub add_erased_by_reset: bool,
    /// A trylock of `stats_flush_lock` failed.
    pub trylock_contended: bool,
    /// A CPU accounted a batch again after a skip and a reset.
    pub recross_after_reset: bool,
    /// The threshold was reset a second time.
    pub second_reset: bool,
}

/// Per-execution ghost state.
#[derive(Debug)]
pub struct Ghost {
    /// Per CPU: the running sum of its updates, in execution order.
    pub written: Vec<i64>,
    /// Per memcg: the aggregate as last written by a flusher.
    pub agg: Vec<i64>,
    /// Actors inside a flush section, with whether each has walked.
    pub open: Vec<(Actor, bool)>,
    /// Per CPU: the value the latest walk read from the root's counter.
    pub seen: Vec<i64>,
    /// Per CPU: pages written after the latest completed walk read the
    /// CPU's counter and before that flush section ended: a flush declared
    /// them flushed without having seen them.
    pub lost: Vec<i64>,
    /// Per CPU: the running sum the root aggregate accounts for.
    pub folded: Vec<i64>,
    /// A walk's read not yet folded into the aggregate: (flusher, cpu, v).
    pending_fold: Vec<(Actor, usize, i64)>,
    /// `jiffies_64` as it stands.
    pub now: i64,
    /// Per CPU: (running sum after the update, tick) for every update.
    pub stamps: Vec<Vec<(i64, i64)>>,
    /// Per CPU: `stats_updates` as last observed.
    pub residue: Vec<i64>,
    /// Magnitude added to the threshold since its last reset.
    pub counted: i64,
    /// Magnitude skipped since the threshold's last reset.
    pub skipped: i64,
    /// The threshold as last written.
    pub threshold: i64,
    /// Per CPU: the running sum at its latest skip since the last reset.
    skipped_at: Vec<Option<i64>>,
    /// Threshold adds made while a flush section was open.
    added_during_flush: i64,
    /// Resets of the threshold so far.
    pub resets: u32,
    /// Threshold RMWs by updaters.
    pub threshold_rmws: u64,
    /// Per actor: the threshold value its gate last read.
    pub gate_read: Vec<(Actor, i64)>,
    in_update: Vec<InUpdate>,
    epoch: Vec<Epoch>,
}

/// The state of a stateful search: every field that can change what a
/// later observation does. Left out: `threshold_rmws` (a count summed over
/// executions, which decides nothing), `gate_read` (only violation messages
/// quote it), `resets` beyond 2 (only the second reset is an event) and
/// `added_during_flush` beyond 1 (only whether it is positive is tested).
impl std::hash::Hash for Ghost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Ghost {
            written,
            agg,
            open,
            seen,
            lost,
            folded,
            pending_fold,
            now,
            stamps,
            residue,
            counted,
            skipped,
            threshold,
            skipped_at,
            added_during_flush,
            resets,
            threshold_rmws: _,
            gate_read: _,
            in_update,
            epoch,
        } = self;
        (written, agg, open, seen, lost, folded, pending_fold).hash(h);
        (
            now, stamps, residue, counted, skipped, threshold, skipped_at,
        )
            .hash(h);
        let added = (*added_during_flush).min(1);
        (added, (*resets).min(2), in_update, epoch).hash(h);
    }
}

impl Ghost {
    /// Fresh ghost state for `cpus` CPUs and `memcgs` memcgs.
    pub fn new(cpus: usize, memcgs: usize) -> Self {
        Ghost {
            written: vec![0; cpus],
            agg: vec![0; memcgs],
            open: Vec::new(),
            seen: vec![0; cpus],
            lost: vec![0; cpus],
            folded: vec![0; cpus],
            pending_fold: Vec::new(),
            now: 0,
            stamps: vec![Vec::new(); cpus],
            residue: vec![0; cpus],
            counted: 0,
            skipped: 0,
            threshold: 0,
            skipped_at: vec![None; cpus],
            added_during_flush: 0,
            resets: 0,
            threshold_rmws: 0,
            gate_read: Vec::new(),
            in_update: vec![InUpdate::default(); cpus],
            epoch: vec![Epoch::Fresh; cpus],
        }
    }

    /// Updates written so far minus the root aggregate, in execution order.
    pub fn staleness(&self) -> i64 {
        self.written.iter().sum::<i64>() - self.agg[0]
    }

    /// The staleness a reader's gate answers for: all but the pages of
    /// [`Ghost::lost`]. Unlike the [`Split`], this takes nothing from how a
    /// protocol counts: only updates, walks and flush sections.
    pub fn gated(&self) -> i64 {
        self.staleness() - self.lost.iter().sum::<i64>()
    }

    /// The [`Split`] of the current staleness.
    pub fn split(&self) -> Split {
        let residue: i64 = self.residue.iter().sum();
        [
            residue,
            self.counted,
            self.skipped,
            self.staleness() - residue - self.counted - self.skipped,
        ]
    }

    /// Ticks since the oldest update the root aggregate does not account
    /// for was written (0 if it accounts for all); non-negative updates.
    pub fn stale_ticks(&self) -> i64 {
        self.stamps
            .iter()
            .zip(&self.folded)
            .filter_map(|(s, f)| {
                s.iter()
                    .find(|(sum, _)| *sum > *f)
                    .map(|(_, t)| self.now - t)
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether `actor` is inside a flush section.
    pub fn in_section(&self, actor: Actor) -> bool {
        self.open.iter().any(|(a, _)| *a == actor)
    }

    /// The threshold value `actor`'s gate read last.
    pub fn gate_read(&self, actor: Actor) -> Option<i64> {
        self.gate_read
            .iter()
            .find(|(a, _)| *a == actor)
            .map(|(_, v)| *v)
    }

    /// Declare that the running step reads all ghost state (a check).
    pub fn read_all() {
        for loc in [G_WRITTEN, G_AGG, G_THR, G_SECTION, G_TIME] {
            dfs::ghost(loc, GhostKind::Read);
        }
    }

    /// Declare a read of every CPU's residue.
    pub fn read_residues(&self) {
        for c in 0..self.residue.len() {
            dfs::ghost(G_RESIDUE + c as u32, GhostKind::Read);
        }
    }

    fn reset_threshold(&mut self, h: &mut Happened) {
        dfs::ghost(G_THR, GhostKind::Write);
        if self.added_during_flush > 0 {
            h.add_erased_by_reset = true;
        }
        self.added_during_flush = 0;
        if self
            .skipped_at
            .iter()
            .zip(&self.seen)
            .any(|(s, seen)| s.is_some_and(|s| *seen < s))
        {
            h.skip_raced_reset = true;
        }
        self.skipped_at.iter_mut().for_each(|s| *s = None);
        self.counted = 0;
        self.skipped = 0;
        self.resets += 1;
        if self.resets == 2 {
            h.second_reset = true;
        }
        for e in &mut self.epoch {
            if *e == Epoch::Skipped {
                *e = Epoch::SkippedThenReset;
            }
        }
    }

    /// Account a batch of CPU `c` (an add or a skip) for the later-epoch
    /// event.
    fn accounted(&mut self, c: usize, skipped: bool, h: &mut Happened) {
        if self.in_update[c].accounted {
            return;
        }
        self.in_update[c].accounted = true;
        if self.epoch[c] == Epoch::SkippedThenReset {
            h.recross_after_reset = true;
            self.epoch[c] = Epoch::Fresh;
        }
        if skipped {
            self.epoch[c] = Epoch::Skipped;
        }
    }

    /// Apply one observation; returns what coverage should count.
    pub fn observe(&mut self, actor: Actor, obs: &Obs, timed: bool) -> Happened {
        let mut h = Happened::default();
        match *obs {
            Obs::Access(a) => self.access(actor, a, timed, &mut h),
            Obs::Trace(Tp::FlushBegin { .. }) => {
                dfs::ghost(G_SECTION, GhostKind::Write);
                self.open.push((actor, false));
            }
            Obs::Trace(Tp::FlushEnd) => {
                dfs::ghost(G_SECTION, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|(a, _)| *a == actor) {
                    let (_, walked) = self.open.remove(i);
                    if walked {
                        if (0..self.written.len()).any(|c| self.seen[c] < self.written[c]) {
                            h.update_behind_flusher = true;
                        }
                        for c in 0..self.written.len() {
                            self.lost[c] = (self.written[c] - self.seen[c]).max(0);
                        }
                    }
                }
            }
            Obs::UpdateDone { .. } => {
                if let Actor::Cpu(c) = actor {
                    self.end_update(c, &mut h);
                }
            }
            _ => {}
        }
        h
    }

    /// An update of CPU `c` returned. A read of the threshold without a
    /// write is a skip; one that zeroed the counter was recorded then, one
    /// that did not (a variant's choice) is recorded here, its pages still
    /// counted as residue.
    fn end_update(&mut self, c: usize, h: &mut Happened) {
        let u = std::mem::take(&mut self.in_update[c]);
        if u.read.is_some() && !u.wrote && !u.accounted {
            self.skip(c, 0, u.read, h);
        }
    }

    fn skip(&mut self, c: usize, x: i64, read: Option<i64>, h: &mut Happened) {
        dfs::ghost(G_THR, GhostKind::Add);
        h.skip = true;
        self.skipped += x;
        self.skipped_at[c] = Some(self.written[c]);
        // A read older than the latest write (weak memory): the reset it
        // ignores already happened, so the race shows at the skip.
        if read.is_some_and(|t| t > self.threshold) && self.seen[c] < self.written[c] {
            h.skip_raced_reset = true;
        }
        self.accounted(c, true, h);
    }

    fn access(&mut self, actor: Actor, a: Access, timed: bool, h: &mut Happened) {
        let in_section = self.in_section(actor);
        match (a.var, a.op, actor) {
            (Var::State { .. }, Op::Add { val, .. }, Actor::Cpu(c)) if c < self.written.len() => {
                dfs::ghost(G_WRITTEN, GhostKind::Add);
                self.written[c] += val;
                if timed {
                    dfs::ghost(G_TIME, GhostKind::Add);
                    self.stamps[c].push((self.written[c], self.now));
                }
            }
            (Var::State { memcg: 0, cpu }, Op::Read(v), _) if in_section => {
                let c = cpu as usize;
                dfs::ghost(G_SECTION, GhostKind::Write);
                if let Some(s) = self.open.iter_mut().find(|(x, _)| *x == actor) {
                    s.1 = true;
                }
                if c < self.seen.len() {
                    self.seen[c] = v;
                    self.lost[c] = 0;
                    if timed {
                        dfs::ghost(G_TIME, GhostKind::Write);
                        if v == self.folded[c] {
                            self.pending_fold.retain(|(x, _, _)| *x != actor);
                        } else {
                            self.pending_fold.retain(|(x, _, _)| *x != actor);
                            self.pending_fold.push((actor, c, v));
                        }
                    }
                }
            }
            (Var::Aggregate { memcg }, op, _) if op.written().is_some() => {
                dfs::ghost(G_AGG, GhostKind::Write);
                let v = op.written().unwrap_or(0);
                if let Some(slot) = self.agg.get_mut(memcg as usize) {
                    *slot = v;
                }
                if timed && memcg == 0 {
                    dfs::ghost(G_TIME, GhostKind::Write);
                    if let Some(i) = self.pending_fold.iter().position(|(x, _, _)| *x == actor) {
                        let (_, c, v) = self.pending_fold.remove(i);
                        self.folded[c] = v;
                    }
                }
            }
            (Var::StatsUpdates { memcg: None, cpu }, op, Actor::Cpu(c)) if cpu as usize == c => {
                if let Some(x) = op.written() {
                    dfs::ghost(G_RESIDUE + c as u32, GhostKind::Write);
                    if x == 0 {
                        let before = self.residue[c];
                        let u = self.in_update[c];
                        if u.read.is_some() && !u.wrote && !u.accounted && before > 0 {
                            self.skip(c, before, u.read, h);
                        }
                    }
                    self.residue[c] = x;
                }
            }
            (Var::Threshold { memcg: None }, op, Actor::Cpu(c)) if c < self.residue.len() => {
                if let Some(t) = op.read() {
                    if matches!(op, Op::Read(_)) {
                        self.in_update[c].read = Some(t);
                    }
                }
                if let Some(new) = op.written() {
                    dfs::ghost(G_THR, GhostKind::Add);
                    dfs::ghost(G_RESIDUE + c as u32, GhostKind::Write);
                    self.threshold = new;
                    self.threshold_rmws += 1;
                    if !self.in_update[c].wrote {
                        // The batch moves from the residue to the threshold
                        // here, whenever the CPU zeroes its counter.
                        self.counted += self.residue[c];
                        self.residue[c] = 0;
                    }
                    self.in_update[c].wrote = true;
                    if !self.open.is_empty() {
                        self.added_during_flush += 1;
                    }
                    self.accounted(c, false, h);
                }
            }
            (Var::Threshold { memcg: None }, op, _) => {
                if let Some(t) = op.read() {
                    if actor.is_reader() && !in_section {
                        if let Some(slot) = self.gate_read.iter_mut().find(|(x, _)| *x == actor) {
                            slot.1 = t;
                        } else {
                            self.gate_read.push((actor, t));
                        }
                    }
                }
                if let Some(new) = op.written() {
                    self.threshold = new;
                    if new == 0 {
                        self.reset_threshold(h);
                    }
                }
            }
            (Var::Lock(LockName::StatsFlushLock), Op::CmpXchg { ok: false, .. }, _)
                if a.idiom == Idiom::SpinTrylock =>
            {
                h.trylock_contended = true;
            }
            (Var::Jiffies, Op::Write(t), _) => {
                dfs::ghost(G_TIME, GhostKind::Write);
                self.now = t;
            }
            _ => {}
        }
    }
}
