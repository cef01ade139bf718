//! Running herd7 on litmus files and reading its answer; the syntax this
//! crate relies on herd7 accepting; the plain accesses that race.
//!
//! herd7 prints, per test, a line `Observation NAME Never|Sometimes|Always
//! P N` (P executions satisfy `exists`, N do not), and `Flag NAME` (LKMM's
//! `data-race`, for one) when some execution the model allows has the
//! flagged property. How a file states what it expects, and how the
//! kernel's scripts judge herd7's output against it, is
//! [`super::judge`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kernel::marking::{Release, VarKind};

use super::judge::expected;
pub use super::judge::{flags, name};
use super::prog::{Cond, Instr, Load, Observation, Program, Store};

/// Every `Observation NAME RESULT` line of herd7's output.
pub fn observations(stdout: &str) -> Vec<(String, Observation)> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            if w.next() != Some("Observation") {
                return None;
            }
            let name = w.next()?.to_string();
            Some((name, Observation::parse(w.next()?)?))
        })
        .collect()
}

/// herd7's answer on one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The test name of the `Observation` line.
    pub name: String,
    /// The verdict.
    pub observation: Observation,
    /// Every `Flag NAME` line's name, in order.
    pub flags: Vec<String>,
    /// herd7's whole output, for [`super::judge::judge`].
    pub stdout: String,
}

/// herd7's answer on one file, or why there is none.
pub fn run(herd7: &Path, lkmm: &Path, file: &Path) -> Result<Answer, String> {
    let file: PathBuf =
        std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = Command::new(herd7)
        .args(["-conf", "linux-kernel.cfg"])
        .arg(&file)
        .current_dir(lkmm)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", herd7.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match observations(&stdout).first() {
        Some((n, o)) => Ok(Answer {
            name: n.clone(),
            observation: *o,
            flags: flags(&stdout),
            stdout: stdout.into_owned(),
        }),
        None => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr
                .lines()
                .chain(stdout.lines())
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no output");
            Err(format!("herd7 gave no Observation line: {why}"))
        }
    }
}

/// The statements a test may use, as `linux-kernel.def` spells them.
const PRIMITIVES: [&str; 19] = [
    "READ_ONCE",
    "WRITE_ONCE",
    "smp_load_acquire",
    "smp_store_release",
    "atomic_read",
    "atomic_set",
    "atomic_add",
    "atomic_add_return",
    "atomic_xchg",
    "atomic_cmpxchg",
    "cmpxchg",
    "xchg",
    "smp_mb",
    "smp_rmb",
    "smp_wmb",
    "spin_lock",
    "spin_unlock",
    "spin_trylock",
    "spin_is_locked",
];

