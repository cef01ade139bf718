//! Kernel-level traces of one execution, built from observations, and
//! their rendering as the `CPU 0 / CPU 1` column diagrams of
//! Documentation/memory-barriers.txt.
//!
//! Steps are recorded in the step of the operation they describe, so their
//! order is the execution order. Under loom a load may still return an
//! older value than the one last written in that order (weak memory); the
//! step shows the value the load actually returned.
//!
//! Each step's text is short enough for its column at 80 characters (at
//! most [`MAX_STEP`] characters), using the names of the legend
//! ([`LEGEND`]).

use serde::{Deserialize, Serialize};

use crate::vocab::obs::{Access, Actor, Idiom, LifeEvent, Obs, Op, Tp, Var};

/// One kernel-level step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Who ran it.
    pub actor: Actor,
    /// What it did, in kernel terms, with the values involved.
    pub text: String,
    /// The access it stands for, if it is one (for litmus export).
    #[serde(skip)]
    pub access: Option<Access>,
}

/// The longest step text the notation produces for the model's own
/// variables: four columns of this width fit 80 characters.
pub const MAX_STEP: usize = 18;

/// What the short names in traces stand for, one per line.
pub const LEGEND: &str = "S[c]  memcg->vmstats_percpu->state[0] on CPU c
U[c]  stats_updates on CPU c
thr   stats_flush_threshold
agg   memcg->vmstats.state[0]
flush stats_flush_lock; rstat = cgroup_rstat_lock
ongoing stats_flush_ongoing (v6.4-v6.7)";

/// [`LEGEND`] for a memcg tree (v6.8 on): names carry the memcg as `.m`
/// (no suffix: the root), the threshold is per memcg.
pub const LEGEND_TREE: &str = "S.m[c] memcg m's vmstats_percpu->state[0] on CPU c
U.m[c] memcg m's vmstats_percpu->stats_updates on CPU c (v6.8+)
thr.m  memcg m's vmstats->stats_updates
agg.m  memcg m's vmstats->state[0]
rstat  cgroup_rstat_lock (v6.17+: css_rstat_flush() takes it per CPU)";

/// [`LEGEND`] for the lifetime scenarios.
pub const LEGEND_LIFE: &str = "S.m[c]    memcg m's vmstats_percpu->state[0] on CPU c
agg.m     memcg m's vmstats->state[0]
on.m[c]   memcg m on CPU c's updated tree (v6.8 form); ln.m[c], lhead[c]: the llist (v6.17+)
refcnt.m  css->refcnt; rstat_css_node.next.m/.prev.m, rstat_css_list.next.m/.prev.m:
          the cgroup's rstat_css_list (up to v6.15); new_css.*: a later memory css
self.refcnt.m  the cgroup's cgrp->self.refcnt (up to v6.15)
objcg     objcg->memcg, the memcg updaters charge through RCU";

/// The text of an observation's step, or `None` for observations traces
/// leave out (a flusher's plain bookkeeping, tracepoints that only mark
/// sections). `in_section` says whether the actor is flushing.
pub fn step_text(obs: &Obs, in_section: bool) -> Option<String> {
    match *obs {
        Obs::Access(a) => access_text(a, in_section),
        Obs::Trace(Tp::FlushStats { needs_flush, .. }) => Some(
            if needs_flush {
                "-> flush"
            } else {
                "-> no flush"
            }
            .into(),
        ),
        Obs::Trace(Tp::FlushRatelimited { due, .. }) => {
            Some(if due { "-> due" } else { "-> not due, skip" }.into())
        }
        Obs::Trace(_)
        | Obs::UpdateDone { .. }
        | Obs::Read { .. }
        | Obs::FlushCall { .. }
        | Obs::Final { .. }
        | Obs::Settled { .. } => None,
        Obs::Quiescent => Some("(all joined)".into()),
        Obs::Life(e) => Some(match e {
            LifeEvent::Deref { memcg } => format!("-> charges memcg {memcg}"),
            LifeEvent::Unlocked => "rcu_read_unlock()".into(),
            LifeEvent::Offline { memcg } => format!("memcg {memcg} offline"),
            LifeEvent::Released { memcg } => format!("released {memcg}"),
            LifeEvent::ExitCheck { memcg, on_tree } => {
                format!("exit({memcg}): on {on_tree} trees")
            }
            LifeEvent::Freed { memcg, .. } => format!("memcg {memcg} FREED"),
            LifeEvent::CgroupFreed { memcg } => format!("cgroup {memcg} FREED"),
            LifeEvent::Linked { memcg } => format!("new css of cgroup {memcg} linked"),
        }),
    }
}

