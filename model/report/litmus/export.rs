//! Export the core of a trace as an LKMM litmus test (tools/memory-model).
//!
//! The test is the straight-line sequence of shared-memory accesses the
//! traced execution performed, one `P<n>` per thread, with an `exists`
//! clause stating the values its loads returned. herd7 then answers whether
//! the Linux-kernel memory model allows that combination of values. The
//! test is a [`Program`], printed by [`Program::render`] in the syntax herd7
//! parses.
//!
//! The translation reads each step's structured access ([`Step::access`]),
//! never its text. Where it stops being faithful:
//! - Control flow is fixed to the traced path: the `if threshold > n` tests
//!   and the skip decision are not in the test, only their loads. herd7
//!   checks that the observed loads are allowed, not what the C code would
//!   do with other values.
//! - The property itself is not an LKMM predicate: `no_lost_flush` compares
//!   with a ghost v5.19 threshold, which has no kernel counterpart.
//! - CPU-local data (`stats_updates`, `U[c]`, and any other `this_cpu`
//!   counter but `state[]`) and the flusher's plain fields under
//!   `cgroup_rstat_lock` (`state_prev`, `state_pending`) are left out, as
//!   are `jiffies_64` and the delayed work's timer. Per-CPU counters
//!   `state[]` become ordinary shared variables (`state0`, `state1`, ...)
//!   written with plain stores by their owner, so the owner's
//!   `__this_cpu_add` (a per-CPU operation, not atomic against other CPUs)
//!   is a plain store of the running sum; v6.17's `this_cpu_add_return` and
//!   `this_cpu_xchg` of `stats_updates` are plain too.
//! - The aggregate's `+=` under the lock is a plain store of the new value;
//!   the flusher's own re-read of it is omitted (traces leave it out).
//!   herd7 flags the races these plain accesses have; the header names
//!   them and why the kernel has them ([`super::herd::race_note`]).
//! - Dependency ordering is absent by design: paths are fixed and pointers
//!   are integers, so no address, data or control dependency orders
//!   anything.
//! - The header states whether the outcome is reachable under SC (the
//!   project's DFS of the exported test, [`sc_verdict`]): only an
//!   SC-forbidden outcome LKMM allows is a weak-memory result.
//! - Initial values are inferred: a value a load returned that no store
//!   before it in the trace wrote is the variable's initial value (the
//!   model starts `flush_next_time` at -1, the llist heads at 1, NULL).
//!
//! Names are the model's, independent of the kernel version: `state0` is
//! CPU 0's counter of the root, `m1_thr` memcg 1's threshold (`stats_flush_
//! threshold` up to v6.7, `vmstats->stats_updates` from v6.8), and so on.
//!
//! **Slicing.** A trace touching more than [`MAX_VARIABLES`] shared
//! variables is cut down to the accesses that make the outcome:
//! - If some load returned a value other than the last one stored before it
//!   in the trace (a stale load), the test keeps that
//!   variable and every variable on which the two threads communicate
//!   between the store the load missed and the load (a message-passing
//!   flag, or a store-buffering partner), the threads involved, the locks
//!   they hold around those accesses, and their barriers.
//! - Otherwise (a sequentially consistent trace) it keeps the variables
//!   one thread last read from another's store, latest first.
//!
//! What was left out is named in the test's header.

use std::collections::{BTreeMap, BTreeSet};

use crate::observe::record::Step;
use crate::vocab::obs::Actor;

use super::prog::{Instr, Observation, Program};
use super::translate::{accesses, initial_values, Acc, Held, MAX_CANDIDATES, MAX_VARIABLES};

/// The store a load at `i` read from: the position of the latest store
/// before it of the value it returned (`None`: the initial value).
fn source(accs: &[Acc], i: usize) -> Option<usize> {
    let (v, val) = (accs[i].var(), accs[i].read);
    accs[..i]
        .iter()
        .rposition(|a| a.var() == v && a.write.is_some() && a.write == val)
}

