//! The worst-case staleness derived from the protocol's arithmetic, without
//! exploring interleavings; `flushcheck bounds --exhaustive` checks it
//! against the maxima of an exhaustive search (docs/findings.md).
//!
//! [`derive()`] holds for v5.19 and v6.0 under sequential consistency, for
//! non-negative updates; [`derive_per_memcg()`] for the per-memcg versions
//! (v6.8 on) on the root alone. Write `s` for the count a CPU holds when it crosses
//! the batch (`x` in `memcg_rstat_updated()`, at most `MEMCG_CHARGE_BATCH +
//! max val`) and `u = s / MEMCG_CHARGE_BATCH` for the units it adds. At a
//! reader's decision not to flush:
//!
//! * **residue**: each CPU holds at most `s` pages it has not added (it
//!   may sit between `__this_cpu_add_return()` and `atomic_add()`);
//! * **counted**: the threshold holds at most `num_online_cpus()` units
//!   since its last reset, each standing for up to `s / u` pages;
//! * **skipped** (v6.0): zero, since a skip reads a threshold above
//!   `num_online_cpus()` and only a reset lowers it;
//! * **lost**: pages batched during a flush's walk after the walk read their
//!   CPU, erased from the threshold by the reset. Only the number of
//!   updates that land during one walk bounds them.
//!
//! [`derive()`] turns this into exact numbers for one [`Config`]: `since_reset`
//! maximises residue + counted over the states each CPU can be in, and
//! `worst` adds the lost pages: every page when a periodic flush can start
//! before the updates, otherwise all pages but those the first
//! reader-triggered flush must have seen.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::Config;

/// The derived maxima for one configuration (pages).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Derived {
    /// Largest residue + counted + skipped at a no-flush decision.
    pub since_reset: i64,
    /// Largest staleness at a no-flush decision, lost pages included;
    /// `None` when no reader can decide not to flush.
    pub worst: Option<i64>,
    /// Fewest pages written when a reader can first see the threshold above
    /// its trigger (`num_online_cpus()` units; a per-memcg trigger in
    /// pages); `None` when no reader can flush.
    pub trigger: Option<i64>,
    /// All pages the configuration writes.
    pub total: i64,
    /// Per-memcg protocols (v6.8 on): the largest value a memcg's
    /// `vmstats->stats_updates` can hold (claim C14); `None` for the global
    /// family.
    pub max_stats_updates: Option<i64>,
}

/// One state a CPU can be in at a reader's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CpuState {
    /// Units added since the last reset.
    units: i64,
    /// Residue + pages counted since the last reset.
    pages: i64,
    /// Units added before the last reset.
    units_before: i64,
    /// Whether the CPU has finished its updates (main's quiescent decision
    /// only meets such states).
    done: bool,
}

/// The states of one CPU: after `d` updates, or paused inside the `d`-th
/// update's crossing before its `atomic_add()`, with the last reset after
/// any of its completed crossings.
fn cpu_states(vals: &[i64], batch: i64) -> (Vec<CpuState>, Vec<(i64, i64)>) {
    let mut states = Vec::new();
    // (written, units) after each completed prefix, for the trigger.
    let mut prefixes = vec![(0, 0)];
    let mut crossings: Vec<(i64, i64)> = Vec::new(); // (x, units)
    let mut residue = 0;
    let mut written = 0;
    let mut push = |crossings: &[(i64, i64)], residue: i64, done: bool| {
        for start in 0..=crossings.len() {
            let (before, after) = crossings.split_at(start);
            states.push(CpuState {
                units: after.iter().map(|c| c.1).sum(),
                pages: residue + after.iter().map(|c| c.0).sum::<i64>(),
                units_before: before.iter().map(|c| c.1).sum(),
                done,
            });
        }
    };
    push(&crossings, 0, vals.is_empty());
    for (k, v) in vals.iter().enumerate() {
        residue += v;
        written += v;
        let last = k + 1 == vals.len();
        if residue > batch {
            push(&crossings, residue, false);
            crossings.push((residue, residue / batch));
            residue = 0;
        }
        push(&crossings, residue, last);
        prefixes.push((written, crossings.iter().map(|c| c.1).sum()));
    }
    (states, prefixes)
}