fn access_text(a: Access, in_section: bool) -> Option<String> {
    let v = a.var.short();
    let read = |name: &str, x: i64| format!("{name}({v})={x}");
    Some(match (a.var, a.op, a.idiom) {
        (Var::StatePrev { .. } | Var::Pending { .. } | Var::Flushing, _, _) => return None,
        (Var::Aggregate { .. }, Op::Read(_), _) if in_section => return None,
        (Var::Jiffies, Op::Read(_), _) => return None,
        (Var::Dwork, Op::Read(_), _) => return None,
        (Var::Dwork, Op::Write(x), _) if x == i64::MAX => return None,
        (Var::Dwork, op, _) => format!("dwork due {}", op.written().unwrap_or(0)),
        (Var::Jiffies, op, _) => format!("jiffies = {}", op.written().unwrap_or(0)),
        (Var::FlushTime, Op::Write(x), _) => format!("flush_next_time={x}"),
        (_, _, Idiom::SmpMb) => "smp_mb()".into(),
        (_, _, Idiom::SmpRmb) => "smp_rmb()".into(),
        (_, _, Idiom::SmpWmb) => "smp_wmb()".into(),
        (_, Op::Write(x), Idiom::StoreRelease) => format!("smp_store_release({v})={x}"),
        (_, Op::Add { val, .. }, Idiom::ThisCpuAdd) => format!("{v} += {val}"),
        (_, Op::Add { val, new }, Idiom::ThisCpuAddReturn) => format!("{v} += {val} (={new})"),
        (_, Op::Add { val, .. }, _) => format!("atomic_add({val}, {v})"),
        (_, Op::Write(x), Idiom::ThisCpuWrite | Idiom::Plain) => format!("{v} = {x}"),
        (Var::Aggregate { .. }, Op::Write(x), _) => format!("{v} = {x}"),
        (_, Op::Write(x), Idiom::AtomicSet) => format!("atomic_set({v}, {x})"),
        (_, Op::Write(x), Idiom::WriteOnce) => format!("WRITE_ONCE({v})={x}"),
        (_, Op::Write(_), Idiom::SpinLock) => format!("spin_lock({v})"),
        (_, Op::CmpXchg { ok: false, .. }, Idiom::SpinLock) => format!("spin_lock({v}) waits"),
        (_, Op::Read(x), Idiom::ThisCpuAddReturn | Idiom::ThisCpuXchg) => format!("{v} == {x}"),
        (_, Op::Write(x), Idiom::ThisCpuAddReturn) => format!("{v} = {x}"),
        (_, Op::Write(x), Idiom::ThisCpuXchg) => format!("xchg({v},{x})"),
        (_, Op::Write(_), Idiom::SpinUnlock) => format!("spin_unlock({v})"),
        (_, Op::Write(x), _) => format!("{v} = {x}"),
        (_, Op::Read(x), Idiom::AtomicRead) => read("atomic_read", x),
        (_, Op::Read(x), Idiom::ReadOnce) => read("READ_ONCE", x),
        (_, Op::Read(x), Idiom::SpinIsLocked) => read("is_locked", i64::from(x != 0)),
        (_, Op::Read(x), _) => format!("{v} == {x}"),
        (_, Op::CmpXchg { ok, .. }, Idiom::SpinTrylock) => {
            format!("trylock({v})={}", u8::from(ok))
        }
        (_, Op::CmpXchg { old, new, ok }, _) => {
            format!("cmpxchg({v},{new})={old}{}", if ok { "" } else { "!" })
        }
        (_, Op::Xchg { old, new }, _) => format!("xchg({v},{new})={old}"),
    })
}

