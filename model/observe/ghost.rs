//! Ghost state: what the monitors know about one execution, built from
//! observations only.
//!
//! The interpretation of variables follows [`crate::observe::obs::Var`]:
//! `State` adds by a CPU are updates, `State` reads inside a flush section
//! are the walk, `Aggregate` writes are the flushed value. A threshold and
//! its per-CPU counters form a *domain*: the global `stats_flush_threshold`
//! with `stats_updates` (v5.16-v6.7, `memcg: None`), or one memcg's
//! `vmstats->stats_updates` with its per-CPU `stats_updates` (v6.8 on).
//! Each domain keeps the per-CPU residue, the magnitude counted in the
//! threshold and the magnitude skipped since the threshold's last reset.
//!
//! Every update of ghost state declares its footprint to the exhaustive
//! search ([`crate::explore::dfs`]) under one of the locations below, so
//! that the sleep-set reduction never swaps two steps whose ghost effects
//! do not commute.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::explore::dfs::{self, GhostKind, GhostLoc};
use crate::observe::coverage::Split;
use crate::observe::obs::{Access, Actor, Idiom, LockName, Obs, Op, Tp, Var};

/// Every update's running sum (commutative adds).
pub const G_WRITTEN: GhostLoc = 1;
/// The aggregates as flushers write them.
pub const G_AGG: GhostLoc = 2;
/// The threshold domains' split: counted and skipped since the last reset.
pub const G_THR: GhostLoc = 3;
/// Flush sections: who is inside, who has walked.
pub const G_SECTION: GhostLoc = 4;
/// Abstract time: now, stamps and what the aggregate accounts for.
pub const G_TIME: GhostLoc = 5;
/// A twin gate's thresholds.
pub const G_TWIN: GhostLoc = 6;
/// Per CPU: the residues (`+ cpu`).
pub const G_RESIDUE: GhostLoc = 100;
/// Per CPU: a twin gate's per-CPU counters (`+ cpu`).
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

/// The update a CPU is in the middle of, in one domain.
#[derive(Clone, Copy, Debug, Default, Hash)]
struct InUpdate {
    /// The threshold value the update read, if it read it.
    read: Option<i64>,
    /// Whether it wrote the threshold.
    wrote: bool,
    /// Whether it already accounted a batch (added or skipped).
    accounted: bool,
    /// Whether it wrote its per-CPU counter (per-memcg domains: it counted
    /// the update before any skip).
    counted: bool,
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
    /// A flusher found the flush lock taken: the trylock of
    /// `stats_flush_lock` failed (v5.16-v6.3), or `cgroup_rstat_lock` made
    /// it wait (v6.8 on).
    pub trylock_contended: bool,
    /// The periodic work found another flush in progress (lost the
    /// trylock, or found `stats_flush_ongoing` set) and skipped its flush.
    pub periodic_skipped: bool,
    /// A CPU accounted a batch again after a skip and a reset.
    pub recross_after_reset: bool,
    /// A threshold was reset a second time.
    pub second_reset: bool,
}

/// One threshold and its per-CPU counters.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Per CPU: the counter as last observed, less what the owner already
    /// added from it (v6.8 adds before it zeroes the counter).
    pub residue: Vec<i64>,
    /// Per CPU (per-memcg domains): pages the owner took out of its counter
    /// (`this_cpu_xchg()`) and has not added yet.
    pub flight: Vec<i64>,
    /// Magnitude added to the threshold since its last reset.
    pub counted: i64,
    /// Magnitude skipped since the threshold's last reset.
    pub skipped: i64,
    /// The threshold as last written.
    pub threshold: i64,
    /// The largest value the threshold held.
    pub max_threshold: i64,
    /// Per CPU: the update's running sum at its latest skip since the last
    /// reset.
    skipped_at: Vec<Option<i64>>,
    /// Threshold adds made while a flush section was open.
    added_during_flush: i64,
    /// Resets so far.
    pub resets: u32,
    in_update: Vec<InUpdate>,
    epoch: Vec<Epoch>,
}

