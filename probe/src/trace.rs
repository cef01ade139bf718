//! The update stream and the flush decisions, recorded through tracefs.
//!
//! Kernels from 6.16 have the memcg tracepoints (include/trace/events/
//! memcg.h): `mod_memcg_state`, `mod_memcg_lruvec_state`,
//! `count_memcg_events` (memcg id, item, the value `memcg_rstat_updated()`
//! receives) and `memcg_flush_stats` (memcg id, `stats_updates`, force,
//! needs_flush: each gate's decision). Older kernels (6.1, 6.12) have none;
//! there the probe puts kprobes on the same functions, with fetch arguments
//! that follow the pointers to the memcg's cgroup id, at the offsets the
//! kernel's own BTF gives. Either way the flushes are kprobes on the rstat
//! flush (`cgroup_rstat_flush()`, `css_rstat_flush()` from 6.16) and on the
//! periodic work.
//!
//! Tracing stays on for the whole boot: the probe reads `trace_pipe` after
//! each scenario (outside its memcgs) and prints every event as one compact
//! `FCE` line, so that the host sees one stream from the first scenario to
//! the last. A scenario marks its reads in the stream with `trace_marker`
//! writes, which allocate nothing.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

use crate::btf::Btf;

pub const TRACEFS: &str = "/sys/kernel/tracing";

/// How the stream is recorded on this kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The memcg tracepoints (6.16 on).
    Tracepoints,
    /// Kprobes with BTF-derived fetch arguments (6.1, 6.12).
    Kprobes,
    /// Neither could be set up: no flush can be seen.
    None,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tracepoints => "tracepoints",
            Mode::Kprobes => "kprobes",
            Mode::None => "none",
        }
    }
}

/// The stat items the host needs by name, in the three enums the update
/// functions take (`memcg_stat_item` extends `node_stat_item`).
const ITEMS: &[&str] = &[
    "NR_ANON_MAPPED",
    "NR_FILE_PAGES",
    "NR_SHMEM",
    "NR_INACTIVE_ANON",
    "NR_ACTIVE_ANON",
    "NR_INACTIVE_FILE",
    "NR_ACTIVE_FILE",
    "NR_UNEVICTABLE",
    "NR_ANON_THPS",
    "NR_SHMEM_THPS",
    "NR_FILE_THPS",
    "NR_SLAB_RECLAIMABLE_B",
    "NR_SLAB_UNRECLAIMABLE_B",
    "NR_KERNEL_STACK_KB",
    "NR_PAGETABLE",
    "NR_SECONDARY_PAGETABLE",
    "MEMCG_SWAP",
    "MEMCG_SOCK",
    "MEMCG_PERCPU_B",
    "MEMCG_VMALLOC",
    "MEMCG_KMEM",
    "MEMCG_ZSWAP_B",
    "PGPGIN",
    "PGPGOUT",
    "PGFAULT",
    "PGMAJFAULT",
    "THP_FAULT_ALLOC",
    "WORKINGSET_REFAULT_ANON",
    "NR_VM_NODE_STAT_ITEMS",
];

/// What was set up, for the `hello` record.
pub struct Tracing {
    pub mode: Mode,
    /// The events enabled (`memcg/mod_memcg_state`, `fcp/fcp_ml`, ...).
    pub events: Vec<String>,
    /// Stat item values by name (from BTF), for the host.
    pub items: BTreeMap<String, i64>,
    /// Whether update values are as `memcg_rstat_updated()` receives them
    /// (`pages`, the tracepoints) or as the update function was called
    /// (`raw`: bytes for the byte-sized items; the host converts them as
    /// the release does).
    pub vals: &'static str,
    /// The kprobes that carry a memcg id, whose filter follows the scenario.
    id_kprobes: Vec<&'static str>,
    /// Whether the update events are filtered by memcg (not on 6.1, whose
    /// threshold counts every memcg's updates).
    filter_updates: bool,
    /// Why no tracing, if none.
    pub why_none: String,
    pipe: Option<std::fs::File>,
    marker: Option<std::fs::File>,
    pending: Vec<u8>,
}

fn append(path: &str, text: &str) -> bool {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .is_ok()
}

fn write(path: &str, text: &str) -> bool {
    std::fs::write(path, text).is_ok()
}

fn exists(path: &str) -> bool {
    std::fs::metadata(path).is_ok()
}

/// A kprobe fetch argument at `off` bytes from `base` (`+8(%di)`).
fn deref(off: i64, base: &str) -> String {
    if off < 0 {
        format!("-{}({base})", -off)
    } else {
        format!("+{off}({base})")
    }
}

