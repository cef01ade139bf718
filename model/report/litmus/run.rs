//! Running a litmus test under the crate's backends through the
//! kernel-idiom layer: each thread `P<i>` a model thread (the last on the
//! execution's main thread, so five fit loom's limit); after joining them,
//! main reads the final values the `exists` clause names.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::explore::{
    explore, on_fresh_thread, Backend, ModelJoinHandle, Outcome, Scenario, ThreadCtx,
};
use crate::kernel::{
    atomic_add, atomic_add_return, atomic_cmpxchg, atomic_read, atomic_set, atomic_xchg, cmpxchg,
    read_once, smp_load_acquire, smp_mb, smp_rmb, smp_store_release, smp_wmb, spin_is_locked,
    spin_lock, spin_trylock, spin_unlock, write_once, Atomic, LockName, SpinLock, Var,
};
use crate::vocab::obs::Actor;
use crate::vocab::Platform;

use super::prog::*;

/// The outcomes of a test under one backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measured {
    /// The backend's search.
    pub backend: Backend,
    /// Every distinct outcome: the values of the `exists` terms.
    pub outcomes: BTreeSet<Vec<i64>>,
    /// Executions explored.
    pub executions: u64,
    /// Whether the planned search finished.
    pub finished: bool,
}

impl Measured {
    /// How many outcomes satisfy `exists`, in herd7's words.
    pub fn observation(&self, target: &[i64]) -> Observation {
        let hits = self.outcomes.iter().filter(|o| *o == target).count();
        if hits == 0 {
            Observation::Never
        } else if hits == self.outcomes.len() {
            Observation::Always
        } else {
            Observation::Sometimes
        }
    }
}

/// Run `prog` under `backend` and collect its outcomes. The last thread
/// runs on the execution's main thread.
pub fn measure(prog: &Program, backend: &Backend, budget: Duration) -> Result<Measured, String> {
    measure_as(prog, backend, budget, false)
}

/// [`measure`] with every thread spawned and main only joining them: loom's
/// search depends on which thread it runs first (tokio-rs/loom#166, see
/// `tests/loom_gap.rs`), so a shape can be measured both ways.
pub fn measure_spawned(
    prog: &Program,
    backend: &Backend,
    budget: Duration,
) -> Result<Measured, String> {
    measure_as(prog, backend, budget, true)
}

fn measure_as(
    prog: &Program,
    backend: &Backend,
    budget: Duration,
    spawn_all: bool,
) -> Result<Measured, String> {
    prog.validate()?;
    let most = backend.max_threads() - usize::from(spawn_all);
    if prog.threads.is_empty() || prog.threads.len() > most {
        return Err(format!(
            "litmus test {}: {} threads, {} allows 1 to {most}",
            prog.name,
            prog.threads.len(),
            backend.name(),
        ));
    }
    let run = Arc::new(Run {
        spawn_all,
        prog: Arc::new(prog.clone()),
        outcomes: Mutex::new(BTreeSet::new()),
    });
    let (b, r) = (backend.clone(), run.clone());
    let e = on_fresh_thread(move || explore(&b, budget, r));
    let outcomes = run
        .outcomes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    match e.outcome {
        Outcome::Failed(msg) => Err(format!(
            "litmus test {} under {backend}: {}",
            prog.name,
            msg.lines().next().unwrap_or("")
        )),
        o => Ok(Measured {
            backend: backend.clone(),
            outcomes,
            executions: e.executions,
            finished: o == Outcome::Finished,
        }),
    }
}

/// A test as a [`Scenario`].
struct Run {
    spawn_all: bool,
    prog: Arc<Program>,
    outcomes: Mutex<BTreeSet<Vec<i64>>>,
}

/// A variable of one execution.
enum Slot<P: Platform> {
    Word(Atomic<P>),
    Lock(SpinLock<P>),
}

/// `name` as a `&'static str` for [`Var::Other`]: leaked once per distinct
/// name.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(n);
    n
}

struct Mem<P: Platform> {
    slots: BTreeMap<String, Slot<P>>,
    types: BTreeMap<String, Ty>,
}

