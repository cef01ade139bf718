//! Running herd7 on litmus files and reading its answer.
//!
//! herd7 prints, per test, a line `Observation NAME Never|Sometimes|Always
//! P N` (P executions satisfy `exists`, N do not). A file states the result
//! it expects in its header comment, ` * Result: Sometimes`, as the files
//! of tools/memory-model/litmus-tests do. herd7 also prints `Flag NAME`
//! (LKMM's `data-race`, for one) when some execution the model allows has
//! the flagged property; a file names the flags it expects in a header
//! line ` * Flag: NAME`, and an unexpected flag is a failure: a racy test's
//! verdict carries no LKMM guarantee.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::prog::{Observation, Program};

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
}

/// Every `Flag NAME` line of herd7's output.
pub fn flags(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("Flag")).then(|| w.next().map(str::to_string))?
        })
        .collect()
}

/// The flags a litmus file's header expects (` * Flag: NAME ...` lines,
/// the first word after `Flag:`).
pub fn expected_flags(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with('{'))
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("* Flag:")?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

/// What is wrong with herd7's `answer` on the file `text`: a name other
/// than the file's test, or a flag the header does not expect.
pub fn unexpected(text: &str, answer: &Answer) -> Option<String> {
    let want = name(text).unwrap_or_default();
    if answer.name != want {
        return Some(format!(
            "herd7's Observation names the test {}, the file is {want}",
            answer.name
        ));
    }
    let allowed = expected_flags(text);
    let extra: Vec<&str> = answer
        .flags
        .iter()
        .filter(|f| !allowed.contains(f))
        .map(String::as_str)
        .collect();
    (!extra.is_empty()).then(|| {
        format!(
            "herd7 flags {} (the header expects {})",
            extra.join(", "),
            if allowed.is_empty() {
                "no flag".to_string()
            } else {
                allowed.join(", ")
            }
        )
    })
}

/// The result a litmus file's header expects (`Result: ...`), if it states
/// one.
pub fn expected(text: &str) -> Option<Observation> {
    text.lines()
        .take_while(|l| !l.trim_start().starts_with('{'))
        .find_map(|l| {
            let rest = l.split("Result:").nth(1)?;
            Observation::parse(rest.split_whitespace().next()?)
        })
}

/// The test name of a litmus file (its first line, `C NAME`).
pub fn name(text: &str) -> Option<&str> {
    text.lines().next()?.strip_prefix("C ").map(str::trim)
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
    let mut in_thread = false;
    for line in body.lines() {
        let l = line.trim();
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
            in_thread = true;
            continue;
        }
        if l == "}" {
            in_thread = false;
            continue;
        }
        if !in_thread || l.is_empty() || l == "{" {
            continue;
        }
        let r = regs.last_mut().ok_or("a statement outside a thread")?;
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
    let exists = body
        .lines()
        .find_map(|l| l.trim().strip_prefix("exists ("))
        .and_then(|l| l.strip_suffix(')'))
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

/// One access of a thread: the variable, whether it writes, whether it is
/// plain, the locks held.
type Access = (String, bool, bool, BTreeSet<String>);

/// The variables on which `prog` has a data race in LKMM's sense, as this
/// crate tells it without herd7: two threads access the variable, one
/// writes, one access is plain, and no lock held around both orders them
/// (a trylock counts as held where `exists` says it succeeded). With the
/// paths fixed and no conditionals, some execution leaves such a pair
/// unordered, so herd7 flags it; the list may name more than herd7 flags,
/// never fewer.
pub fn plain_races(prog: &Program) -> Vec<String> {
    use super::prog::{Cond, Instr, Load, Store};
    let mut accs: Vec<Vec<Access>> = Vec::new();
    for (t, th) in prog.threads.iter().enumerate() {
        let mut held = BTreeSet::new();
        let mut list = Vec::new();
        for i in &th.body {
            let Some(v) = i.var() else { continue };
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
                Instr::IsLocked { .. } => continue,
                Instr::Load { load, .. } => (false, *load == Load::Plain),
                Instr::Store { store, .. } => (true, *store == Store::Plain),
                _ => (true, false),
            };
            list.push((v.to_string(), write, plain, held.clone()));
        }
        accs.push(list);
    }
    let mut out = BTreeSet::new();
    for (t, a) in accs.iter().enumerate() {
        for b in accs.iter().skip(t + 1) {
            for (v, wa, pa, ha) in a {
                for (w, wb, pb, hb) in b {
                    if v == w && (*wa || *wb) && (*pa || *pb) && ha.is_disjoint(hb) {
                        out.insert(v.clone());
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The header lines of a test with plain races ([`plain_races`]): the
/// `Flag: data-race` herd7 is expected to print, and why the kernel has
/// the race; none for a race-free test.
pub fn race_note(prog: &Program) -> Vec<String> {
    let races = plain_races(prog);
    if races.is_empty() {
        return Vec::new();
    }
    let kind = |v: &str| {
        let base = v.split_once('_').map_or(v, |(m, rest)| {
            if m.starts_with('m') && m[1..].chars().all(|c| c.is_ascii_digit()) {
                rest
            } else {
                v
            }
        });
        if base.starts_with("state") {
            "state"
        } else if base == "agg" {
            "agg"
        } else if base.starts_with("updates") {
            "updates"
        } else {
            "other"
        }
    };
    let kinds: BTreeSet<&str> = races.iter().map(|v| kind(v)).collect();
    let mut text = format!(
        "Flag: data-race (expected: plain accesses to {} race with another \
         thread's).",
        races.join(", ")
    );
    if kinds.contains("state") {
        text += " The owner's __this_cpu_add() to its counter, a per-CPU \
                 operation not atomic against other CPUs, is plain, and \
                 mem_cgroup_css_rstat_flush() reads the counter remotely with \
                 READ_ONCE(): the kernel marks only the reader, and of the \
                 update/flush race cgroup_rstat_updated() says \"This may race \
                 leading to temporary inaccuracies, which is fine.\"";
    }
    if kinds.contains("agg") {
        text += " The flusher's `+=` of the aggregate under cgroup_rstat_lock \
                 is plain, and memcg_page_state() reads it without the lock \
                 with READ_ONCE(): a race the kernel accepts by marking the \
                 reader.";
    }
    if kinds.contains("updates") {
        text += " The owner's this_cpu_add_return()/this_cpu_xchg() of \
                 stats_updates are per-CPU operations, not atomic against the \
                 flusher's remote WRITE_ONCE() reset: a race of the kernel's \
                 own, not one the export adds.";
    }
    if kinds.contains("other") {
        text += " Any other plain race is the variant's own (a mutant's bug, \
                 or a finding), not one the kernel accepts.";
    }
    text += " A racy test's verdict carries no LKMM guarantee.";
    crate::observe::record::wrap(&text, 70)
}
