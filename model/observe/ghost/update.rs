//! How an observation changes ghost state: the updates, the walk, the
//! resets and the flush sections, each change declaring its footprint.

use crate::vocab::footprint::{self, GhostKind};
use crate::vocab::obs::{Access, Actor, Idiom, LockName, Obs, Op, Tp, Var};

use super::domain::{Epoch, Happened, Section};
use super::{Ghost, G_AGG, G_RESIDUE, G_SECTION, G_THR, G_TIME, G_WRITTEN};

impl Ghost {
    fn reset_threshold(&mut self, key: Option<u8>, h: &mut Happened) {
        footprint::footprint(G_THR, GhostKind::Write);
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
    #[doc(hidden)]
    pub fn observe(&mut self, actor: Actor, obs: &Obs, timed: bool) -> Happened {
        let mut h = Happened::default();
        match *obs {
            Obs::Access(a) => self.access(actor, a, timed, &mut h),
            Obs::Trace(Tp::FlushBegin { root }) => {
                footprint::footprint(G_SECTION, GhostKind::Write);
                self.open.push(Section {
                    actor,
                    root,
                    walked: 0,
                    stamped: false,
                });
                if timed && root == 0 {
                    footprint::footprint(G_TIME, GhostKind::Write);
                    self.root_flush_at = Some(self.now);
                }
            }
            Obs::Trace(Tp::FlushEnd) => {
                footprint::footprint(G_SECTION, GhostKind::Write);
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
            Obs::UpdateDone { val, memcg } => {
                if let Actor::Cpu(c) = actor {
                    if timed && memcg == 0 && c < self.cpus {
                        // NOTE(kernel): an update is aged from its return,
                        // not from its first step. `__mod_memcg_state()`
                        // (its counter write and `css_rstat_updated()`)
                        // runs with interrupts off for nanoseconds and a
                        // tick stands for a second, so in kernel time the
                        // whole update falls on one side of a tick; the
                        // model lets ticks pass between its steps. Stamped
                        // at its first step, an update whose counter write
                        // and updated-tree link straddle a periodic flush
                        // (the flush pops the tree between them and misses
                        // it, the next one collects it) would be charged
                        // the ticks that passed inside it (docs/properties.md,
                        // section 7). Only CPU `c` adds to `written[0][c]`.
                        footprint::footprint(G_TIME, GhostKind::Add);
                        let sum = self.written[0][c];
                        self.stamps[c].push((sum, self.now));
                    }
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
            h.broke |= x > 0;
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
        footprint::footprint(G_THR, GhostKind::Add);
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
                footprint::footprint(G_WRITTEN, GhostKind::Add);
                self.written[memcg as usize][c] += val;
            }
            (Var::State { memcg, cpu }, Op::Read(v), _) if in_section => {
                let (m, c) = (memcg as usize, cpu as usize);
                footprint::footprint(G_SECTION, GhostKind::Write);
                if m < self.seen.len() && c < self.cpus {
                    let bit = 1 << (m * self.cpus + c);
                    if let Some(s) = self.open.iter_mut().find(|s| s.actor == actor) {
                        s.walked |= bit;
                    }
                    self.seen[m][c] = v;
                    self.lost[m][c] = 0;
                    if timed && m == 0 {
                        footprint::footprint(G_TIME, GhostKind::Write);
                        self.pending_fold.retain(|(x, _, _)| *x != actor);
                        if v != self.folded[c] {
                            self.pending_fold.push((actor, c, v));
                        }
                    }
                }
            }
            (Var::Aggregate { memcg }, op, _) if op.written().is_some() => {
                footprint::footprint(G_AGG, GhostKind::Write);
                let v = op.written().unwrap_or(0);
                if let Some(slot) = self.agg.get_mut(memcg as usize) {
                    *slot = v;
                }
                if timed && memcg == 0 {
                    footprint::footprint(G_TIME, GhostKind::Write);
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
                footprint::footprint(G_RESIDUE + c as u32, GhostKind::Write);
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
                    footprint::footprint(G_THR, GhostKind::Add);
                    footprint::footprint(G_RESIDUE + c as u32, GhostKind::Write);
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
            // A flusher that waits for `stats_flush_lock` (a fix whose
            // flushers never skip) met another as well.
            (Var::Lock(LockName::StatsFlushLock), Op::CmpXchg { ok: false, .. }, _)
                if a.idiom == Idiom::SpinLock =>
            {
                h.trylock_contended = true;
            }
            // `spin_is_locked()` before the trylock, finding it held.
            (Var::Lock(LockName::StatsFlushLock), Op::Read(v), _)
                if v != 0 && a.idiom == Idiom::SpinIsLocked =>
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
                footprint::footprint(G_SECTION, GhostKind::Write);
                if let Some(s) = self.open.iter_mut().find(|s| s.actor == actor) {
                    s.stamped = true;
                }
            }
            (Var::Jiffies, Op::Write(t), _) => {
                footprint::footprint(G_TIME, GhostKind::Write);
                self.now = t;
                footprint::footprint(G_SECTION, GhostKind::Read);
                if self.open.iter().any(|s| s.root == 0) {
                    self.root_flush_at = Some(t);
                }
            }
            _ => {}
        }
    }
}