impl<P: Platform> Mem<P> {
    fn new(prog: &Program, types: &BTreeMap<String, Ty>) -> Self {
        let slots = types
            .iter()
            .map(|(v, t)| {
                let name = intern(v);
                let slot = match t {
                    Ty::Spinlock => Slot::Lock(SpinLock::new(LockName::Other(name))),
                    _ => Slot::Word(Atomic::new(
                        Var::Other { name, cpu: None },
                        prog.init.get(v).copied().unwrap_or(0),
                    )),
                };
                (v.clone(), slot)
            })
            .collect();
        Mem {
            slots,
            types: types.clone(),
        }
    }

    fn word(&self, v: &str) -> &Atomic<P> {
        match &self.slots[v] {
            Slot::Word(a) => a,
            Slot::Lock(_) => panic!("model: {v} is a lock"),
        }
    }

    fn lock(&self, v: &str) -> &SpinLock<P> {
        match &self.slots[v] {
            Slot::Lock(l) => l,
            Slot::Word(_) => panic!("model: {v} is not a lock"),
        }
    }

    /// Run `t`; its registers, indexed by number (a register an untaken
    /// `if` leaves unset is 0, as in herd7).
    fn exec(&self, t: &Thread) -> BTreeMap<usize, i64> {
        let mut regs = BTreeMap::new();
        self.run(&t.body, &mut regs);
        regs
    }

    fn run(&self, body: &[Instr], regs: &mut BTreeMap<usize, i64>) {
        for i in body {
            match i {
                Instr::Load { load, var, reg } => {
                    let x = self.word(var);
                    let v = match load {
                        Load::Once | Load::Plain(_) => read_once(x),
                        Load::Acquire => smp_load_acquire(x),
                        Load::Atomic => atomic_read(x),
                    };
                    regs.insert(*reg, v);
                }
                Instr::Store { store, var, val } => {
                    let x = self.word(var);
                    match store {
                        Store::Once | Store::Plain(_) => write_once(x, *val),
                        Store::Release => smp_store_release(x, *val),
                        Store::Atomic => atomic_set(x, *val),
                    }
                }
                Instr::AtomicAdd { var, val } => atomic_add(*val, self.word(var)),
                Instr::AtomicAddReturn { var, val, reg } => {
                    regs.insert(*reg, atomic_add_return(*val, self.word(var)));
                }
                Instr::Xchg { var, val, reg } => {
                    regs.insert(*reg, atomic_xchg(self.word(var), *val));
                }
                Instr::Cmpxchg { var, old, new, reg } => {
                    let x = self.word(var);
                    // The same ordering either way; the idiom differs.
                    let found = if self.types[var] == Ty::Atomic {
                        atomic_cmpxchg(x, *old, *new)
                    } else {
                        cmpxchg(x, *old, *new)
                    };
                    regs.insert(*reg, found);
                }
                Instr::Fence(Fence::Mb) => smp_mb::<P>(),
                Instr::Fence(Fence::Rmb) => smp_rmb::<P>(),
                Instr::Fence(Fence::Wmb) => smp_wmb::<P>(),
                Instr::Lock(var) => spin_lock(self.lock(var)),
                Instr::Unlock(var) => spin_unlock(self.lock(var)),
                Instr::Trylock { var, reg } => {
                    regs.insert(*reg, i64::from(spin_trylock(self.lock(var))));
                }
                Instr::IsLocked { var, reg } => {
                    regs.insert(*reg, i64::from(spin_is_locked(self.lock(var))));
                }
                Instr::If { reg, eq, val, body } => {
                    let r = regs.get(reg).copied().unwrap_or(0);
                    if (r == *val) == *eq {
                        self.run(body, regs);
                    }
                }
            }
        }
    }
}

