//! The exact comparison: a boot's traced update stream fed, in the order
//! the kernel made the calls and on the CPUs it made them, into the model's
//! protocol for the release, and every reader decision and every value a
//! read showed compared with what the model decides and shows
//! (docs/real-kernels.md, section 4).
//!
//! Nothing is fitted. The stream is the kernel's own record (see
//! [`super::trace`]): each update (memcg, item, value, CPU), each gate
//! (memcg, the counter it compared, its decision), each rstat flush and
//! each run of the periodic work. The model replays the updates and the
//! flushes that are not the scenario's, and decides every gate of the
//! scenario's memcgs itself; a decision or a counter that differs from the
//! kernel's, or a read that shows another value, is a disagreement at that
//! event.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::spec::{Hello, ReadRecord, Start};
use super::trace::{Ev, Event, UpdateFn};
use crate::config::Config;
use crate::explore::Std;
use crate::protocol::{Env, Protocol, Variant};
use crate::vocab::{Access, Actor, Obs, Op, Platform, Sink, ThreadCtx, Tp, Var};

/// `MEMCG_CHARGE_BATCH`.
const BATCH: i64 = 64;

/// How a row was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// From the kernel's trace, every input known.
    Exact,
    /// From the kernel's trace, with one input the trace cannot see set
    /// once per boot (6.1: a CPU's global `stats_updates` that the
    /// calibration at the boot's start did not reach is taken as 0).
    Calibrated,
    /// Without a trace: the old search over start states, a diagnosis
    /// only, never counted as an agreement.
    Fitted,
}

impl Judged {
    /// The word in tables.
    pub fn name(self) -> &'static str {
        match self {
            Judged::Exact => "exact",
            Judged::Calibrated => "calibrated",
            Judged::Fitted => "fitted",
        }
    }
}

/// The lineage of a release's protocol, as the replay needs to know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lineage {
    /// One global threshold (6.1 to 6.7).
    Global,
    /// Per-memcg thresholds (6.8 on).
    PerMemcg,
}

/// The comparison of one scenario's traced window with the model.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// Gates of the scenario's memcgs the model decided, and how many of
    /// them flushed in the kernel.
    pub gates: usize,
    /// Of those, the ones that flushed.
    pub flushes: usize,
    /// Reads compared (their values).
    pub reads: usize,
    /// Updates replayed in the window.
    pub updates: usize,
    /// The first difference, if any: one line.
    pub difference: Option<String>,
    /// Flushes of the scenario's memcgs that no gate or periodic run
    /// decided (another controller's, a release's), replayed as such.
    pub foreign: usize,
    /// The reads as the kernel showed them: (anon, whether it flushed).
    pub observed: Vec<(i64, bool)>,
    /// The same reads as the model decided and showed them (up to the
    /// first difference).
    pub predicted: Vec<(i64, bool)>,
    /// CPUs whose 6.1 `stats_updates` was not calibrated before the window
    /// (their residual taken as 0).
    pub uncalibrated: Vec<usize>,
    /// Every gate of the scenario's memcgs in the window: (pid, memcg
    /// path, whether it flushed, the `anon` the model shows after it).
    pub gate_log: Vec<(u32, String, bool, i64)>,
}

impl Replayed {
    /// Whether the kernel and the model agree on the whole window.
    pub fn agrees(&self) -> bool {
        self.difference.is_none()
    }
}

/// What the model's observations say about a gate: the counter it read
/// and its decision.
#[derive(Default)]
struct GateSeen {
    value: Option<i64>,
    needs: Option<bool>,
}

/// A sink that keeps the last threshold read and the last gate decision.
struct GateSink(Mutex<GateSeen>);

impl Sink for GateSink {
    fn observe(&self, _actor: Actor, obs: Obs) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match obs {
            // The gate's own read is the first: the flush that follows
            // reads the counter again on every CPU, after resetting it.
            Obs::Access(Access {
                var: Var::Threshold { .. },
                op: Op::Read(v),
                ..
            }) if g.value.is_none() => g.value = Some(v),
            Obs::Trace(Tp::FlushStats { needs_flush, .. }) => g.needs = Some(needs_flush),
            _ => {}
        }
    }
}

