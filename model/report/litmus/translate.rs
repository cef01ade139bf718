//! From a trace's structured accesses to litmus statements: which kernel
//! variable each access touches, by which primitive, and the initial
//! values the trace implies.

use std::collections::{BTreeMap, BTreeSet};

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

/// The translation of one access by `actor`; `None` for accesses the test
/// leaves out.
pub(super) fn translate(actor: Actor, a: Access) -> Option<Acc> {
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
        // its updates are stores of the running value, plain as the
        // kernel's `__this_cpu_add` is against the flusher's remote read.
        let v = a.op.written()?;
        acc.instr = Ok(plain_store(&name, v));
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
        // Per-CPU operations are atomic against the owner's interrupts,
        // not against other CPUs: plain.
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Read(x)) => {
            with_reg(&mut acc, plain_load(n), x);
            acc.load = true;
        }
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Write(x)) => {
            acc.instr = Ok(plain_store(n, x))
        }
        // A spin_lock that had to wait: its successful attempt follows.
        (Idiom::SpinLock, Op::CmpXchg { ok: false, .. }) => return None,
        (Idiom::Plain, Op::Read(x)) => {
            with_reg(&mut acc, plain_load(n), x);
            acc.load = true;
        }
        // The aggregate's `+=` under the lock is plain in the kernel
        // (readers use READ_ONCE): herd7 flags the race, the header says
        // why the kernel accepts it.
        (_, Op::Write(x)) if matches!(a.var, Var::Aggregate { .. }) => {
            acc.instr = Ok(plain_store(n, x))
        }
        (Idiom::WriteOnce, Op::Write(x)) => acc.instr = Ok(Instr::write_once(n, x)),
        // A plain C store: herd7 reports a data race if two are unordered.
        (Idiom::Plain, Op::Write(x)) => acc.instr = Ok(plain_store(n, x)),
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

/// `*var = val`.
fn plain_store(var: &str, val: i64) -> Instr {
    Instr::Store {
        store: Store::Plain,
        var: var.to_string(),
        val,
    }
}

/// `r = *var`.
fn plain_load(var: &str) -> Instr {
    Instr::Load {
        load: Load::Plain,
        var: var.to_string(),
        reg: 0,
    }
}

/// Every access of `steps` the test can speak of, in trace order.
pub(super) fn accesses(steps: &[Step]) -> Vec<Acc> {
    steps
        .iter()
        .filter_map(|s| translate(s.actor, s.access?))
        .collect()
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
