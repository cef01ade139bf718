//! What the stateful search knows of one execution: the value of every
//! location, each task's local state, and, for the symmetry reduction,
//! which CPU each location and each task belongs to.

use std::sync::Arc;

use crate::vocab::obs::Sink;

use super::digest::Digest;

/// What the stateful search knows of one task's local state: the steps it
/// has taken and a digest of the values its operations returned, since it
/// started or since it last declared its locals dead
/// ([`super::checkpoint_locals`]). A task's code is deterministic, so these
/// fix where it is and what its locals hold.
///
/// A task standing for a CPU records that CPU's own locations by their
/// place among the CPU's (not by number), so that two CPUs at the same
/// point of the same program hold equal locals; any other CPU's location
/// it touched is recorded by number and *pins* that CPU (`pins`, one bit
/// per CPU): the symmetry reduction never moves a pinned CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Local {
    pub(super) steps: u64,
    pub(super) seen: Digest,
    pub(super) pins: u64,
    /// The CPUs a walk in progress has visited (bit `c` for CPU `c`;
    /// [`crate::vocab::footprint::walk_done`]): the symmetry reduction
    /// renames this set with the CPUs.
    pub(super) walked: u64,
}

/// What a task keeps across steps for the recorder: its local state when
/// it first failed to take a spin lock (a retry re-reads what that failure
/// read) and when its walk of the CPUs began. Not part of the state: both
/// are functions of the task's [`Local`] history.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Kept {
    pub(super) spin: [u64; 3],
    pub(super) walk: [u64; 4],
}

/// Who stands for a CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Role {
    /// No task yet.
    #[default]
    Vacant,
    /// This task, until it ends.
    Held(usize),
    /// The task that stood for it went on as another actor (main, after
    /// the last CPU's updates): its locals as they were then.
    Released(Local),
}

/// The execution as the stateful search tracks it.
#[derive(Clone, Default)]
pub(super) struct Track {
    /// The value of every atomic and cell, by id.
    pub(super) mem: Vec<i64>,
    /// Per location id: the CPU it belongs to and its place among that
    /// CPU's locations (per-CPU data), or `None`.
    pub(super) owner: Vec<Option<(u8, u16)>>,
    /// Per CPU: how many locations it has.
    pub(super) slots: Vec<u16>,
    /// The CPU whose per-CPU data is being built.
    pub(super) building: Option<u8>,
    /// Per task id.
    pub(super) tasks: Vec<Local>,
    /// Per task id: what it keeps for the recorder.
    pub(super) kept: Vec<Kept>,
    /// Per task id: the CPU it stands for.
    pub(super) role: Vec<Option<u8>>,
    /// Per CPU: who stands for it.
    pub(super) cpus: Vec<Role>,
    /// Per CPU: its program (CPUs of one class are interchangeable).
    pub(super) classes: Vec<u64>,
    /// Something in this execution cannot be permuted (a per-CPU location
    /// built outside `PerCpu::new`, a CPU taken up twice): no symmetry.
    pub(super) asymmetric: bool,
    /// The task running the current step.
    pub(super) current: usize,
    /// The execution's observer.
    pub(super) sink: Option<Arc<dyn Sink>>,
    /// Some state could not be digested: never prune this execution.
    pub(super) opaque: bool,
}

/// The most CPUs the symmetry reduction permutes (one bit each in a mask).
pub(super) const MAX_SYM_CPUS: usize = 32;

impl Track {
    pub(super) fn task(&mut self, t: usize) -> &mut Local {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, Local::default());
        }
        &mut self.tasks[t]
    }

    pub(super) fn kept(&mut self, t: usize) -> &mut Kept {
        if self.kept.len() <= t {
            self.kept.resize(t + 1, Kept::default());
        }
        &mut self.kept[t]
    }

    pub(super) fn set(&mut self, id: usize, v: i64) {
        if self.mem.len() <= id {
            self.mem.resize(id + 1, 0);
            self.owner.resize(id + 1, None);
        }
        self.mem[id] = v;
    }

    /// Location `id` was created, holding `v`.
    pub(super) fn created(&mut self, id: usize, v: i64) {
        self.set(id, v);
        if let Some(c) = self.building {
            let c = c as usize;
            if self.slots.len() <= c {
                self.slots.resize(c + 1, 0);
            }
            self.owner[id] = Some((c as u8, self.slots[c]));
            self.slots[c] += 1;
        }
    }

    /// The CPU task `t` stands for.
    pub(super) fn role_of(&self, t: usize) -> Option<u8> {
        self.role.get(t).copied().flatten()
    }

    /// Task `t` stands for `cpu` from now on (`None`: for no CPU).
    pub(super) fn set_role(&mut self, t: usize, cpu: Option<usize>) {
        if cpu.is_some_and(|c| c >= MAX_SYM_CPUS) {
            self.asymmetric = true;
            return;
        }
        let cpu = cpu.map(|c| c as u8);
        let old = self.role_of(t);
        if old == cpu {
            return;
        }
        if self.role.len() <= t {
            self.role.resize(t + 1, None);
        }
        if let Some(c) = old {
            let l = *self.task(t);
            self.cpus[c as usize] = Role::Released(l);
        }
        if let Some(c) = cpu {
            let c = c as usize;
            if self.cpus.len() <= c {
                self.cpus.resize(c + 1, Role::Vacant);
            }
            if self.cpus[c] != Role::Vacant {
                self.asymmetric = true;
            }
            self.cpus[c] = Role::Held(t);
        }
        self.role[t] = cpu;
    }

    /// Record that the current task accessed location `id`, with the value
    /// it returned.
    pub(super) fn accessed(&mut self, id: usize, read: Option<i64>, wrote: bool) {
        let cur = self.current;
        let me = self.role_of(cur);
        let (word, pin) = match self.owner.get(id).copied().flatten() {
            Some((c, slot)) if me == Some(c) => (1 << 39 | u64::from(slot), 0),
            Some((c, _)) => (id as u64, 1u64 << c),
            None => (id as u64, 0),
        };
        let l = self.task(cur);
        l.seen.word(word | u64::from(wrote) << 40);
        if let Some(r) = read {
            l.seen.word(r as u64);
        }
        l.pins |= pin;
    }
}