/// Whether `a` then `b` (another thread's accesses to one variable) are a
/// communication: `b` reads `a`'s store (rf), `b` overwrites the value `a`
/// read (fr), or `b` overwrites `a`'s store (co).
fn communicates(accs: &[Acc], ia: usize, ib: usize) -> bool {
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
fn first_stale_load(accs: &[Acc]) -> Option<(usize, usize)> {
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
struct Slice {
    vars: BTreeSet<String>,
    core: BTreeSet<usize>,
    why: String,
}

/// The race of the first stale load, if there is one:
/// the load, the store it missed, and every pair of accesses by which the
/// storing thread, after its store, communicates with the loading thread
/// before its load (a message-passing flag, a store-buffering partner).
fn weak_slice(accs: &[Acc]) -> Option<Slice> {
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

/// The variables one thread last read from another thread's store, latest
/// first, at most `most` of them, with those loads and stores.
fn sc_slice(accs: &[Acc], most: usize) -> Slice {
    let mut last: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (i, a) in accs.iter().enumerate() {
        if a.is_lock() || a.read.is_none() {
            continue;
        }
        if let Some(s) = source(accs, i).filter(|&s| accs[s].actor != a.actor) {
            last.insert(a.var().unwrap_or_default().to_string(), (i, s));
        }
    }
    let mut ranked: Vec<((usize, usize), String)> =
        last.into_iter().map(|(v, is)| (is, v)).collect();
    ranked.sort_by(|a, b| b.cmp(a));
    ranked.truncate(most);
    let vars: BTreeSet<String> = ranked.iter().map(|(_, v)| v.clone()).collect();
    let core = ranked.iter().flat_map(|((i, s), _)| [*i, *s]).collect();
    let why = format!(
        "the last load from another thread's store of each of {}",
        vars.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    Slice { vars, core, why }
}

/// The accesses a slice keeps, and the initial values that make them
/// consistent: each thread's accesses to the slice's variables between its
/// first and last core access, widened until every kept load reads either
/// a kept store or the value its variable has before the first kept
/// access; then the lock and unlock around every kept access.
fn window(accs: &[Acc], mut slice: Slice) -> (BTreeSet<usize>, BTreeMap<String, i64>, Slice) {
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
        if grown {
            continue;
        }
        let mut kept = kept;
        kept.extend(critical_sections(accs, &kept));
        return (kept, init, slice);
    }
}

/// The lock and unlock statements of every critical section a kept access
/// lies in.
fn critical_sections(accs: &[Acc], kept: &BTreeSet<usize>) -> BTreeSet<usize> {
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
                    if open
                        .iter()
                        .any(|(ac, x, o)| *ac == a.actor && x == l && *o == at)
                    {
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
    out
}

/// The test for `accs`: the whole trace, or the accesses `kept` with
/// initial values `init`.
fn build(
    name: &str,
    accs: &[Acc],
    keep: Option<(&BTreeSet<usize>, &BTreeMap<String, i64>)>,
) -> Result<Program, String> {
    let init = match keep {
        Some((_, init)) => init.clone(),
        None => initial_values(accs),
    };
    let mut per_actor: BTreeMap<Actor, Vec<&Acc>> = BTreeMap::new();
    for (k, a) in accs.iter().enumerate() {
        // Barriers are kept in every kept thread, then trimmed below.
        let wanted = keep.is_none_or(|(kept, _)| {
            kept.contains(&k)
                || (a.var().is_none() && kept.iter().any(|&x| accs[x].actor == a.actor))
        });
        if wanted {
            per_actor.entry(a.actor).or_default().push(a);
        }
    }
    let mut prog = Program::new(name).expect(Observation::Sometimes);
    let mut p = 0;
    // main runs after every thread has joined: reads only, it becomes
    // LKMM's final-state condition (`x=v`), not one more thread.
    let mut finals: BTreeMap<String, i64> = BTreeMap::new();
    if let Some(list) = per_actor.get(&Actor::Main) {
        let quiescent = list.iter().all(|a| {
            a.var().is_none() || (matches!(a.instr, Ok(Instr::Load { .. })) && a.reg_val.is_some())
        });
        if quiescent {
            for a in list.iter() {
                if let (Some(v), Some(x)) = (a.var(), a.reg_val) {
                    finals.insert(v.to_string(), x);
                }
            }
            per_actor.remove(&Actor::Main);
        }
    }
    for (actor, list) in per_actor {
        // A barrier orders something only between two kept accesses.
        let first = list.iter().position(|a| a.var().is_some());
        let last = list.iter().rposition(|a| a.var().is_some());
        let (Some(first), Some(last)) = (first, last) else {
            continue;
        };
        let mut body: Vec<Instr> = Vec::new();
        let mut reg = 0;
        for a in &list[first..=last] {
            let mut i = a
                .instr
                .clone()
                .map_err(|why| format!("not exported as a litmus test: {why}"))?;
            if matches!(i, Instr::Fence(_)) && body.last() == Some(&i) {
                continue;
            }
            if let Some(v) = a.reg_val {
                set_reg(&mut i, reg);
                prog.exists.push(super::prog::Cond::Reg {
                    thread: p,
                    reg,
                    val: v,
                });
                reg += 1;
            }
            body.push(i);
        }
        prog = prog.thread(&actor.to_string(), body);
        p += 1;
    }
    let used = prog.types()?;
    let mut quiescent = Vec::new();
    for (var, val) in finals {
        // A variable no thread touches has no place in `exists`.
        if used.contains_key(&var) {
            quiescent.push(format!("{var}={val}"));
            prog.exists.push(super::prog::Cond::Var { var, val });
        }
    }
    if !quiescent.is_empty() {
        prog.doc.extend(crate::observe::record::wrap(
            &format!(
                "main's reads after joining every thread are final-state \
                 conditions ({}), not one more thread.",
                quiescent.join(", ")
            ),
            70,
        ));
    }
    for (v, x) in init {
        if used.contains_key(&v) && x != 0 {
            prog.init.insert(v, x);
        }
    }
    if prog.exists.is_empty() {
        return Err(
            "not exported as a litmus test: the trace has no shared-memory load for `exists` to state"
                .into(),
        );
    }
    Ok(prog)
}

fn set_reg(i: &mut Instr, r: usize) {
    match i {
        Instr::Load { reg, .. }
        | Instr::AtomicAddReturn { reg, .. }
        | Instr::Xchg { reg, .. }
        | Instr::Cmpxchg { reg, .. }
        | Instr::Trylock { reg, .. }
        | Instr::IsLocked { reg, .. } => *reg = r,
        _ => {}
    }
}

/// The header lines every export carries.
fn generated_note(prog: &mut Program) {
    prog.doc.extend(crate::observe::record::wrap(
        "Generated from a flushcheck trace: each thread's path is fixed to the traced \
         one (the C code's tests are not here, only their loads), so no \
         address, data or control dependency orders anything (absent by \
         design: paths are fixed, pointers are integers).",
        70,
    ));
}

/// The litmus test of `steps` as a [`Program`], sliced if the trace
/// touches more than [`MAX_VARIABLES`] data variables or its test would
/// have more than [`MAX_CANDIDATES`] candidate executions; or why none.
pub fn program(name: &str, steps: &[Step]) -> Result<Program, String> {
    let accs = accesses(steps);
    let data: BTreeSet<&str> = accs
        .iter()
        .filter(|a| !a.is_lock())
        .filter_map(Acc::var)
        .collect();
    if data.len() <= MAX_VARIABLES {
        let mut prog = build(name, &accs, None)?;
        if prog.candidates() <= MAX_CANDIDATES {
            generated_note(&mut prog);
            return Ok(prog);
        }
    }
    if let Some(slice) = weak_slice(&accs) {
        return sliced(name, &accs, slice);
    }
    // Fewer variables until herd7 can run the test in about a second.
    let mut most = MAX_VARIABLES;
    loop {
        let prog = sliced(name, &accs, sc_slice(&accs, most))?;
        if prog.candidates() <= MAX_CANDIDATES || most == 1 {
            return Ok(prog);
        }
        most -= 1;
    }
}

fn sliced(name: &str, accs: &[Acc], slice: Slice) -> Result<Program, String> {
    let (kept, init, slice) = window(accs, slice);
    let mut prog = build(name, accs, Some((&kept, &init)))?;
    generated_note(&mut prog);
    let all: BTreeSet<&str> = accs.iter().filter_map(Acc::var).collect();
    let kept_vars: BTreeSet<&str> = kept.iter().filter_map(|&k| accs[k].var()).collect();
    let left: Vec<&str> = all.difference(&kept_vars).copied().collect();
    let actors: BTreeSet<Actor> = accs.iter().map(|a| a.actor).collect();
    let kept_actors: BTreeSet<Actor> = kept.iter().map(|&k| accs[k].actor).collect();
    let dropped: Vec<String> = actors
        .difference(&kept_actors)
        .map(Actor::to_string)
        .collect();
    let mut note = format!(
        "Sliced: the trace touches {} shared variables; this keeps {}, each \
         thread's accesses to them between the first and the last that \
         matter, the locks held around those, and the values the variables \
         had before (the initial state); left out: {}",
        all.len(),
        slice.why,
        left.join(", ")
    );
    if !dropped.is_empty() {
        note += &format!("; threads left out: {}", dropped.join(", "));
    }
    note += ".";
    prog.doc.extend(crate::observe::record::wrap(&note, 70));
    Ok(prog)
}

/// Every sequentially consistent interleaving (shuttle's DFS, sleep sets).
pub fn sc_backend() -> crate::explore::Backend {
    crate::explore::Backend::ShuttleDfs {
        max_schedules: 1_000_000,
        sleep_sets: true,
        stateful: false,
        symmetry: false,
        workers: 1,
    }
}

/// The header line an export starts its SC verdict with.
pub const SC_LINE: &str = "every SC interleaving (DFS):";

/// `prog` run over every SC interleaving, in the words of the corpus's
/// headers (`every SC interleaving (DFS): Never (9 executions, 3
/// outcomes)`), and whether its outcome is SC-reachable (`None`: not
/// measured, the line says why).
pub fn sc_verdict(prog: &Program) -> (String, Option<bool>) {
    let budget = std::time::Duration::from_secs(20);
    match super::run::measure(prog, &sc_backend(), budget) {
        Ok(m) if m.finished => {
            let o = m.observation(&prog.target());
            let line = format!(
                "{SC_LINE} {o} ({} executions, {} outcomes)",
                m.executions,
                m.outcomes.len()
            );
            (line, Some(o != Observation::Never))
        }
        Ok(m) => (
            format!(
                "{SC_LINE} not finished in 20 s ({} executions)",
                m.executions
            ),
            None,
        ),
        Err(e) => (format!("{SC_LINE} not run: {e}"), None),
    }
}

/// The litmus test for `steps`, or why none is exported. Its header
/// states whether the outcome is reachable under SC (the project's own
/// DFS of the exported test): only an SC-forbidden outcome LKMM allows is
/// a weak-memory result.
pub fn export(name: &str, steps: &[Step]) -> Result<String, String> {
    let mut prog = program(name, steps)?;
    let (line, reachable) = sc_verdict(&prog);
    let stale = first_stale_load(&accesses(steps)).is_some();
    let what = match reachable {
        Some(true) if stale => {
            "The outcome is reachable under SC: this test shows the trace's \
             values, not weak memory, and herd7's Sometimes says no more; the \
             trace has a stale load, but this test could not keep what made \
             it weak-memory only."
        }
        Some(true) => {
            "The outcome is reachable under SC: this test shows the trace's \
             values, not weak memory, and herd7's Sometimes says no more."
        }
        Some(false) => {
            "The outcome is forbidden under SC: if herd7 answers Sometimes, \
             LKMM allows what SC forbids, a weak-memory result."
        }
        None => "Whether SC reaches the outcome was not measured.",
    };
    let mut head = crate::observe::record::wrap(
        "The Result above states the values flushcheck observed, not an \
         LKMM expectation: herd7 answers whether LKMM allows them.",
        70,
    );
    head.push(line);
    head.extend(crate::observe::record::wrap(what, 70));
    head.push(String::new());
    let races = super::herd::race_note(&prog);
    if !races.is_empty() {
        head.extend(races);
        head.push(String::new());
    }
    prog.doc.splice(0..0, head);
    prog.render()
}
