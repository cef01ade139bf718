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
//!   written with `WRITE_ONCE` by their owner, so the owner's
//!   `__this_cpu_add` is a store of the running sum.
//! - The aggregate's `+=` under the lock is a `WRITE_ONCE` of the new value;
//!   the flusher's own re-read of it is omitted (traces leave it out).
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
//!   in the trace (a load only weak memory allows), the test keeps that
//!   variable and every variable on which the two threads communicate
//!   between the store the load missed and the load (a message-passing
//!   flag, or a store-buffering partner), the threads involved, the locks
//!   they hold around those accesses, and their barriers.
//! - Otherwise (a sequentially consistent trace) it keeps the variables
//!   one thread last read from another's store, latest first.
//!
//! What was left out is named in the test's header.

use std::collections::{BTreeMap, BTreeSet};

use crate::observe::obs::{Access, Actor, Idiom, LockName, Op, Var};
use crate::observe::record::Step;

use super::litmus_prog::{Fence, Instr, Load, Observation, Program, Store};

/// The most shared data variables a test keeps (locks are extra).
pub const MAX_VARIABLES: usize = 4;

/// The most candidate executions ([`Program::candidates`]) a test of a
/// sequentially consistent trace may have: herd7 enumerates every one, and
/// 10^4 of them take it about a second (5 * 10^7 took four minutes).
pub const MAX_CANDIDATES: f64 = 1e4;

/// The litmus name of `var`, or `None` for what the test leaves out.
fn c_name(var: Var) -> Option<String> {
    // Memcgs other than the root get a prefix, so names stay identifiers.
    let m = |memcg: u8| {
        if memcg == 0 {
            String::new()
        } else {
            format!("m{memcg}_")
        }
    };
    let om = |memcg: Option<u8>| memcg.map_or(String::new(), m);
    Some(match var {
        Var::State { memcg, cpu } => format!("{}state{cpu}", m(memcg)),
        Var::Aggregate { memcg } => format!("{}agg", m(memcg)),
        Var::Threshold { memcg } => format!("{}thr", om(memcg)),
        Var::Lock(LockName::StatsFlushLock) => "flush_lock".into(),
        Var::Lock(LockName::CgroupRstatLock) => "rstat_lock".into(),
        Var::Lock(LockName::StatsFlushOngoing) => "ongoing".into(),
        Var::Lock(LockName::Other(name)) => name.into(),
        Var::FlushTime => "flush_next_time".into(),
        Var::UpdatedNext { memcg, cpu } => format!("{}updated_next{cpu}", m(memcg)),
        Var::LlistNode { memcg, cpu } => format!("{}lnode_next{cpu}", m(memcg)),
        Var::LlistHead { cpu } => format!("lhead_first{cpu}"),
        Var::Css { memcg, field } => format!("{}{field}", m(memcg)),
        Var::Other { name, cpu: None } => name.into(),
        Var::Other { name, cpu: Some(c) } => format!("{name}{c}"),
        // v6.8 on: written remotely by the flusher, so shared.
        Var::StatsUpdates {
            memcg: Some(memcg),
            cpu,
        } => format!("{}updates{cpu}", m(memcg)),
        Var::StatePrev { .. }
        | Var::Pending { .. }
        | Var::StatsUpdates { memcg: None, .. }
        | Var::Jiffies
        | Var::Dwork
        | Var::Flushing => return None,
    })
}

/// What a lock statement does to the locks its thread holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    Takes,
    Drops,
}

/// One access of the trace, translated.
#[derive(Clone)]
struct Acc {
    actor: Actor,
    /// The litmus variable (`None`: a barrier).
    var: Option<String>,
    /// The statement (registers are numbered when the test is built), or
    /// why this access has no faithful statement.
    instr: Result<Instr, String>,
    /// The value the statement puts in its register.
    reg_val: Option<i64>,
    /// The value the access read (loads and RMWs), for initial values.
    read: Option<i64>,
    /// The value it wrote.
    write: Option<i64>,
    /// Whether it is a plain load (a candidate for a stale read).
    load: bool,
    lock: Option<Held>,
}

impl Acc {
    fn var(&self) -> Option<&str> {
        self.var.as_deref()
    }

