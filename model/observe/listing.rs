//! A trace as the kernel's own statements, one per line, for reports a
//! kernel developer reads: `this_cpu_add_return(statc->stats_updates, 40)
//! = 70` where the column diagram says `U.1[0] += 40 (=70)`.
//!
//! Each row names who ran the statement, the memcg and the CPU whose data
//! it touches, and the statement with the kernel's local names (`statc`:
//! the memcg's `vmstats_percpu` on that CPU; `vmstats`: `memcg->vmstats`).
//! The model splits a `this_cpu_*` read-modify-write into its load and its
//! store, since another CPU's store can land between them; the two halves
//! are one row when nothing ran between them, two rows otherwise.

use crate::vocab::obs::{Access, Actor, Idiom, Op, Var};

use super::record::Step;

/// What the names in a listing stand for.
pub const LISTING_LEGEND: &str = "statc is the memcg's vmstats_percpu on the CPU of the \
     row, vmstats its memcg->vmstats, state[i] the one statistic item followed; memcg 0 is \
     root_mem_cgroup. A this_cpu_add_return() or this_cpu_xchg() that another CPU's \
     store lands inside is shown as its load and its store.";

/// A row: who, the memcg and CPU its data belongs to, the statement.
struct Row {
    actor: Actor,
    memcg: Option<u8>,
    cpu: Option<usize>,
    text: String,
}

/// The local RMWs the model splits into a load and a store.
fn split_rmw(i: Idiom) -> bool {
    matches!(i, Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg)
}

/// The lvalue the kernel names at the access.
fn lvalue(v: Var) -> String {
    match v {
        Var::State { .. } => "statc->state[i]".into(),
        Var::StatePrev { .. } => "statc->state_prev[i]".into(),
        Var::Aggregate { .. } => "vmstats->state[i]".into(),
        Var::Pending { .. } => "vmstats->state_pending[i]".into(),
        Var::StatsUpdates { memcg: Some(_), .. } => "statc->stats_updates".into(),
        Var::StatsUpdates { memcg: None, .. } => "stats_updates".into(),
        Var::Threshold { memcg: Some(_) } => "vmstats->stats_updates".into(),
        Var::Threshold { memcg: None } => "stats_flush_threshold".into(),
        Var::UpdatedNext { .. } => "rstatc->updated_next".into(),
        Var::LlistNode { .. } => "rstatc->lnode.next".into(),
        Var::LlistHead { .. } => "lhead->first".into(),
        Var::Css { field, .. } => format!("css->{field}"),
        other => other.kernel(),
    }
}

/// An atomic's or a lock's address as the kernel passes it.
fn addr(v: Var) -> String {
    format!("&{}", lvalue(v))
}

/// The other half of a split local RMW: for a load, the store that
/// completes it; for a store, the load that began it.
#[derive(Clone, Copy)]
enum Half {
    /// Shown alone.
    None,
    /// The store right after the load: one row.
    Joined(Access),
    /// The load, with the store that completes it later.
    Begins(Access),
    /// The store, with the load that began it earlier.
    Ends(Access),
}

/// The statement of one access.
fn statement(a: Access, half: Half) -> String {
    let l = lvalue(a.var);
    let written = |h: Access| h.op.written().unwrap_or(0);
    let loaded = |h: Access| h.op.read().unwrap_or(0);
    match (a.op, a.idiom, half) {
        (_, Idiom::SmpMb, _) => "smp_mb()".into(),
        (_, Idiom::SmpRmb, _) => "smp_rmb()".into(),
        (_, Idiom::SmpWmb, _) => "smp_wmb()".into(),
        (Op::Read(old), Idiom::ThisCpuAddReturn, Half::Joined(w)) => {
            let new = written(w);
            format!("this_cpu_add_return({l}, {}) = {new}", new - old)
        }
        (Op::Read(old), Idiom::ThisCpuAddReturn, Half::Begins(w)) => {
            format!("this_cpu_add_return({l}, {}) loads {old}", written(w) - old)
        }
        (Op::Write(new), Idiom::ThisCpuAddReturn, Half::Ends(r)) => format!(
            "... this_cpu_add_return({l}, {}) stores {new}, returns {new}",
            new - loaded(r)
        ),
        (Op::Read(old), Idiom::ThisCpuXchg, Half::Joined(w)) => {
            format!("this_cpu_xchg({l}, {}) = {old}", written(w))
        }
        (Op::Read(old), Idiom::ThisCpuXchg, Half::Begins(w)) => {
            format!("this_cpu_xchg({l}, {}) loads {old}", written(w))
        }
        (Op::Write(new), Idiom::ThisCpuXchg, Half::Ends(r)) => format!(
            "... this_cpu_xchg({l}, {new}) stores {new}, returns {}",
            loaded(r)
        ),
        (Op::Read(old), Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg, _) => {
            format!("{l} == {old}")
        }
        (Op::Add { val, .. }, Idiom::ThisCpuAdd, _) => format!("__this_cpu_add({l}, {val})"),
        (Op::Add { val, new }, Idiom::ThisCpuAddReturn, _) => {
            format!("__this_cpu_add_return({l}, {val}) = {new}")
        }
        (Op::Add { val, new }, _, _) if matches!(a.var, Var::Aggregate { .. }) => {
            format!("{l} += {val} (= {new})")
        }
        (Op::Add { val, .. }, _, _) => format!("atomic_add({val}, {})", addr(a.var)),
        (op, idiom, _) => plain_statement(a, op, idiom, &l),
    }
}

