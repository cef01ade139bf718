//! The state digests the stateful search stores: the plain one, and the
//! canonical one of the symmetry reduction.
//!
//! **Plain.** Every location's value, every task's local state, the task
//! that may not run next (it just yielded), and the observer's state
//! ([`Sink::digest`]).
//!
//! **Canonical** (`symmetry`). CPUs of one class (the same program on the
//! same values, [`crate::vocab::footprint::cpu_classes`]) are
//! interchangeable: a state and the same state with two such CPUs' data,
//! tasks and observer state swapped have the same futures up to the swap.
//! Each CPU gets a *record*: its class, its locations' values in their
//! order, the local state of the task standing for it, and the observer's
//! part of it ([`Sink::digest_cpu`]); a CPU pinned by another task's
//! locals (a walk in progress has read it) also records its own number,
//! so that it stays where it is. The CPUs are ordered by record, which
//! gives the renaming `rename[c]` = the place of CPU `c`; the digest is
//! the records in that order, then everything else with CPU numbers
//! renamed: the shared locations, the other tasks' local states, the task
//! that just yielded, and [`Sink::digest_renamed`]. Equal digests mean
//! equal records place by place and equal renamed rests: one state is the
//! other with its CPUs permuted (up to a 128-bit hash collision). Ties
//! between equal records only cost reduction, never soundness.
//!
//! The sleep sets a state is stored with are masks over the *renamed*
//! tasks: a task standing for CPU `c` is bit `rename[c]`, any other task
//! `t` bit `cpus + t`.
//!
//! What the canonical digest cannot see it does not permute: it gives up
//! (and the plain digest is used) when the observer cannot split its state,
//! when a per-CPU location was built outside `PerCpu::new`, or when a CPU
//! is taken up a second time (main standing for each CPU in `settle`).

use crate::vocab::obs::Sink;

use super::digest::Digest;
use super::track::{Role, Track, MAX_SYM_CPUS};

/// Domain tags: plain and canonical digests never coincide by design.
const CANONICAL: u64 = 0x5EED_5E77_0000_0001;
const VACANT: u64 = 0x5EED_5E77_0000_0002;
const PINNED: u64 = 0x5EED_5E77_0000_0003;

/// A state digest and the bit each task has in a sleep-set mask.
pub(super) struct Key {
    pub(super) digest: Digest,
    /// Per task id, its bit (empty for a plain digest: the task id).
    pub(super) bits: Vec<usize>,
    /// The bit of a task not in `bits` is its id plus this.
    pub(super) offset: usize,
}

impl Key {
    /// The bit of task `t`.
    pub(super) fn bit(&self, t: usize) -> usize {
        self.bits.get(t).copied().unwrap_or(t + self.offset)
    }
}

/// The plain digest; `None` if some of the state cannot be digested.
pub(super) fn plain(t: &Track, yielded: Option<usize>) -> Option<Key> {
    if t.opaque {
        return None;
    }
    let mut d = Digest::default();
    d.word(t.mem.len() as u64);
    for v in &t.mem {
        d.word(*v as u64);
    }
    d.word(t.tasks.len() as u64);
    for l in &t.tasks {
        d.word(l.steps);
        d.word(l.seen.a);
        d.word(l.seen.b);
        d.word(l.walked);
    }
    d.word(yielded.map_or(u64::MAX, |t| t as u64));
    if let Some(s) = &t.sink {
        if !s.digest(&mut d) {
            return None;
        }
    }
    Some(Key {
        digest: d,
        bits: Vec::new(),
        offset: 0,
    })
}

/// The canonical digest, or the plain one where the state cannot be
/// permuted; `None` if it cannot be digested at all.
pub(super) fn canonical(t: &Track, yielded: Option<usize>) -> Option<Key> {
    if t.opaque {
        return None;
    }
    permuted(t, yielded).or_else(|| plain(t, yielded))
}

fn permuted(t: &Track, yielded: Option<usize>) -> Option<Key> {
    let n = t.classes.len();
    if !(2..=MAX_SYM_CPUS).contains(&n) || t.asymmetric {
        return None;
    }
    let sink: &dyn Sink = t.sink.as_deref()?;
    let released = t.cpus.iter().map(|r| match r {
        Role::Released(l) => l.pins | l.walked,
        _ => 0,
    });
    // A CPU's own task that walked CPUs pins them (its walk is in its
    // record, which is not renamed); another task's walk is renamed.
    let own_walks = t.cpus.iter().map(|r| match r {
        Role::Held(task) => t.tasks.get(*task).map_or(0, |l| l.walked),
        _ => 0,
    });
    let pinned = t
        .tasks
        .iter()
        .map(|l| l.pins)
        .chain(released)
        .chain(own_walks)
        .fold(0, |m, p| m | p);
    let mut recs = vec![Digest::default(); n];
    for (c, r) in recs.iter_mut().enumerate() {
        r.word(t.classes[c]);
        if pinned >> c & 1 == 1 {
            r.word(PINNED ^ c as u64);
        }
        let local = match t.cpus.get(c).copied().unwrap_or_default() {
            Role::Vacant => None,
            Role::Held(task) => t.tasks.get(task).copied(),
            Role::Released(l) => Some(l),
        };
        match local {
            None => r.word(VACANT),
            Some(l) => {
                r.word(l.steps);
                r.word(l.seen.a);
                r.word(l.seen.b);
                r.word(l.walked);
            }
        }
    }
    let mut shared = Vec::with_capacity(t.mem.len());
    for (v, o) in t.mem.iter().zip(&t.owner) {
        match o {
            Some((c, _)) if (*c as usize) < n => recs[*c as usize].word(*v as u64),
            Some(_) => return None,
            None => shared.push(*v),
        }
    }
    for (c, r) in recs.iter_mut().enumerate() {
        if !sink.digest_cpu(c, r) {
            return None;
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&c| (recs[c].a, recs[c].b));
    let mut rename = vec![0; n];
    for (place, &c) in order.iter().enumerate() {
        rename[c] = place;
    }
    let bits: Vec<usize> = (0..t.tasks.len())
        .map(|task| match t.role_of(task) {
            Some(c) => rename[c as usize],
            None => n + task,
        })
        .collect();
    let mut d = Digest::default();
    d.word(CANONICAL);
    d.word(n as u64);
    for &c in &order {
        d.word(recs[c].a);
        d.word(recs[c].b);
    }
    d.word(shared.len() as u64);
    for v in shared {
        d.word(v as u64);
    }
    for (task, l) in t.tasks.iter().enumerate() {
        if t.role_of(task).is_none() {
            d.word(task as u64);
            d.word(l.steps);
            d.word(l.seen.a);
            d.word(l.seen.b);
            let walked = (0..n)
                .filter(|c| l.walked >> c & 1 == 1)
                .fold(0u64, |m, c| m | 1 << rename[c]);
            d.word(walked ^ l.walked >> n << n);
        }
    }
    d.word(yielded.map_or(u64::MAX, |y| bits.get(y).copied().unwrap_or(y) as u64));
    if !sink.digest_renamed(&rename, &mut d) {
        return None;
    }
    Some(Key {
        digest: d,
        bits,
        offset: n,
    })
}