/// Largest Σ pages over one state per CPU with Σ units ≤ `n`, Σ units
/// before the reset ≥ `before_at_least`, and only finished states if
/// `done_only`.
fn best(per_cpu: &[Vec<CpuState>], n: i64, before_at_least: i64, done_only: bool) -> Option<i64> {
    let cap = before_at_least.max(0) as usize;
    let n = n as usize;
    // Only the best pages of each (units, capped units before) matter.
    let per_cpu: Vec<Vec<CpuState>> = per_cpu
        .iter()
        .map(|states| {
            let mut kept: BTreeMap<(i64, i64), CpuState> = BTreeMap::new();
            for s in states.iter().filter(|s| s.done || !done_only) {
                let key = (s.units, s.units_before.min(cap as i64));
                let slot = kept.entry(key).or_insert(*s);
                if s.pages > slot.pages {
                    *slot = *s;
                }
            }
            kept.into_values().collect()
        })
        .collect();
    // best[units][min(before, cap)] = max pages
    let mut table = vec![vec![None::<i64>; cap + 1]; n + 1];
    table[0][0] = Some(0);
    for states in &per_cpu {
        let mut next = vec![vec![None::<i64>; cap + 1]; n + 1];
        for (u, row) in table.iter().enumerate() {
            for (b, cell) in row.iter().enumerate() {
                let Some(p) = cell else { continue };
                for s in states.iter().filter(|s| s.done || !done_only) {
                    let u2 = u + s.units as usize;
                    if u2 > n {
                        continue;
                    }
                    let b2 = (b + s.units_before as usize).min(cap);
                    let slot = &mut next[u2][b2];
                    *slot = Some(slot.map_or(p + s.pages, |q| q.max(p + s.pages)));
                }
            }
        }
        table = next;
    }
    table.iter().filter_map(|row| row[cap]).max()
}

/// Fewest pages written over one completed prefix per CPU, each a (pages
/// written, count) pair, with Σ count ≥ `cap`; `None` if no choice gets
/// there.
fn fewest_written(prefixes: &[Vec<(i64, i64)>], cap: usize) -> Option<i64> {
    let mut table = vec![None::<i64>; cap + 1];
    table[0] = Some(0);
    for p in prefixes {
        let mut next = vec![None::<i64>; cap + 1];
        for (u, cell) in table.iter().enumerate() {
            let Some(w) = cell else { continue };
            for (written, count) in p {
                let u2 = (u + *count as usize).min(cap);
                next[u2] = Some(next[u2].map_or(w + written, |q: i64| q.min(w + written)));
            }
        }
        table = next;
    }
    table[cap]
}

/// The derived maxima for `cfg`, or why the derivation does not apply.
pub fn derive(cfg: &Config) -> Result<Derived, String> {
    if !cfg.non_negative() {
        return Err("the derivation assumes non-negative updates".into());
    }
    let n = cfg.cpus as i64;
    let mut per_cpu = Vec::new();
    let mut prefixes = Vec::new();
    for c in 0..cfg.cpus {
        let vals: Vec<i64> = (0..cfg.updates).map(|k| cfg.val(c, k)).collect();
        let (s, p) = cpu_states(&vals, cfg.batch);
        per_cpu.push(s);
        prefixes.push(p);
    }
    let total = cfg.total();
    let reader = cfg.readers > 0;
    // Fewest pages written when the threshold first exceeds n (no flush
    // before): a min over completed prefixes, units capped at n + 1.
    let trigger = if reader {
        fewest_written(&prefixes, (n + 1) as usize)
    } else {
        None
    };
    // A decision with no reset before it: any state if a reader thread can
    // decide, otherwise only main's, at the end.
    let first: Vec<Vec<CpuState>> = per_cpu
        .iter()
        .map(|s| s.iter().copied().filter(|s| s.units_before == 0).collect())
        .collect();
    let no_reset = best(&first, n, 0, !reader);
    // A decision after a reset: the periodic flush may come at any time; a
    // reader's flush needs n + 1 units first.
    let after_reset = if cfg.periodic {
        best(&per_cpu, n, 0, !reader)
    } else if trigger.is_some() {
        best(&per_cpu, n, n + 1, cfg.readers * cfg.reads < 2)
    } else {
        None
    };
    let since_reset = no_reset.max(after_reset).unwrap_or(0);
    let worst = if cfg.periodic {
        Some(total)
    } else {
        match (no_reset.max(after_reset), trigger) {
            (f, Some(m)) => Some(f.unwrap_or(0).max(total - m)),
            (f, None) => f,
        }
    };
    Ok(Derived {
        since_reset,
        worst,
        trigger,
        total,
        max_stats_updates: None,
    })
}