/// `steps` with kernel identifiers for the model's short names
/// ([`Var::kernel`]): each access step's variable is renamed; other steps
/// are kept.
pub fn with_kernel_names(steps: &[Step]) -> Vec<Step> {
    steps
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if let Some(a) = s.access {
                s.text = s.text.replacen(&a.var.short(), &a.var.kernel(), 1);
            }
            s
        })
        .collect()
}

/// The narrowest column.
pub const MIN_COLUMN: usize = 12;

/// Render `steps` as a column diagram: one column per actor, one row per
/// step in execution order, an initial-state line above and the violated
/// predicate below. A column is as wide as its widest step, so no step is
/// split; with four columns or fewer the diagram fits `width`.
pub fn render_columns(initial: &str, steps: &[Step], predicate: &str, width: usize) -> String {
    let mut actors: Vec<Actor> = steps.iter().map(|s| s.actor).collect();
    actors.sort();
    actors.dedup();
    let n = actors.len().max(1);
    let num_w = steps.len().to_string().len().max(2);
    let gutter = if n >= 4 { 1 } else { 2 };
    let natural = steps
        .iter()
        .map(|s| s.text.len())
        .chain(actors.iter().map(|a| a.to_string().len()))
        .max()
        .unwrap_or(8);
    let avail = width.saturating_sub(num_w + 1 + gutter * (n - 1)) / n;
    // Use the room there is when steps are short; a column runs over its
    // share of the width by a few characters rather than cut a step, and
    // wraps (at a space or a parenthesis) a step much longer than that.
    let col = if natural > avail + 4 {
        avail.max(MIN_COLUMN)
    } else {
        natural.max(MIN_COLUMN).min(avail.max(natural))
    };
    let mut out = String::new();
    for line in initial.lines().flat_map(|l| wrap(l, width)) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    let mut header = format!("{:>num_w$} ", "");
    for (i, a) in actors.iter().enumerate() {
        if i > 0 {
            header.push_str(&" ".repeat(gutter));
        }
        header.push_str(&format!("{:<col$}", a.to_string()));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    let mut rule = format!("{:>num_w$} ", "");
    for i in 0..n {
        if i > 0 {
            rule.push_str(&" ".repeat(gutter));
        }
        rule.push_str(&"-".repeat(col));
    }
    out.push_str(&rule);
    out.push('\n');
    for (k, s) in steps.iter().enumerate() {
        let idx = actors.iter().position(|a| *a == s.actor).unwrap_or(0);
        for (j, piece) in wrap(&s.text, col).into_iter().enumerate() {
            let mut line = if j == 0 {
                format!("{:>num_w$} ", k + 1)
            } else {
                format!("{:>num_w$} ", "")
            };
            line.push_str(&" ".repeat(idx * (col + gutter)));
            line.push_str(&piece);
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.push('\n');
    for line in wrap(predicate, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Break `text` into lines of at most `width` characters: at spaces, or
/// after `(` and `,`, and only inside a name when nothing else fits.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut atoms: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        cur.push(ch);
        if ch == ' ' || ch == '(' || ch == ',' {
            atoms.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        atoms.push(cur);
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for mut atom in atoms {
        if line.len() + atom.trim_end().len() > width && !line.is_empty() {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        while atom.trim_end().len() > width {
            let rest = atom.split_off(width);
            lines.push(atom);
            atom = rest;
        }
        line.push_str(&atom);
    }
    if !line.trim_end().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}
