//! shuttle schedulers of our own: a random scheduler re-seeded per schedule
//! (exact shards), a recorder (replay tokens) and a guided replayer
//! (shrinking).

use std::sync::{Arc, Mutex};

/// A shuttle schedule that can be written into a replay token: the
/// scheduler's seed and, for each scheduling decision, the task chosen
/// (`None` for a random-number draw).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShuttleSchedule {
    /// Seed of the data source.
    pub seed: u64,
    /// Decisions in order.
    pub steps: Vec<Option<usize>>,
}

impl ShuttleSchedule {
    /// Context switches: decisions that pick a different task than the one
    /// before.
    pub fn switches(&self) -> usize {
        self.steps
            .windows(2)
            .filter(|w| w[0].is_some() && w[1].is_some() && w[0] != w[1])
            .count()
    }
}

/// A 64-bit mix (splitmix64) of a seed and a schedule number.
pub fn mix(seed: u64, j: u64) -> u64 {
    let mut z = seed ^ j.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniformly random scheduler (the policy of shuttle's `RandomScheduler`)
/// re-seeded for every schedule: schedule `j` of a search with seed `s`
/// draws from `mix(s, j)`. A search split into shards (schedule `j` runs in
/// shard `j mod N`) therefore runs exactly the schedules of the unsplit
/// search. (shuttle's own `RandomScheduler` cannot be re-seeded this way:
/// dropping one mid-search prints its seed as a failure, and
/// `SHUTTLE_RANDOM_SEED` would override every seed.)
pub struct PerSchedule {
    pub(crate) seed: u64,
    pub(crate) next: u64,
    pub(crate) step: u64,
    pub(crate) end: u64,
    pub(crate) rng: u64,
}

impl PerSchedule {
    fn draw(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.rng, 0)
    }
}

impl shuttle::scheduler::Scheduler for PerSchedule {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        if self.next >= self.end {
            return None;
        }
        let seed = mix(self.seed, self.next);
        self.next += self.step;
        self.rng = seed;
        Some(shuttle::scheduler::Schedule::new(seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        _current: Option<shuttle::scheduler::TaskId>,
        _is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let i = (self.draw() % runnable.len() as u64) as usize;
        Some(runnable.get(i)?.id())
    }

    fn next_u64(&mut self) -> u64 {
        self.draw()
    }
}

/// Wraps a shuttle scheduler and records the schedule of the current
/// execution, so that a failing one can be replayed and shrunk.
pub struct Recording {
    pub(crate) inner: Box<dyn shuttle::scheduler::Scheduler + Send>,
    pub(crate) current: Arc<Mutex<ShuttleSchedule>>,
}

impl shuttle::scheduler::Scheduler for Recording {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        let s = self.inner.new_execution()?;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = ShuttleSchedule {
            seed: s.seed,
            steps: Vec::new(),
        };
        Some(s)
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let t = self.inner.next_task(runnable, current, is_yielding)?;
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(Some(usize::from(t)));
        Some(t)
    }

    fn next_u64(&mut self) -> u64 {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(None);
        self.inner.next_u64()
    }
}

/// Follows a recorded schedule where it can; where the scheduled task is
/// not runnable, or the schedule has run out, it keeps running the current
/// task (or the lowest-numbered runnable one). It records what it actually
/// chose, so a shrunk or truncated schedule yields a complete one.
pub struct Guided {
    pub(crate) schedule: ShuttleSchedule,
    pub(crate) pos: usize,
    pub(crate) started: bool,
    pub(crate) actual: Arc<Mutex<ShuttleSchedule>>,
}

impl shuttle::scheduler::Scheduler for Guided {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        if std::mem::replace(&mut self.started, true) {
            return None;
        }
        Some(shuttle::scheduler::Schedule::new(self.schedule.seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        let wanted = self.schedule.steps.get(self.pos).copied().flatten();
        self.pos += 1;
        let ids: Vec<usize> = runnable.iter().map(|t| usize::from(t.id())).collect();
        let pick = match wanted {
            Some(t) if ids.contains(&t) => t,
            _ => match current.map(usize::from) {
                Some(c) if ids.contains(&c) && !(is_yielding && ids.len() > 1) => c,
                _ => *ids.iter().min()?,
            },
        };
        self.actual
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(Some(pick));
        Some(pick.into())
    }

    fn next_u64(&mut self) -> u64 {
        // The model draws no shuttle randomness; keep the schedule aligned.
        self.pos += 1;
        self.actual
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .steps
            .push(None);
        self.schedule.seed
    }
}