impl Domain {
    fn new(cpus: usize) -> Self {
        Domain {
            residue: vec![0; cpus],
            flight: vec![0; cpus],
            counted: 0,
            skipped: 0,
            threshold: 0,
            max_threshold: 0,
            skipped_at: vec![None; cpus],
            added_during_flush: 0,
            resets: 0,
            in_update: vec![InUpdate::default(); cpus],
            epoch: vec![Epoch::Fresh; cpus],
        }
    }
}

/// A flush section in progress.
#[derive(Clone, Copy, Debug, Hash)]
pub struct Section {
    /// The flusher.
    pub actor: Actor,
    /// The memcg whose subtree it flushes (0: the whole tree).
    pub root: u8,
    /// The (memcg, CPU) counters its walk has read, one bit each
    /// (`memcg * cpus + cpu`).
    pub walked: u64,
    /// Whether it has written the flush time (`flush_next_time`,
    /// `flush_last_time`) yet.
    pub stamped: bool,
}

/// The state of a stateful search (see [`Ghost`]'s `Hash`). Left out:
/// `max_threshold` (a maximum over the past, which decides nothing later),
/// `resets` beyond 2 (only the second reset is an event) and
/// `added_during_flush` beyond 1 (only whether it is positive is tested).
impl std::hash::Hash for Domain {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Domain {
            residue,
            flight,
            counted,
            skipped,
            threshold,
            max_threshold: _,
            skipped_at,
            added_during_flush,
            resets,
            in_update,
            epoch,
        } = self;
        (residue, flight, counted, skipped, threshold, skipped_at).hash(h);
        let added = (*added_during_flush).min(1);
        (added, (*resets).min(2), in_update, epoch).hash(h);
    }
}

/// Per-execution ghost state.
#[derive(Debug)]
pub struct Ghost {
    /// Parents of memcgs 1.. (the configuration's tree).
    tree: Vec<u8>,
    /// Per memcg, per CPU: the running sum of the updates charged to it.
    pub written: Vec<Vec<i64>>,
    /// Per memcg: the aggregate as last written by a flusher.
    pub agg: Vec<i64>,
    /// The flush sections open.
    pub open: Vec<Section>,
    /// Per memcg, per CPU: the value the latest walk read from the counter.
    pub seen: Vec<Vec<i64>>,
    /// Per memcg, per CPU: pages written after the latest completed walk
    /// read the counter and before that flush section ended: a flush
    /// declared them flushed without having seen them.
    pub lost: Vec<Vec<i64>>,
    /// Per CPU: the running sum of its root-level updates the root
    /// aggregate accounts for (flat trees).
    pub folded: Vec<i64>,
    /// A walk's read not yet folded into the aggregate: (flusher, cpu, v).
    pending_fold: Vec<(Actor, usize, i64)>,
    /// `jiffies_64` as it stands.
    pub now: i64,
    /// Per CPU: (running sum after the update, tick) for every root-level
    /// update.
    pub stamps: Vec<Vec<(i64, i64)>>,
    /// The latest tick at which a flush section of the whole tree was open
    /// (abstract time only): when one began, or a tick that passed while
    /// one was open.
    pub root_flush_at: Option<i64>,
    /// The threshold domains seen so far.
    pub domains: BTreeMap<Option<u8>, Domain>,
    /// Threshold RMWs by updaters.
    pub threshold_rmws: u64,
    /// Per actor: the domain and value its gate last read.
    pub gate_read: Vec<(Actor, Option<u8>, i64)>,
    /// The reader's trigger of per-memcg domains (v6.8 on), so that an
    /// updater's read of a memcg's atomic counts as a skip only when it
    /// found it flushable (v6.17 reads it before counting).
    pub trigger: Option<i64>,
    cpus: usize,
}

