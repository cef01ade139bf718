//! Cutting a trace down to the accesses that make its outcome (see
//! [`super::export`], "Slicing"), and the kernel's control flow the cut
//! must keep: the reader's gate around its flush.

use std::collections::{BTreeMap, BTreeSet};

use crate::vocab::obs::Actor;

use super::translate::{initial_values, Acc, Held, MAX_VARIABLES};

/// The store a load at `i` read from: the position of the latest store
/// before it of the value it returned (`None`: the initial value).
pub(super) fn source(accs: &[Acc], i: usize) -> Option<usize> {
    let (v, val) = (accs[i].var(), accs[i].read);
    accs[..i]
        .iter()
        .rposition(|a| a.var() == v && a.write.is_some() && a.write == val)
}

/// Whether `a` then `b` (another thread's accesses to one variable) are a
/// communication: `b` reads `a`'s store (rf), `b` overwrites the value `a`
/// read (fr), or `b` overwrites `a`'s store (co).
pub(super) fn communicates(accs: &[Acc], ia: usize, ib: usize) -> bool {
    let (a, b) = (&accs[ia], &accs[ib]);
    if a.var() != b.var() || a.var().is_none() || a.is_lock() || b.is_lock() {
        return false;
    }
    let rf = a.write.is_some() && b.read.is_some() && source(accs, ib) == Some(ia);
    let fr =
        a.read.is_some() && b.write.is_some() && source(accs, ia).is_none_or(|s| s < ib) && ib > ia;
    let co = a.write.is_some() && b.write.is_some() && ia < ib;
    rf || fr || co
}

/// The first load that returned a value other than the last one stored
/// before it, with the last store it missed (another thread's).
pub(super) fn first_stale_load(accs: &[Acc]) -> Option<(usize, usize)> {
    accs.iter().enumerate().find_map(|(i, a)| {
        let (Some(v), true, Some(r)) = (a.var(), a.load, a.read) else {
            return None;
        };
        let last = accs[..i]
            .iter()
            .rposition(|b| b.var() == Some(v) && b.write.is_some())?;
        let current = accs[last].write;
        (current != Some(r) && accs[last].actor != a.actor).then_some((i, last))
    })
}

/// What a slice keeps: its data variables, and the accesses (indices)
/// that make the outcome; each thread keeps what lies between its first
/// and last such access.
pub(super) struct Slice {
    pub(super) vars: BTreeSet<String>,
    pub(super) core: BTreeSet<usize>,
    pub(super) why: String,
}

/// The race of the first stale load, if there is one:
/// the load, the store it missed, and every pair of accesses by which the
/// storing thread, after its store, communicates with the loading thread
/// before its load (a message-passing flag, a store-buffering partner).
pub(super) fn weak_slice(accs: &[Acc]) -> Option<Slice> {
    let (i, j) = first_stale_load(accs)?;
    let (t, u) = (accs[i].actor, accs[j].actor);
    let x = accs[i].var().unwrap_or_default().to_string();
    let mut vars = vec![x.clone()];
    let mut core = BTreeSet::from([i, j]);
    for ia in (j + 1)..accs.len() {
        if accs[ia].actor != u {
            continue;
        }
        for ib in 0..i {
            if accs[ib].actor != t || !communicates(accs, ia, ib) {
                continue;
            }
            let y = accs[ia].var().unwrap_or_default().to_string();
            if !vars.contains(&y) {
                if vars.len() == MAX_VARIABLES {
                    continue;
                }
                vars.push(y);
            }
            core.extend([ia, ib]);
        }
    }
    let why = format!(
        "the first stale load ({}'s load of {x}, which misses {}'s store, the \
         last one before it in the trace) and what orders the two threads \
         around it (on {})",
        t,
        u,
        vars.join(", ")
    );
    Some(Slice {
        vars: vars.into_iter().collect(),
        core,
        why,
    })
}

/// A variable two threads communicate on (one reads another's store,
/// overwrites a value another read, or overwrites another's store): every
/// access by which they do, and the last such pair alone.
pub(super) struct Talk {
    pub(super) var: String,
    pub(super) every: BTreeSet<usize>,
    pub(super) last: BTreeSet<usize>,
}

