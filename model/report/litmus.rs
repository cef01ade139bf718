//! Export the core of a trace as an LKMM litmus test (tools/memory-model).
//!
//! The test is the straight-line sequence of shared-memory accesses the
//! traced execution performed, one `P<n>` per thread, with an `exists`
//! clause stating the values its loads returned. herd7 then answers whether
//! the Linux-kernel memory model allows that combination of values.
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
//! - Only traces touching at most [`MAX_VARIABLES`] shared variables are
//!   exported; beyond that a litmus test stops being a readable summary.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::observe::record::Step;
use crate::vocab::obs::{Access, Actor, Idiom, LockName, Op, Var};

/// The most shared variables an exported test may use.
pub const MAX_VARIABLES: usize = 4;

/// One translated statement.
struct Stmt {
    /// Statement text, with `{r}` standing for the register (loads only).
    text: String,
    /// The shared variable and its C type.
    var: (String, &'static str),
    /// The value a load returned.
    read: Option<i64>,
}

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

/// The C type an access with `idiom` implies.
fn c_type(idiom: Idiom) -> &'static str {
    match idiom {
        Idiom::SpinTrylock | Idiom::SpinLock | Idiom::SpinUnlock | Idiom::SpinIsLocked => {
            "spinlock_t"
        }
        Idiom::AtomicRead
        | Idiom::AtomicSet
        | Idiom::AtomicAdd
        | Idiom::AtomicXchg
        | Idiom::AtomicCmpxchg => "atomic_t",
        _ => "int",
    }
}

/// The statement for one access by `actor`; `Ok(None)` for accesses the
/// test leaves out.
fn translate(actor: Actor, a: Access) -> Result<Option<Stmt>, String> {
    let Some(name) = c_name(a.var) else {
        return Ok(None);
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
            return Ok(None);
        };
        if actor != Actor::Cpu(cpu.into()) {
            return Err(format!(
                "not exported as a litmus test: {actor} used a this_cpu operation on {}, CPU {cpu}'s counter",
                a.var
            ));
        }
        // The owner is the only writer: its own reads are determined, and
        // its updates are stores of the running value.
        let Some(v) = a.op.written() else {
            return Ok(None);
        };
        return Ok(Some(Stmt {
            text: format!("WRITE_ONCE(*{name}, {v});"),
            var: (name, "int"),
            read: None,
        }));
    }
    let var = (name.clone(), c_type(a.idiom));
    let (text, read) = match (a.idiom, a.op) {
        (Idiom::AtomicRead, Op::Read(x)) => (format!("{{r}} = atomic_read({name});"), Some(x)),
        (Idiom::AtomicSet, Op::Write(x)) => (format!("atomic_set({name}, {x});"), None),
        (Idiom::AtomicAdd, Op::Add { val, .. }) => (format!("atomic_add({val}, {name});"), None),
        (Idiom::AtomicXchg, Op::Xchg { old, new }) => {
            (format!("{{r}} = atomic_xchg({name}, {new});"), Some(old))
        }
        (Idiom::AtomicCmpxchg, Op::CmpXchg { old, new, ok: true }) => (
            format!("{{r}} = atomic_cmpxchg({name}, {old}, {new});"),
            Some(old),
        ),
        (Idiom::Cmpxchg, Op::CmpXchg { old, new, ok: true }) => (
            format!("{{r}} = cmpxchg({name}, {old}, {new});"),
            Some(old),
        ),
        (Idiom::AtomicCmpxchg | Idiom::Cmpxchg, Op::CmpXchg { ok: false, .. }) => {
            return Err(format!(
                "not exported as a litmus test: {actor}'s atomic_cmpxchg on {} failed, and the trace does not record the value it expected",
                a.var
            ))
        }
        (Idiom::ReadOnce, Op::Read(x)) => (format!("{{r}} = READ_ONCE(*{name});"), Some(x)),
        (Idiom::LoadAcquire, Op::Read(x)) => {
            (format!("{{r}} = smp_load_acquire({name});"), Some(x))
        }
        // v6.17's this_cpu_add_return/this_cpu_xchg against the flusher's
        // remote store: a load and a store (see kernel::percpu).
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Read(x)) => {
            (format!("{{r}} = READ_ONCE(*{name});"), Some(x))
        }
        (Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, Op::Write(x)) => {
            (format!("WRITE_ONCE(*{name}, {x});"), None)
        }
        // A spin_lock that had to wait: its successful attempt follows.
        (Idiom::SpinLock, Op::CmpXchg { ok: false, .. }) => return Ok(None),
        (Idiom::Plain, Op::Read(x)) => (format!("{{r}} = *{name};"), Some(x)),
        // The aggregate's `+=` under the lock is read locklessly.
        (_, Op::Write(x)) if matches!(a.var, Var::Aggregate { .. }) => {
            (format!("WRITE_ONCE(*{name}, {x});"), None)
        }
        (Idiom::WriteOnce, Op::Write(x)) => (format!("WRITE_ONCE(*{name}, {x});"), None),
        // A plain C store: herd7 reports a data race if two are unordered.
        (Idiom::Plain, Op::Write(x)) => (format!("*{name} = {x};"), None),
        (Idiom::SpinTrylock, Op::CmpXchg { ok, .. }) => (
            format!("{{r}} = spin_trylock({name});"),
            Some(i64::from(ok)),
        ),
        (Idiom::SpinLock, _) => (format!("spin_lock({name});"), None),
        (Idiom::SpinUnlock, _) => (format!("spin_unlock({name});"), None),
        (Idiom::SpinIsLocked, Op::Read(x)) => (
            format!("{{r}} = spin_is_locked({name});"),
            Some(i64::from(x != 0)),
        ),
        (idiom, op) => {
            return Err(format!(
                "not exported as a litmus test: no LKMM form for {actor}'s {idiom:?} {op:?} on {}",
                a.var
            ))
        }
    };
    Ok(Some(Stmt { text, var, read }))
}

