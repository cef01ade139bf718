//! The backends and their knobs: which search one exploration plans.

use std::fmt;

use crate::explore::platform::MAX_LOOM_THREADS;
use crate::vocab::BackendName;

/// Where a backend's knobs are set for one exploration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// loom: exhaustive DPOR, optionally preemption-bounded.
    Loom {
        /// `None` explores every interleaving.
        preemption_bound: Option<usize>,
    },
    /// shuttle with its uniformly random scheduler.
    ShuttleRandom {
        /// Number of schedules to run.
        iterations: usize,
        /// Seed of the scheduler's PRNG.
        seed: u64,
    },
    /// shuttle with PCT (probabilistic concurrency testing).
    ShuttlePct {
        /// Number of schedules to run.
        iterations: usize,
        /// Bug depth PCT targets.
        depth: usize,
        /// Seed of the scheduler's PRNG.
        seed: u64,
    },
    /// shuttle with flushcheck's depth-first scheduler: every sequentially
    /// consistent interleaving, up to `max_schedules` (exhaustive when it
    /// finishes below the cap).
    ShuttleDfs {
        /// Cap on schedules; reaching it makes the search inconclusive.
        max_schedules: usize,
        /// Prune with sleep sets (the default); off, every schedule is run,
        /// which tests of the reduction compare against.
        #[serde(default = "yes")]
        sleep_sets: bool,
        /// Stop a schedule when it reaches a state already explored (see
        /// [`crate::explore::dfs`]); off, the search is stateless.
        #[serde(default)]
        stateful: bool,
        /// Store states up to permutations of interchangeable CPUs (see
        /// [`crate::explore::dfs`], stateful searches only); off by default.
        #[serde(default)]
        symmetry: bool,
        /// Search with this many worker threads, splitting the tree below
        /// its first branching levels (1: one thread, the default).
        #[serde(default = "one")]
        workers: usize,
    },
    /// Real threads, repeated.
    Std {
        /// Number of repetitions.
        iterations: usize,
    },
}

impl Backend {
    /// Which backend this is.
    pub fn id(&self) -> BackendName {
        match self {
            Backend::Loom { .. } => BackendName::Loom,
            Backend::ShuttleRandom { .. } => BackendName::ShuttleRandom,
            Backend::ShuttlePct { .. } => BackendName::ShuttlePct,
            Backend::ShuttleDfs { .. } => BackendName::ShuttleDfs,
            Backend::Std { .. } => BackendName::Std,
        }
    }

    /// Short name used in tables and JSON.
    pub fn name(&self) -> &'static str {
        self.id().name()
    }

    /// Whether a finished search covers every execution of the scenario.
    ///
    /// Not loom's, even unbounded: loom 0.7.3 never reorders another
    /// thread's load after a load-then-RMW of the same atomic
    /// (tokio-rs/loom#166, #392), the shape of v6.0's skip test; pinned by
    /// `tests/suite/litmus.rs` and `tests/suite/loom_gap.rs`.
    pub fn exhaustive(&self) -> bool {
        matches!(self, Backend::ShuttleDfs { .. })
    }

    /// Whether the backend runs every operation sequentially consistently.
    pub fn sequentially_consistent(&self) -> bool {
        !matches!(self, Backend::Loom { .. } | Backend::Std { .. })
    }

    /// One-line description of the planned search.
    pub fn search(&self) -> String {
        match self {
            Backend::Loom {
                preemption_bound: None,
            } => "loom DPOR, unbounded (every execution but those loom#166 hides)".into(),
            Backend::Loom {
                preemption_bound: Some(b),
            } => format!("loom DPOR, preemption bound {b} (exhaustive within the bound)"),
            Backend::ShuttleRandom { iterations, seed } => {
                format!("shuttle random, {iterations} schedules, seed {seed} (sampled)")
            }
            Backend::ShuttlePct {
                iterations,
                depth,
                seed,
            } => {
                format!("shuttle PCT depth {depth}, {iterations} schedules, seed {seed} (sampled)")
            }
            Backend::ShuttleDfs {
                max_schedules,
                sleep_sets,
                stateful,
                symmetry,
                workers,
            } => {
                let how = match (*sleep_sets, *stateful) {
                    (true, true) => " with sleep sets and state caching",
                    (true, false) => " with sleep sets",
                    (false, true) => " with state caching",
                    (false, false) => " without reduction",
                };
                let sym = if *symmetry && *stateful {
                    " up to CPU symmetry"
                } else {
                    ""
                };
                let on = match workers {
                    0 | 1 => String::new(),
                    w => format!(", {w} workers"),
                };
                format!(
                    "shuttle DFS{how}{sym}{on}, every SC interleaving, cap {max_schedules} schedules (exhaustive)"
                )
            }
            Backend::Std { iterations } => {
                format!("std threads, {iterations} runs, one step at a time (sampled)")
            }
        }
    }

    /// The most threads one execution may use, the main thread included.
    pub fn max_threads(&self) -> usize {
        match self {
            Backend::Loom { .. } => MAX_LOOM_THREADS,
            _ => usize::MAX,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn yes() -> bool {
    true
}

fn one() -> usize {
    1
}

impl Backend {
    /// The plain stateful DFS (sleep sets and state caching, no symmetry,
    /// one worker), capped at `max_schedules`.
    pub fn stateful_dfs(max_schedules: usize) -> Backend {
        Backend::ShuttleDfs {
            max_schedules,
            sleep_sets: true,
            stateful: true,
            symmetry: false,
            workers: 1,
        }
    }
}