/// The variables two threads communicate on, the most recently
/// communicated on first.
pub(super) fn sc_ranked(accs: &[Acc]) -> Vec<Talk> {
    let mut per: BTreeMap<String, (usize, BTreeSet<usize>, BTreeSet<usize>)> = BTreeMap::new();
    for ib in 0..accs.len() {
        for ia in 0..ib {
            if accs[ia].actor == accs[ib].actor || !communicates(accs, ia, ib) {
                continue;
            }
            let e = per
                .entry(accs[ib].var().unwrap_or_default().to_string())
                .or_default();
            if ib >= e.0 {
                e.0 = ib;
                e.2 = BTreeSet::from([ia, ib]);
            }
            e.1.extend([ia, ib]);
        }
    }
    let mut ranked: Vec<(usize, Talk)> = per
        .into_iter()
        .map(|(var, (at, every, last))| (at, Talk { var, every, last }))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.var.cmp(&b.1.var)));
    ranked.into_iter().map(|(_, t)| t).collect()
}

/// The slice of `chosen` (an index of [`sc_ranked`]'s list and whether
/// every communication is kept, or the last one).
pub(super) fn sc_slice(ranked: &[Talk], chosen: &[(usize, bool)]) -> Slice {
    let vars: BTreeSet<String> = chosen.iter().map(|&(k, _)| ranked[k].var.clone()).collect();
    let core = chosen
        .iter()
        .flat_map(|&(k, every)| {
            let t = &ranked[k];
            if every { &t.every } else { &t.last }.iter().copied()
        })
        .collect();
    let what: Vec<String> = chosen
        .iter()
        .map(|&(k, every)| {
            let v = &ranked[k].var;
            if every {
                format!("every access by which two threads communicate on {v}")
            } else {
                format!("the last pair of accesses by which two threads communicate on {v}")
            }
        })
        .collect();
    Slice {
        vars,
        core,
        why: what.join("; "),
    }
}

/// For each access, the reader's gate whose flush it belongs to, if any:
/// the flush runs inside `mem_cgroup_flush_stats()`'s `if` on the gate's
/// load, from the decision to the reader's next `memcg_page_state()` read
/// of an aggregate (a load of `agg` with no lock held) or its next gate.
pub(super) fn arms(accs: &[Acc]) -> Vec<Option<usize>> {
    let mut out = vec![None; accs.len()];
    for (g, gate) in accs.iter().enumerate().filter(|(_, a)| a.gate) {
        let mut held = 0usize;
        for (k, a) in accs.iter().enumerate().skip(g + 1) {
            if a.actor != gate.actor {
                continue;
            }
            let agg_read = a.load && a.var().is_some_and(|v| v == "agg" || v.ends_with("_agg"));
            if a.gate || (agg_read && held == 0) {
                break;
            }
            match a.lock {
                Some(Held::Takes) => held += 1,
                Some(Held::Drops) => held = held.saturating_sub(1),
                None => {}
            }
            out[k] = Some(g);
        }
    }
    out
}

/// What [`window`] keeps: the accesses, the initial values, the slice
/// (grown), and the locks a thread still holds when the trace ends, whose
/// `spin_unlock()` the test adds at the thread's end.
pub(super) struct Kept {
    pub(super) kept: BTreeSet<usize>,
    pub(super) init: BTreeMap<String, i64>,
    pub(super) slice: Slice,
    pub(super) unreleased: Vec<(Actor, String)>,
}

