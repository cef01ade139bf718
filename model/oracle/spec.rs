//! The real-kernel scenarios as data: what the probe does in a guest (or on
//! the machine's own kernel), and what the model's side predicts for it
//! (docs/real-kernels.md, section 2).
//!
//! This module belongs to the crate; the probe (`probe/`, binary
//! `flushprobe`) compiles the same file as its `scenario` module (a
//! `#[path]` module), so the two cannot drift apart. `scenarios.json`
//! beside it is the one place a scenario is written.

use serde::{Deserialize, Serialize};

/// The scenario file: every scenario, in run order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioFile {
    /// The scenarios.
    pub scenarios: Vec<Scenario>,
}

/// One scenario: a few memcgs, one task pinned to a CPU, charges in known
/// units and reads of memory.stat in between.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    /// Short name (`step`, `siblings`, ...).
    pub name: String,
    /// The question it asks, one line.
    pub about: String,
    /// The issue item it answers (`a` to `f`), for the docs.
    #[serde(default)]
    pub item: String,
    /// The memcgs it creates, parents first, as paths below the probe's
    /// base cgroup (`p`, `p/a`).
    pub cgroups: Vec<String>,
    /// Whether 64 KiB anonymous mTHP is enabled while it runs (only for the
    /// scenarios that need it: large folios change what the probe's own
    /// first touches of its buffers would charge).
    #[serde(default, skip_serializing_if = "is_false")]
    pub mthp: bool,
    /// What the task does, in order.
    pub ops: Vec<Op>,
}

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Move the task into memcg `cg` (later faults charge it).
    Enter {
        /// The memcg.
        cg: String,
    },
    /// Pin the task to `cpu`.
    Pin {
        /// The CPU.
        cpu: usize,
    },
    /// Wait for the periodic flush (`flush_memcg_stats_dwork()`) to run,
    /// so that the scenario starts with every count flushed; then
    /// `settle_ms` more; then drain this CPU's LRU add batch
    /// (`lru_add_drain()`, through `madvise(MADV_COLD)` of a range with no
    /// page), so that the scenario's folios start in an empty batch.
    WaitPeriodic {
        /// Extra wait after the flush, in milliseconds.
        #[serde(default)]
        settle_ms: u64,
    },
    /// Charge `n` units of `kind`, reading `read` after every `every`
    /// units (`every` 0: no reads).
    Charge {
        /// What one unit is.
        kind: Unit,
        /// How many units.
        n: usize,
        /// How many units at other CPU counts (`[[cpus, n], ...]`), where a
        /// scenario's shape depends on the trigger `MEMCG_CHARGE_BATCH *
        /// num_online_cpus()`; `n` where none is given.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        n_by_cpus: Vec<(usize, usize)>,
        /// The memcg read between units, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read: Option<String>,
        /// Read after every this many units (0: never).
        #[serde(default)]
        every: usize,
        /// Whether each read opens and closes memory.stat (otherwise the
        /// probe rereads a descriptor opened before the scenario, so that
        /// the read allocates nothing in the memcg).
        #[serde(default, skip_serializing_if = "is_false")]
        reopen: bool,
        /// Print the traced update calls (`FCT` lines) of the first this
        /// many units, for diagnosis (0: none).
        #[serde(default, skip_serializing_if = "is_zero")]
        trace: usize,
    },
    /// Free the `n` units of `kind` this scenario charged last, one at a
    /// time, newest first: `madvise(MADV_DONTNEED)` of an anonymous page
    /// or folio (`anon4k`, `mthp64k`, `thp`), `ftruncate()` of the memfd by
    /// one page (`shmem4k`), `close()` of a kept descriptor (`open_keep`);
    /// `open_close` holds nothing to free. Reads as for `charge`.
    Free {
        /// What one unit is.
        kind: Unit,
        /// How many units.
        n: usize,
        /// The memcg read between units, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read: Option<String>,
        /// Read after every this many units (0: never).
        #[serde(default)]
        every: usize,
    },
    /// Read memcg `cg`'s memory.stat once.
    Read {
        /// The memcg.
        cg: String,
        /// Whether the read opens and closes memory.stat.
        #[serde(default, skip_serializing_if = "is_false")]
        reopen: bool,
    },
    /// Read `cg` every `every_ms` for `ms` milliseconds, charging nothing.
    Poll {
        /// The memcg.
        cg: String,
        /// How long.
        ms: u64,
        /// The period of the reads.
        every_ms: u64,
    },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The units a `Charge` makes at `cpus` online CPUs.
pub fn units_at(n: usize, n_by_cpus: &[(usize, usize)], cpus: usize) -> usize {
    n_by_cpus
        .iter()
        .find(|(c, _)| *c == cpus)
        .map(|(_, k)| *k)
        .unwrap_or(n)
}

/// A charge unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The first write to one 4 KiB page of a private anonymous mapping
    /// with `MADV_NOHUGEPAGE`.
    Anon4k,
    /// The first write to one 2 MiB-aligned 2 MiB extent of a private
    /// anonymous mapping with `MADV_HUGEPAGE` (a THP fault).
    Thp,
    /// The first write to one 64 KiB-aligned 64 KiB extent of a private
    /// anonymous mapping with 64 KiB mTHP enabled
    /// (`hugepages-64kB/enabled` = `always`): one order-4 folio where the
    /// kernel has anonymous mTHP (6.8 on), one 4 KiB page where it has not.
    Mthp64k,
    /// One `write()` of 4 KiB at the end of a memfd (a shmem page).
    Shmem4k,
    /// One `open()` and `close()` of memory.stat (accounted slab: the
    /// `struct file` and the kernfs and seq_file objects).
    OpenClose,
    /// One `open()` of the root directory, kept open until the scenario
    /// ends: an accounted `struct file` (`filp_cachep` is `SLAB_ACCOUNT`)
    /// and the cursor dentry of `dcache_dir_open()` (`dentry_cache` is
    /// `SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT`), nothing freed, so the objcg
    /// stock only grows.
    OpenKeep,
}

