//! The scenario suite: the configurations every property is checked on,
//! each with the backends that search it.
//!
//! One configuration cannot reach what a protocol does across epochs (a
//! CPU that skipped, a reset, the same CPU crossing the batch again), nor
//! both a 1-page and a huge-page update, nor three CPUs. The suite is
//! several small configurations chosen for that: tiny ones for loom (which
//! explores every weak-memory execution but allows at most five threads),
//! larger ones for shuttle's sampling and for the exhaustive SC search.

use serde::{Deserialize, Serialize};

use crate::config::{Config, Death};
use crate::explore::Backend;
use crate::vocab::Family;

/// One configuration of the suite and the searches it gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Short name, used in tables.
    pub name: String,
    /// Why it is in the suite.
    pub why: String,
    /// The configuration.
    pub cfg: Config,
    /// The searches.
    pub backends: Vec<Backend>,
    /// The protocol families it is run for.
    #[serde(default = "global_only")]
    pub families: Vec<Family>,
}

fn global_only() -> Vec<Family> {
    vec![Family::Global]
}

impl Entry {
    /// Whether the matrix runs `family`'s variants on this entry.
    pub fn applies_to(&self, family: Family) -> bool {
        self.families.contains(&family)
    }
}

/// The suite: entries in report order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suite {
    /// The entries.
    pub entries: Vec<Entry>,
}

/// Search sizes of the default suite.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Schedules per shuttle random and PCT search.
    pub shuttle: usize,
    /// Runs per std search.
    pub std: usize,
    /// loom's preemption bound for every entry (`None`: each entry's own).
    pub loom_bound: Option<Option<usize>>,
    /// Cap on the schedules of one DFS.
    pub dfs_cap: usize,
    /// Seed of the shuttle schedulers.
    pub seed: u64,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            shuttle: 4_000,
            std: 200,
            loom_bound: None,
            dfs_cap: 200_000,
            seed: 1,
        }
    }
}

impl Sizes {
    /// Every backend at these sizes; loom at `s.loom_bound` if given, else
    /// at `loom_bound`.
    pub fn all_backends(&self, loom_bound: Option<usize>) -> Vec<Backend> {
        vec![
            Backend::Loom {
                preemption_bound: self.loom_bound.unwrap_or(loom_bound),
            },
            self.random(),
            self.pct(),
            self.dfs(),
            self.std(),
        ]
    }

    fn random(&self) -> Backend {
        Backend::ShuttleRandom {
            iterations: self.shuttle,
            seed: self.seed,
        }
    }
    /// shuttle random at `k` times the schedules: for an entry whose
    /// designated kill is rare per schedule.
    fn random_times(&self, k: usize) -> Backend {
        Backend::ShuttleRandom {
            iterations: self.shuttle.saturating_mul(k),
            seed: self.seed,
        }
    }
    fn pct(&self) -> Backend {
        Backend::ShuttlePct {
            iterations: self.shuttle,
            depth: 3,
            seed: self.seed,
        }
    }
    fn dfs(&self) -> Backend {
        Backend::ShuttleDfs {
            max_schedules: self.dfs_cap,
            sleep_sets: true,
            stateful: true,
            symmetry: false,
            workers: 1,
        }
    }
    fn std(&self) -> Backend {
        Backend::Std {
            iterations: self.std,
        }
    }

    /// The lifetime entries' searches: loom at bound 2 (the grace period's
    /// wait multiplies loom's branches: unbounded does not finish), and
    /// sizes of their own.
    fn lifetime_backends(&self) -> Vec<Backend> {
        vec![
            Backend::Loom {
                preemption_bound: self.loom_bound.unwrap_or(Some(2)),
            },
            Backend::ShuttleRandom {
                iterations: 2000,
                seed: self.seed,
            },
            Backend::ShuttlePct {
                iterations: 2000,
                depth: 3,
                seed: self.seed,
            },
            Backend::ShuttleDfs {
                max_schedules: 1_000_000,
                sleep_sets: true,
                stateful: true,
                symmetry: false,
                workers: 1,
            },
            Backend::Std { iterations: 500 },
        ]
    }
}