impl Scenario for Run {
    fn run<P: Platform>(&self) {
        P::install(ThreadCtx::new(Actor::Main, None));
        let types = self.prog.validate().expect("validated before the search");
        let mem = Arc::new(Mem::<P>::new(&self.prog, &types));
        let n = self.prog.threads.len();
        let spawned = if self.spawn_all { n } else { n - 1 };
        let handles: Vec<_> = (0..spawned)
            .map(|i| {
                let (mem, prog) = (mem.clone(), self.prog.clone());
                P::spawn(ThreadCtx::new(Actor::Cpu(i), None), move || {
                    mem.exec(&prog.threads[i])
                })
            })
            .collect();
        let last = (!self.spawn_all).then(|| {
            P::set_actor(Actor::Cpu(n - 1));
            let r = mem.exec(&self.prog.threads[n - 1]);
            P::set_actor(Actor::Main);
            r
        });
        let mut regs: Vec<BTreeMap<usize, i64>> = handles.into_iter().map(|h| h.join()).collect();
        regs.extend(last);
        let outcome: Vec<i64> = self
            .prog
            .exists
            .iter()
            .map(|c| match c {
                Cond::Reg { thread, reg, .. } => regs[*thread].get(reg).copied().unwrap_or(0),
                Cond::Var { var, .. } => read_once(mem.word(var)),
            })
            .collect();
        self.outcomes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(outcome);
        P::uninstall();
    }
}

impl Instr {
    /// `r<reg> = READ_ONCE(*var)`.
    pub fn read_once(var: &str, reg: usize) -> Instr {
        Instr::Load {
            load: Load::Once,
            var: var.into(),
            reg,
        }
    }

    /// `r<reg> = smp_load_acquire(var)`.
    pub fn load_acquire(var: &str, reg: usize) -> Instr {
        Instr::Load {
            load: Load::Acquire,
            var: var.into(),
            reg,
        }
    }

    /// `r<reg> = atomic_read(var)`.
    pub fn atomic_read(var: &str, reg: usize) -> Instr {
        Instr::Load {
            load: Load::Atomic,
            var: var.into(),
            reg,
        }
    }

    /// `WRITE_ONCE(*var, val)`.
    pub fn write_once(var: &str, val: i64) -> Instr {
        Instr::Store {
            store: Store::Once,
            var: var.into(),
            val,
        }
    }

    /// `smp_store_release(var, val)`.
    pub fn store_release(var: &str, val: i64) -> Instr {
        Instr::Store {
            store: Store::Release,
            var: var.into(),
            val,
        }
    }

    /// `atomic_set(var, val)`.
    pub fn atomic_set(var: &str, val: i64) -> Instr {
        Instr::Store {
            store: Store::Atomic,
            var: var.into(),
            val,
        }
    }

    /// `atomic_add(val, var)`.
    pub fn atomic_add(var: &str, val: i64) -> Instr {
        Instr::AtomicAdd {
            var: var.into(),
            val,
        }
    }

    /// `r<reg> = atomic_add_return(val, var)`.
    pub fn atomic_add_return(var: &str, val: i64, reg: usize) -> Instr {
        Instr::AtomicAddReturn {
            var: var.into(),
            val,
            reg,
        }
    }

    /// `r<reg> = atomic_xchg(var, val)`.
    pub fn atomic_xchg(var: &str, val: i64, reg: usize) -> Instr {
        Instr::Xchg {
            var: var.into(),
            val,
            reg,
        }
    }

    /// `r<reg> = cmpxchg(var, old, new)` (`atomic_cmpxchg` on an `atomic_t`).
    pub fn cmpxchg(var: &str, old: i64, new: i64, reg: usize) -> Instr {
        Instr::Cmpxchg {
            var: var.into(),
            old,
            new,
            reg,
        }
    }

    /// `spin_lock(var)`.
    pub fn lock(var: &str) -> Instr {
        Instr::Lock(var.into())
    }

    /// `spin_unlock(var)`.
    pub fn unlock(var: &str) -> Instr {
        Instr::Unlock(var.into())
    }

    /// `smp_mb()`.
    pub fn mb() -> Instr {
        Instr::Fence(Fence::Mb)
    }

    /// `smp_rmb()`.
    pub fn rmb() -> Instr {
        Instr::Fence(Fence::Rmb)
    }

    /// `smp_wmb()`.
    pub fn wmb() -> Instr {
        Instr::Fence(Fence::Wmb)
    }
}