/// The state of a stateful search: every field that can change what a
/// later observation does. Left out: `threshold_rmws` (a count summed over
/// executions, which decides nothing), `gate_read` (only violation messages
/// quote it), and the configuration (`tree`, `trigger`, `cpus`).
impl std::hash::Hash for Ghost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Ghost {
            tree: _,
            written,
            agg,
            open,
            seen,
            lost,
            folded,
            pending_fold,
            now,
            stamps,
            domains,
            root_flush_at,
            threshold_rmws: _,
            gate_read: _,
            trigger: _,
            cpus: _,
        } = self;
        (written, agg, open, seen, lost, folded, pending_fold).hash(h);
        (now, stamps, domains, root_flush_at).hash(h);
    }
}

impl Ghost {
    /// Fresh ghost state for `cfg`.
    pub fn new(cfg: &Config) -> Self {
        let (cpus, memcgs) = (cfg.cpus, cfg.memcgs());
        let grid = || vec![vec![0; cpus]; memcgs];
        Ghost {
            tree: cfg.tree.clone(),
            written: grid(),
            agg: vec![0; memcgs],
            open: Vec::new(),
            seen: grid(),
            lost: grid(),
            folded: vec![0; cpus],
            pending_fold: Vec::new(),
            now: 0,
            stamps: vec![Vec::new(); cpus],
            root_flush_at: None,
            domains: BTreeMap::new(),
            threshold_rmws: 0,
            gate_read: Vec::new(),
            trigger: None,
            cpus,
        }
    }

    fn in_subtree(&self, d: usize, m: usize) -> bool {
        let mut x = d;
        loop {
            if x == m {
                return true;
            }
            if x == 0 {
                return false;
            }
            x = self.tree[x - 1] as usize;
        }
    }

    fn subtree_sum(&self, grid: &[Vec<i64>], m: u8) -> i64 {
        (0..grid.len())
            .filter(|d| self.in_subtree(*d, m as usize))
            .map(|d| grid[d].iter().sum::<i64>())
            .sum()
    }

    /// The updates charged to `m`'s subtree so far: what its hierarchical
    /// aggregate must reach once flushed.
    pub fn written_total(&self, m: u8) -> i64 {
        self.subtree_sum(&self.written, m)
    }

    /// Updates charged to `m`'s subtree so far minus `m`'s aggregate, in
    /// execution order.
    pub fn staleness(&self, m: u8) -> i64 {
        self.subtree_sum(&self.written, m) - self.agg.get(m as usize).copied().unwrap_or(0)
    }

    /// The staleness a reader's gate on `m` answers for: all but the pages
    /// of [`Ghost::lost`]. Unlike the [`Split`], this takes nothing from how
    /// a protocol counts: only updates, walks and flush sections.
    pub fn gated(&self, m: u8) -> i64 {
        self.staleness(m) - self.subtree_sum(&self.lost, m)
    }

    /// The domain a threshold variable belongs to.
    fn domain(&mut self, key: Option<u8>) -> &mut Domain {
        let cpus = self.cpus;
        self.domains.entry(key).or_insert_with(|| Domain::new(cpus))
    }

    /// The [`Split`] of `m`'s staleness by the counters of domain `key`.
    pub fn split(&self, key: Option<u8>, m: u8) -> Split {
        let (residue, counted, skipped) = self.domains.get(&key).map_or((0, 0, 0), |d| {
            let held = d.residue.iter().chain(&d.flight).sum::<i64>();
            (held, d.counted, d.skipped)
        });
        [
            residue,
            counted,
            skipped,
            self.staleness(m) - residue - counted - skipped,
        ]
    }

    /// Magnitude skipped in any domain since its last reset.
    pub fn skipped(&self) -> i64 {
        self.domains.values().map(|d| d.skipped).sum()
    }

    /// Resets of any threshold so far.
    pub fn resets(&self) -> u32 {
        self.domains.values().map(|d| d.resets).sum()
    }