/// The litmus test for `steps`, or why none is exported.
pub fn export(name: &str, steps: &[Step]) -> Result<String, String> {
    export_noted(name, steps, None)
}

/// Whether `steps` touch the rstat updated tree ([`Var::UpdatedNext`]).
pub fn touches_tree(steps: &[Step]) -> bool {
    steps.iter().any(|s| {
        matches!(
            s.access,
            Some(Access {
                var: Var::UpdatedNext { .. },
                ..
            })
        )
    })
}

/// The rstat tree's store-buffering race alone (docs/findings.md, section
/// 15): of `steps`, the
/// accesses of the updaters and flushers to the per-CPU counters
/// `state[]`, the trees' `updated_next` words and the per-CPU
/// `cgroup_rstat_cpu_lock`s. Left out: the thresholds, the aggregate and
/// `cgroup_rstat_lock` (none orders the two racing accesses of either side),
/// and main's reads and flushes after joining every thread (a litmus test
/// has no join).
pub fn export_tree_race(name: &str, steps: &[Step]) -> Result<String, String> {
    // From v6.17 the racy word is the llist node; the tree is then touched
    // by flushers only, under the ss lock, and is left out.
    let llist = steps.iter().any(|s| {
        matches!(
            s.access,
            Some(Access {
                var: Var::LlistNode { .. },
                ..
            })
        )
    });
    let slice: Vec<Step> = steps
        .iter()
        .filter(|s| s.actor != Actor::Main)
        .filter(|s| match s.access {
            Some(Access { var, .. }) => match var {
                Var::State { .. } => true,
                Var::UpdatedNext { .. } => !llist,
                Var::LlistNode { .. } | Var::LlistHead { .. } => true,
                Var::Lock(LockName::Other(n)) => n.starts_with("rstat_cpu"),
                _ => false,
            },
            None => false,
        })
        .cloned()
        .collect();
    let note = if llist {
        "The slice of the trace on state[], the llist nodes and heads only."
    } else {
        "The slice of the trace on state[], updated_next and the per-CPU rstat locks only."
    };
    export_noted(name, &slice, Some(note))
}

