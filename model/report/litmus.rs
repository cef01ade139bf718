//! Export the core of a trace as an LKMM litmus test (tools/memory-model).
//!
//! The test is the straight-line sequence of shared-memory accesses the
//! traced execution performed, one `P<n>` per thread, with an `exists`
//! clause stating the values its loads returned. herd7 then answers whether
//! the Linux-kernel memory model allows that combination of values.
//!
//! Where the translation stops being faithful:
//! - Control flow is fixed to the traced path: the `if threshold > n` tests
//!   and the skip decision are not in the test, only their loads. herd7
//!   checks that the observed loads are allowed, not what the C code would
//!   do with other values.
//! - The property itself is not an LKMM predicate: `no_lost_flush` compares
//!   with a ghost v5.19 threshold, which has no kernel counterpart.
//! - CPU-local data (`stats_updates`) is left out; per-CPU counters become
//!   ordinary shared variables (`state0`, `state1`, ...) written with
//!   `WRITE_ONCE` by their owner, so the owner's own `__this_cpu_add` is
//!   written as a store of the running sum.
//! - The aggregate's `+=` under the lock is written as a `WRITE_ONCE` of the
//!   new value; the flusher's own re-read of it is omitted.
//! - Only traces touching at most [`MAX_VARIABLES`] shared variables are
//!   exported; beyond that a litmus test stops being a readable summary.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::trace::{Actor, Step};

/// The most shared variables an exported test may use.
pub const MAX_VARIABLES: usize = 4;

/// One translated access.
struct Access {
    /// Statement text, with `{r}` standing for the register (loads only).
    stmt: String,
    /// The shared variable and its C type.
    var: (String, &'static str),
    /// The value a load returned.
    read: Option<i64>,
}

fn translate(step: &Step, sums: &mut BTreeMap<Actor, i64>) -> Option<Access> {
    let t = step.text.as_str();
    let num = |s: &str| s.trim().trim_end_matches(')').parse::<i64>().ok();
    let after_eq = |s: &str| {
        s.rsplit_once("= ")
            .and_then(|(_, v)| num(v.split(':').next()?))
    };
    let thr = ("thr".to_string(), "atomic_t");
    if let Some(rest) = t.strip_prefix("__this_cpu_add(state[0], ") {
        let Actor::Cpu(c) = step.actor else {
            return None;
        };
        let sum = sums.entry(step.actor).or_insert(0);
        *sum += num(rest)?;
        return Some(Access {
            stmt: format!("WRITE_ONCE(*state{c}, {sum});"),
            var: (format!("state{c}"), "int"),
            read: None,
        });
    }
    if t.starts_with("atomic_read(&stats_flush_threshold)") {
        return Some(Access {
            stmt: "{r} = atomic_read(thr);".into(),
            var: thr,
            read: after_eq(t),
        });
    }
    if let Some(rest) = t.strip_prefix("atomic_add(") {
        let units = num(rest.split(',').next()?)?;
        return Some(Access {
            stmt: format!("atomic_add({units}, thr);"),
            var: thr,
            read: None,
        });
    }
    if let Some(rest) = t.strip_prefix("atomic_set(&stats_flush_threshold, ") {
        return Some(Access {
            stmt: format!("atomic_set(thr, {});", num(rest)?),
            var: thr,
            read: None,
        });
    }
    if let Some(rest) = t.strip_prefix("READ_ONCE(CPU ") {
        let c: usize = rest.split(' ').next()?.parse().ok()?;
        return Some(Access {
            stmt: format!("{{r}} = READ_ONCE(*state{c});"),
            var: (format!("state{c}"), "int"),
            read: after_eq(t),
        });
    }
    if t.starts_with("READ_ONCE(vmstats.state[0])") {
        return Some(Access {
            stmt: "{r} = READ_ONCE(*agg);".into(),
            var: ("agg".into(), "int"),
            read: after_eq(t),
        });
    }
    if let Some(rest) = t.strip_prefix("vmstats.state[0] = ") {
        return Some(Access {
            stmt: format!("WRITE_ONCE(*agg, {});", num(rest)?),
            var: ("agg".into(), "int"),
            read: None,
        });
    }
    let lock = |name: &str| match name {
        "stats_flush_lock" => Some(("flush_lock".to_string(), "spinlock_t")),
        "cgroup_rstat_lock" => Some(("rstat_lock".to_string(), "spinlock_t")),
        _ => None,
    };
    if let Some(rest) = t.strip_prefix("spin_trylock(&") {
        let (name, val) = rest.split_once(") = ")?;
        let (var, ty) = lock(name)?;
        return Some(Access {
            stmt: format!("{{r}} = spin_trylock({var});"),
            var: (var, ty),
            read: num(val),
        });
    }
    for (prefix, call) in [
        ("spin_lock(&", "spin_lock"),
        ("spin_unlock(&", "spin_unlock"),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            let (var, ty) = lock(rest.trim_end_matches(')'))?;
            return Some(Access {
                stmt: format!("{call}({var});"),
                var: (var, ty),
                read: None,
            });
        }
    }
    if let Some(rest) = t.strip_prefix("flush_next_time = ") {
        // A plain C store: herd7 reports a data race if two are unordered.
        return Some(Access {
            stmt: format!("*flush_next_time = {};", num(rest)?),
            var: ("flush_next_time".into(), "int"),
            read: None,
        });
    }
    None
}

/// The litmus test for `steps`, or why none is exported.
pub fn export(name: &str, steps: &[Step]) -> Result<String, String> {
    let mut sums = BTreeMap::new();
    let mut per_actor: BTreeMap<Actor, Vec<Access>> = BTreeMap::new();
    let mut vars: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for s in steps {
        if let Some(a) = translate(s, &mut sums) {
            vars.insert(a.var.clone());
            per_actor.entry(s.actor).or_default().push(a);
        }
    }
    if vars.len() > MAX_VARIABLES {
        let names: Vec<&str> = vars.iter().map(|(v, _)| v.as_str()).collect();
        return Err(format!(
            "not exported as a litmus test: the trace touches {} shared variables ({}), more than {MAX_VARIABLES}",
            vars.len(),
            names.join(", ")
        ));
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
    let _ = writeln!(out, " *)\n");
    let _ = writeln!(out, "{{}}\n");
    let mut exists = Vec::new();
    for (p, (actor, accesses)) in per_actor.iter().enumerate() {
        let used: BTreeSet<&(String, &'static str)> = accesses.iter().map(|a| &a.var).collect();
        let params: Vec<String> = used.iter().map(|(v, ty)| format!("{ty} *{v}")).collect();
        let _ = writeln!(out, "P{p}({}) /* {actor} */", params.join(", "));
        let _ = writeln!(out, "{{");
        let regs = accesses.iter().filter(|a| a.stmt.contains("{r}")).count();
        if regs > 0 {
            let names: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
            let _ = writeln!(out, "\tint {};\n", names.join(", "));
        }
        let mut r = 0;
        for a in accesses {
            if a.stmt.contains("{r}") {
                let reg = format!("r{r}");
                let _ = writeln!(out, "\t{}", a.stmt.replace("{r}", &reg));
                if let Some(v) = a.read {
                    exists.push(format!("{p}:{reg}={v}"));
                }
                r += 1;
            } else {
                let _ = writeln!(out, "\t{}", a.stmt);
            }
        }
        let _ = writeln!(out, "}}\n");
    }
    let _ = writeln!(out, "exists ({})", exists.join(" /\\ "));
    Ok(out)
}