/// The statements that are one access whatever runs around them.
fn plain_statement(a: Access, op: Op, idiom: Idiom, l: &str) -> String {
    match (op, idiom) {
        (Op::Read(x), Idiom::AtomicRead) => format!("atomic_read({}) = {x}", addr(a.var)),
        (Op::Read(x), Idiom::ReadOnce) => format!("READ_ONCE({l}) = {x}"),
        (Op::Read(x), Idiom::LoadAcquire) => format!("smp_load_acquire(&{l}) = {x}"),
        (Op::Read(x), Idiom::ThisCpuRead) => format!("__this_cpu_read({l}) = {x}"),
        (Op::Read(x), Idiom::SpinIsLocked) => {
            format!("spin_is_locked({}) = {}", addr(a.var), u8::from(x != 0))
        }
        (Op::Read(x), _) => format!("{l} == {x}"),
        (Op::Write(x), Idiom::AtomicSet) => format!("atomic_set({}, {x})", addr(a.var)),
        (Op::Write(x), Idiom::WriteOnce) => format!("WRITE_ONCE({l}, {x})"),
        (Op::Write(x), Idiom::StoreRelease) => format!("smp_store_release(&{l}, {x})"),
        (Op::Write(x), Idiom::ThisCpuWrite) => format!("__this_cpu_write({l}, {x})"),
        (Op::Write(_), Idiom::SpinLock) => format!("spin_lock({})", addr(a.var)),
        (Op::Write(_), Idiom::SpinUnlock) => format!("spin_unlock({})", addr(a.var)),
        (Op::Write(x), _) => format!("{l} = {x}"),
        (Op::CmpXchg { ok: false, .. }, Idiom::SpinLock) => {
            format!("spin_lock({}) spins", addr(a.var))
        }
        (Op::CmpXchg { ok, .. }, Idiom::SpinTrylock) => {
            format!("spin_trylock({}) = {}", addr(a.var), u8::from(ok))
        }
        (Op::CmpXchg { old, new, ok }, Idiom::AtomicCmpxchg) => format!(
            "atomic_cmpxchg({}, ..., {new}) = {old}{}",
            addr(a.var),
            if ok { "" } else { " (fails)" }
        ),
        (Op::CmpXchg { old, new, ok }, _) => format!(
            "cmpxchg(&{l}, ..., {new}) = {old}{}",
            if ok { "" } else { " (fails)" }
        ),
        (Op::Xchg { old, new }, Idiom::AtomicXchg) => {
            format!("atomic_xchg({}, {new}) = {old}", addr(a.var))
        }
        (Op::Xchg { old, new }, _) => format!("xchg(&{l}, {new}) = {old}"),
        (Op::Add { val, .. }, _) => format!("atomic_add({val}, {})", addr(a.var)),
    }
}

/// A step that is not one access, in kernel words.
fn event(text: &str) -> String {
    match text {
        "-> flush" => "memcg_vmstats_needs_flush() is true: flush".into(),
        "-> no flush" => "memcg_vmstats_needs_flush() is false: no flush".into(),
        "-> skip the add" => "already flushable: the atomic_add() is skipped".into(),
        "-> break" => "already flushable: break, the ancestors are not visited".into(),
        "-> due" => "the ratelimit has expired: flush".into(),
        "-> not due, skip" => "the ratelimit has not expired: no flush".into(),
        "(all joined)" => "(every update has returned)".into(),
        t => t.trim_start_matches("-> ").to_string(),
    }
}

