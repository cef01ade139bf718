//! The worst-case staleness derived from the protocol's arithmetic, without
//! exploring interleavings; `flushcheck bounds --exhaustive` checks it
//! against the maxima of an exhaustive search (docs/findings.md).
//!
//! It holds for v5.19 and v6.0 under sequential consistency, for
//! non-negative updates. Write `s` for the count a CPU holds when it crosses
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
    /// `num_online_cpus()`; `None` when no reader can flush.
    pub trigger: Option<i64>,
    /// All pages the configuration writes.
    pub total: i64,
}

/// One state a CPU can be in at a reader's decision.
#[derive(Clone, Copy, Debug)]
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
    // best[units][min(before, cap)] = max pages
    let mut table = vec![vec![None::<i64>; cap + 1]; n + 1];
    table[0][0] = Some(0);
    for states in per_cpu {
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
        let cap = (n + 1) as usize;
        let mut table = vec![None::<i64>; cap + 1];
        table[0] = Some(0);
        for p in &prefixes {
            let mut next = vec![None::<i64>; cap + 1];
            for (u, cell) in table.iter().enumerate() {
                let Some(w) = cell else { continue };
                for (written, units) in p {
                    let u2 = (u + *units as usize).min(cap);
                    next[u2] = Some(next[u2].map_or(w + written, |q: i64| q.min(w + written)));
                }
            }
            table = next;
        }
        table[cap]
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
    })
}