impl Unit {
    /// Pages of the `anon` item one unit adds (0: none).
    pub fn anon_pages(self) -> u64 {
        match self {
            Unit::Anon4k => 1,
            Unit::Thp => 512,
            Unit::Mthp64k => 16,
            Unit::Shmem4k | Unit::OpenClose | Unit::OpenKeep => 0,
        }
    }
    /// Pages of the `shmem` item one unit adds.
    pub fn shmem_pages(self) -> u64 {
        match self {
            Unit::Shmem4k => 1,
            _ => 0,
        }
    }
}

/// What the probe prints for one read (one JSON line after `FCP `).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadRecord {
    /// Scenario name.
    pub s: String,
    /// Index of the op that read.
    pub op: usize,
    /// Units of that op done before the read (for a `Poll`, the poll's
    /// sequence number).
    pub n: usize,
    /// The memcg read.
    pub cg: String,
    /// Microseconds since the scenario started.
    pub t: u64,
    /// The read's number in its scenario (0, 1, ...): the probe marks the
    /// trace with it just before the read (`fcp r <s> <i>`).
    #[serde(default)]
    pub i: usize,
    /// memory.stat's `anon`, in pages.
    pub anon: u64,
    /// memory.stat's `shmem`, in pages.
    pub shmem: u64,
    /// memory.stat's `slab`, in bytes.
    pub slab: u64,
    /// memory.current, in pages.
    pub cur: u64,
    /// Reader flushes (`cgroup_rstat_flush*()` entries) during this read,
    /// if a kprobe could count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushed: Option<u64>,
    /// Periodic flushes (`flush_memcg_stats_dwork()`) since the scenario
    /// started, if a kprobe could count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwork: Option<u64>,
    /// Kprobe hits per event since the scenario started, sampled before
    /// the read (the update calls its charges made, on every CPU).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub k: std::collections::BTreeMap<String, u64>,
}

/// What the probe prints about the guest once, before the scenarios.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// `uname -r`.
    pub release: String,
    /// `num_online_cpus()` as `sysconf(_SC_NPROCESSORS_ONLN)` sees it.
    pub cpus: usize,
    /// The kprobes the probe could register (kernel symbol names).
    pub kprobes: Vec<String>,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub thp: String,
    /// `/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled`
    /// (empty: no anonymous mTHP).
    #[serde(default)]
    pub mthp: String,
    /// How the update stream and the flushes are recorded:
    /// `tracepoints` (the memcg tracepoints, 6.16 on), `kprobes` (kprobes
    /// with fetch arguments at BTF offsets: 6.1, 6.12), or `none` (no
    /// flush can be seen; the rows fail). Empty in consoles of probes that
    /// did not trace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trace: String,
    /// Why nothing could be traced, if so.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trace_why: String,
    /// The trace events enabled (`memcg/mod_memcg_state`, `fcp/fcp_ml`;
    /// a leading `!` where registering failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// Stat item numbers by name, from the kernel's BTF
    /// (`NR_ANON_MAPPED`, `MEMCG_KMEM`, `PGFAULT`, ...).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub items: std::collections::BTreeMap<String, i64>,
    /// What the traced update values are: `pages` (as
    /// `memcg_rstat_updated()` receives them: the tracepoints) or `raw` (as
    /// the update function was called: bytes for byte-sized items).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vals: String,
}

/// What the probe prints when a scenario's charges begin (after its
/// `WaitPeriodic`): where its reserved mappings stand.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    /// Scenario name.
    pub s: String,
    /// Index of the next 4 KiB page of the anonymous mapping (the mapping
    /// starts 2 MiB-aligned; page tables exist for all of it).
    pub anon: usize,
    /// Index of the next 2 MiB extent of the THP mapping.
    pub thp: usize,
    /// The slot size of `struct file` in this kernel
    /// (`/sys/kernel/slab/filp/slab_size`; 0 if unreadable).
    #[serde(default)]
    pub filp: usize,
    /// The slot size of `struct dentry` (`/sys/kernel/slab/dentry/slab_size`;
    /// 0 if unreadable).
    #[serde(default)]
    pub dentry: usize,
    /// Cgroup ids (kernfs ids, as the trace names memcgs) of the scenario's
    /// memcgs by path, of its own directory (`.`) and of the probe's base
    /// directory (`..`); the root memcg is 1.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub ids: std::collections::BTreeMap<String, u64>,
}

/// What the probe prints per scenario after its reads: the update calls
/// that the kprobes counted on the task's CPU while each unit kind ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {
    /// Scenario name.
    pub s: String,
    /// Whether it ran to the end (false: the error says why).
    pub ok: bool,
    /// What went wrong, if anything.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// Microseconds the scenario took.
    pub t: u64,
    /// Trace events lost to a full ring buffer while it ran (the stream
    /// then is not whole).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub overrun: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// The scenario file that ships with the crate.
pub const SCENARIOS_JSON: &str = include_str!("scenarios.json");

/// Parse [`SCENARIOS_JSON`].
pub fn scenarios() -> Vec<Scenario> {
    serde_json::from_str::<ScenarioFile>(SCENARIOS_JSON)
        .expect("model/oracle/scenarios.json parses")
        .scenarios
}
