//! Scenario configuration: how many CPUs, how big a batch, what updates.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One scenario: `cpus` updater threads, `readers` reader threads and an
/// optional periodic flusher thread run concurrently; then the main thread
/// reads once more (the quiescent reader) and runs one last flush.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// `num_online_cpus()`: one updater thread per CPU.
    pub cpus: usize,
    /// `MEMCG_CHARGE_BATCH` (32 in v5.19 and v6.0; small under loom).
    pub batch: i64,
    /// Calls to `__mod_memcg_state()` per CPU.
    pub updates: usize,
    /// The `val` of each update, cycled over all updates in CPU order:
    /// update `k` of CPU `c` uses `vals[(c * updates + k) % len]`.
    /// `|val| > batch` stands for a huge-page update.
    pub vals: Vec<i64>,
    /// Reader threads, each calling `mem_cgroup_flush_stats()` then reading
    /// the statistic, `reads` times.
    pub readers: usize,
    /// Reads per reader thread.
    pub reads: usize,
    /// Whether the periodic `flush_memcg_stats_dwork()` thread runs: once
    /// when `ticks` is 0, otherwise re-queued every `FLUSH_TIME` ticks.
    pub periodic: bool,
    /// Abstract time: `jiffies_64` advances from 0 to `ticks` (0: time is
    /// not modelled).
    #[serde(default)]
    pub ticks: usize,
    /// How many ticks the periodic work may run after it is due (a
    /// deferrable timer; B11 in docs/claims.md).
    #[serde(default)]
    pub late: usize,
    /// The memcg tree below `root_mem_cgroup` (memcg 0): entry `i` is the
    /// parent of memcg `i + 1`. Empty: the root alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<u8>,
    /// The memcg each CPU charges, cycled over CPUs. Empty: the root.
    /// [`Config::charges`], when given, replaces it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub charge: Vec<u8>,
    /// A charge list per CPU, cycled over CPUs: CPU `c`'s update `k`
    /// charges `charges[c % len][k % charges[c % len].len()]`, so one CPU
    /// can charge several memcgs in turn (`--charge 1:2,3`: CPU 0 charges
    /// memcgs 1 and 2 in turn, CPU 1 memcg 3). Empty: [`Config::charge`]
    /// decides, one memcg per CPU (older configurations and tokens mean
    /// what they meant).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub charges: Vec<Vec<u8>>,
    /// The memcg each reader reads, cycled over readers. Empty: the root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<u8>,
    /// How many readers (the first ones) take the ratelimited path,
    /// `mem_cgroup_flush_stats_ratelimited()` (`_delayed()` before v6.4),
    /// which flushes only once `jiffies_64` is past `flush_next_time`, as
    /// the refault path does; the others call `mem_cgroup_flush_stats()`.
    /// Needs abstract time (`ticks > 0`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ratelimited: usize,
    /// Eventual conservation: after the final flush, main runs
    /// `settle` more flushes of the whole tree, reporting the aggregates
    /// after each (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub settle: usize,
    /// After the `settle` flushes, each CPU updates its memcg once more by
    /// one page, and main flushes once more: does a later update bring a
    /// lost one back ("temporary inaccuracies", C4)?
    #[serde(default, skip_serializing_if = "is_false")]
    pub settle_update: bool,
    /// The lifetime scenario: a memcg dies while the CPUs charge it (see
    /// [`Death`]); `None` for the flush scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub death: Option<Death>,
}

/// How a lifetime scenario's memcg dies, and how the CPUs charge it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Death {
    /// The parent is removed too, concurrently.
    #[serde(default)]
    pub parent_dies: bool,
    /// The CPUs charge the child through a folio's reference (then put it)
    /// instead of through the objcg under RCU.
    #[serde(default)]
    pub folio: bool,
    /// The child's memory css is killed while its cgroup lives (the
    /// controller disabled in the parent's `cgroup.subtree_control`), and
    /// a new memory css is linked into the same cgroup once the old one is
    /// offline (the controller enabled again), while the old memcg waits
    /// to be freed.
    #[serde(default)]
    pub relink: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The most flushes [`Config::settle`] may ask for.
pub const MAX_SETTLE: usize = 8;

impl Default for Config {
    /// The default: small enough that loom finishes, large enough that v6.0
    /// skips an add, a skip races with a reset, and every mutant is caught.
    fn default() -> Self {
        Config {
            cpus: 2,
            batch: 1,
            updates: 1,
            vals: vec![2, 3],
            readers: 1,
            reads: 1,
            periodic: true,
            ticks: 0,
            late: 0,
            tree: Vec::new(),
            charge: Vec::new(),
            charges: Vec::new(),
            read: Vec::new(),
            ratelimited: 0,
            settle: 0,
            settle_update: false,
            death: None,
        }
    }
}