/// One state a CPU of a per-memcg protocol can be in at a reader's
/// decision, with no reset of the memcg's counters since its first update.
#[derive(Clone, Copy, Debug)]
struct MemcgCpuState {
    /// Pages it added to the memcg's atomic (its folds).
    folds: i64,
    /// Pages written and not flushed: its folds plus what it holds in its
    /// per-CPU counter or in flight.
    pages: i64,
    /// Whether it has finished its updates.
    done: bool,
}

/// What the per-memcg derivation needs from one CPU's updates `vals`.
struct MemcgCpu {
    /// Its states at a reader's decision.
    states: Vec<MemcgCpuState>,
    /// (pages written, pages folded) after each completed prefix.
    prefixes: Vec<(i64, i64)>,
    /// For each of its folds: (pages folded before it, its size); and
    /// `(0, 0)` for no fold.
    lasts: Vec<(i64, i64)>,
}

/// The states of one CPU of a per-memcg protocol (v6.8 on) with no reset:
/// after `d` updates, or paused inside the `d + 1`-th between its
/// `__this_cpu_add()` of the statistic and the `atomic64_add()` of its
/// fold (its pages written, none of them in the atomic yet).
fn memcg_cpu(vals: &[i64], batch: i64) -> MemcgCpu {
    let mut states = vec![MemcgCpuState {
        folds: 0,
        pages: 0,
        done: vals.is_empty(),
    }];
    let mut prefixes = vec![(0, 0)];
    let mut lasts = vec![(0, 0)];
    let (mut pc, mut folds, mut written) = (0, 0, 0);
    for (k, v) in vals.iter().enumerate() {
        states.push(MemcgCpuState {
            folds,
            pages: folds + pc + v,
            done: false,
        });
        pc += v;
        written += v;
        if pc >= batch {
            lasts.push((folds, pc));
            folds += pc;
            pc = 0;
        }
        states.push(MemcgCpuState {
            folds,
            pages: folds + pc,
            done: k + 1 == vals.len(),
        });
        prefixes.push((written, folds));
    }
    MemcgCpu {
        states,
        prefixes,
        lasts,
    }
}

/// The finished states of one CPU after a flush: its counter zeroed by the
/// flusher's callback after its first `j` updates, the first `a` folds of
/// the rest erased by a later reset of the atomic (lost pages, not in the
/// result), the others counted.
fn memcg_after_reset(vals: &[i64], batch: i64) -> Vec<MemcgCpuState> {
    let mut out = Vec::new();
    for j in 0..=vals.len() {
        let (mut pc, mut folds) = (0, Vec::new());
        for v in &vals[j..] {
            pc += v;
            if pc >= batch {
                folds.push(pc);
                pc = 0;
            }
        }
        for a in 0..=folds.len() {
            let counted: i64 = folds[a..].iter().sum();
            out.push(MemcgCpuState {
                folds: counted,
                pages: counted + pc,
                done: true,
            });
        }
    }
    out
}

/// Largest Σ value over one option per CPU, each option `(weight, value)`,
/// with Σ weight ≤ `cap`; `None` if no choice fits.
fn knapsack(options: &[Vec<(i64, i64)>], cap: i64) -> Option<i64> {
    let cap = cap.max(0) as usize;
    let mut table = vec![None::<i64>; cap + 1];
    table[0] = Some(0);
    for opts in options {
        // Only the best value of each weight matters.
        let mut kept: BTreeMap<i64, i64> = BTreeMap::new();
        for &(w, v) in opts {
            let slot = kept.entry(w).or_insert(v);
            *slot = (*slot).max(v);
        }
        let mut next = vec![None::<i64>; cap + 1];
        for (u, cell) in table.iter().enumerate() {
            let Some(p) = cell else { continue };
            for (&w, &v) in &kept {
                let u2 = u + w as usize;
                if u2 > cap {
                    continue;
                }
                next[u2] = Some(next[u2].map_or(p + v, |q| q.max(p + v)));
            }
        }
        table = next;
    }
    table.into_iter().flatten().max()
}