    /// Whether the access is to a lock (`spinlock_t`).
    fn is_lock(&self) -> bool {
        matches!(
            self.instr,
            Ok(Instr::Lock(_) | Instr::Unlock(_) | Instr::Trylock { .. } | Instr::IsLocked { .. })
        )
    }
}

/// The translation of one access by `actor`; `None` for accesses the test
/// leaves out.
fn translate(actor: Actor, a: Access) -> Option<Acc> {
    let fence = |f| Acc {
        actor,
        var: None,
        instr: Ok(Instr::Fence(f)),
        reg_val: None,
        read: None,
        write: None,
        load: false,
        lock: None,
    };
    match a.idiom {
        Idiom::SmpMb => return Some(fence(Fence::Mb)),
        Idiom::SmpRmb => return Some(fence(Fence::Rmb)),
        Idiom::SmpWmb => return Some(fence(Fence::Wmb)),
        _ => {}
    }
    let name = c_name(a.var)?;
    let mut acc = Acc {
        actor,
        var: Some(name.clone()),
        instr: Err(String::new()),
        reg_val: None,
        read: a.op.read(),
        write: a.op.written(),
        load: false,
        lock: None,
    };
    let this_cpu = matches!(
        a.idiom,
        Idiom::ThisCpuAdd
            | Idiom::ThisCpuAddReturn
            | Idiom::ThisCpuRead
            | Idiom::ThisCpuWrite
            | Idiom::ThisCpuXchg
    );
    let shared_pcpu = matches!(a.var, Var::StatsUpdates { memcg: Some(_), .. });
    if this_cpu && !shared_pcpu {
        let Var::State { cpu, .. } = a.var else {
            // CPU-local: no other thread can observe it.
            return None;
        };
        if actor != Actor::Cpu(cpu.into()) {
            acc.instr = Err(format!(
                "{actor} used a this_cpu operation on {}, CPU {cpu}'s counter",
                a.var
            ));
            return Some(acc);
        }
        // The owner is the only writer: its own reads are determined, and
        // its updates are stores of the running value.
        let v = a.op.written()?;
        acc.instr = Ok(Instr::write_once(&name, v));
        return Some(acc);
    }
    let with_reg = |acc: &mut Acc, i: Instr, v: i64| {
        acc.instr = Ok(i);
        acc.reg_val = Some(v);
    };
    let n = name.as_str();
    match (a.idiom, a.op) {
        (Idiom::AtomicRead, Op::Read(x)) => {
            with_reg(&mut acc, Instr::atomic_read(n, 0), x);
            acc.load = true;
        }
        (Idiom::AtomicSet, Op::Write(x)) => acc.instr = Ok(Instr::atomic_set(n, x)),
        (Idiom::AtomicAdd, Op::Add { val, .. }) => acc.instr = Ok(Instr::atomic_add(n, val)),
        (Idiom::AtomicXchg, Op::Xchg { old, new }) => {
            with_reg(&mut acc, Instr::atomic_xchg(n, new, 0), old)
        }
        (Idiom::AtomicCmpxchg | Idiom::Cmpxchg, Op::CmpXchg { old, new, ok: true }) => {
            with_reg(&mut acc, Instr::cmpxchg(n, old, new, 0), old)
        }
        (Idiom::AtomicCmpxchg | Idiom::Cmpxchg, Op::CmpXchg { ok: false, .. }) => {
            acc.instr = Err(format!(
                "{actor}'s cmpxchg on {} failed, and the trace does not record the value it expected",
                a.var
            ))
        }
        (Idiom::ReadOnce, Op::Read(x)) => {
            with_reg(&mut acc, Instr::read_once(n, 0), x);
            acc.load = true;
        }
        (Idiom::LoadAcquire, Op::Read(x)) => {
            with_reg(&mut acc, Instr::load_acquire(n, 0), x);
            acc.load = true;
        }
        (Idiom::StoreRelease, Op::Write(x)) => acc.instr = Ok(Instr::store_release(n, x)),
        // v6.17's this_cpu_add_return/this_cpu_xchg against the flusher's
        // remote store: a load and a store (see kernel::percpu).
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Read(x)) => {
            with_reg(&mut acc, Instr::read_once(n, 0), x);
            acc.load = true;
        }
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Write(x)) => {
            acc.instr = Ok(Instr::write_once(n, x))
        }
        // A spin_lock that had to wait: its successful attempt follows.
        (Idiom::SpinLock, Op::CmpXchg { ok: false, .. }) => return None,
        (Idiom::Plain, Op::Read(x)) => {
            let i = Instr::Load {
                load: Load::Plain,
                var: name.clone(),
                reg: 0,
            };
            with_reg(&mut acc, i, x);
            acc.load = true;
        }
        // The aggregate's `+=` under the lock is read locklessly.
        (_, Op::Write(x)) if matches!(a.var, Var::Aggregate { .. }) => {
            acc.instr = Ok(Instr::write_once(n, x))
        }
        (Idiom::WriteOnce, Op::Write(x)) => acc.instr = Ok(Instr::write_once(n, x)),
        // A plain C store: herd7 reports a data race if two are unordered.
        (Idiom::Plain, Op::Write(x)) => {
            acc.instr = Ok(Instr::Store {
                store: Store::Plain,
                var: name.clone(),
                val: x,
            })
        }
        (Idiom::SpinTrylock, Op::CmpXchg { ok, .. }) => {
            let i = Instr::Trylock {
                var: name.clone(),
                reg: 0,
            };
            with_reg(&mut acc, i, i64::from(ok));
            acc.lock = ok.then_some(Held::Takes);
            acc.read = None;
            acc.write = None;
        }
        (Idiom::SpinLock, _) => {
            acc.instr = Ok(Instr::lock(n));
            acc.lock = Some(Held::Takes);
            acc.read = None;
            acc.write = None;
        }
        (Idiom::SpinUnlock, _) => {
            acc.instr = Ok(Instr::unlock(n));
            acc.lock = Some(Held::Drops);
            acc.read = None;
            acc.write = None;
        }
        (Idiom::SpinIsLocked, Op::Read(x)) => {
            let i = Instr::IsLocked {
                var: name.clone(),
                reg: 0,
            };
            with_reg(&mut acc, i, i64::from(x != 0));
            acc.read = None;
        }
        (idiom, op) => {
            acc.instr = Err(format!(
                "no LKMM form for {actor}'s {idiom:?} {op:?} on {}",
                a.var
            ))
        }
    }
    Some(acc)
}

