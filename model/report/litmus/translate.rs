//! From a trace's structured accesses to litmus statements: which kernel
//! variable each access touches, by which primitive, and the initial
//! values the trace implies.
//!
//! The primitive is the kernel's, not the model's: each access is looked up
//! in the release's table of access sites ([`crate::kernel::marking`]) and
//! written as LKMM sees that marking (`data_race()` and the per-CPU
//! operations are plain C accesses, with the kernel's spelling as a
//! comment). An access with no site there (a mutant's, a candidate's own
//! code) keeps the model's idiom.

use std::collections::{BTreeMap, BTreeSet};

use crate::kernel::marking::{Mark, Marking, Release};
use crate::observe::record::Step;
use crate::vocab::obs::{Access, Actor, Idiom, LockName, Op, Var};

use super::prog::{Fence, Instr, Load, Store};

/// The most shared data variables a test keeps (locks are extra).
pub const MAX_VARIABLES: usize = 4;

/// The most candidate executions ([`Program::candidates`](super::prog::Program::candidates)) a test of a
/// sequentially consistent trace may have: herd7 enumerates every one, and
/// 10^4 of them take it about a second (5 * 10^7 took four minutes).
pub const MAX_CANDIDATES: f64 = 1e4;

/// The litmus name of `var`, or `None` for what the test leaves out.
pub(super) fn c_name(var: Var) -> Option<String> {
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
pub(super) enum Held {
    Takes,
    Drops,
}

/// One access of the trace, translated.
#[derive(Clone)]
pub(super) struct Acc {
    pub(super) actor: Actor,
    /// The litmus variable (`None`: a barrier).
    pub(super) var: Option<String>,
    /// The statement (registers are numbered when the test is built), or
    /// why this access has no faithful statement.
    pub(super) instr: Result<Instr, String>,
    /// The value the statement puts in its register.
    pub(super) reg_val: Option<i64>,
    /// The value the access read (loads and RMWs), for initial values.
    pub(super) read: Option<i64>,
    /// The value it wrote.
    pub(super) write: Option<i64>,
    /// Whether it is a plain load (a candidate for a stale read).
    pub(super) load: bool,
    pub(super) lock: Option<Held>,
    /// The kernel's site of this access in the release's table, if it has
    /// one.
    pub(super) site: Option<&'static Marking>,
    /// Whether this load is a reader's gate that decided to flush
    /// (`mem_cgroup_flush_stats()`'s test, the "-> flush" step after it).
    pub(super) gate: bool,
    /// Whether it comes after main joined every thread (main's quiescent
    /// read and final flush, and whatever runs after them, one at a time).
    pub(super) joined: bool,
}

impl Acc {
    pub(super) fn var(&self) -> Option<&str> {
        self.var.as_deref()
    }

    /// Whether the access is to a lock (`spinlock_t`).
    pub(super) fn is_lock(&self) -> bool {
        matches!(
            self.instr,
            Ok(Instr::Lock(_) | Instr::Unlock(_) | Instr::Trylock { .. } | Instr::IsLocked { .. })
        )
    }
}

/// The translation of one access by `actor` under `release`'s markings
/// (`cpu_lock`: the actor holds a `cgroup_rstat_cpu_lock`): none for
/// accesses the test leaves out, two for a per-CPU read-modify-write the
/// trace reports as one step (`this_cpu_cmpxchg()`).
pub(super) fn translate(actor: Actor, a: Access, release: &Release, cpu_lock: bool) -> Vec<Acc> {
    let fence = |f| Acc {
        actor,
        var: None,
        instr: Ok(Instr::Fence(f)),
        reg_val: None,
        read: None,
        write: None,
        load: false,
        lock: None,
        site: None,
        gate: false,
        joined: false,
    };
    match a.idiom {
        Idiom::SmpMb => return vec![fence(Fence::Mb)],
        Idiom::SmpRmb => return vec![fence(Fence::Rmb)],
        Idiom::SmpWmb => return vec![fence(Fence::Wmb)],
        _ => {}
    }
    let Some(name) = c_name(a.var) else {
        return Vec::new();
    };
    let mut acc = Acc {
        actor,
        var: Some(name.clone()),
        instr: Err(String::new()),
        reg_val: None,
        read: a.op.read(),
        write: a.op.written(),
        load: false,
        lock: None,
        site: None,
        gate: false,
        joined: false,
    };
    if let Var::State { cpu, .. } = a.var {
        if actor != Actor::Cpu(cpu.into()) && a.op.written().is_some() {
            acc.instr = Err(format!(
                "{actor} wrote {}, CPU {cpu}'s counter, with a per-CPU operation",
                a.var
            ));
            return vec![acc];
        }
    }
    if let Some(site) = release.find(actor, a, cpu_lock) {
        acc.site = Some(site);
        return as_marked(acc, site, a.op);
    }
    by_idiom(acc, a)
}

/// `acc` written as the kernel marks it (`site`).
fn as_marked(mut acc: Acc, site: &'static Marking, op: Op) -> Vec<Acc> {
    let n = acc.var.clone().unwrap_or_default();
    let spelled = Some(site.spelling);
    let no_form = |acc: &Acc| {
        format!(
            "no LKMM form for {}'s {} ({:?}) on {n}",
            acc.actor, site.spelling, op
        )
    };
    let load = |acc: &mut Acc, i: Instr, x: i64| {
        acc.instr = Ok(i);
        acc.reg_val = Some(x);
        acc.load = true;
    };
    match (site.mark, op) {
        (m, Op::Read(x)) if m.plain_to_lkmm() => load(&mut acc, plain_load(&n, spelled), x),
        (m, Op::Write(x)) if m.plain_to_lkmm() => acc.instr = Ok(plain_store(&n, x, spelled)),
        // The owner's add to its own counter: a store of the running sum,
        // as the owner is the counter's only writer.
        (m, Op::Add { new, .. }) if m.plain_to_lkmm() => {
            acc.instr = Ok(plain_store(&n, new, spelled))
        }
        // this_cpu_cmpxchg() against another CPU: a load, then a store.
        (Mark::PerCpu, Op::CmpXchg { old, new, ok: true }) => {
            let mut store = acc.clone();
            load(&mut acc, plain_load(&n, spelled), old);
            acc.write = None;
            store.instr = Ok(plain_store(&n, new, spelled));
            store.read = None;
            return vec![acc, store];
        }
        (_, Op::CmpXchg { ok: false, .. }) => {
            acc.instr = Err(format!(
                "{}'s {} on {n} failed, and the trace does not record the value it expected",
                acc.actor, site.spelling
            ))
        }
        (Mark::ReadOnce, Op::Read(x)) => load(&mut acc, Instr::read_once(&n, 0), x),
        (Mark::Atomic, Op::Read(x)) => load(&mut acc, Instr::atomic_read(&n, 0), x),
        (Mark::LoadAcquire, Op::Read(x)) => load(&mut acc, Instr::load_acquire(&n, 0), x),
        (Mark::WriteOnce, Op::Write(x)) => acc.instr = Ok(Instr::write_once(&n, x)),
        (Mark::Atomic, Op::Write(x)) => acc.instr = Ok(Instr::atomic_set(&n, x)),
        (Mark::Atomic, Op::Add { val, .. }) => acc.instr = Ok(Instr::atomic_add(&n, val)),
        (Mark::Atomic, Op::Xchg { old, new }) => {
            acc.instr = Ok(Instr::atomic_xchg(&n, new, 0));
            acc.reg_val = Some(old);
        }
        (Mark::Atomic | Mark::Cmpxchg, Op::CmpXchg { old, new, ok: true }) => {
            acc.instr = Ok(Instr::cmpxchg(&n, old, new, 0));
            acc.reg_val = Some(old);
        }
        _ => acc.instr = Err(no_form(&acc)),
    }
    vec![acc]
}

/// `acc` written with the model's own idiom: an access the release's
/// table has no site for.
fn by_idiom(mut acc: Acc, a: Access) -> Vec<Acc> {
    let actor = acc.actor;
    let name = acc.var.clone().unwrap_or_default();
    let with_reg = |acc: &mut Acc, i: Instr, v: i64| {
        acc.instr = Ok(i);
        acc.reg_val = Some(v);
    };
    let n = name.as_str();
    let this_cpu = matches!(
        a.idiom,
        Idiom::ThisCpuAdd
            | Idiom::ThisCpuAddReturn
            | Idiom::ThisCpuRead
            | Idiom::ThisCpuWrite
            | Idiom::ThisCpuXchg
    );
    match (a.idiom, a.op) {
        // A per-CPU operation the table does not know: plain, as every
        // per-CPU operation is against another CPU.
        (_, Op::Add { new, .. }) if this_cpu => acc.instr = Ok(plain_store(n, new, None)),
        (_, Op::Read(x)) if this_cpu => {
            with_reg(&mut acc, plain_load(n, None), x);
            acc.load = true;
        }
        (_, Op::Write(x)) if this_cpu => acc.instr = Ok(plain_store(n, x, None)),
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
        // A spin_lock that had to wait: its successful attempt follows.
        (Idiom::SpinLock, Op::CmpXchg { ok: false, .. }) => return Vec::new(),
        (Idiom::Plain, Op::Read(x)) => {
            with_reg(&mut acc, plain_load(n, None), x);
            acc.load = true;
        }
        (Idiom::WriteOnce, Op::Write(x)) => acc.instr = Ok(Instr::write_once(n, x)),
        // A plain C store: herd7 reports a data race if two are unordered.
        (Idiom::Plain, Op::Write(x)) => acc.instr = Ok(plain_store(n, x, None)),
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
    vec![acc]
}

/// `*var = val`, with the kernel's spelling as a comment.
fn plain_store(var: &str, val: i64, kernel: Option<&'static str>) -> Instr {
    Instr::Store {
        store: Store::Plain(kernel),
        var: var.to_string(),
        val,
    }
}

/// `r = *var`, with the kernel's spelling as a comment.
fn plain_load(var: &str, kernel: Option<&'static str>) -> Instr {
    Instr::Load {
        load: Load::Plain(kernel),
        var: var.to_string(),
        reg: 0,
    }
}

/// The step text of a reader's decision to flush (see
/// [`crate::observe::record::step_text`]).
const FLUSH_DECISION: &str = "-> flush";

/// Every access of `steps` the test can speak of, in trace order, marked
/// as `release` marks them.
pub(super) fn accesses(steps: &[Step], release: &Release) -> Vec<Acc> {
    let mut held: BTreeMap<Actor, BTreeMap<String, usize>> = BTreeMap::new();
    let mut joined = false;
    let mut out: Vec<Acc> = Vec::new();
    for s in steps {
        if s.actor == Actor::Main && s.text == "(all joined)" {
            joined = true;
        }
        let Some(a) = s.access else {
            if s.text == FLUSH_DECISION {
                // The gate is the actor's load just before its decision.
                if let Some(g) = out.iter_mut().rev().find(|x| x.actor == s.actor) {
                    if matches!(g.instr, Ok(Instr::Load { .. }))
                        && g.var().is_some_and(is_threshold)
                    {
                        g.gate = true;
                    }
                }
            }
            continue;
        };
        let h = held.entry(s.actor).or_default();
        let cpu_lock = h.keys().any(|l| l.starts_with("rstat_cpu"));
        for mut acc in translate(s.actor, a, release, cpu_lock) {
            // main runs only after the joins (it is the last CPU, under that
            // CPU's name, before them).
            acc.joined = joined || s.actor == Actor::Main;
            if let Some(l) = acc.var.clone() {
                match acc.lock {
                    Some(Held::Takes) => *h.entry(l).or_default() += 1,
                    Some(Held::Drops) => {
                        if let Some(c) = h.get_mut(&l) {
                            *c -= 1;
                            if *c == 0 {
                                h.remove(&l);
                            }
                        }
                    }
                    None => {}
                }
            }
            out.push(acc);
        }
    }
    out
}

/// Whether the litmus variable `v` is a threshold (`thr`, `m1_thr`).
fn is_threshold(v: &str) -> bool {
    v == "thr" || v.ends_with("_thr")
}

/// Each data variable's initial value: the first value a load or RMW
/// returned that no earlier store wrote; else 1 for the llist heads (NULL
/// in the model's encoding, see protocol::rstat_llist), else 0.
pub(super) fn initial_values(accs: &[Acc]) -> BTreeMap<String, i64> {
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

/// Each access of `steps` as the export writes it: who, the kernel site
/// the release's table has for it (if any), and the statement or why there
/// is none; for comparing the export with the table.
pub fn marked(
    steps: &[Step],
    release: &Release,
) -> Vec<(Actor, Option<&'static Marking>, Result<Instr, String>)> {
    accesses(steps, release)
        .into_iter()
        .filter(|a| a.var.is_some() && !a.is_lock())
        .map(|a| (a.actor, a.site, a.instr))
        .collect()
}
