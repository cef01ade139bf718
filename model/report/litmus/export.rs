//! Export the core of a trace as an LKMM litmus test (tools/memory-model).
//!
//! The test is the sequence of shared-memory accesses the traced execution
//! performed, one `P<n>` per thread, with an `exists` clause stating the
//! values its loads returned. herd7 then answers whether the Linux-kernel
//! memory model allows that combination of values. The test is a
//! [`Program`], printed by [`Program::render`] in the syntax herd7 parses.
//!
//! The translation reads each step's structured access ([`Step::access`]),
//! never its text, and marks it as the kernel release does
//! ([`crate::kernel::marking`]): a `data_race()` read, a per-CPU operation
//! or the flusher's `+=` of the aggregate is a plain C access, whatever the
//! model runs it as. Where it stops being faithful:
//! - Control flow: a reader's flush runs inside the kernel's `if` on its
//!   gate's load (`mem_cgroup_flush_stats()`), with the condition narrowed
//!   to the value the trace read; the kernel's other tests are not in the
//!   test, only their loads, and each thread runs its traced path.
//! - The property itself is not an LKMM predicate: `no_lost_flush`
//!   compares with a ghost v5.19 threshold, which has no kernel
//!   counterpart.
//! - CPU-local data (`stats_updates` up to v6.7, `U[c]`) and the flusher's
//!   plain fields under `cgroup_rstat_lock` (`state_prev`,
//!   `state_pending`) are left out, as are `jiffies_64` and the delayed
//!   work's timer. Per-CPU counters `state[]` become ordinary shared
//!   variables (`state0`, `state1`, ...) written by their owner with plain
//!   stores of the running sum.
//! - The flusher's own re-read of the aggregate for its `+=` is omitted
//!   (traces leave it out).
//! - main, which runs after every thread has joined, is never a thread
//!   (nor is anything after the joins, such as a settling update main makes
//!   as a CPU): the values read there are final-state conditions (`x=v` in
//!   `exists`), the first read of each variable not written there first.
//! - Pointers are integers, so no address dependency orders anything.
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
//! **Slicing** (`slice.rs`). A trace touching more than
//! [`MAX_VARIABLES`] shared variables is cut down to the accesses that make
//! the outcome:
//! - If some load returned a value other than the last one stored before it
//!   in the trace (a stale load), the test keeps that variable and every
//!   variable on which the two threads communicate between the store the
//!   load missed and the load (a message-passing flag, or a store-buffering
//!   partner), the threads involved, the locks they hold around those
//!   accesses (taken and, if the trace ends first, released at the thread's
//!   end), and their barriers.
//! - Otherwise (a sequentially consistent trace) it keeps the variables two
//!   threads communicate on, latest first, with every access by which they
//!   do.
//! - Either way a kept access of a reader's flush keeps the gate it runs
//!   under, and a variable main read keeps the last store to it.
//!
//! A test that cannot show a race (one thread, or an outcome every SC
//! interleaving gives) is not exported: the error says why. What was left
//! out is named in the test's header.

use std::collections::{BTreeMap, BTreeSet};

use crate::kernel::marking::Release;
use crate::observe::record::{wrap, Step};
use crate::vocab::obs::Actor;

use super::prog::{Cond, Instr, Observation, Program};
use super::slice::{arms, first_stale_load, sc_ranked, sc_slice, weak_slice, window, Kept, Slice};
use super::translate::{accesses, initial_values, Acc, Held, MAX_CANDIDATES, MAX_VARIABLES};

/// What was read after the joins, as final-state conditions: the value of
/// each variable read there before anything written there.
fn finals(accs: &[Acc]) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let mut wrote = BTreeSet::new();
    for a in accs.iter().filter(|a| a.joined) {
        let Some(v) = a.var() else { continue };
        if a.is_lock() {
            continue;
        }
        if let Some(r) = a.read {
            if !wrote.contains(v) {
                out.entry(v.to_string()).or_insert(r);
            }
        }
        if a.write.is_some() {
            wrote.insert(v.to_string());
        }
    }
    out
}