/// The model's memcgs for one scenario: 0 the root, 1 the probe's base
/// directory, 2 the scenario's directory, then its memcgs in order, then
/// one memcg for everything else (6.1's global counter counts it).
pub struct Tree {
    /// Parent of memcg `i + 1`.
    pub parents: Vec<u8>,
    /// Cgroup id to model memcg.
    pub by_id: BTreeMap<u64, u8>,
    /// Path (as the scenario names it) to model memcg.
    pub by_path: BTreeMap<String, u8>,
    cfg: Config,
}

impl Tree {
    /// The tree of a scenario's `ids` (path to cgroup id; `.` the scenario
    /// directory, `..` the base directory).
    pub fn of(ids: &BTreeMap<String, u64>) -> Tree {
        let mut parents = vec![0u8, 1u8];
        let mut by_id = BTreeMap::from([(1u64, 0u8)]);
        let mut by_path = BTreeMap::new();
        if let Some(&b) = ids.get("..") {
            by_id.insert(b, 1);
        }
        if let Some(&d) = ids.get(".") {
            by_id.insert(d, 2);
        }
        by_path.insert(".".to_string(), 2);
        // Parents first: a path's parent is a shorter path.
        let mut paths: Vec<&String> = ids.keys().filter(|k| !k.starts_with('.')).collect();
        paths.sort_by_key(|p| (p.matches('/').count(), p.to_string()));
        for p in paths {
            let m = parents.len() as u8 + 1;
            let parent = match p.rfind('/') {
                Some(i) => by_path.get(&p[..i]).copied().unwrap_or(2),
                None => 2,
            };
            parents.push(parent);
            by_path.insert(p.clone(), m);
            by_id.insert(ids[p], m);
        }
        parents.push(0);
        Tree {
            cfg: Config::default().tree(&parents),
            parents,
            by_id,
            by_path,
        }
    }

    /// The memcg for everything outside the scenario.
    pub fn other(&self) -> u8 {
        self.parents.len() as u8
    }

    /// Whether `d` is in the subtree of `m`.
    pub fn in_subtree(&self, d: u8, m: u8) -> bool {
        self.cfg.in_subtree(d, m)
    }

    /// The scenario's own memcgs (its directory and below).
    pub fn scenario(&self, m: u8) -> bool {
        m >= 2 && m < self.other()
    }
}

/// `memcg_page_state_unit()`: bytes for the byte-sized items, KiB for the
/// kernel stack, pages otherwise; by the item names the kernel's BTF gave.
fn unit_of(hello: &Hello, func: UpdateFn, item: i64) -> i64 {
    if func == UpdateFn::Events {
        return 4096;
    }
    let is = |name: &str| hello.items.get(name) == Some(&item);
    if is("NR_SLAB_RECLAIMABLE_B")
        || is("NR_SLAB_UNRECLAIMABLE_B")
        || is("MEMCG_PERCPU_B")
        || is("MEMCG_ZSWAP_B")
    {
        1
    } else if is("NR_KERNEL_STACK_KB") {
        1024
    } else {
        4096
    }
}

/// The value `memcg_rstat_updated()` receives for a traced update, in
/// `release` (major, minor): the tracepoints record it already (`pages`);
/// a kprobe records the function's argument (`raw`), which 6.1 passes on
/// unchanged and 6.8 to 6.15 pass through `memcg_state_val_in_pages()`,
/// whose division wraps a negative value (docs/real-kernel-updates.md).
pub fn rstat_val(hello: &Hello, release: (u32, u32), func: UpdateFn, item: i64, val: i64) -> i64 {
    if hello.vals != "raw" || release < (6, 8) || func == UpdateFn::Events {
        return val;
    }
    let unit = unit_of(hello, func, item);
    if unit == 4096 || val == 0 {
        return val;
    }
    if val > 0 {
        return (val * unit / 4096).max(1);
    }
    // `max(val * unit / PAGE_SIZE, 1UL)` in unsigned long arithmetic, then
    // truncated to int by memcg_rstat_updated()'s parameter.
    let wrapped = (val as i32 as u64).wrapping_mul(unit as u64) / 4096;
    wrapped.max(1) as u32 as i32 as i64
}