impl Tracing {
    /// Set up the recording for this kernel: tracepoints where they exist,
    /// else kprobes; tracing on from here to the end of the boot.
    pub fn setup(points: &std::collections::HashSet<String>) -> Tracing {
        let funcs = |f: &str| points.contains(f);
        let mut t = Tracing {
            mode: Mode::None,
            events: Vec::new(),
            items: BTreeMap::new(),
            vals: "pages",
            id_kprobes: Vec::new(),
            filter_updates: true,
            why_none: String::new(),
            pipe: None,
            marker: None,
            pending: Vec::new(),
        };
        if !exists(&format!("{TRACEFS}/kprobe_events")) {
            t.why_none = "no tracefs (or no kprobe_events) in this kernel".into();
            return t;
        }
        let btf = match Btf::load() {
            Ok(b) => b,
            Err(e) => {
                t.why_none = format!("no BTF: {e}");
                return t;
            }
        };
        for name in ITEMS {
            if let Some(v) = btf.enum_value(name) {
                t.items.insert(name.to_string(), v);
            }
        }
        let _ = write(&format!("{TRACEFS}/tracing_on"), "0");
        let _ = write(&format!("{TRACEFS}/trace_clock"), "mono");
        // Room for a whole scenario per CPU between two reads of the pipe.
        let _ = write(&format!("{TRACEFS}/buffer_size_kb"), "4096");
        let _ = write(&format!("{TRACEFS}/trace"), "");
        // A memcg pointer to its cgroup id: memcg->css.cgroup->kn->id.
        let off = |s: &str, m: &str| btf.offset(s, m).map(|v| v as i64);
        let (Some(css), Some(cgroup), Some(kn), Some(id)) = (
            off("mem_cgroup", "css"),
            off("cgroup_subsys_state", "cgroup"),
            off("cgroup", "kn"),
            off("kernfs_node", "id"),
        ) else {
            t.why_none = "BTF lacks mem_cgroup.css, cgroup_subsys_state.cgroup, cgroup.kn or \
                          kernfs_node.id"
                .into();
            return t;
        };
        let cg_id = |cgroup_ptr: &str| format!("id={}:u64", deref(id, &deref(kn, cgroup_ptr)));
        let memcg_id = |memcg_ptr: &str| cg_id(&deref(css + cgroup, memcg_ptr));
        let mut kprobes: Vec<(&'static str, String)> = Vec::new();
        kprobes.push(("fcp_dwork", "flush_memcg_stats_dwork".into()));
        let tracepoints = exists(&format!("{TRACEFS}/events/memcg/mod_memcg_state"));
        if tracepoints {
            t.mode = Mode::Tracepoints;
            if funcs("css_rstat_flush") {
                kprobes.push((
                    "fcp_rf",
                    format!("css_rstat_flush {}", cg_id(&deref(cgroup, "%di"))),
                ));
                t.id_kprobes.push("fcp_rf");
            }
        } else {
            t.mode = Mode::Kprobes;
            t.vals = "raw";
            for f in ["cgroup_rstat_flush", "cgroup_rstat_flush_irqsafe"] {
                if funcs(f) {
                    let ev = if f.ends_with("irqsafe") {
                        "fcp_rfi"
                    } else {
                        "fcp_rf"
                    };
                    kprobes.push((ev, format!("{f} {}", cg_id("%di"))));
                    t.id_kprobes.push(ev);
                }
            }
            // `int val` in __mod_memcg_state(), `unsigned long count` in
            // __count_memcg_events(): only %edx is defined for the first.
            for (ev, f, val) in [
                ("fcp_ms", "__mod_memcg_state", "s32"),
                ("fcp_me", "__count_memcg_events", "u64"),
            ] {
                if funcs(f) {
                    kprobes.push((
                        ev,
                        format!("{f} {} idx=%si:s32 val=%dx:{val}", memcg_id("%di")),
                    ));
                }
            }
            // `struct lruvec` is embedded in `struct mem_cgroup_per_node`,
            // whose `memcg` points back.
            if let (true, Some(lru), Some(back)) = (
                funcs("__mod_memcg_lruvec_state"),
                off("mem_cgroup_per_node", "lruvec"),
                off("mem_cgroup_per_node", "memcg"),
            ) {
                kprobes.push((
                    "fcp_ml",
                    format!(
                        "__mod_memcg_lruvec_state {} idx=%si:s32 val=%dx:s32",
                        memcg_id(&deref(back - lru, "%di"))
                    ),
                ));
            }
            if funcs("mem_cgroup_flush_stats") {
                // 6.1: no argument; the gate reads the global threshold.
                // 6.12: the memcg, and its vmstats->stats_updates.
                let def = if off("mem_cgroup", "vmstats").is_some()
                    && off("memcg_vmstats", "stats_updates").is_some()
                    && !kallsyms_has("stats_flush_threshold")
                {
                    let vm = off("mem_cgroup", "vmstats").unwrap_or(0);
                    let su = off("memcg_vmstats", "stats_updates").unwrap_or(0);
                    t.id_kprobes.push("fcp_gate");
                    format!(
                        "mem_cgroup_flush_stats {} su={}:s64",
                        memcg_id("%di"),
                        deref(su, &deref(vm, "%di"))
                    )
                } else {
                    "mem_cgroup_flush_stats thr=@stats_flush_threshold:s32".into()
                };
                kprobes.push(("fcp_gate", def));
            }
            // 6.1's memory.stat read inlines its gate into
            // memory_stat_format(): the threshold as the read begins.
            if kallsyms_has("stats_flush_threshold") {
                if let Some(f) = points
                    .iter()
                    .filter(|p| p.starts_with("memory_stat_format"))
                    .min()
                {
                    kprobes.push(("fcp_gate2", format!("{f} thr=@stats_flush_threshold:s32")));
                }
            }
            if funcs("__mem_cgroup_flush_stats") {
                kprobes.push(("fcp_flush", "__mem_cgroup_flush_stats".into()));
            }
            t.filter_updates =
                off("mem_cgroup", "vmstats").is_some() && !kallsyms_has("stats_flush_threshold");
            if t.filter_updates {
                t.id_kprobes.extend(["fcp_ms", "fcp_me", "fcp_ml"]);
            }
        }
        let events = format!("{TRACEFS}/kprobe_events");
        for (ev, def) in &kprobes {
            let name = def.split_whitespace().next().unwrap_or("");
            if !funcs(name) {
                continue;
            }
            if append(&events, &format!("p:fcp/{ev} {def}\n")) {
                t.events.push(format!("fcp/{ev}"));
            } else {
                t.events.push(format!("!fcp/{ev}"));
            }
        }
        if tracepoints {
            for e in [
                "mod_memcg_state",
                "mod_memcg_lruvec_state",
                "count_memcg_events",
                "memcg_flush_stats",
            ] {
                if write(&format!("{TRACEFS}/events/memcg/{e}/enable"), "1") {
                    t.events.push(format!("memcg/{e}"));
                }
            }
        }
        let _ = write(&format!("{TRACEFS}/events/fcp/enable"), "1");
        let flush_seen = t
            .events
            .iter()
            .any(|e| e == "fcp/fcp_rf" || e == "fcp/fcp_rfi" || e == "memcg/memcg_flush_stats");
        if !flush_seen {
            t.mode = Mode::None;
            t.why_none = "no probe point sees a flush on this kernel".into();
        }
        t.pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(format!("{TRACEFS}/trace_pipe"))
            .ok();
        t.marker = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("{TRACEFS}/trace_marker"))
            .ok();
        t.pending = Vec::with_capacity(1 << 20);
        let _ = write(&format!("{TRACEFS}/tracing_on"), "1");
        t
    }

