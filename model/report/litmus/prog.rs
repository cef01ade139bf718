//! A litmus test as data: each thread's kernel primitives, the initial
//! state and the `exists` clause.
//!
//! The same [`Program`] is printed in the C-litmus syntax herd7 parses with
//! the Linux-kernel memory model (tools/memory-model: one register per
//! declaration, every variable's initial value, the primitives spelled as
//! `linux-kernel.def` spells them), and run under the crate's backends
//! through the kernel-idiom layer ([`crate::kernel`]), so one test has
//! both an LKMM verdict (herd7's) and the model's (loom's, the DFS's).
//!
//! Running a test: each thread `P<i>` is a model thread (the last one runs
//! on the execution's main thread, so five threads fit loom's limit), and
//! after joining them main reads the final values the `exists` clause
//! names. Plain C accesses (`*x`, `r = *x`) run as relaxed atomics: herd7
//! flags a data race on them, this runner does not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The C type of a litmus variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    /// `int` (`READ_ONCE`, `WRITE_ONCE`, `smp_load_acquire`, `cmpxchg`).
    Int,
    /// `atomic_t` (`atomic_read`, `atomic_add`, ...).
    Atomic,
    /// `spinlock_t`.
    Spinlock,
}

impl Ty {
    /// The C spelling.
    pub fn c(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Atomic => "atomic_t",
            Ty::Spinlock => "spinlock_t",
        }
    }
}

/// A load's primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// `READ_ONCE(*x)`.
    Once,
    /// `smp_load_acquire(x)`.
    Acquire,
    /// `atomic_read(x)`.
    Atomic,
    /// A plain C load, `*x`, with the kernel's spelling where it has one
    /// (`data_race()`, a per-CPU operation), printed as a comment.
    Plain(Option<&'static str>),
}

/// A store's primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// `WRITE_ONCE(*x, v)`.
    Once,
    /// `smp_store_release(x, v)`.
    Release,
    /// `atomic_set(x, v)`.
    Atomic,
    /// A plain C store, `*x = v`, with the kernel's spelling where it has
    /// one (`__this_cpu_add()`, `+=`), printed as a comment.
    Plain(Option<&'static str>),
}

impl Load {
    /// Whether LKMM sees it as plain.
    pub fn is_plain(self) -> bool {
        matches!(self, Load::Plain(_))
    }
}

impl Store {
    /// Whether LKMM sees it as plain.
    pub fn is_plain(self) -> bool {
        matches!(self, Store::Plain(_))
    }
}

/// A barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    /// `smp_mb()`.
    Mb,
    /// `smp_rmb()`.
    Rmb,
    /// `smp_wmb()`.
    Wmb,
}

impl Fence {
    /// The kernel spelling, without the parentheses.
    pub fn name(self) -> &'static str {
        match self {
            Fence::Mb => "smp_mb",
            Fence::Rmb => "smp_rmb",
            Fence::Wmb => "smp_wmb",
        }
    }
}

/// One statement of a thread. Registers are numbered per thread (`r0`,
/// `r1`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// `r = load(x)`.
    Load {
        /// The primitive.
        load: Load,
        /// The variable.
        var: String,
        /// The register.
        reg: usize,
    },
    /// `store(x, v)`.
    Store {
        /// The primitive.
        store: Store,
        /// The variable.
        var: String,
        /// The value.
        val: i64,
    },
    /// `atomic_add(v, x)`: no return value, unordered.
    AtomicAdd {
        /// The variable.
        var: String,
        /// The addend.
        val: i64,
    },
    /// `r = atomic_add_return(v, x)`: fully ordered, returns the new value.
    AtomicAddReturn {
        /// The variable.
        var: String,
        /// The addend.
        val: i64,
        /// The register.
        reg: usize,
    },
    /// `r = atomic_xchg(x, v)`: fully ordered, returns the old value.
    Xchg {
        /// The variable.
        var: String,
        /// The value stored.
        val: i64,
        /// The register.
        reg: usize,
    },
    /// `r = atomic_cmpxchg(x, old, new)` (`atomic_t`) or `r = cmpxchg(x,
    /// old, new)` (`int`): fully ordered when it succeeds, returns the
    /// value found.
    Cmpxchg {
        /// The variable.
        var: String,
        /// The value expected.
        old: i64,
        /// The value stored on success.
        new: i64,
        /// The register.
        reg: usize,
    },
    /// A barrier.
    Fence(Fence),
    /// `spin_lock(l)`.
    Lock(String),
    /// `spin_unlock(l)`.
    Unlock(String),
    /// `r = spin_trylock(l)`.
    Trylock {
        /// The lock.
        var: String,
        /// The register (1 if it was taken).
        reg: usize,
    },
    /// `r = spin_is_locked(l)`.
    IsLocked {
        /// The lock.
        var: String,
        /// The register.
        reg: usize,
    },
    /// `if (r<reg> == val) { body }` (`!=` when `eq` is false): the
    /// kernel's own test, so that the body runs only on the path it runs
    /// on in the kernel.
    If {
        /// The register tested.
        reg: usize,
        /// `==` (true) or `!=` (false).
        eq: bool,
        /// The value compared with.
        val: i64,
        /// The statements the test guards.
        body: Vec<Instr>,
    },
}

