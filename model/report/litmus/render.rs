//! A [`Program`] printed in the C-litmus syntax herd7 parses with the
//! Linux-kernel memory model: one register per declaration, every
//! variable's initial value, the primitives spelled as `linux-kernel.def`
//! spells them, a plain access followed by the kernel's spelling as a
//! comment, and the kernel's `if`s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::prog::{Cond, Instr, Load, Program, Store, Ty};

impl Instr {
    /// The statement in herd7's C syntax, given its variable's type.
    pub(super) fn c(&self, ty: Option<Ty>) -> String {
        let atomic = ty == Some(Ty::Atomic);
        match self {
            Instr::Load { load, var, reg } => match load {
                Load::Once => format!("r{reg} = READ_ONCE(*{var});"),
                Load::Acquire => format!("r{reg} = smp_load_acquire({var});"),
                Load::Atomic => format!("r{reg} = atomic_read({var});"),
                Load::Plain(None) => format!("r{reg} = *{var};"),
                Load::Plain(Some(k)) => format!("r{reg} = *{var}; // {k}"),
            },
            Instr::Store { store, var, val } => match store {
                Store::Once => format!("WRITE_ONCE(*{var}, {val});"),
                Store::Release => format!("smp_store_release({var}, {val});"),
                Store::Atomic => format!("atomic_set({var}, {val});"),
                Store::Plain(None) => format!("*{var} = {val};"),
                Store::Plain(Some(k)) => format!("*{var} = {val}; // {k}"),
            },
            Instr::AtomicAdd { var, val } => format!("atomic_add({val}, {var});"),
            Instr::AtomicAddReturn { var, val, reg } => {
                format!("r{reg} = atomic_add_return({val}, {var});")
            }
            Instr::Xchg { var, val, reg } => format!("r{reg} = atomic_xchg({var}, {val});"),
            Instr::Cmpxchg { var, old, new, reg } if atomic => {
                format!("r{reg} = atomic_cmpxchg({var}, {old}, {new});")
            }
            Instr::Cmpxchg { var, old, new, reg } => {
                format!("r{reg} = cmpxchg({var}, {old}, {new});")
            }
            Instr::Fence(f) => format!("{}();", f.name()),
            Instr::Lock(var) => format!("spin_lock({var});"),
            Instr::Unlock(var) => format!("spin_unlock({var});"),
            Instr::Trylock { var, reg } => format!("r{reg} = spin_trylock({var});"),
            Instr::IsLocked { var, reg } => format!("r{reg} = spin_is_locked({var});"),
            Instr::If { reg, eq, val, .. } => {
                let op = if *eq { "==" } else { "!=" };
                // herd7's C parser has no unary minus.
                let v = if *val < 0 {
                    format!("(0 - {})", val.unsigned_abs())
                } else {
                    val.to_string()
                };
                format!("if (r{reg} {op} {v}) {{")
            }
        }
    }

    /// The statement's lines, indented by `depth` tabs (an `if` spans
    /// several), given the variables' types.
    fn lines(&self, types: &BTreeMap<String, Ty>, depth: usize, out: &mut String) {
        let tabs = "\t".repeat(depth);
        let ty = self.var().map(|v| types[v]);
        let _ = writeln!(out, "{tabs}{}", self.c(ty));
        if let Instr::If { body, .. } = self {
            for i in body {
                i.lines(types, depth + 1, out);
            }
            let _ = writeln!(out, "{tabs}}}");
        }
    }
}

impl Program {
    /// The test in herd7's C-litmus syntax.
    pub fn render(&self) -> Result<String, String> {
        let types = self.validate()?;
        let mut out = String::new();
        let _ = writeln!(out, "C {}\n\n(*", self.name);
        if let Some(e) = self.expected {
            let race = if self.datarace { " DATARACE" } else { "" };
            let _ = writeln!(out, " * Result: {e}{race}");
            if !self.doc.is_empty() {
                let _ = writeln!(out, " *");
            }
        }
        for l in &self.doc {
            if l.is_empty() {
                let _ = writeln!(out, " *");
            } else {
                let _ = writeln!(out, " * {l}");
            }
        }
        let _ = writeln!(out, " *)\n");
        // Every variable but the locks, with its initial value.
        let inits: Vec<String> = types
            .iter()
            .filter(|(_, t)| **t != Ty::Spinlock)
            .map(|(v, _)| format!("{v}={};", self.init.get(v).copied().unwrap_or(0)))
            .collect();
        if inits.is_empty() {
            let _ = writeln!(out, "{{}}\n");
        } else {
            let _ = writeln!(out, "{{ {} }}\n", inits.join(" "));
        }
        for (p, t) in self.threads.iter().enumerate() {
            let used: BTreeSet<&str> = t.flat().into_iter().filter_map(Instr::var).collect();
            let params: Vec<String> = used
                .iter()
                .map(|v| format!("{} *{v}", types[*v].c()))
                .collect();
            let note = if t.note.is_empty() {
                String::new()
            } else {
                format!(" /* {} */", t.note)
            };
            let _ = writeln!(out, "P{p}({}){note}\n{{", params.join(", "));
            let regs = t.regs();
            for r in &regs {
                let _ = writeln!(out, "\tint r{r};");
            }
            if !regs.is_empty() {
                let _ = writeln!(out);
            }
            for i in &t.body {
                i.lines(&types, 1, &mut out);
            }
            let _ = writeln!(out, "}}\n");
        }
        let terms: Vec<String> = self.exists.iter().map(Cond::to_string).collect();
        // Lines of at most 78 columns: herd7 reads the clause across them.
        let mut line = String::from("exists (");
        for (k, t) in terms.iter().enumerate() {
            let last = k + 1 == terms.len();
            let piece = if last {
                format!("{t})")
            } else {
                format!("{t} /\\")
            };
            if line.len() + piece.len() > 78 && !line.ends_with('(') {
                let _ = writeln!(out, "{}", line.trim_end());
                line = String::from("\t");
            }
            line += &piece;
            line.push(' ');
        }
        let _ = writeln!(out, "{}", line.trim_end());
        Ok(out)
    }
}