    /// Record only these memcgs' events (cgroup ids): the scenario's own,
    /// and for the flushes and gates also their ancestors (`flush_ids`).
    /// On 6.1 the updates stay unfiltered: its threshold is global.
    pub fn filter(&self, update_ids: &[u64], flush_ids: &[u64]) {
        let expr = |ids: &[u64], field: &str| {
            ids.iter()
                .map(|i| format!("{field} == {i}"))
                .collect::<Vec<_>>()
                .join(" || ")
        };
        if self.mode == Mode::Tracepoints {
            for e in [
                "mod_memcg_state",
                "mod_memcg_lruvec_state",
                "count_memcg_events",
            ] {
                let _ = write(
                    &format!("{TRACEFS}/events/memcg/{e}/filter"),
                    &expr(update_ids, "id"),
                );
            }
            let _ = write(
                &format!("{TRACEFS}/events/memcg/memcg_flush_stats/filter"),
                &expr(flush_ids, "id"),
            );
        }
        for ev in &self.id_kprobes {
            let ids = if ["fcp_ms", "fcp_me", "fcp_ml"].contains(ev) {
                update_ids
            } else {
                flush_ids
            };
            let _ = write(
                &format!("{TRACEFS}/events/fcp/{ev}/filter"),
                &expr(ids, "id"),
            );
        }
    }