/// Whether `b`, a later step of the same CPU, is the store completing
/// the split RMW whose load is `a`.
fn completes(a: Access, b: Access) -> bool {
    split_rmw(a.idiom)
        && b.idiom == a.idiom
        && b.var == a.var
        && matches!(a.op, Op::Read(_))
        && matches!(b.op, Op::Write(_))
}

/// The names a release uses for the statements the model prints in older
/// names (`flush_next_time`, `cgroup_rstat_lock`, `__this_cpu_add()`), and
/// a sentence for the legend saying which release the listing speaks.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// `(model's, release's)` pairs, applied to every statement.
    pub renames: &'static [(&'static str, &'static str)],
    /// Added to the legend.
    pub legend: &'static str,
}

/// The names as the model prints them (v5.x-v6.7).
pub const OLDER: Dialect = Dialect {
    renames: &[],
    legend: "",
};

/// v6.8-v6.15: `flush_last_time` replaced `flush_next_time`.
pub const V6_8: Dialect = Dialect {
    renames: &[("flush_next_time", "flush_last_time")],
    legend: "The statements are v6.8's.",
};

/// v6.16 on (v6.17.0 read): `mod_memcg_state()` with `get_cpu()` and
/// `this_cpu_add()`, the per-subsystem lock taken by `__css_rstat_lock()`.
pub const V6_17: Dialect = Dialect {
    renames: &[
        ("flush_next_time", "flush_last_time"),
        (
            "spin_lock(&cgroup_rstat_lock)",
            "__css_rstat_lock(css, cpu)",
        ),
        (
            "spin_unlock(&cgroup_rstat_lock)",
            "__css_rstat_unlock(css, cpu)",
        ),
        (
            "__this_cpu_add(statc->state[i]",
            "this_cpu_add(statc->state[i]",
        ),
        ("__mod_memcg_state()", "mod_memcg_state()"),
    ],
    legend: "The statements are v6.17's: mod_memcg_state() adds with this_cpu_add() \
             between get_cpu() and put_cpu(), and __css_rstat_lock() takes \
             ss->rstat_ss_lock, which css_rstat_flush() holds for each CPU it walks.",
};

impl Dialect {
    /// `text` in this dialect.
    pub fn apply(&self, text: &str) -> String {
        self.renames
            .iter()
            .fold(text.to_string(), |s, (from, to)| s.replace(from, to))
    }
}

/// `steps` with each split local RMW made whole where that changes
/// nothing: when every store another CPU makes to the same word between
/// the load and the store writes the value the load read, the load can
/// be taken after them with the same result, so the RMW is shown in one
/// row after them (a reset of 0 over 0 inside a `this_cpu_add_return()`
/// is a reset before it).
fn whole_rmws(steps: &[Step]) -> Vec<Step> {
    let mut steps = steps.to_vec();
    let mut i = 0;
    while i < steps.len() {
        let Some(a) = steps[i].access else {
            i += 1;
            continue;
        };
        let Op::Read(old) = a.op else {
            i += 1;
            continue;
        };
        let next = steps[i + 1..]
            .iter()
            .position(|n| n.actor == steps[i].actor && n.access.is_some())
            .map(|k| i + 1 + k);
        let Some(j) = next.filter(|&j| j > i + 1) else {
            i += 1;
            continue;
        };
        let b = steps[j].access.expect("an access");
        let same = steps[i + 1..j].iter().all(|s| match s.access {
            Some(x) if x.var == a.var => match x.op {
                Op::Write(v) => v == old,
                Op::Read(_) => true,
                _ => false,
            },
            _ => true,
        });
        if completes(a, b) && same {
            let load = steps.remove(i);
            steps.insert(j - 1, load);
            // The step now at `i` is the first of those that ran between.
            continue;
        }
        i += 1;
    }
    steps
}