    /// Ticks since the oldest root-level update the root aggregate does not
    /// account for was written (0 if it accounts for all); non-negative
    /// updates, flat trees.
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
        self.open.iter().any(|s| s.actor == actor)
    }

    /// The threshold domain and value `actor`'s gate read last.
    pub fn gate_read(&self, actor: Actor) -> Option<(Option<u8>, i64)> {
        self.gate_read
            .iter()
            .find(|(a, _, _)| *a == actor)
            .map(|(_, k, v)| (*k, *v))
    }

    /// Declare that the running step reads all ghost state (a check).
    pub fn read_all(&self) {
        for loc in [G_WRITTEN, G_AGG, G_THR, G_SECTION, G_TIME] {
            dfs::ghost(loc, GhostKind::Read);
        }
        for c in 0..self.cpus {
            dfs::ghost(G_RESIDUE + c as u32, GhostKind::Read);
        }
    }

    fn reset_threshold(&mut self, key: Option<u8>, h: &mut Happened) {
        dfs::ghost(G_THR, GhostKind::Write);
        let seen = match key {
            Some(m) => self.seen[m as usize].clone(),
            None => self.seen[0].clone(),
        };
        let d = self.domain(key);
        if d.added_during_flush > 0 {
            h.add_erased_by_reset = true;
        }
        d.added_during_flush = 0;
        if d.skipped_at
            .iter()
            .zip(&seen)
            .any(|(s, seen)| s.is_some_and(|s| *seen < s))
        {
            h.skip_raced_reset = true;
        }
        d.skipped_at.iter_mut().for_each(|s| *s = None);
        d.counted = 0;
        d.skipped = 0;
        d.resets += 1;
        if d.resets == 2 {
            h.second_reset = true;
        }
        for e in &mut d.epoch {
            if *e == Epoch::Skipped {
                *e = Epoch::SkippedThenReset;
            }
        }
    }

    /// Per CPU: the running sum of the updates in `m`'s subtree.
    fn written_on_cpus(&self, m: u8) -> Vec<i64> {
        (0..self.cpus)
            .map(|c| {
                (0..self.written.len())
                    .filter(|d| self.in_subtree(*d, m as usize))
                    .map(|d| self.written[d][c])
                    .sum()
            })
            .collect()
    }

    /// Account a batch of CPU `c` in domain `key` (an add or a skip) for
    /// the later-epoch event.
    fn accounted(&mut self, key: Option<u8>, c: usize, skipped: bool, h: &mut Happened) {
        let d = self.domain(key);
        if d.in_update[c].accounted {
            return;
        }
        d.in_update[c].accounted = true;
        if d.epoch[c] == Epoch::SkippedThenReset {
            h.recross_after_reset = true;
            d.epoch[c] = Epoch::Fresh;
        }
        if skipped {
            d.epoch[c] = Epoch::Skipped;
        }
    }

    /// Apply one observation; returns what coverage should count.
    pub fn observe(&mut self, actor: Actor, obs: &Obs, timed: bool) -> Happened {
        let mut h = Happened::default();
        match *obs {
            Obs::Access(a) => self.access(actor, a, timed, &mut h),
            Obs::Trace(Tp::FlushBegin { root }) => {
                dfs::ghost(G_SECTION, GhostKind::Write);
                self.open.push(Section {
                    actor,
                    root,
                    walked: 0,
                    stamped: false,
                });
                if timed && root == 0 {
                    dfs::ghost(G_TIME, GhostKind::Write);
                    self.root_flush_at = Some(self.now);
                }
            }
            Obs::Trace(Tp::FlushEnd) => {
                dfs::ghost(G_SECTION, GhostKind::Write);
                if let Some(i) = self.open.iter().position(|s| s.actor == actor) {
                    let walked = self.open.remove(i).walked;
                    let mut behind = false;
                    for m in 0..self.written.len() {
                        for c in 0..self.cpus {
                            if walked & (1 << (m * self.cpus + c)) != 0 {
                                behind |= self.seen[m][c] < self.written[m][c];
                                self.lost[m][c] = (self.written[m][c] - self.seen[m][c]).max(0);
                            }
                        }
                    }
                    h.update_behind_flusher = behind;
                }
            }
            Obs::UpdateDone { val, .. } => {
                if let Actor::Cpu(c) = actor {
                    let keys: Vec<Option<u8>> = self.domains.keys().copied().collect();
                    for k in keys {
                        self.end_update(k, c, val.abs(), &mut h);
                    }
                }
            }
            _ => {}
        }
        h
    }

    /// An update of CPU `c` of magnitude `inc` returned. A read of the
    /// threshold without a write is a skip; one that zeroed the counter was
    /// recorded then, one that did not (a variant's choice) is recorded
    /// here, its pages still counted as residue. A per-memcg update that
    /// never counted at this level (v6.17's `break`) skipped all `inc`.
    fn end_update(&mut self, key: Option<u8>, c: usize, inc: i64, h: &mut Happened) {
        let u = std::mem::take(&mut self.domain(key).in_update[c]);
        if self.skipping(key, u.read) && !u.wrote && !u.accounted {
            let x = if key.is_some() && !u.counted { inc } else { 0 };
            self.skip(key, c, x, u.read, h);
        }
    }

    /// Whether an update that read `read` from domain `key`'s threshold and
    /// did not add to it skipped: any such read for the global threshold
    /// (whatever the variant's test), a read above the trigger for a
    /// memcg's atomic.
    fn skipping(&self, key: Option<u8>, read: Option<i64>) -> bool {
        match (key, read, self.trigger) {
            (_, None, _) => false,
            (Some(_), Some(t), Some(trigger)) => t > trigger,
            _ => true,
        }
    }

    fn skip(&mut self, key: Option<u8>, c: usize, x: i64, read: Option<i64>, h: &mut Happened) {
        dfs::ghost(G_THR, GhostKind::Add);
        h.skip = true;
        let running: i64 = self.written_on_cpus(key.unwrap_or(0))[c];
        let seen = self.seen[key.unwrap_or(0) as usize][c];
        let d = self.domain(key);
        d.skipped += x;
        d.skipped_at[c] = Some(running);
        // A read older than the latest write (weak memory): the reset it
        // ignores already happened, so the race shows at the skip.
        if read.is_some_and(|t| t > d.threshold) && seen < running {
            h.skip_raced_reset = true;
        }
        self.accounted(key, c, true, h);
    }

    fn access(&mut self, actor: Actor, a: Access, timed: bool, h: &mut Happened) {
        let in_section = self.in_section(actor);
        match (a.var, a.op, actor) {
            (Var::State { memcg, .. }, Op::Add { val, .. }, Actor::Cpu(c))
                if c < self.cpus && (memcg as usize) < self.written.len() =>
            {
                dfs::ghost(G_WRITTEN, GhostKind::Add);
                self.written[memcg as usize][c] += val;
                if timed && memcg == 0 {
                    dfs::ghost(G_TIME, GhostKind::Add);
                    let sum = self.written[0][c];
                    self.stamps[c].push((sum, self.now));
                }
            }
            (Var::State { memcg, cpu }, Op::Read(v), _) if in_section => {
                let (m, c) = (memcg as usize, cpu as usize);
                dfs::ghost(G_SECTION, GhostKind::Write);
                if m < self.seen.len() && c < self.cpus {
                    let bit = 1 << (m * self.cpus + c);
                    if let Some(s) = self.open.iter_mut().find(|s| s.actor == actor) {
                        s.walked |= bit;
                    }
                    self.seen[m][c] = v;
                    self.lost[m][c] = 0;
                    if timed && m == 0 {
                        dfs::ghost(G_TIME, GhostKind::Write);
                        self.pending_fold.retain(|(x, _, _)| *x != actor);
                        if v != self.folded[c] {
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
            (Var::StatsUpdates { memcg, cpu }, op, _) => {
                let c = cpu as usize;
                if c >= self.cpus {
                    return;
                }
                let Some(x) = op.written() else { return };
                dfs::ghost(G_RESIDUE + c as u32, GhostKind::Write);
                let owner = actor == Actor::Cpu(c);
                let d = self.domain(memcg);
                if owner && x == 0 {
                    let before = d.residue[c];
                    let u = d.in_update[c];
                    if !u.wrote && !u.accounted && before > 0 && self.skipping(memcg, u.read) {
                        self.skip(memcg, c, before, u.read, h);
                    } else if memcg.is_some() && !u.wrote {
                        // v6.17's fold: the pages are in flight until the add.
                        self.domain(memcg).flight[c] += before;
                    }
                } else if owner {
                    d.in_update[c].counted = true;
                }
                self.domain(memcg).residue[c] = x;
            }
            (Var::Threshold { memcg }, op, Actor::Cpu(c)) if c < self.cpus => {
                if let (Op::Read(t), Some(_)) = (op, op.read()) {
                    self.domain(memcg).in_update[c].read = Some(t);
                }
                if let Some(new) = op.written() {
                    dfs::ghost(G_THR, GhostKind::Add);
                    dfs::ghost(G_RESIDUE + c as u32, GhostKind::Write);
                    self.threshold_rmws += 1;
                    let open = !self.open.is_empty();
                    let d = self.domain(memcg);
                    d.threshold = new;
                    d.max_threshold = d.max_threshold.max(new);
                    if memcg.is_some() {
                        // Per-memcg atomics count pages: the add moves them
                        // out of flight (v6.17) or out of the counter that
                        // the owner zeroes next (v6.8).
                        if let Op::Add { val, .. } = op {
                            d.counted += val;
                            let f = d.flight[c].min(val);
                            d.flight[c] -= f;
                            d.residue[c] = (d.residue[c] - (val - f)).max(0);
                        }
                    } else if !d.in_update[c].wrote {
                        // The batch moves from the residue to the threshold
                        // here, whenever the CPU zeroes its counter.
                        d.counted += d.residue[c];
                        d.residue[c] = 0;
                    }
                    d.in_update[c].wrote = true;
                    if open {
                        d.added_during_flush += 1;
                    }
                    self.accounted(memcg, c, false, h);
                }
            }
            (Var::Threshold { memcg }, op, _) => {
                if let Some(t) = op.read() {
                    if actor.is_reader() && !in_section {
                        match self.gate_read.iter_mut().find(|(x, _, _)| *x == actor) {
                            Some(slot) => *slot = (actor, memcg, t),
                            None => self.gate_read.push((actor, memcg, t)),
                        }
                    }
                }
                if let Some(new) = op.written() {
                    self.domain(memcg).threshold = new;
                    if new == 0 {
                        self.reset_threshold(memcg, h);
                    }
                }
            }
            (Var::Lock(LockName::StatsFlushLock), Op::CmpXchg { ok: false, .. }, _)
                if a.idiom == Idiom::SpinTrylock =>
            {
                h.trylock_contended = true;
                h.periodic_skipped = actor == Actor::Periodic;
            }
            (Var::Lock(LockName::CgroupRstatLock), Op::CmpXchg { ok: false, .. }, _)
                if a.idiom == Idiom::SpinLock =>
            {
                h.trylock_contended = true;
            }
            // v6.4: a flusher found `stats_flush_ongoing` set, by its
            // `atomic_read()` or by losing the `atomic_xchg()`.
            (Var::Lock(LockName::StatsFlushOngoing), Op::Read(v), _) if v != 0 => {
                h.trylock_contended = true;
                h.periodic_skipped = actor == Actor::Periodic;
            }
            (Var::Lock(LockName::StatsFlushOngoing), Op::Xchg { old, .. }, _) if old != 0 => {
                h.trylock_contended = true;
                h.periodic_skipped = actor == Actor::Periodic;
            }
            (Var::FlushTime, Op::Write(_), _) if in_section => {
                dfs::ghost(G_SECTION, GhostKind::Write);
                if let Some(s) = self.open.iter_mut().find(|s| s.actor == actor) {
                    s.stamped = true;
                }
            }
            (Var::Jiffies, Op::Write(t), _) => {
                dfs::ghost(G_TIME, GhostKind::Write);
                self.now = t;
                dfs::ghost(G_SECTION, GhostKind::Read);
                if self.open.iter().any(|s| s.root == 0) {
                    self.root_flush_at = Some(t);
                }
            }
            _ => {}
        }
    }
}