/// The builder: `Config::default().cpus(3).batch(2).vals(&[1])`, one
/// method per field, so that adding a field touches this file alone.
impl Config {
    /// A protocol driven call by call from outside (the real-kernel
    /// oracle's prediction and replay): `cpus` CPUs, the memcg tree
    /// `parents`, no updaters, readers or periodic work of its own.
    pub fn driven(cpus: usize, batch: i64, parents: Vec<u8>) -> Config {
        Config {
            cpus,
            batch,
            updates: 0,
            vals: vec![1],
            readers: 0,
            periodic: false,
            tree: parents,
            ..Config::default()
        }
    }

    /// The per-CPU charge lists as `--charge` takes them: memcgs of a CPU
    /// joined by `:`, CPUs by `,`.
    pub fn charges_text(&self) -> String {
        let per_cpu: Vec<String> = self
            .charges
            .iter()
            .map(|l| {
                l.iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            })
            .collect();
        per_cpu.join(",")
    }

    /// Set [`Config::cpus`].
    pub fn cpus(mut self, n: usize) -> Self {
        self.cpus = n;
        self
    }
    /// Set [`Config::batch`].
    pub fn batch(mut self, b: i64) -> Self {
        self.batch = b;
        self
    }
    /// Set [`Config::updates`].
    pub fn updates(mut self, n: usize) -> Self {
        self.updates = n;
        self
    }
    /// Set [`Config::vals`].
    pub fn vals(mut self, v: &[i64]) -> Self {
        self.vals = v.to_vec();
        self
    }
    /// Set [`Config::readers`].
    pub fn readers(mut self, n: usize) -> Self {
        self.readers = n;
        self
    }
    /// Set [`Config::reads`].
    pub fn reads(mut self, n: usize) -> Self {
        self.reads = n;
        self
    }
    /// Set [`Config::periodic`].
    pub fn periodic(mut self, on: bool) -> Self {
        self.periodic = on;
        self
    }
    /// Set [`Config::ticks`].
    pub fn ticks(mut self, n: usize) -> Self {
        self.ticks = n;
        self
    }
    /// Set [`Config::late`].
    pub fn late(mut self, n: usize) -> Self {
        self.late = n;
        self
    }
    /// Set [`Config::tree`].
    pub fn tree(mut self, parents: &[u8]) -> Self {
        self.tree = parents.to_vec();
        self
    }
    /// Set [`Config::charge`].
    pub fn charge(mut self, memcgs: &[u8]) -> Self {
        self.charge = memcgs.to_vec();
        self
    }
    /// Set [`Config::charges`]: one charge list per CPU, cycled.
    pub fn charges(mut self, lists: &[&[u8]]) -> Self {
        self.charges = lists.iter().map(|l| l.to_vec()).collect();
        self
    }
    /// Set [`Config::read`].
    pub fn read(mut self, memcgs: &[u8]) -> Self {
        self.read = memcgs.to_vec();
        self
    }
    /// Set [`Config::ratelimited`].
    pub fn ratelimited(mut self, n: usize) -> Self {
        self.ratelimited = n;
        self
    }
    /// Set [`Config::settle`].
    pub fn settle(mut self, n: usize) -> Self {
        self.settle = n;
        self
    }
    /// Set [`Config::settle_update`].
    pub fn settle_update(mut self, on: bool) -> Self {
        self.settle_update = on;
        self
    }
}

impl Config {
    /// The configuration the quantitative properties are checked on by
    /// default: the smallest on which v5.19 and v6.0 violate the documented
    /// bound and the off-by-one mutant leaves more stale than v5.19 can.
    pub fn bounds() -> Config {
        Config::default().updates(4).vals(&[1]).periodic(false)
    }

    /// The configuration `flush_time_bound` is checked on by default: the
    /// periodic work re-queued every `FLUSH_TIME` ticks, on time, racing a
    /// reader that flushes.
    pub fn timed() -> Config {
        Config::default().updates(3).vals(&[1]).reads(2).ticks(6)
    }

    /// The lifetime scenarios' statistics state: root, parent, child,
    /// `cpus` CPUs charging, `MEMCG_CHARGE_BATCH` 64, no reader (main reads
    /// after quiescence).
    pub fn lifetime(cpus: usize, death: Death) -> Config {
        Config {
            death: Some(death),
            ..Config::default()
                .cpus(cpus)
                .batch(64)
                .tree(&[0, 1])
                .readers(0)
        }
    }