/// Check what this crate relies on herd7's C-litmus parser accepting, and
/// what makes herd7 answer the intended question: a `C NAME` line, a
/// `Result:` in the header, an initial value for every variable but the
/// locks, one register per declaration, only declared registers used and
/// named in `exists`, parameters of `int`, `atomic_t` or `spinlock_t`, and
/// only the primitives LKMM defines. The error names the first problem.
pub fn check_syntax(text: &str) -> Result<(), String> {
    let name = name(text).ok_or("the first line is not `C NAME`")?;
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("bad test name {name:?}"));
    }
    if expected(text).is_none() {
        return Err("no `Result:` line in the header comment".into());
    }
    let body = text
        .split_once("*)")
        .map(|(_, b)| b)
        .ok_or("no header comment `(* ... *)`")?;
    let init_line = body
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with('{'))
        .ok_or("no initial-state block")?;
    let inits: Vec<&str> = init_line
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut init_vars = std::collections::BTreeSet::new();
    for i in inits {
        let (v, x) = i
            .split_once('=')
            .ok_or_else(|| format!("initial state: {i:?} is not var=value"))?;
        x.trim()
            .parse::<i64>()
            .map_err(|_| format!("initial state: {i:?} has no integer value"))?;
        init_vars.insert(v.trim().to_string());
    }
    let mut regs: Vec<std::collections::BTreeSet<String>> = Vec::new();
    let mut vars = std::collections::BTreeSet::new();
    // Braces open inside the current thread: 1 in its body, more in an
    // `if`'s; 0 outside any thread.
    let mut depth = 0usize;
    for line in body.lines() {
        // A C comment to the end of the line (the kernel's spelling of a
        // plain access) is not part of the statement.
        let l = line.split("//").next().unwrap_or("").trim();
        if depth == 0 {
            if let Some(rest) = l.strip_prefix('P') {
                let (num, params) = rest
                    .split_once('(')
                    .ok_or_else(|| format!("bad line {l:?}"))?;
                if num.parse::<usize>().ok() != Some(regs.len()) {
                    return Err(format!("thread {l:?} is out of order"));
                }
                let params = params.split_once(')').map(|(p, _)| p).unwrap_or("");
                for p in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (ty, v) = p
                        .split_once(" *")
                        .ok_or_else(|| format!("parameter {p:?} is not `type *name`"))?;
                    if !["int", "atomic_t", "spinlock_t"].contains(&ty) {
                        return Err(format!(
                            "parameter {p:?}: type {ty} is not used by LKMM tests here"
                        ));
                    }
                    if ty != "spinlock_t" && !init_vars.contains(v) {
                        return Err(format!(
                            "{v} has no initial value in the initial-state block"
                        ));
                    }
                    vars.insert(v.to_string());
                }
                regs.push(Default::default());
                continue;
            }
            if l == "{" && !regs.is_empty() {
                depth = 1;
            }
            continue;
        }
        if l == "}" {
            depth -= 1;
            continue;
        }
        if l.is_empty() {
            continue;
        }
        let r = regs.last_mut().ok_or("a statement outside a thread")?;
        if let Some(cond) = l.strip_prefix("if (") {
            let cond = cond
                .strip_suffix(") {")
                .ok_or_else(|| format!("{l:?}: an `if` is written `if (rN == v) {{`"))?;
            let (reg, val) = cond
                .split_once(" == ")
                .or_else(|| cond.split_once(" != "))
                .ok_or_else(|| format!("{l:?}: the condition is not `rN == v` or `rN != v`"))?;
            if !r.contains(reg) {
                return Err(format!("{l:?}: register {reg} is not declared"));
            }
            let val = val.trim_start_matches('(').trim_end_matches(')');
            let val = val.strip_prefix("0 - ").unwrap_or(val);
            val.parse::<i64>()
                .map_err(|_| format!("{l:?}: {val} is not an integer"))?;
            depth += 1;
            continue;
        }
        if let Some(decl) = l.strip_prefix("int ") {
            let reg = decl.strip_suffix(';').unwrap_or(decl);
            if reg.contains(',') || !reg.starts_with('r') {
                return Err(format!("{l:?}: one register per declaration"));
            }
            r.insert(reg.to_string());
            continue;
        }
        let stmt = l
            .strip_suffix(';')
            .ok_or_else(|| format!("{l:?} does not end with ';'"))?;
        let call = match stmt.split_once(" = ") {
            Some((lhs, rhs)) if !lhs.starts_with('*') => {
                if !r.contains(lhs) {
                    return Err(format!("{l:?}: register {lhs} is not declared"));
                }
                rhs
            }
            _ => stmt,
        };
        if call.starts_with('*') {
            continue; // a plain access
        }
        let f = call.split('(').next().unwrap_or("");
        if !PRIMITIVES.contains(&f) {
            return Err(format!("{l:?}: {f} is not a primitive LKMM defines here"));
        }
    }
    if depth != 0 {
        return Err("a thread's braces are not balanced".into());
    }
    // The clause, from `exists (` to its `)`, over as many lines as it
    // takes.
    let from = body.find("\nexists (").ok_or("no `exists (...)` clause")?;
    let clause: String = body[from + 1..]
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let exists = clause
        .strip_prefix("exists (")
        .and_then(|c| c.trim_end().strip_suffix(')'))
        .ok_or("no `exists (...)` clause")?;
    for term in exists.split("/\\").map(str::trim) {
        let (lhs, _) = term
            .split_once('=')
            .ok_or_else(|| format!("exists term {term:?} is not a=b"))?;
        match lhs.split_once(':') {
            Some((t, reg)) => {
                let ok = t
                    .parse::<usize>()
                    .ok()
                    .and_then(|t| regs.get(t))
                    .is_some_and(|r| r.contains(reg));
                if !ok {
                    return Err(format!("exists names {lhs}, which is not declared"));
                }
            }
            None if vars.contains(lhs) => {}
            None => return Err(format!("exists names {lhs}, which no thread uses")),
        }
    }
    Ok(())
}

/// One access of a thread, for [`plain_races`] and [`race_note`].
struct Access {
    var: String,
    write: bool,
    /// The kernel's spelling of a plain access (`Some("")`: none); `None`
    /// for a marked one.
    plain: Option<&'static str>,
    /// The LKMM primitive, for a marked one (`READ_ONCE()`).
    marked: String,
    held: BTreeSet<String>,
}

/// Every access of `body` with the locks held around it; `held` is the
/// set on entry.
fn collect(
    prog: &Program,
    t: usize,
    body: &[Instr],
    held: &mut BTreeSet<String>,
    out: &mut Vec<Access>,
) {
    for i in body {
        let (write, plain) = match i {
            Instr::Lock(l) => {
                held.insert(l.clone());
                continue;
            }
            Instr::Unlock(l) => {
                held.remove(l);
                continue;
            }
            Instr::Trylock { var, reg } => {
                let ok = prog.exists.iter().any(|c| {
                    matches!(c, Cond::Reg { thread, reg: r, val: 1 } if *thread == t && r == reg)
                });
                if ok {
                    held.insert(var.clone());
                }
                continue;
            }
            Instr::IsLocked { .. } | Instr::Fence(_) => continue,
            // The guarded statements may run: they are accesses too.
            Instr::If { body, .. } => {
                collect(prog, t, body, held, out);
                continue;
            }
            Instr::Load {
                load: Load::Plain(k),
                ..
            } => (false, Some(k.unwrap_or(""))),
            Instr::Load { .. } => (false, None),
            Instr::Store {
                store: Store::Plain(k),
                ..
            } => (true, Some(k.unwrap_or(""))),
            _ => (true, None),
        };
        // The primitive, as the statement spells it: `r0 = READ_ONCE(*x);`.
        let c = i.c(None);
        let rhs = c.split_once(" = ").map_or(c.as_str(), |(_, r)| r);
        let marked = format!("{}()", rhs.split('(').next().unwrap_or(""));
        out.push(Access {
            var: i.var().unwrap_or_default().to_string(),
            write,
            plain,
            marked,
            held: held.clone(),
        });
    }
}