/// The rows of `steps`, joining the halves of a local RMW that nothing
/// interrupted and naming each half of one that something did.
fn rows(steps: &[Step]) -> Vec<Row> {
    let steps = &whole_rmws(steps);
    let mut out = Vec::new();
    // Per actor: the memcg of its latest access (a decision is about it).
    let mut last_memcg: Vec<(Actor, Option<u8>)> = Vec::new();
    // Loads whose store comes later: (index of the store, the load).
    let mut pending: Vec<(usize, Access)> = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let s = &steps[i];
        let Some(a) = s.access else {
            let memcg = last_memcg
                .iter()
                .find(|(x, _)| *x == s.actor)
                .and_then(|(_, m)| *m);
            let decision = s.text.starts_with("-> skip") || s.text == "-> break";
            out.push(Row {
                actor: s.actor,
                memcg: if decision { memcg } else { None },
                cpu: None,
                text: event(&s.text),
            });
            i += 1;
            continue;
        };
        let later = steps[i + 1..]
            .iter()
            .position(|n| n.actor == s.actor && n.access.is_some())
            .map(|k| i + 1 + k);
        let next = later.and_then(|j| steps[j].access.map(|b| (j, b)));
        let half = match next {
            Some((j, b)) if completes(a, b) && j == i + 1 => Half::Joined(b),
            Some((j, b)) if completes(a, b) => {
                pending.push((j, a));
                Half::Begins(b)
            }
            _ => match pending.iter().position(|(j, _)| *j == i) {
                Some(k) => Half::Ends(pending.swap_remove(k).1),
                None => Half::None,
            },
        };
        match last_memcg.iter_mut().find(|(x, _)| *x == s.actor) {
            Some(e) => e.1 = a.var.memcg(),
            None => last_memcg.push((s.actor, a.var.memcg())),
        }
        out.push(Row {
            actor: s.actor,
            memcg: a.var.memcg(),
            cpu: a.var.cpu(),
            text: statement(a, half),
        });
        i += if matches!(half, Half::Joined(_)) {
            2
        } else {
            1
        };
    }
    out
}

/// Break `text` at spaces outside parentheses into lines of at most
/// `width`; a parenthesis or an identifier is never split unless it alone
/// is wider than the line.
pub fn wrap_outside_parens(text: &str, width: usize) -> Vec<String> {
    let mut atoms: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if ch == ' ' && depth <= 0 {
            if !cur.is_empty() {
                atoms.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(ch);
        }
    }
    if !cur.is_empty() {
        atoms.push(cur);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for atom in atoms {
        // An atom wider than a line (a long parenthetical) is broken at its
        // own spaces.
        let parts: Vec<String> = if atom.chars().count() > width {
            atom.split(' ').map(str::to_string).collect()
        } else {
            vec![atom]
        };
        for p in parts {
            let len = line.chars().count();
            if len > 0 && len + 1 + p.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&p);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `steps` as a numbered listing within `width` columns, with the legend
/// above and `predicate` below.
pub fn render_listing(initial: &str, steps: &[Step], predicate: &str, width: usize) -> String {
    render_listing_as(initial, steps, predicate, width, &OLDER)
}

/// [`render_listing`] in `dialect`'s names.
pub fn render_listing_as(
    initial: &str,
    steps: &[Step],
    predicate: &str,
    width: usize,
    dialect: &Dialect,
) -> String {
    let mut rows = rows(steps);
    for r in &mut rows {
        r.text = dialect.apply(&r.text);
    }
    let initial = dialect.apply(initial);
    let legend = if dialect.legend.is_empty() {
        LISTING_LEGEND.to_string()
    } else {
        format!("{LISTING_LEGEND} {}", dialect.legend)
    };
    let who_w = rows
        .iter()
        .map(|r| r.actor.to_string().len())
        .max()
        .unwrap_or(5)
        .max(5);
    let num_w = rows.len().to_string().len().max(2);
    let mut out = String::new();
    for p in [initial.as_str(), legend.as_str()] {
        for line in wrap_outside_parens(p, width) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    let head = format!("{:>num_w$}  {:<who_w$}  memcg cpu  ", "", "");
    let text_w = width.saturating_sub(head.len()).max(24);
    out.push_str(&format!(
        "{:>num_w$}  {:<who_w$}  memcg cpu  statement\n",
        "", "who"
    ));
    for (k, r) in rows.iter().enumerate() {
        let memcg = r.memcg.map_or(String::new(), |m| m.to_string());
        let cpu = r.cpu.map_or(String::new(), |c| c.to_string());
        for (j, piece) in wrap_outside_parens(&r.text, text_w).into_iter().enumerate() {
            let line = if j == 0 {
                format!(
                    "{:>num_w$}  {:<who_w$}  {memcg:<5} {cpu:<3}  {piece}",
                    k + 1,
                    r.actor.to_string()
                )
            } else {
                format!("{}  {piece}", " ".repeat(head.len() - 2))
            };
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.push('\n');
    for line in wrap_outside_parens(predicate, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