    /// Model threads one execution uses, the main thread included (main
    /// runs the last CPU's updates).
    pub fn threads(&self) -> usize {
        if let Some(d) = self.death {
            // Every CPU, the periodic work and each rmdir on threads of
            // their own; main reads after joining them.
            return self.cpus
                + usize::from(self.periodic)
                + 1
                + usize::from(d.parent_dies)
                + usize::from(d.relink)
                + 1;
        }
        self.cpus.max(1) + self.readers + usize::from(self.periodic) + usize::from(self.ticks > 0)
    }

    /// The value of update `k` on CPU `cpu`.
    pub fn val(&self, cpu: usize, k: usize) -> i64 {
        self.vals[(cpu * self.updates + k) % self.vals.len()]
    }

    /// Sum of all updates: what the root's aggregate must reach
    /// (`conservation`).
    pub fn total(&self) -> i64 {
        (0..self.cpus)
            .flat_map(|c| (0..self.updates).map(move |k| (c, k)))
            .map(|(c, k)| self.val(c, k))
            .sum()
    }

    /// Memcgs in the tree, the root included.
    pub fn memcgs(&self) -> usize {
        self.tree.len() + 1
    }

    /// The parent of memcg `m`; `None` for the root.
    pub fn parent(&self, m: u8) -> Option<u8> {
        (m > 0).then(|| self.tree[m as usize - 1])
    }

    /// Whether memcg `d` is `m` or below it.
    pub fn in_subtree(&self, d: u8, m: u8) -> bool {
        let mut x = Some(d);
        while let Some(y) = x {
            if y == m {
                return true;
            }
            x = self.parent(y);
        }
        false
    }

    /// `m` and its ancestors, bottom-up.
    pub fn ancestry(&self, m: u8) -> Vec<u8> {
        std::iter::successors(Some(m), |&x| self.parent(x)).collect()
    }

    /// The memcg CPU `cpu` charges first (its only one unless
    /// [`Config::charges`] gives it a list).
    pub fn charge_of(&self, cpu: usize) -> u8 {
        self.charge_at(cpu, 0)
    }

    /// The memcgs CPU `cpu` charges, in turn.
    pub fn charge_list(&self, cpu: usize) -> Vec<u8> {
        if !self.charges.is_empty() {
            self.charges[cpu % self.charges.len()].clone()
        } else if self.charge.is_empty() {
            vec![0]
        } else {
            vec![self.charge[cpu % self.charge.len()]]
        }
    }

    /// The memcg CPU `cpu`'s update `k` charges.
    pub fn charge_at(&self, cpu: usize, k: usize) -> u8 {
        if !self.charges.is_empty() {
            let l = &self.charges[cpu % self.charges.len()];
            if !l.is_empty() {
                return l[k % l.len()];
            }
        }
        if self.charge.is_empty() {
            0
        } else {
            self.charge[cpu % self.charge.len()]
        }
    }

    /// The memcg reader `r` reads.
    pub fn read_of(&self, r: usize) -> u8 {
        if self.read.is_empty() {
            0
        } else {
            self.read[r % self.read.len()]
        }
    }

    /// Sum of the updates charged to `m`'s subtree: what `m`'s hierarchical
    /// aggregate must reach.
    pub fn total_of(&self, m: u8) -> i64 {
        (0..self.cpus)
            .flat_map(|c| (0..self.updates).map(move |k| (c, k)))
            .filter(|(c, k)| self.in_subtree(self.charge_at(*c, *k), m))
            .map(|(c, k)| self.val(c, k))
            .sum()
    }