/// The test for `accs`: the whole trace, or the accesses `keep` keeps;
/// `finals` are main's final-state conditions, `arm` the reader's flushes.
fn build(
    name: &str,
    accs: &[Acc],
    keep: Option<&Kept>,
    finals: &BTreeMap<String, i64>,
    arm: &[Option<usize>],
) -> Result<Program, String> {
    let init = match keep {
        Some(k) => k.init.clone(),
        None => initial_values(accs),
    };
    let mut per_actor: BTreeMap<Actor, Vec<usize>> = BTreeMap::new();
    for (k, a) in accs.iter().enumerate() {
        // Barriers are kept in every kept thread, then trimmed below.
        let wanted = keep.is_none_or(|kp| {
            kp.kept.contains(&k)
                || (a.var().is_none() && kp.kept.iter().any(|&x| accs[x].actor == a.actor))
        });
        if wanted {
            per_actor.entry(a.actor).or_default().push(k);
        }
    }
    let unreleased: Vec<(Actor, String)> = match keep {
        Some(k) => k.unreleased.clone(),
        None => held_at_end(accs),
    };
    let mut prog = Program::new(name).expect(Observation::Sometimes);
    let mut p = 0;
    for (actor, list) in per_actor {
        // A barrier orders something only between two kept accesses.
        let first = list.iter().position(|&k| accs[k].var().is_some());
        let last = list.iter().rposition(|&k| accs[k].var().is_some());
        let (Some(first), Some(last)) = (first, last) else {
            continue;
        };
        let mut body: Vec<Instr> = Vec::new();
        // The `if` of the gate being emitted: its index, register, value
        // and the statements it guards.
        let mut open: Option<(usize, usize, i64, Vec<Instr>)> = None;
        let mut reg = 0;
        for &k in &list[first..=last] {
            let a = &accs[k];
            if let Some((g, ..)) = open {
                if arm[k] != Some(g) {
                    close(&mut open, &mut body);
                }
            }
            let mut i = a
                .instr
                .clone()
                .map_err(|why| format!("not exported as a litmus test: {why}"))?;
            let target = match &mut open {
                Some((.., b)) => b,
                None => &mut body,
            };
            if matches!(i, Instr::Fence(_)) && target.last() == Some(&i) {
                continue;
            }
            let mut this_reg = None;
            if let Some(v) = a.reg_val {
                set_reg(&mut i, reg);
                prog.exists.push(Cond::Reg {
                    thread: p,
                    reg,
                    val: v,
                });
                this_reg = Some((reg, v));
                reg += 1;
            }
            target.push(i);
            let guards = list.iter().any(|&x| arm[x] == Some(k));
            if let (true, Some((r, v))) = (guards, this_reg) {
                open = Some((k, r, v, Vec::new()));
            }
        }
        close(&mut open, &mut body);
        for (_, l) in unreleased.iter().filter(|(ac, _)| *ac == actor) {
            body.push(Instr::unlock(l));
        }
        prog = prog.thread(&actor.to_string(), body);
        p += 1;
    }
    let used = prog.types()?;
    let mut quiescent = Vec::new();
    for (var, val) in finals {
        // A variable no thread touches has no place in `exists`.
        if used.contains_key(var) {
            quiescent.push(format!("{var}={val}"));
            prog.exists.push(Cond::Var {
                var: var.clone(),
                val: *val,
            });
        }
    }
    if !quiescent.is_empty() {
        prog.doc.extend(wrap(
            &format!(
                "main runs after joining every thread, so it is no thread here: \
                 the values it read are final-state conditions ({}).",
                quiescent.join(", ")
            ),
            70,
        ));
    }
    if !unreleased.is_empty() {
        let what: Vec<String> = unreleased
            .iter()
            .map(|(a, l)| format!("{a}'s {l}"))
            .collect();
        prog.doc.extend(wrap(
            &format!(
                "The trace ends inside a critical section ({}): the lock is \
                 kept, and its spin_unlock() added at the thread's end.",
                what.join(", ")
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

/// Close the `if` being emitted into `body`.
fn close(open: &mut Option<(usize, usize, i64, Vec<Instr>)>, body: &mut Vec<Instr>) {
    if let Some((_, reg, val, guarded)) = open.take() {
        if !guarded.is_empty() {
            body.push(Instr::If {
                reg,
                eq: true,
                val,
                body: guarded,
            });
        }
    }
}

/// The locks each thread still holds when the trace ends.
fn held_at_end(accs: &[Acc]) -> Vec<(Actor, String)> {
    let mut held: BTreeMap<Actor, Vec<String>> = BTreeMap::new();
    for a in accs {
        let (Some(l), Some(h)) = (a.var(), a.lock) else {
            continue;
        };
        let list = held.entry(a.actor).or_default();
        match h {
            Held::Takes => list.push(l.to_string()),
            Held::Drops => {
                if let Some(p) = list.iter().rposition(|x| x == l) {
                    list.remove(p);
                }
            }
        }
    }
    held.into_iter()
        .flat_map(|(a, ls)| ls.into_iter().rev().map(move |l| (a, l)))
        .collect()
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

/// The header lines every export carries: control flow, and how each
/// access is marked.
fn generated_note(
    prog: &mut Program,
    accs: &[Acc],
    kept: Option<&BTreeSet<usize>>,
    release: &Release,
) {
    let gated = prog
        .threads
        .iter()
        .any(|t| t.body.iter().any(|i| matches!(i, Instr::If { .. })));
    let mut text = String::from("Generated from a flushcheck trace. ");
    if gated {
        text += "A reader's flush runs inside the kernel's `if` on its gate's \
                 load (mem_cgroup_flush_stats()), the condition narrowed to the \
                 value the trace read; the kernel's other tests ";
    } else {
        text += "The kernel's tests ";
    }
    text += "are not here, only their loads, and each thread runs its traced \
             path. Pointers are integers, so no address dependency orders \
             anything.";
    prog.doc.extend(wrap(&text, 70));
    let mut sites: Vec<String> = Vec::new();
    let mut own: Vec<String> = Vec::new();
    for (k, a) in accs.iter().enumerate() {
        if kept.is_some_and(|kp| !kp.contains(&k)) || a.joined || a.is_lock() {
            continue;
        }
        let Some(v) = a.var() else { continue };
        let line = match a.site {
            Some(s) => format!("{}, {v}: {}, {}, {}", a.actor, s.spelling, s.func, s.at),
            None => format!("{}'s {v}", a.actor),
        };
        let list = if a.site.is_some() {
            &mut sites
        } else {
            &mut own
        };
        if !list.contains(&line) {
            list.push(line);
        }
    }
    prog.doc.extend(wrap(
        &format!("Marking, as {} marks it:", release.covers),
        70,
    ));
    for s in &sites {
        let mut lines = wrap(s, 66).into_iter();
        if let Some(first) = lines.next() {
            prog.doc.push(format!("  {first}"));
        }
        prog.doc.extend(lines.map(|l| format!("    {l}")));
    }
    if !own.is_empty() {
        prog.doc.extend(wrap(
            &format!(
                "No kernel site (the variant's own code, as the model runs it): {}.",
                own.join(", ")
            ),
            70,
        ));
    }
}

/// The test of a trace that cannot show a race: why it is not exported.
fn lost(prog: &Program, what: &str) -> Result<Program, String> {
    if prog.threads.len() >= 2 {
        return Ok(prog.clone());
    }
    let who: Vec<&str> = prog.threads.iter().map(|t| t.note.as_str()).collect();
    Err(format!(
        "not exported as a litmus test: {what} keeps {} thread ({}), which cannot \
         show the race the violation needs (main, which runs after the joins, is \
         final-state conditions, not a thread)",
        prog.threads.len(),
        who.join(", ")
    ))
}

/// The litmus test of `steps` as a [`Program`], each access marked as
/// `release` marks it, sliced if the trace touches more than
/// [`MAX_VARIABLES`] data variables or its test would have more than
/// [`MAX_CANDIDATES`] candidate executions; or why none.
pub fn program(name: &str, steps: &[Step], release: &Release) -> Result<Program, String> {
    let all = accesses(steps, release);
    let fin = finals(&all);
    let accs: Vec<Acc> = all.into_iter().filter(|a| !a.joined).collect();
    let arm = arms(&accs);
    let data: BTreeSet<&str> = accs
        .iter()
        .filter(|a| !a.is_lock())
        .filter_map(Acc::var)
        .collect();
    if data.len() <= MAX_VARIABLES {
        let mut prog = build(name, &accs, None, &fin, &arm)?;
        if prog.candidates() <= MAX_CANDIDATES {
            generated_note(&mut prog, &accs, None, release);
            return lost(&prog, "the trace");
        }
    }
    if let Some(slice) = weak_slice(&accs) {
        let prog = sliced(name, &accs, slice, &fin, &arm, release)?;
        return lost(&prog, "the slice");
    }
    // The variables two threads communicate on, latest first, each taken
    // with its last communication if herd7 can still run the test in
    // about a second; then each with every communication, where that
    // still holds.
    let ranked = sc_ranked(&accs);
    let mut chosen: Vec<(usize, bool)> = Vec::new();
    let mut best: Option<Program> = None;
    // A choice whose test cannot be written (no load left for `exists`,
    // an access with no faithful statement) is skipped; the last such
    // reason is the error if no choice can be.
    let mut why: Option<String> = None;
    let mut fits = |trial: &[(usize, bool)], best: &mut Option<Program>| -> bool {
        match sliced(name, &accs, sc_slice(&ranked, trial), &fin, &arm, release) {
            Ok(prog) => {
                let ok = prog.candidates() <= MAX_CANDIDATES || best.is_none();
                if ok {
                    *best = Some(prog);
                }
                ok
            }
            Err(e) => {
                why = Some(e);
                false
            }
        }
    };
    for k in 0..ranked.len() {
        if chosen.len() == MAX_VARIABLES {
            break;
        }
        let mut trial = chosen.clone();
        trial.push((k, false));
        if fits(&trial, &mut best) {
            chosen = trial;
        }
    }
    for c in 0..chosen.len() {
        let mut trial = chosen.clone();
        trial[c].1 = true;
        if fits(&trial, &mut best) {
            chosen = trial;
        }
    }
    match (best, why) {
        (Some(prog), _) => lost(&prog, "the slice"),
        (None, Some(e)) => Err(e),
        (None, None) => Err(
            "not exported as a litmus test: no two threads of the trace communicate \
             through shared memory"
                .into(),
        ),
    }
}

/// The header's data-race lines, and `DATARACE` on the `Result:` line,
/// for the plain accesses of `prog` that race ([`super::herd::plain_races`],
/// which may name more races than herd7 flags, never fewer).
fn note_races(prog: &mut Program, release: &Release) {
    let races = super::herd::race_note(prog, release);
    prog.datarace = !races.is_empty();
    if !races.is_empty() {
        prog.doc.push(String::new());
        prog.doc.extend(races);
    }
}

fn sliced(
    name: &str,
    accs: &[Acc],
    mut slice: Slice,
    fin: &BTreeMap<String, i64>,
    arm: &[Option<usize>],
    release: &Release,
) -> Result<Program, String> {
    // A variable main read: the store it read is the last one.
    for v in fin.keys().filter(|v| slice.vars.contains(*v)) {
        if let Some(s) = accs
            .iter()
            .rposition(|a| a.var() == Some(v.as_str()) && a.write.is_some())
        {
            slice.core.insert(s);
        }
    }
    let kept = window(accs, slice, arm);
    let mut prog = build(name, accs, Some(&kept), fin, arm)?;
    generated_note(&mut prog, accs, Some(&kept.kept), release);
    let all: BTreeSet<&str> = accs.iter().filter_map(Acc::var).collect();
    let kept_vars: BTreeSet<&str> = kept.kept.iter().filter_map(|&k| accs[k].var()).collect();
    let left: Vec<&str> = all.difference(&kept_vars).copied().collect();
    let actors: BTreeSet<Actor> = accs.iter().map(|a| a.actor).collect();
    let kept_actors: BTreeSet<Actor> = kept.kept.iter().map(|&k| accs[k].actor).collect();
    let dropped: Vec<String> = actors
        .difference(&kept_actors)
        .map(Actor::to_string)
        .collect();
    let mut note = format!(
        "Sliced: the trace touches {} shared variables; this keeps {}, each \
         thread's accesses to them between the first and the last that \
         matter, the locks held around those, and the values the variables \
         had before (the initial state)",
        all.len(),
        kept.slice.why,
    );
    if !left.is_empty() {
        note += &format!("; left out: {}", left.join(", "));
    }
    if !dropped.is_empty() {
        note += &format!("; threads left out: {}", dropped.join(", "));
    }
    note += ".";
    prog.doc.extend(wrap(&note, 70));
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
/// outcomes)`), and its observation (`None`: not measured, the line says
/// why).
pub fn sc_verdict(prog: &Program) -> (String, Option<Observation>) {
    let budget = std::time::Duration::from_secs(20);
    match super::run::measure(prog, &sc_backend(), budget) {
        Ok(m) if m.finished => {
            let o = m.observation(&prog.target());
            let line = format!(
                "{SC_LINE} {o} ({} executions, {} outcomes)",
                m.executions,
                m.outcomes.len()
            );
            (line, Some(o))
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

/// The litmus test for `steps`, each access marked as `release` marks it,
/// or why none is exported. Its header states whether the outcome is
/// reachable under SC (the project's own DFS of the exported test): only
/// an SC-forbidden outcome LKMM allows is a weak-memory result. A test
/// whose outcome every SC interleaving gives shows no race: not exported.
pub fn export(name: &str, steps: &[Step], release: &Release) -> Result<String, String> {
    let mut prog = program(name, steps, release)?;
    note_races(&mut prog, release);
    let (line, sc) = sc_verdict(&prog);
    if sc == Some(Observation::Always) {
        return Err(format!(
            "not exported as a litmus test: every SC interleaving of the test gives \
             the traced outcome ({}), so it keeps none of the race the violation needs",
            line.trim_start_matches(SC_LINE).trim()
        ));
    }
    let stale = first_stale_load(&accesses(steps, release)).is_some();
    let what = match sc {
        Some(Observation::Sometimes) if stale => {
            "The outcome is reachable under SC: this test shows the trace's \
             values, not weak memory, and herd7's Sometimes says no more; the \
             trace has a stale load, but this test could not keep what made \
             it weak-memory only."
        }
        Some(Observation::Sometimes) => {
            "The outcome is reachable under SC: this test shows the trace's \
             values, not weak memory, and herd7's Sometimes says no more."
        }
        Some(_) => {
            "The outcome is forbidden under SC: if herd7 answers Sometimes, \
             LKMM allows what SC forbids, a weak-memory result."
        }
        None => "Whether SC reaches the outcome was not measured.",
    };
    let mut head = wrap(
        "The Result above states the values flushcheck observed, not an \
         LKMM expectation: herd7 answers whether LKMM allows them.",
        70,
    );
    head.push(line);
    head.extend(wrap(what, 70));
    head.push(String::new());
    prog.doc.splice(0..0, head);
    prog.render()
}