/// Every access of `steps` the test can speak of, in trace order.
fn accesses(steps: &[Step]) -> Vec<Acc> {
    steps
        .iter()
        .filter_map(|s| translate(s.actor, s.access?))
        .collect()
}

/// Each data variable's initial value: the first value a load or RMW
/// returned that no earlier store wrote; else 1 for the llist heads (NULL
/// in the model's encoding, see protocol::rstat_llist), else 0.
fn initial_values(accs: &[Acc]) -> BTreeMap<String, i64> {
    let mut written: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
    let mut init: BTreeMap<String, i64> = BTreeMap::new();
    for a in accs {
        let Some(v) = a.var() else { continue };
        if a.is_lock() {
            continue;
        }
        let seen = written.entry(v).or_default();
        if let Some(r) = a.read {
            if !seen.contains(&r) && !init.contains_key(v) {
                init.insert(v.to_string(), r);
            }
        }
        if let Some(w) = a.write {
            seen.insert(w);
        }
        if !init.contains_key(v) && v.starts_with("lhead_first") && a.read.is_none() {
            init.insert(v.to_string(), 1);
        }
    }
    init
}

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

/// The race of the first load only weak memory allows, if there is one:
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
        "the first load only weak memory allows ({}'s load of {x}, which misses {}'s \
         store) and what orders the two threads around it (on {})",
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
                prog.exists.push(super::litmus_prog::Cond::Reg {
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
    prog.doc.extend([
        "flushcheck observed these values. Generated from a flushcheck trace:".to_string(),
        "each thread's path is fixed to the traced one (the C code's tests".to_string(),
        "are not here, only their loads).".to_string(),
    ]);
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

/// The litmus test for `steps`, or why none is exported.
pub fn export(name: &str, steps: &[Step]) -> Result<String, String> {
    program(name, steps)?.render()
}