impl Suite {
    /// The default suite with the given search sizes. `s.loom_bound`, if
    /// given, replaces each entry's own loom bound.
    pub fn standard(s: &Sizes) -> Suite {
        let entry = |name: &str, why: &str, cfg: Config, backends: Vec<Backend>| Entry {
            name: name.into(),
            why: why.into(),
            cfg,
            backends,
            families: global_only(),
        };
        let memcg_entry = |name: &str, why: &str, cfg: Config, backends: Vec<Backend>| Entry {
            name: name.into(),
            why: why.into(),
            cfg,
            backends,
            families: vec![Family::PerMemcg],
        };
        let life_entry = |name: &str, why: &str, cfg: Config| Entry {
            name: name.into(),
            why: why.into(),
            cfg,
            backends: s.lifetime_backends(),
            families: vec![Family::Lifetime],
        };
        let loom = |bound: Option<usize>| Backend::Loom {
            preemption_bound: s.loom_bound.unwrap_or(bound),
        };
        let base = Config::default();
        // v6.8 on: batch 2 and 2-page updates, so that every update folds
        // and one CPU crosses a trigger of 2 within a few updates.
        let memcg_base = Config {
            cpus: 1,
            batch: 2,
            updates: 3,
            vals: vec![2],
            readers: 1,
            reads: 1,
            periodic: true,
            tree: vec![0, 1],
            charge: vec![2],
            read: vec![1],
            ..base.clone()
        };
        let one_cpu = Config {
            cpus: 1,
            updates: 3,
            vals: vec![2],
            reads: 2,
            ..base.clone()
        };
        Suite {
            entries: vec![
                entry(
                    "pair",
                    "two CPUs, one update each, a reader and the periodic work: a skip racing a reset",
                    base.clone(),
                    vec![loom(Some(1)), s.random(), s.pct(), s.dfs(), s.std()],
                ),
                entry(
                    "epochs",
                    "one CPU crossing the batch three times, two reads, the periodic work: skip, reset, cross again",
                    one_cpu.clone(),
                    vec![loom(Some(1)), s.random(), s.pct(), s.dfs(), s.std()],
                ),
                entry(
                    "epochs-reader",
                    "as epochs with the reader's flushes only: small enough for every interleaving",
                    Config {
                        periodic: false,
                        ..one_cpu
                    },
                    vec![loom(None), s.random(), s.pct(), s.dfs()],
                ),
                entry(
                    "two-flushers",
                    "one CPU crossing twice, a reader and the periodic work: every interleaving of two flushers",
                    Config {
                        cpus: 1,
                        updates: 2,
                        vals: vec![2],
                        ..base.clone()
                    },
                    vec![s.dfs()],
                ),
                entry(
                    "no-periodic",
                    "two CPUs, two updates each, reader-triggered flushes only",
                    Config {
                        updates: 2,
                        vals: vec![2, 1],
                        periodic: false,
                        ..base.clone()
                    },
                    vec![loom(Some(2)), s.random(), s.pct(), s.dfs()],
                ),
                entry(
                    "batch2",
                    "batch 2, six 1-page updates per CPU, two reads: two crossings per CPU and resets between",
                    Config {
                        batch: 2,
                        updates: 6,
                        vals: vec![1],
                        reads: 2,
                        ..base.clone()
                    },
                    vec![s.random(), s.pct(), s.std()],
                ),
                entry(
                    "batch2-dfs",
                    "batch 2, six 1-page updates per CPU (two crossings each: the twin's threshold passes 2), no periodic work: exhaustive",
                    Config {
                        batch: 2,
                        updates: 6,
                        vals: vec![1],
                        periodic: false,
                        ..base.clone()
                    },
                    vec![s.dfs()],
                ),
                entry(
                    "huge",
                    "batch 2, 1-page and 5-page (huge) updates, two readers",
                    Config {
                        batch: 2,
                        updates: 3,
                        vals: vec![1, 5],
                        readers: 2,
                        ..base.clone()
                    },
                    // mutant-keep-residue-on-skip's only kill: seeds 1 to
                    // 10 find it in 2 of 10 searches of 4,000 schedules and
                    // 7 of 10 of 16,000 (docs/properties.md).
                    vec![s.random_times(4), s.pct()],
                ),
                entry(
                    "three-cpus",
                    "three CPUs, batch 2, six 1-page updates each (one unit per crossing), two reads",
                    Config {
                        cpus: 3,
                        batch: 2,
                        updates: 6,
                        vals: vec![1],
                        reads: 2,
                        periodic: false,
                        ..base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                entry(
                    "bounds",
                    "batch 1, four 1-page updates per CPU, no periodic work: the staleness claims",
                    Config::bounds(),
                    vec![s.random(), s.pct(), s.dfs()],
                ),
                entry(
                    "uncharge",
                    "two CPUs charging 3 pages and uncharging 2 in turn (negative updates), two reads, the periodic work: the gate counts magnitudes",
                    Config {
                        batch: 2,
                        updates: 4,
                        vals: vec![3, -2],
                        reads: 2,
                        ..base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                Entry {
                    families: vec![Family::Global, Family::PerMemcg],
                    ..entry(
                        "four-cpus",
                        "four CPUs (the suite's other entries have at most three), two updates each, a reader and the periodic work: code that depends on the CPU id past 3 (docs/cutoff.md, section 4); sampled",
                        Config {
                            cpus: 4,
                            batch: 2,
                            updates: 2,
                            vals: vec![2, 3],
                            ..base.clone()
                        },
                        vec![s.random(), s.pct()],
                    )
                },
                entry(
                    "timed",
                    "abstract time: the periodic work every FLUSH_TIME ticks, on time, a reader flushing",
                    Config::timed(),
                    vec![s.random(), s.pct()],
                ),
                entry(
                    "timed-ratelimited",
                    "abstract time, readers on the ratelimited (refault) path: the periodic work every FLUSH_TIME ticks, on time; whether each skip is justified (C9)",
                    Config {
                        reads: 3,
                        ratelimited: 1,
                        ..Config::timed()
                    },
                    vec![s.random(), s.pct()],
                ),
                entry(
                    "timed-late",
                    "abstract time, a ratelimited reader, the periodic work's timer up to 3 ticks late: skips after the last flush of the whole tree is more than 2 * FLUSH_TIME old (C9)",
                    Config {
                        reads: 3,
                        ratelimited: 1,
                        ticks: 8,
                        late: 3,
                        ..Config::timed()
                    },
                    vec![s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-chain",
                    "v6.8 on: root, parent, child; one CPU charging the child three times, a reader of the parent, the periodic root flush",
                    memcg_base.clone(),
                    vec![s.random(), s.pct(), s.std()],
                ),
                memcg_entry(
                    "memcg-pair",
                    "v6.8 on: root and child; one CPU charging the child twice, a reader of the root, the periodic flush: small enough for loom",
                    Config {
                        updates: 2,
                        tree: vec![0],
                        charge: vec![1],
                        read: vec![0],
                        ..memcg_base.clone()
                    },
                    vec![loom(Some(1)), s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-two-readers",
                    "v6.8 on: as memcg-chain with readers of the parent and of the child and no periodic work: overlapping subtree flushes",
                    Config {
                        readers: 2,
                        read: vec![1, 2],
                        periodic: false,
                        ..memcg_base.clone()
                    },
                    vec![loom(Some(1)), s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-siblings",
                    "v6.8 on: two CPUs charging two siblings under one parent, a reader of the parent, the periodic flush",
                    Config {
                        cpus: 2,
                        updates: 2,
                        tree: vec![0, 1, 1],
                        charge: vec![2, 3],
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct(), s.std()],
                ),
                memcg_entry(
                    "memcg-flat",
                    "v6.8 on: the root alone, two CPUs, 1-page updates, two reads: folds, skips and resets",
                    Config {
                        cpus: 2,
                        updates: 4,
                        vals: vec![1],
                        reads: 2,
                        tree: Vec::new(),
                        charge: Vec::new(),
                        read: Vec::new(),
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-epochs",
                    "v6.8 on: the root alone, one CPU folding five times, two reads, the periodic flush: skip, reset, count again",
                    Config {
                        updates: 5,
                        reads: 2,
                        tree: Vec::new(),
                        charge: Vec::new(),
                        read: Vec::new(),
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct(), s.std()],
                ),
                memcg_entry(
                    "memcg-three-cpus",
                    "v6.8 on: three CPUs charging a child five 1-page updates each (two folds per CPU: the twin passes BATCH * 3), a reader of the parent, no periodic work (where the 2026 trigger differs)",
                    Config {
                        cpus: 3,
                        updates: 5,
                        vals: vec![1],
                        reads: 2,
                        periodic: false,
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-deep",
                    "v6.8 on: root > 1 > 2 > 3, one CPU charging memcg 3, readers of memcg 1 and of the root (two and three levels above), the periodic flush",
                    Config {
                        updates: 4,
                        readers: 2,
                        read: vec![1, 0],
                        tree: vec![0, 1, 2],
                        charge: vec![3],
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-uncharge",
                    "v6.8 on: root, parent, child; one CPU charging the child 3 pages and uncharging 2 in turn (negative updates), a reader of the parent reading twice, the periodic flush",
                    Config {
                        updates: 4,
                        vals: vec![3, -2],
                        reads: 2,
                        ..memcg_base.clone()
                    },
                    vec![s.random(), s.pct()],
                ),
                memcg_entry(
                    "memcg-dfs",
                    "v6.8 on: root, parent, child; two updates and a reader of the parent, no periodic work: every interleaving",
                    Config {
                        updates: 2,
                        periodic: false,
                        ..memcg_base.clone()
                    },
                    vec![loom(None), s.dfs()],
                ),
                memcg_entry(
                    "memcg-tree-sb",
                    "the root alone, one CPU updating twice, the periodic work flushing between, then 2 more flushes and a later update: the rstat tree's store-buffering race",
                    Config {
                        cpus: 1,
                        batch: 1,
                        updates: 2,
                        vals: vec![1],
                        readers: 0,
                        periodic: true,
                        settle: 2,
                        settle_update: true,
                        ..base.clone()
                    },
                    vec![loom(Some(2)), s.dfs()],
                ),
                memcg_entry(
                    "memcg-tree-trigger",
                    "as memcg-dfs, then 2 more flushes and a later update: whether a flush the threshold triggers misses the pages that raised it, and for how long (protocol case (d) with the rstat tree)",
                    Config {
                        updates: 2,
                        periodic: false,
                        settle: 2,
                        settle_update: true,
                        ..memcg_base.clone()
                    },
                    vec![loom(None), s.dfs()],
                ),
                memcg_entry(
                    crate::protocol::per_memcg::FOLD_SKEW,
                    "C12 without a race: MEMCG_CHARGE_BATCH 64, one CPU charging a child +30, its sibling +34, the child +40 and +30; the parent's counter folds where the child's does not (one interleaving)",
                    crate::protocol::per_memcg::fold_skew(),
                    vec![s.dfs()],
                ),
                memcg_entry(
                    "memcg-quiet",
                    "nothing flushes before main's read: two CPUs charging a child 1 and 3 pages in turn, batch 2; the reader's contract without a walk (quiescent_reader_flushes)",
                    Config {
                        cpus: 2,
                        batch: 2,
                        updates: 3,
                        vals: vec![1, 3],
                        readers: 0,
                        periodic: false,
                        tree: vec![0, 1],
                        charge: vec![2],
                        ..Config::default()
                    },
                    vec![s.dfs()],
                ),
                life_entry(
                    "life-child",
                    "the child dies while a CPU charges it through the objcg and the periodic work flushes",
                    Config::lifetime(1, Death::default()).vals(&[1]),
                ),
                life_entry(
                    "life-parent",
                    "child and parent are removed concurrently while a CPU charges the child once through a folio's reference, then puts it",
                    Config::lifetime(
                        1,
                        Death {
                            parent_dies: true,
                            folio: true,
                            relink: false,
                        },
                    )
                    .vals(&[1])
                    .periodic(false),
                ),
                life_entry(
                    "life-relink",
                    "the child's memory css is killed while a CPU charges it through the objcg, and a new memory css is linked into the same cgroup once the old one is offline (the controller disabled and enabled again); main then charges the new css and flushes",
                    Config::lifetime(
                        1,
                        Death {
                            relink: true,
                            ..Death::default()
                        },
                    )
                    .vals(&[1])
                    .periodic(false),
                ),
            ],
        }
    }

    /// A suite of one configuration, searched by `backends`.
    pub fn single(name: &str, cfg: Config, backends: Vec<Backend>) -> Suite {
        Suite {
            entries: vec![Entry {
                name: name.into(),
                why: "given on the command line".into(),
                backends,
                families: if cfg.death.is_some() {
                    vec![Family::Lifetime]
                } else {
                    vec![Family::Global, Family::PerMemcg]
                },
                cfg,
            }],
        }
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}