impl Instr {
    /// The variable the statement accesses, if any.
    pub fn var(&self) -> Option<&str> {
        match self {
            Instr::Load { var, .. }
            | Instr::Store { var, .. }
            | Instr::AtomicAdd { var, .. }
            | Instr::AtomicAddReturn { var, .. }
            | Instr::Xchg { var, .. }
            | Instr::Cmpxchg { var, .. }
            | Instr::Lock(var)
            | Instr::Unlock(var)
            | Instr::Trylock { var, .. }
            | Instr::IsLocked { var, .. } => Some(var),
            Instr::Fence(_) | Instr::If { .. } => None,
        }
    }

    /// The statement and, for an `if`, every statement it guards, in
    /// program order.
    pub fn flat(&self) -> Vec<&Instr> {
        let mut out = vec![self];
        if let Instr::If { body, .. } = self {
            out.extend(body.iter().flat_map(Instr::flat));
        }
        out
    }

    /// The register the statement sets, if any.
    pub fn reg(&self) -> Option<usize> {
        match *self {
            Instr::Load { reg, .. }
            | Instr::AtomicAddReturn { reg, .. }
            | Instr::Xchg { reg, .. }
            | Instr::Cmpxchg { reg, .. }
            | Instr::Trylock { reg, .. }
            | Instr::IsLocked { reg, .. } => Some(reg),
            _ => None,
        }
    }

    /// The type the statement needs its variable to have.
    fn ty(&self) -> Option<Ty> {
        Some(match self {
            Instr::Load {
                load: Load::Atomic, ..
            }
            | Instr::Store {
                store: Store::Atomic,
                ..
            }
            | Instr::AtomicAdd { .. }
            | Instr::AtomicAddReturn { .. }
            | Instr::Xchg { .. } => Ty::Atomic,
            Instr::Lock(_) | Instr::Unlock(_) | Instr::Trylock { .. } | Instr::IsLocked { .. } => {
                Ty::Spinlock
            }
            Instr::Load { .. } | Instr::Store { .. } => Ty::Int,
            // cmpxchg() on an int, atomic_cmpxchg() on an atomic_t: either.
            Instr::Cmpxchg { .. } | Instr::Fence(_) | Instr::If { .. } => return None,
        })
    }
}

/// One term of the `exists` clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `thread:r<reg>=val`.
    Reg {
        /// The thread.
        thread: usize,
        /// The register.
        reg: usize,
        /// The value.
        val: i64,
    },
    /// `var=val`: the variable's final value.
    Var {
        /// The variable.
        var: String,
        /// The value.
        val: i64,
    },
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::Reg { thread, reg, val } => write!(f, "{thread}:r{reg}={val}"),
            Cond::Var { var, val } => write!(f, "{var}={val}"),
        }
    }
}

/// herd7's answer for a test: how many of the executions the model allows
/// satisfy the `exists` clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Observation {
    /// None.
    Never,
    /// Some, not all.
    Sometimes,
    /// All.
    Always,
}

impl Observation {
    /// Parse herd7's word.
    pub fn parse(s: &str) -> Option<Observation> {
        match s {
            "Never" => Some(Observation::Never),
            "Sometimes" => Some(Observation::Sometimes),
            "Always" => Some(Observation::Always),
            _ => None,
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Observation::Never => "Never",
            Observation::Sometimes => "Sometimes",
            Observation::Always => "Always",
        })
    }
}

/// One thread: a note (printed as a comment after `P<i>(...)`) and its
/// statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Who it stands for (`CPU 0`, `periodic`), or empty.
    pub note: String,
    /// The statements, in program order.
    pub body: Vec<Instr>,
}

impl Thread {
    /// The registers the thread uses, in order.
    pub fn regs(&self) -> Vec<usize> {
        let set: BTreeSet<usize> = self.flat().into_iter().filter_map(Instr::reg).collect();
        set.into_iter().collect()
    }

    /// Every statement, those an `if` guards included, in program order.
    pub fn flat(&self) -> Vec<&Instr> {
        self.body.iter().flat_map(Instr::flat).collect()
    }
}

/// A litmus test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The test's name (the `C` line).
    pub name: String,
    /// The result the header states (`Result: ...`), if any.
    pub expected: Option<Observation>,
    /// Whether herd7 is expected to flag a data race: the `Result:` line
    /// then ends in `DATARACE`, as tools/memory-model/scripts/
    /// judgelitmus.sh requires of a racy test.
    pub datarace: bool,
    /// Further header lines, each printed as ` * line`.
    pub doc: Vec<String>,
    /// Initial values; variables not named start at 0.
    pub init: BTreeMap<String, i64>,
    /// The threads, `P0` first.
    pub threads: Vec<Thread>,
    /// The `exists` clause, a conjunction.
    pub exists: Vec<Cond>,
}