    /// Mark the stream (`trace_marker`): allocates nothing.
    pub fn mark(&self, text: &[u8]) {
        if let Some(m) = &self.marker {
            let mut m = m;
            let _ = m.write(text);
        }
    }

    /// Read everything the pipe holds and print it as `FCE` lines; the
    /// number of lines.
    pub fn drain(&mut self, say: &dyn Fn(&str)) -> usize {
        let Some(pipe) = &mut self.pipe else { return 0 };
        let mut buf = vec![0u8; 1 << 16];
        let mut lines = 0;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    while let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = self.pending.drain(..=i).collect();
                        if let Some(c) = compact(&String::from_utf8_lossy(&line)) {
                            say(&c);
                            lines += 1;
                        }
                    }
                }
                Err(_) => break,
            }
        }
        lines
    }

    /// Events lost to a full ring buffer so far (every CPU).
    pub fn overruns(&self) -> u64 {
        let mut total = 0;
        for cpu in 0..1024 {
            let Ok(text) = std::fs::read_to_string(format!("{TRACEFS}/per_cpu/cpu{cpu}/stats"))
            else {
                break;
            };
            total += text
                .lines()
                .find_map(|l| l.strip_prefix("overrun:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
        total
    }
}

fn kallsyms_has(sym: &str) -> bool {
    std::fs::read_to_string("/proc/kallsyms")
        .map(|t| t.lines().any(|l| l.split_whitespace().nth(2) == Some(sym)))
        .unwrap_or(false)
}

/// The value of `key=` in a trace line's arguments.
fn arg<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

/// One trace line as an `FCE` line: `FCE <t_us> <cpu> <pid> <kind> ...`.
///
/// Kinds: `S`/`L`/`E` (an update: memcg id, item, value), `G` (a gate:
/// memcg id, stats_updates or the global threshold, force, needs_flush or
/// `-`), `F` (6.1's `__mem_cgroup_flush_stats()` entered), `R` (an rstat
/// flush of a memcg id's subtree), `D` (the periodic work), `M` (a marker).
pub fn compact(line: &str) -> Option<String> {
    let l = line.trim();
    if l.is_empty() || l.starts_with('#') {
        return None;
    }
    let open = l.find('[')?;
    let close = open + l[open..].find(']')?;
    let task = l[..open].trim_end();
    let pid = task.rsplit('-').next()?.trim();
    let cpu: u32 = l[open + 1..close].trim().parse().ok()?;
    let rest = &l[close + 1..];
    // flags, then "secs.usecs: event: args"
    let colon = rest.find(": ")?;
    let ts = rest[..colon].split_whitespace().last()?;
    let (secs, usecs) = ts.split_once('.')?;
    let t_us: u64 = secs.parse::<u64>().ok()? * 1_000_000 + usecs.parse::<u64>().ok()?;
    let after = &rest[colon + 2..];
    let (event, args) = match after.find(": ") {
        Some(i) => (&after[..i], &after[i + 2..]),
        None => (after.trim_end_matches(':'), ""),
    };
    let id = || {
        arg(args, "id")
            .or_else(|| arg(args, "memcg_id"))
            .unwrap_or("0")
    };
    let body = match event {
        "mod_memcg_state" | "fcp_ms" => format!(
            "S {} {} {}",
            id(),
            arg(args, "item").or(arg(args, "idx"))?,
            arg(args, "val")?
        ),
        "mod_memcg_lruvec_state" | "fcp_ml" => format!(
            "L {} {} {}",
            id(),
            arg(args, "item").or(arg(args, "idx"))?,
            arg(args, "val")?
        ),
        "count_memcg_events" | "fcp_me" => format!(
            "E {} {} {}",
            id(),
            arg(args, "item").or(arg(args, "idx"))?,
            arg(args, "val")?
        ),
        "memcg_flush_stats" => format!(
            "G {} {} {} {}",
            id(),
            arg(args, "stats_updates")?,
            arg(args, "force")?,
            arg(args, "needs_flush")?
        ),
        "fcp_gate" | "fcp_gate2" => match arg(args, "thr") {
            Some(thr) => format!("G 0 {thr} 0 -"),
            None => format!("G {} {} 0 -", id(), arg(args, "su").unwrap_or("-")),
        },
        "fcp_flush" => "F".to_string(),
        "fcp_rf" | "fcp_rfi" => format!("R {}", id()),
        "fcp_dwork" => "D".to_string(),
        "tracing_mark_write" => format!("M {}", args.trim()),
        _ => return None,
    };
    Some(format!("FCE {t_us} {cpu} {pid} {body}"))
}
