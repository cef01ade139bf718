//! Editing a litmus test into a fix candidate's: a barrier after chosen
//! statements, an access marked, in any thread and inside the kernel's
//! `if`s.

use crate::report::litmus::prog::{Instr, Load, Program, Store};

/// `body` with `add` after every statement `at` matches, the statements
/// an `if` guards included; whether any did.
fn insert_in(body: Vec<Instr>, at: &dyn Fn(&Instr) -> bool, add: &Instr) -> (Vec<Instr>, bool) {
    let mut out = Vec::new();
    let mut hit = false;
    for i in body {
        let i = match i {
            Instr::If { reg, eq, val, body } => {
                let (body, h) = insert_in(body, at, add);
                hit |= h;
                Instr::If { reg, eq, val, body }
            }
            other => other,
        };
        let m = at(&i);
        out.push(i);
        if m {
            out.push(add.clone());
            hit = true;
        }
    }
    (out, hit)
}

/// The thread of `p` noted `note`.
fn thread<'a>(p: &'a mut Program, note: &str) -> Result<&'a mut Vec<Instr>, String> {
    let name = p.name.clone();
    p.threads
        .iter_mut()
        .find(|t| t.note == note)
        .map(|t| &mut t.body)
        .ok_or_else(|| format!("litmus test {name}: no thread {note}"))
}

/// `prog` with `add` inserted after every statement of the thread noted
/// `note` that `at` matches; an error if none does (the witness changed).
pub(super) fn insert_after(
    prog: &Program,
    note: &str,
    at: impl Fn(&Instr) -> bool,
    add: Instr,
) -> Result<Program, String> {
    let mut p = prog.clone();
    let t = thread(&mut p, note)?;
    let (body, hit) = insert_in(std::mem::take(t), &at, &add);
    *t = body;
    if !hit {
        return Err(format!(
            "litmus test {}: nothing in {note} to put {add:?} after",
            prog.name
        ));
    }
    Ok(p)
}

/// `prog` with every plain access of `var` by the thread noted `note`
/// marked: loads `READ_ONCE()`, stores `WRITE_ONCE()` (a fix candidate's
/// change); an error if there is none (the witness changed).
pub(super) fn mark_once(prog: &Program, note: &str, var: &str) -> Result<Program, String> {
    fn walk(body: &mut [Instr], var: &str) -> bool {
        let mut hit = false;
        for i in body {
            match i {
                Instr::Load { load, var: v, .. } if v == var && load.is_plain() => {
                    *load = Load::Once;
                    hit = true;
                }
                Instr::Store { store, var: v, .. } if v == var && store.is_plain() => {
                    *store = Store::Once;
                    hit = true;
                }
                Instr::If { body, .. } => hit |= walk(body, var),
                _ => {}
            }
        }
        hit
    }
    let mut p = prog.clone();
    if !walk(thread(&mut p, note)?, var) {
        return Err(format!(
            "litmus test {}: no plain access of {var} in {note} to mark",
            prog.name
        ));
    }
    Ok(p)
}

/// `prog` with `add` inserted after the first statement of the thread
/// noted `note` that `at` matches (the statements an `if` guards
/// included); an error if none does.
pub(super) fn insert_after_first(
    prog: &Program,
    note: &str,
    at: impl Fn(&Instr) -> bool,
    add: Instr,
) -> Result<Program, String> {
    let done = std::cell::Cell::new(false);
    insert_after(
        prog,
        note,
        |i| {
            let m = !done.get() && at(i);
            done.set(done.get() || m);
            m
        },
        add,
    )
}

/// Whether `i` stores to a variable named `var`.
pub(super) fn stores(i: &Instr, var: &str) -> bool {
    matches!(i, Instr::Store { var: v, store: Store::Once | Store::Plain(_), .. } if v == var)
}

/// Whether `i` is an `atomic_read()` of `var`.
pub(super) fn reads_atomic(i: &Instr, var: &str) -> bool {
    matches!(i, Instr::Load { var: v, load: Load::Atomic, .. } if v == var)
}