impl Program {
    /// An empty test named `name`.
    pub fn new(name: &str) -> Program {
        Program {
            name: name.to_string(),
            expected: None,
            datarace: false,
            doc: Vec::new(),
            init: BTreeMap::new(),
            threads: Vec::new(),
            exists: Vec::new(),
        }
    }

    /// The same test with the header's `Result:` line.
    pub fn expect(mut self, o: Observation) -> Program {
        self.expected = Some(o);
        self
    }

    /// The same test with `var` starting at `val`.
    pub fn init(mut self, var: &str, val: i64) -> Program {
        self.init.insert(var.to_string(), val);
        self
    }

    /// The same test with one more thread.
    pub fn thread(mut self, note: &str, body: Vec<Instr>) -> Program {
        self.threads.push(Thread {
            note: note.to_string(),
            body,
        });
        self
    }

    /// The same test with `thread:r<reg>=val` in `exists`.
    pub fn reg(mut self, thread: usize, reg: usize, val: i64) -> Program {
        self.exists.push(Cond::Reg { thread, reg, val });
        self
    }

    /// The same test with `var=val` (final value) in `exists`.
    pub fn fin(mut self, var: &str, val: i64) -> Program {
        self.exists.push(Cond::Var {
            var: var.to_string(),
            val,
        });
        self
    }

    /// Every variable and its type, or why the statements disagree on one.
    pub fn types(&self) -> Result<BTreeMap<String, Ty>, String> {
        let mut types: BTreeMap<String, Option<Ty>> = BTreeMap::new();
        for t in &self.threads {
            for i in t.flat() {
                let Some(v) = i.var() else { continue };
                let e = types.entry(v.to_string()).or_insert(None);
                match (*e, i.ty()) {
                    (Some(a), Some(b)) if a != b => {
                        return Err(format!(
                            "litmus test {}: {v} is used both as {} and as {}",
                            self.name,
                            a.c(),
                            b.c()
                        ))
                    }
                    (None, b) => *e = b,
                    _ => {}
                }
            }
        }
        for c in &self.exists {
            if let Cond::Var { var, .. } = c {
                types.entry(var.clone()).or_insert(None);
            }
        }
        for v in self.init.keys() {
            if !types.contains_key(v) {
                return Err(format!(
                    "litmus test {}: {v} has an initial value but no thread uses it",
                    self.name
                ));
            }
        }
        Ok(types
            .into_iter()
            .map(|(v, t)| (v, t.unwrap_or(Ty::Int)))
            .collect())
    }

    /// Check what herd7 would reject or misread: types agree, every
    /// register in `exists` is set by its thread, no lock has an initial
    /// value or a final value tested.
    pub fn validate(&self) -> Result<BTreeMap<String, Ty>, String> {
        let types = self.types()?;
        for c in &self.exists {
            match c {
                Cond::Reg { thread, reg, .. } => {
                    let ok = self
                        .threads
                        .get(*thread)
                        .is_some_and(|t| t.regs().contains(reg));
                    if !ok {
                        return Err(format!(
                            "litmus test {}: exists names {c}, which P{thread} does not set",
                            self.name
                        ));
                    }
                }
                Cond::Var { var, .. } if types.get(var) == Some(&Ty::Spinlock) => {
                    return Err(format!(
                        "litmus test {}: exists tests the lock {var}",
                        self.name
                    ))
                }
                Cond::Var { .. } => {}
            }
        }
        if self.exists.is_empty() {
            return Err(format!("litmus test {}: empty exists clause", self.name));
        }
        for v in self.init.keys() {
            if types.get(v) == Some(&Ty::Spinlock) {
                return Err(format!(
                    "litmus test {}: the lock {v} has an initial value",
                    self.name
                ));
            }
        }
        Ok(types)
    }

    /// A rough count of the candidate executions herd7 enumerates: per
    /// variable, each load may read the initial value or any store, and
    /// the stores may come in any order. herd7's time grows with it.
    pub fn candidates(&self) -> f64 {
        let mut per: BTreeMap<&str, (i32, i32)> = BTreeMap::new();
        for i in self.threads.iter().flat_map(Thread::flat) {
            let (r, w) = match i {
                Instr::Load { .. } => (1, 0),
                Instr::Store { .. } => (0, 1),
                Instr::AtomicAdd { .. }
                | Instr::AtomicAddReturn { .. }
                | Instr::Xchg { .. }
                | Instr::Cmpxchg { .. } => (1, 1),
                _ => continue,
            };
            let e = per.entry(i.var().unwrap_or_default()).or_default();
            e.0 += r;
            e.1 += w;
        }
        per.values()
            .map(|&(r, w)| f64::from(w + 1).powi(r) * (1..=w).map(f64::from).product::<f64>())
            .product()
    }

    /// The values of the `exists` clause's terms, in order.
    pub fn target(&self) -> Vec<i64> {
        self.exists
            .iter()
            .map(|c| match c {
                Cond::Reg { val, .. } | Cond::Var { val, .. } => *val,
            })
            .collect()
    }
}