    /// Check the configuration against the limits of the model and of a
    /// backend allowing `max_threads` threads. The error is one line naming
    /// the bad value and what is allowed.
    pub fn validate(&self, max_threads: usize, backend: &str) -> Result<(), String> {
        if self.cpus == 0 {
            return Err("--cpus 0: need at least 1 CPU".into());
        }
        if self.settle > MAX_SETTLE {
            return Err(format!(
                "--settle {}: at most {MAX_SETTLE} flushes after the final one",
                self.settle
            ));
        }
        if self.batch < 1 {
            return Err(format!(
                "--batch {}: MEMCG_CHARGE_BATCH must be at least 1",
                self.batch
            ));
        }
        if self.vals.is_empty() {
            return Err("--val: give at least one update value".into());
        }
        if let Some(v) = self.vals.iter().find(|v| **v == 0 || v.abs() > 1 << 20) {
            return Err(format!(
                "--val {v}: update values must be non-zero and at most 2^20 in magnitude"
            ));
        }
        if self.reads == 0 && self.readers > 0 {
            return Err("--reads 0: each reader must read at least once".into());
        }
        if self.ticks > 0 && !self.periodic {
            return Err(format!(
                "--ticks {}: abstract time drives the periodic flusher; drop --no-periodic",
                self.ticks
            ));
        }
        if self.ratelimited > self.readers {
            return Err(format!(
                "--ratelimited {}: more ratelimited readers than --readers {}",
                self.ratelimited, self.readers
            ));
        }
        if self.ratelimited > 0 && self.ticks == 0 {
            return Err(format!(
                "--ratelimited {}: the ratelimited reader compares jiffies_64 with flush_next_time; add --ticks N",
                self.ratelimited
            ));
        }
        if self.late > 0 && self.ticks == 0 {
            return Err(format!(
                "--late {}: lateness needs abstract time; add --ticks N",
                self.late
            ));
        }
        if self.ticks > 1000 {
            return Err(format!("--ticks {}: at most 1000", self.ticks));
        }
        if self.tree.len() > 7 {
            return Err(format!(
                "--tree: {} memcgs below the root; at most 7",
                self.tree.len()
            ));
        }
        if let Some((i, p)) = self
            .tree
            .iter()
            .enumerate()
            .find(|(i, p)| **p as usize > *i)
        {
            return Err(format!(
                "--tree: memcg {} has parent {p}; a parent must come before its child (at most {i})",
                i + 1
            ));
        }
        let n = self.memcgs();
        if n * self.cpus > 64 {
            return Err(format!(
                "--cpus {}: with {n} memcgs at most {} CPUs (64 memcg-CPU pairs)",
                self.cpus,
                64 / n
            ));
        }
        if self.ticks > 0 && n > 1 {
            return Err(format!(
                "--ticks {}: abstract time is modelled for the root alone; drop --tree",
                self.ticks
            ));
        }
        if let Some(l) = self.charges.iter().find(|l| l.is_empty()) {
            return Err(format!(
                "--charge {l:?}: a CPU's charge list needs at least one memcg"
            ));
        }
        let listed: Vec<u8> = self.charges.iter().flatten().copied().collect();
        for (flag, list) in [
            ("--charge", &self.charge),
            ("--charge", &listed),
            ("--read", &self.read),
        ] {
            if let Some(m) = list.iter().find(|m| **m as usize >= n) {
                return Err(format!(
                    "{flag} {m}: no such memcg; the tree has memcgs 0..={}",
                    n - 1
                ));
            }
        }
        if self.threads() > max_threads {
            let clock = if self.ticks > 0 { " + 1 clock" } else { "" };
            return Err(format!(
                "{} CPUs (one on main) + {} readers + {} periodic flusher{clock} = {} threads: {backend} allows at most {max_threads}",
                self.cpus,
                self.readers,
                usize::from(self.periodic),
                self.threads()
            ));
        }
        Ok(())
    }

    /// Whether every update is non-negative (`monotonic_reads` needs it).
    pub fn non_negative(&self) -> bool {
        self.vals.iter().all(|v| *v >= 0)
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vals: Vec<String> = self.vals.iter().map(|v| v.to_string()).collect();
        write!(
            f,
            "cpus={} batch={} updates={} val={} readers={} reads={} periodic={}",
            self.cpus,
            self.batch,
            self.updates,
            vals.join(","),
            self.readers,
            self.reads,
            if self.periodic { "on" } else { "off" }
        )?;
        if self.ticks > 0 {
            write!(f, " ticks={} late={}", self.ticks, self.late)?;
        }
        if self.ratelimited > 0 {
            write!(f, " ratelimited={}", self.ratelimited)?;
        }
        let list = |v: &[u8]| {
            v.iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        if !self.tree.is_empty() {
            write!(f, " tree={}", list(&self.tree))?;
        }
        if !self.charges.is_empty() {
            write!(f, " charge={}", self.charges_text())?;
        } else if !self.charge.is_empty() {
            write!(f, " charge={}", list(&self.charge))?;
        }
        if !self.read.is_empty() {
            write!(f, " read={}", list(&self.read))?;
        }
        if let Some(d) = self.death {
            let who = if d.parent_dies {
                "child+parent"
            } else {
                "child"
            };
            let how = if d.folio { "folio" } else { "objcg" };
            // A new memory css linked into the cgroup while the old dies.
            let relink = if d.relink { "+relink" } else { "" };
            write!(f, " death={who}{relink} charge-via={how}")?;
        }
        Ok(())
    }
}