fn export_noted(name: &str, steps: &[Step], note: Option<&str>) -> Result<String, String> {
    let mut per_actor: BTreeMap<Actor, Vec<Stmt>> = BTreeMap::new();
    let mut types: BTreeMap<String, &'static str> = BTreeMap::new();
    for s in steps {
        let Some(a) = s.access else { continue };
        let Some(stmt) = translate(s.actor, a)? else {
            continue;
        };
        let (v, ty) = &stmt.var;
        match types.get(v) {
            Some(t) if t != ty => {
                return Err(format!(
                    "not exported as a litmus test: {v} is accessed both as {t} and as {ty}"
                ))
            }
            _ => {
                types.insert(v.clone(), ty);
            }
        }
        per_actor.entry(s.actor).or_default().push(stmt);
    }
    if types.len() > MAX_VARIABLES {
        let names: Vec<&str> = types.keys().map(String::as_str).collect();
        return Err(format!(
            "not exported as a litmus test: the trace touches {} shared variables ({}), more than {MAX_VARIABLES}",
            types.len(),
            names.join(", ")
        ));
    }
    if !per_actor.values().flatten().any(|s| s.read.is_some()) {
        return Err(
            "not exported as a litmus test: the trace has no shared-memory load for `exists` to state"
                .into(),
        );
    }
    let mut out = String::new();
    let _ = writeln!(out, "C {name}\n");
    let _ = writeln!(out, "(*");
    let _ = writeln!(
        out,
        " * Result: Sometimes expected (flushcheck observed these values)."
    );
    let _ = writeln!(
        out,
        " * Generated from a flushcheck trace: each thread's path is fixed to"
    );
    let _ = writeln!(
        out,
        " * the traced one (the C code's tests are not here, only their loads)."
    );
    if let Some(n) = note {
        let _ = writeln!(out, " * {n}");
    }
    let _ = writeln!(out, " *)\n");
    // Every variable starts at 0 but the llist heads (NULL is 1 in the
    // model's encoding, see protocol::rstat_llist).
    let inits: Vec<String> = steps
        .iter()
        .filter_map(|s| match s.access {
            Some(Access {
                var: v @ Var::LlistHead { .. },
                ..
            }) => c_name(v),
            _ => None,
        })
        .collect::<BTreeSet<String>>()
        .into_iter()
        .map(|n| format!("{n}=1;"))
        .collect();
    if inits.is_empty() {
        let _ = writeln!(out, "{{}}\n");
    } else {
        let _ = writeln!(out, "{{ {} }}\n", inits.join(" "));
    }
    let mut exists = Vec::new();
    for (p, (actor, stmts)) in per_actor.iter().enumerate() {
        let used: BTreeSet<&(String, &'static str)> = stmts.iter().map(|s| &s.var).collect();
        let params: Vec<String> = used.iter().map(|(v, ty)| format!("{ty} *{v}")).collect();
        let _ = writeln!(out, "P{p}({}) /* {actor} */", params.join(", "));
        let _ = writeln!(out, "{{");
        let regs = stmts.iter().filter(|s| s.text.contains("{r}")).count();
        if regs > 0 {
            let names: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
            let _ = writeln!(out, "\tint {};\n", names.join(", "));
        }
        let mut r = 0;
        for s in stmts {
            if s.text.contains("{r}") {
                let reg = format!("r{r}");
                let _ = writeln!(out, "\t{}", s.text.replace("{r}", &reg));
                if let Some(v) = s.read {
                    exists.push(format!("{p}:{reg}={v}"));
                }
                r += 1;
            } else {
                let _ = writeln!(out, "\t{}", s.text);
            }
        }
        let _ = writeln!(out, "}}\n");
    }
    let _ = writeln!(out, "exists ({})", exists.join(" /\\ "));
    Ok(out)
}