/// Each thread's accesses, with the locks held around them.
fn thread_accesses(prog: &Program) -> Vec<Vec<Access>> {
    prog.threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            let mut list = Vec::new();
            collect(prog, t, &th.body, &mut BTreeSet::new(), &mut list);
            list
        })
        .collect()
}

/// The variables on which `prog` has a data race in LKMM's sense, as this
/// crate tells it without herd7: two threads access the variable, one
/// writes, one access is plain, and no lock held around both orders them
/// (a trylock counts as held where `exists` says it succeeded). It sees no
/// other ordering (barriers, release/acquire, an `if` that runs a plain
/// access only after a marked load saw another thread's store), so it may
/// name more than herd7 flags, never fewer: a test it finds race-free is
/// race-free, and one it finds racy needs an argument to be declared
/// otherwise (docs/weak-memory.md).
pub fn plain_races(prog: &Program) -> Vec<String> {
    let accs = thread_accesses(prog);
    let mut out = BTreeSet::new();
    for (t, a) in accs.iter().enumerate() {
        for b in accs.iter().skip(t + 1) {
            for x in a {
                for y in b {
                    if x.var == y.var
                        && (x.write || y.write)
                        && (x.plain.is_some() || y.plain.is_some())
                        && x.held.is_disjoint(&y.held)
                    {
                        out.insert(x.var.clone());
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The kind of a litmus variable, as the tables name it, from its name
/// (`m1_state0` is a counter, `m2_updated_next0` an `updated_next`).
fn kind_of(v: &str) -> Option<VarKind> {
    let base = v.split_once('_').map_or(v, |(m, rest)| {
        if m.starts_with('m') && m[1..].chars().all(|c| c.is_ascii_digit()) {
            rest
        } else {
            v
        }
    });
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit());
    Some(match base {
        "state" => VarKind::State,
        "agg" => VarKind::Aggregate,
        "thr" => VarKind::Threshold,
        "updates" => VarKind::StatsUpdates,
        "updated_next" => VarKind::UpdatedNext,
        "lnode_next" => VarKind::LlistNode,
        "lhead_first" => VarKind::LlistHead,
        "flush_next_time" => VarKind::FlushTime,
        _ => return None,
    })
}

/// The header lines of a test with plain races ([`plain_races`]): which
/// accesses race, as the kernel spells them, and what the kernel says of
/// each race (`release`'s words at the site, or "undocumented in the
/// kernel"); none for a race-free test. The `Result:` line says
/// `DATARACE` beside them.
pub fn race_note(prog: &Program, release: &Release) -> Vec<String> {
    let races = plain_races(prog);
    if races.is_empty() {
        return Vec::new();
    }
    let accs = thread_accesses(prog);
    let mut text = format!(
        "Data race (the DATARACE of the Result line: herd7 is expected to \
         print Flag data-race) on {}.",
        races.join(", ")
    );
    for v in &races {
        let kind = kind_of(v);
        let mut who: Vec<String> = Vec::new();
        let mut words: Vec<(&'static str, &'static str)> = Vec::new();
        for (t, list) in accs.iter().enumerate() {
            for x in list.iter().filter(|x| &x.var == v) {
                let spelled = match x.plain {
                    Some("") => format!("plain {}", if x.write { "store" } else { "load" }),
                    Some(k) => format!("{k} (plain)"),
                    None => x.marked.clone(),
                };
                let me = format!("{}'s {spelled}", prog.threads[t].note);
                if !who.contains(&me) {
                    who.push(me);
                }
                let said = release.sites().into_iter().find(|m| {
                    Some(m.var) == kind && Some(m.spelling) == x.plain && m.race.is_some()
                });
                if let Some(m) = said {
                    let w = (m.func, m.race.unwrap_or_default());
                    if !words.contains(&w) {
                        words.push(w);
                    }
                }
            }
        }
        text += &format!(" {v}: {}; ", who.join(", "));
        if kind.is_none() {
            text += "the variant's own variable, not the kernel's.";
        } else if words.is_empty() {
            text += "undocumented in the kernel.";
        } else {
            let quoted: Vec<String> = words
                .iter()
                .map(|(f, w)| format!("{f} says \"{w}\""))
                .collect();
            text += &quoted.join(" and ");
            if !text.ends_with('.') && !text.ends_with(".\"") {
                text.push('.');
            }
        }
    }
    text += " A racy test's verdict carries no LKMM guarantee.";
    crate::observe::record::wrap(&text, 70)
}