/// The derived maxima of a per-memcg protocol (v6.8, v6.17, the 2026
/// proposal) on a flat tree (the root alone), for a reader whose gate is
/// `atomic64_read(&vmstats->stats_updates) > trigger`; or why the
/// derivation does not apply.
///
/// Under sequential consistency, at a reader's decision not to flush the
/// root's atomic holds at most `trigger` pages, and:
///
/// * **residue** (per-CPU counter or in flight): each CPU holds what its
///   counter held before its current update plus that update's value, at
///   most `MEMCG_CHARGE_BATCH - 1 + val`; it may sit between
///   `__this_cpu_add()` and the `atomic64_add()` of its fold;
/// * **counted**: the folds in the atomic since its last reset, at most
///   `trigger` pages in all;
/// * **skipped**: zero: v6.8 skips the add and v6.17 breaks only when the
///   atomic is above `trigger`, and only a reset lowers it;
/// * **lost**: pages written after a flusher's callback read their CPU and
///   erased from the counters by that callback's resets (the remote
///   `WRITE_ONCE(statc->stats_updates, 0)`, the atomic's `atomic64_set(0)`
///   at a later CPU's callback): bounded only by the updates that land
///   during one flush.
///
/// The flusher zeroes the per-CPU counters too, so a CPU starts afresh
/// after a reset; when every CPU updates by one constant value, any state
/// after a reset is matched by a state without one but the finished ones
/// (main's decision), which are added when the periodic flusher may have
/// reset: `since_reset` maximises residue +
/// counted over them with Σ folds ≤ `trigger`, and `worst` adds the lost
/// pages as for v5.19 (every page with the periodic flusher; otherwise
/// all but the fewest pages written when the atomic can first exceed
/// `trigger`).
///
/// `max_stats_updates` (C14): every fold but the last of each CPU precedes
/// that CPU's last read of the atomic (v6.17 reads it before counting,
/// v6.8 before adding), which found at most `trigger`; so the atomic holds
/// at most Σ (folds before the last) + Σ (last folds) with the first sum at
/// most `trigger`, and every such value is reached: all earlier folds, then
/// every CPU reads, then every CPU adds.
pub fn derive_per_memcg(cfg: &Config, trigger: i64) -> Result<Derived, String> {
    if !cfg.tree.is_empty() {
        return Err("the per-memcg derivation covers the root alone (no --tree)".into());
    }
    if !cfg.non_negative() {
        return Err("the derivation assumes non-negative updates".into());
    }
    let cpus: Vec<MemcgCpu> = (0..cfg.cpus)
        .map(|c| {
            let vals: Vec<i64> = (0..cfg.updates).map(|k| cfg.val(c, k)).collect();
            let mut c = memcg_cpu(&vals, cfg.batch);
            // Only finished states meet main's decision, and a flush may
            // have left a CPU in one that no run without a flush reaches.
            if cfg.periodic {
                c.states.extend(memcg_after_reset(&vals, cfg.batch));
            }
            c
        })
        .collect();
    if (0..cfg.cpus).any(|c| (1..cfg.updates).any(|k| cfg.val(c, k) != cfg.val(c, 0))) {
        return Err("the per-memcg derivation needs one update value per CPU".into());
    }
    let reader = cfg.readers > 0;
    let since = |done_only: bool| {
        let options: Vec<Vec<(i64, i64)>> = cpus
            .iter()
            .map(|c| {
                c.states
                    .iter()
                    .filter(|s| s.done || !done_only)
                    .map(|s| (s.folds, s.pages))
                    .collect()
            })
            .collect();
        knapsack(&options, trigger)
    };
    let since_reset = since(!reader).unwrap_or(0);
    // Fewest pages written when the atomic first exceeds the trigger: a min
    // over completed prefixes, folds capped at trigger + 1.
    let first_flush = if reader {
        let prefixes: Vec<Vec<(i64, i64)>> = cpus.iter().map(|c| c.prefixes.clone()).collect();
        fewest_written(&prefixes, (trigger + 1).max(0) as usize)
    } else {
        None
    };
    let total = cfg.total();
    let worst = if cfg.periodic {
        total
    } else {
        first_flush.map_or(since_reset, |m| since_reset.max(total - m))
    };
    let lasts: Vec<Vec<(i64, i64)>> = cpus
        .iter()
        .map(|c| c.lasts.iter().map(|&(f, l)| (f, f + l)).collect())
        .collect();
    Ok(Derived {
        since_reset,
        worst: Some(worst),
        trigger: first_flush,
        total,
        max_stats_updates: knapsack(&lasts, trigger),
    })
}

/// C18, the reviewers' worst case for the 2026 proposal: `N *
/// (MEMCG_CHARGE_BATCH - 1) + vmstats_flush_threshold`.
pub fn c18_claim(cfg: &Config, trigger: i64) -> i64 {
    cfg.cpus as i64 * (cfg.batch - 1) + trigger
}