/// The accesses a slice keeps, and the initial values that make them
/// consistent: each thread's accesses to the slice's variables between its
/// first and last core access, widened until every kept load reads either
/// a kept store or the value its variable has before the first kept
/// access, and until every kept access in a reader's flush keeps the gate
/// it runs under; then the lock and unlock around every kept access.
pub(super) fn window(accs: &[Acc], mut slice: Slice, arm: &[Option<usize>]) -> Kept {
    let true_init = initial_values(accs);
    loop {
        let mut bounds: BTreeMap<Actor, (usize, usize)> = BTreeMap::new();
        for &c in &slice.core {
            let b = bounds.entry(accs[c].actor).or_insert((c, c));
            b.0 = b.0.min(c);
            b.1 = b.1.max(c);
        }
        let kept: BTreeSet<usize> = (0..accs.len())
            .filter(|&k| {
                let a = &accs[k];
                bounds
                    .get(&a.actor)
                    .is_some_and(|&(lo, hi)| lo <= k && k <= hi)
                    && !a.is_lock()
                    && a.var().is_none_or(|v| slice.vars.contains(v))
            })
            .collect();
        let mut init = BTreeMap::new();
        for v in &slice.vars {
            let first = kept
                .iter()
                .copied()
                .find(|&k| accs[k].var() == Some(v.as_str()));
            let before = first.and_then(|f| {
                accs[..f]
                    .iter()
                    .rposition(|a| a.var() == Some(v.as_str()) && a.write.is_some())
            });
            let x = match before {
                Some(b) => accs[b].write.unwrap_or(0),
                None => true_init.get(v).copied().unwrap_or(0),
            };
            init.insert(v.clone(), x);
        }
        // A kept load of a value neither the initial one nor a kept
        // store's: keep the store it read (the first store of the
        // variable, if it read the true initial value).
        let mut grown = false;
        for &k in &kept {
            let (Some(v), Some(r)) = (accs[k].var(), accs[k].read) else {
                continue;
            };
            let from_kept = kept
                .iter()
                .any(|&w| w < k && accs[w].var() == Some(v) && accs[w].write == Some(r));
            if from_kept || init.get(v) == Some(&r) {
                continue;
            }
            let need = source(accs, k).or_else(|| {
                accs.iter()
                    .position(|a| a.var() == Some(v) && a.write.is_some())
            });
            if let Some(n) = need {
                grown |= slice.core.insert(n);
            }
        }
        // A kept access of a flush: keep the gate it runs under.
        for &k in &kept {
            if let Some(g) = arm[k] {
                if let Some(v) = accs[g].var() {
                    slice.vars.insert(v.to_string());
                }
                grown |= slice.core.insert(g);
            }
        }
        if grown {
            continue;
        }
        let (locks, unreleased) = critical_sections(accs, &kept);
        let mut kept = kept;
        kept.extend(locks);
        return Kept {
            kept,
            init,
            slice,
            unreleased,
        };
    }
}

/// The lock and unlock statements of every critical section a kept access
/// lies in, and the locks such a section still holds when the trace ends
/// (a flush the violation cut short).
fn critical_sections(
    accs: &[Acc],
    kept: &BTreeSet<usize>,
) -> (BTreeSet<usize>, Vec<(Actor, String)>) {
    let mut out = BTreeSet::new();
    // Per thread, the locks held: (lock, index of its lock statement).
    let mut held: BTreeMap<Actor, Vec<(String, usize)>> = BTreeMap::new();
    let mut open: Vec<(Actor, String, usize)> = Vec::new();
    for (k, a) in accs.iter().enumerate() {
        let h = held.entry(a.actor).or_default();
        match (a.lock, a.var()) {
            (Some(Held::Takes), Some(l)) => h.push((l.to_string(), k)),
            (Some(Held::Drops), Some(l)) => {
                if let Some(p) = h.iter().rposition(|(x, _)| x == l) {
                    let (_, at) = h.remove(p);
                    if let Some(o) = open
                        .iter()
                        .position(|(ac, x, o)| *ac == a.actor && x == l && *o == at)
                    {
                        open.remove(o);
                        out.extend([at, k]);
                    }
                }
            }
            _ if kept.contains(&k) => {
                for (l, at) in h.iter() {
                    if !open
                        .iter()
                        .any(|(ac, x, o)| *ac == a.actor && x == l && o == at)
                    {
                        open.push((a.actor, l.clone(), *at));
                    }
                }
            }
            _ => {}
        }
    }
    // Sections the trace ends inside: the lock is kept, its release added,
    // the last taken first.
    let mut unreleased = Vec::new();
    for (actor, l, at) in open.into_iter().rev() {
        out.insert(at);
        unreleased.push((actor, l));
    }
    (out, unreleased)
}