/// The events of scenario `name`'s window: from its start marker to its
/// end marker (indices into `events`).
pub fn window(events: &[Event], name: &str) -> Option<(usize, usize)> {
    let start = format!("fcp s {name}");
    let end = format!("fcp e {name}");
    let from = events
        .iter()
        .position(|e| matches!(&e.ev, Ev::Marker(m) if *m == start))?;
    let to = events[from..]
        .iter()
        .position(|e| matches!(&e.ev, Ev::Marker(m) if *m == end))
        .map_or(events.len(), |i| from + i);
    Some((from, to))
}

/// What a replay needs besides the events.
pub struct Replay<'a> {
    /// The guest's facts.
    pub hello: &'a Hello,
    /// The release, (major, minor).
    pub release: (u32, u32),
    /// The protocol to replay with.
    pub variant: &'a Variant,
    /// Its lineage.
    pub lineage: Lineage,
    /// The scenario's start record (its cgroup ids).
    pub start: &'a Start,
    /// The scenario's reads, in order.
    pub reads: &'a [&'a ReadRecord],
    /// The window's pid of the reader (the probe: 1 in a guest).
    pub reader_pid: Option<u32>,
    /// Window markers: `fcp s NAME` (the scenario's name).
    pub name: &'a str,
}

impl Replay<'_> {
    /// Replay `events` and compare.
    pub fn run(&self, events: &[Event]) -> Replayed {
        let mut out = Replayed::default();
        let Some((from, to)) = window(events, self.name) else {
            out.difference = Some(format!(
                "the trace has no window for {} (no `fcp s {}` marker)",
                self.name, self.name
            ));
            return out;
        };
        let tree = Tree::of(&self.start.ids);
        let cpus = self.hello.cpus.max(1);
        let cfg = Config::driven(cpus, BATCH, tree.parents.clone());
        let sink = Arc::new(GateSink(Mutex::new(GateSeen::default())));
        let proto: Arc<dyn Protocol<Std>> = self.variant.flush_model().build::<Std>(Env::new(&cfg));
        Std::install(ThreadCtx::new(Actor::Main, Some(sink.clone())));
        let result = self.replay(events, from, to, &tree, &*proto, &sink, &mut out);
        Std::uninstall();
        if let Err(d) = result {
            out.difference = Some(d);
        } else if out.reads < self.reads.len() {
            out.difference = Some(format!(
                "the trace has {} of the {} reads' gates (the stream is not whole)",
                out.reads,
                self.reads.len()
            ));
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn replay(
        &self,
        events: &[Event],
        from: usize,
        to: usize,
        tree: &Tree,
        proto: &dyn Protocol<Std>,
        sink: &GateSink,
        out: &mut Replayed,
    ) -> Result<(), String> {
        let global = self.lineage == Lineage::Global;
        // The items a read compares: memory.stat's `anon` and `shmem`.
        let items = [
            self.hello.items.get("NR_ANON_MAPPED").copied(),
            self.hello.items.get("NR_SHMEM").copied(),
        ];
        let n = tree.other() as usize + 1;
        // Pages of each item charged to each memcg itself, and what each
        // memcg's memory.stat shows.
        let mut charged = vec![[0i64; 2]; n];
        let mut shown = vec![[0i64; 2]; n];
        let flush_values = |charged: &[[i64; 2]], shown: &mut [[i64; 2]], root: u8| {
            for m in 0..n as u8 {
                if tree.in_subtree(m, root) {
                    for k in 0..2 {
                        shown[m as usize][k] = (0..n as u8)
                            .filter(|d| tree.in_subtree(*d, m))
                            .map(|d| charged[d as usize][k])
                            .sum();
                    }
                }
            }
        };
        let mut calibrated = vec![false; self.hello.cpus.max(1)];
        // Flushes already accounted for: a gate's or the periodic work's
        // own rstat flush, by pid.
        let mut own_flush: BTreeMap<u32, u8> = BTreeMap::new();
        // Tasks running the periodic work whose flush has not begun yet.
        let mut periodic: std::collections::BTreeSet<u32> = Default::default();
        let mut pending_read: Option<usize> = None;
        let begin = if global { 0 } else { from };
        let at = |e: &Event, i: usize| {
            format!(
                "event {} ({:.6} s, CPU {}, pid {})",
                i - from,
                e.t_us as f64 / 1e6,
                e.cpu,
                e.pid
            )
        };
        for i in begin..to {
            let e = &events[i];
            let judged = i >= from;
            if i == from {
                out.uncalibrated = calibrated
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !**c)
                    .map(|(c, _)| c)
                    .collect();
            }
            match &e.ev {
                Ev::Update {
                    func,
                    id,
                    item: it,
                    val,
                } => {
                    let m = match tree.by_id.get(id) {
                        Some(&m) => m,
                        None if global => tree.other(),
                        None => continue,
                    };
                    let v = rstat_val(self.hello, self.release, *func, *it, *val);
                    if global && v.abs() > BATCH {
                        if let Some(c) = calibrated.get_mut(e.cpu) {
                            *c = true;
                        }
                    }
                    Std::set_actor(Actor::Cpu(e.cpu));
                    proto.mod_memcg_state(m, v);
                    if *func != UpdateFn::Events {
                        for k in 0..2 {
                            if items[k] == Some(*it) {
                                charged[m as usize][k] += val;
                            }
                        }
                    }
                    if judged {
                        out.updates += 1;
                    }
                }
                Ev::Marker(text) => {
                    let mut w = text.split_whitespace();
                    if let (Some("fcp"), Some("r"), Some(s), Some(k)) =
                        (w.next(), w.next(), w.next(), w.next())
                    {
                        if s == self.name {
                            pending_read = k.parse().ok();
                        }
                    }
                }
                Ev::Dwork => {
                    // The periodic work: its flush happens at its rstat
                    // flush (below), not here: updates made meanwhile on
                    // other CPUs come before it (and 6.1's trylock can lose,
                    // leaving no flush at all).
                    periodic.insert(e.pid);
                }
                Ev::Gate { force: true, .. } => {}
                Ev::Gate {
                    id,
                    value,
                    force: false,
                    needs,
                } => {
                    let m = if global {
                        Some(0)
                    } else {
                        tree.by_id.get(id).copied().filter(|m| tree.scenario(*m))
                    };
                    let Some(m) = m else { continue };
                    // The kernel's decision: the tracepoint's, or whether its
                    // flush follows.
                    let kernel = needs.unwrap_or_else(|| {
                        next_of_pid(events, i, to, e.pid).is_some_and(|j| {
                            matches!(events[j].ev, Ev::Rstat { .. } | Ev::FlushEntered)
                        })
                    });
                    {
                        let mut g = sink.0.lock().unwrap_or_else(|e| e.into_inner());
                        *g = GateSeen::default();
                    }
                    Std::set_actor(Actor::Reader(0));
                    let decided = proto.mem_cgroup_flush_stats(m);
                    let seen =
                        std::mem::take(&mut *sink.0.lock().unwrap_or_else(|e| e.into_inner()));
                    if decided {
                        flush_values(&charged, &mut shown, if global { 0 } else { m });
                        own_flush.insert(e.pid, m);
                    }
                    if !judged {
                        continue;
                    }
                    let target = if global { None } else { Some(m) };
                    out.gate_log.push((
                        e.pid,
                        target.map_or_else(|| "*".to_string(), |m| self.path_of(tree, m)),
                        kernel,
                        target.map_or(0, |m| shown[m as usize][0]),
                    ));
                    let is_read = pending_read.is_some() && Some(e.pid) == self.reader_pid;
                    out.gates += 1;
                    out.flushes += usize::from(kernel);
                    if let (Some(kv), Some(mv)) = (value, seen.value) {
                        if *kv != mv {
                            return Err(format!(
                                "{}: the gate of {} compared {kv} in the kernel, {mv} in the model",
                                at(e, i),
                                self.path_of(tree, m)
                            ));
                        }
                    }
                    if kernel != decided {
                        return Err(format!(
                            "{}: the gate of {} {} in the kernel and {} in the model{}",
                            at(e, i),
                            self.path_of(tree, m),
                            if kernel { "flushed" } else { "did not flush" },
                            if decided { "flushed" } else { "did not" },
                            value.map_or(String::new(), |v| format!(" (counter {v})"))
                        ));
                    }
                    if is_read {
                        let k = pending_read.take().unwrap_or(0);
                        let Some(r) = self.reads.iter().find(|r| r.i == k) else {
                            return Err(format!(
                                "{}: a read marked {k} that the probe did not record",
                                at(e, i)
                            ));
                        };
                        let target = tree.by_path.get(&r.cg).copied().unwrap_or(2);
                        let [anon, shmem] = shown[target as usize];
                        out.reads += 1;
                        out.observed.push((r.anon as i64, kernel));
                        out.predicted.push((anon, decided));
                        for (what, model, kern) in [
                            ("anon", anon, r.anon as i64),
                            ("shmem", shmem, r.shmem as i64),
                        ] {
                            if model != kern {
                                return Err(format!(
                                    "{}: read {} of {} showed {what} {kern} pages, the model's {model}",
                                    at(e, i),
                                    k + 1,
                                    r.cg
                                ));
                            }
                        }
                    }
                }
                Ev::FlushEntered => {
                    // 6.1: a gate passed that the trace did not see (one
                    // inlined into a caller other than memory.stat's): the
                    // model's gate must pass too.
                    if !global || own_flush.contains_key(&e.pid) || periodic.contains(&e.pid) {
                        continue;
                    }
                    Std::set_actor(Actor::Reader(1));
                    let decided = proto.mem_cgroup_flush_stats(0);
                    if decided {
                        flush_values(&charged, &mut shown, 0);
                        own_flush.insert(e.pid, 0);
                    }
                    if judged {
                        out.gates += 1;
                        out.flushes += 1;
                        if !decided {
                            return Err(format!(
                                "{}: another task's gate flushed in the kernel; the model's \
                                 threshold says not to",
                                at(e, i)
                            ));
                        }
                    }
                }
                Ev::Rstat { id } => {
                    let Some(&m) = tree.by_id.get(id) else {
                        continue;
                    };
                    if periodic.remove(&e.pid) {
                        // The periodic work's flush of the root, as it begins
                        // (it visits CPU 0 first).
                        Std::set_actor(Actor::Periodic);
                        proto.periodic();
                        flush_values(&charged, &mut shown, 0);
                        continue;
                    }
                    if let Some(g) = own_flush.remove(&e.pid) {
                        if g == m || g == 0 || global {
                            continue;
                        }
                    }
                    // A flush no gate of the scenario and no periodic run
                    // decided: another task's gate on an ancestor, another
                    // controller, a release. The model flushes as it did.
                    if judged {
                        out.foreign += 1;
                    }
                    if global {
                        flush_values(&charged, &mut shown, 0);
                    } else {
                        Std::set_actor(Actor::Periodic);
                        proto.flush();
                        flush_values(&charged, &mut shown, 0);
                    }
                }
            }
        }
        Ok(())
    }

    fn path_of(&self, tree: &Tree, m: u8) -> String {
        if m == 0 {
            return "the root".into();
        }
        tree.by_path
            .iter()
            .find(|(_, v)| **v == m)
            .map_or_else(|| format!("memcg {m}"), |(p, _)| p.clone())
    }
}

/// The index of the next event of task `pid` after `i` (before `to`).
fn next_of_pid(events: &[Event], i: usize, to: usize, pid: u32) -> Option<usize> {
    (i + 1..to.min(events.len())).find(|&j| events[j].pid == pid)
}
