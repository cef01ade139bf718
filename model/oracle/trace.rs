//! The kernel's own record of a boot: the update stream and the flush
//! decisions the probe traced (`FCE` lines; docs/real-kernels.md, section
//! 7), and the C reproducer's output (`FCR` lines).
//!
//! On 6.16 and later the events are the memcg tracepoints
//! (`mod_memcg_state`, `mod_memcg_lruvec_state`, `count_memcg_events`,
//! `memcg_flush_stats`); on 6.1 and 6.12, kprobes on the same functions.
//! Either way an event names its memcg by cgroup id, and the flushes are
//! kprobes on the rstat flush and the periodic work.

use serde::{Deserialize, Serialize};

/// Which update function an update event comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateFn {
    /// `mod_memcg_state()` (`__mod_memcg_state()` before 6.16).
    State,
    /// `mod_memcg_lruvec_state()` (`__mod_memcg_lruvec_state()`).
    Lruvec,
    /// `count_memcg_events()` (`__count_memcg_events()`).
    Events,
}

/// One traced event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ev {
    /// An update: a call of `memcg_rstat_updated()`'s caller.
    Update {
        /// The function.
        func: UpdateFn,
        /// The memcg's cgroup id (0: unknown, a fetch that faulted).
        id: u64,
        /// The stat item (its enum value in this kernel).
        item: i64,
        /// The value: as `memcg_rstat_updated()` receives it
        /// (`Hello::vals` = `pages`) or as the function was called (`raw`).
        val: i64,
    },
    /// A reader's gate: `memcg_flush_stats` (6.16 on), or a kprobe on
    /// `mem_cgroup_flush_stats()` (6.1, 6.12).
    Gate {
        /// The memcg's cgroup id (0: none, 6.1's gate has no memcg).
        id: u64,
        /// What the gate compares: the memcg's `vmstats->stats_updates`
        /// (6.12 on), or 6.1's global `stats_flush_threshold`.
        value: Option<i64>,
        /// The tracepoint's `force` (the periodic work, zswap).
        force: bool,
        /// The tracepoint's `needs_flush` (none from a kprobe: then the
        /// flush that follows, or not, is the decision).
        needs: Option<bool>,
    },
    /// 6.1's `__mem_cgroup_flush_stats()` entered (by a gate that passed,
    /// or by the periodic work).
    FlushEntered,
    /// An rstat flush of the subtree of a memcg (`cgroup_rstat_flush()`,
    /// `css_rstat_flush()`).
    Rstat {
        /// Its cgroup id.
        id: u64,
    },
    /// `flush_memcg_stats_dwork()` ran.
    Dwork,
    /// A `trace_marker` line of the probe's (`fcp r step 3`, ...).
    Marker(String),
}

/// A traced event with where and when it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Microseconds, `CLOCK_MONOTONIC` (the trace clock `mono`).
    pub t_us: u64,
    /// The CPU.
    pub cpu: usize,
    /// The task.
    pub pid: u32,
    /// What happened.
    pub ev: Ev,
}

/// The `FCE` line's marker.
pub const FCE: &str = "FCE ";

/// The event in an `FCE` line (`FCE <t_us> <cpu> <pid> <kind> ...`), if
/// it reads.
pub fn parse_fce(line: &str) -> Option<Event> {
    let at = line.find(FCE)?;
    let mut w = line[at + FCE.len()..].split_whitespace();
    let t_us = w.next()?.parse().ok()?;
    let cpu = w.next()?.parse().ok()?;
    let pid = w.next()?.parse().ok()?;
    let kind = w.next()?;
    let num = |s: Option<&str>| -> Option<i64> { s?.parse().ok() };
    let id = |s: Option<&str>| -> Option<u64> {
        let s = s?;
        Some(s.parse().unwrap_or(0))
    };
    let ev = match kind {
        "S" | "L" | "E" => Ev::Update {
            func: match kind {
                "S" => UpdateFn::State,
                "L" => UpdateFn::Lruvec,
                _ => UpdateFn::Events,
            },
            id: id(w.next())?,
            item: num(w.next())?,
            val: num(w.next())?,
        },
        "G" => {
            let id = id(w.next())?;
            let value = w.next()?.parse().ok();
            let force = w.next()? == "1";
            let needs = match w.next()? {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            };
            Ev::Gate {
                id,
                value,
                force,
                needs,
            }
        }
        "F" => Ev::FlushEntered,
        "R" => Ev::Rstat { id: id(w.next())? },
        "D" => Ev::Dwork,
        "M" => Ev::Marker(w.collect::<Vec<_>>().join(" ")),
        _ => return None,
    };
    Some(Event { t_us, cpu, pid, ev })
}

/// What the C reproducer printed in the guest (`FCR` lines).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repro {
    /// Whether it ran (an `FCR` start record was seen).
    pub ran: bool,
    /// The `-k` it was given.
    pub k1: String,
    /// Cgroup ids of `c12` (`.`), `p`, `p/a`, `p/b`.
    pub ids: std::collections::BTreeMap<String, u64>,
    /// Its output lines.
    pub lines: Vec<String>,
    /// Its exit status (0 PASS, 1 FAIL, 4 SKIP; -1 killed).
    pub exit: Option<i32>,
    /// Why it did not run, if so.
    pub error: String,
}

impl Repro {
    /// The `memory.stat` anon values it printed last: (p, p/a) after the
    /// child's further pages.
    pub fn anon(&self) -> Option<(i64, i64)> {
        let l = self
            .lines
            .iter()
            .rev()
            .find(|l| l.starts_with("memory.stat anon (pages)") && l.contains("p/a = "))?;
        let num = |key: &str| -> Option<i64> {
            let at = l.find(key)? + key.len();
            l[at..]
                .split(|c: char| !c.is_ascii_digit() && c != '-')
                .find(|s| !s.is_empty())?
                .parse()
                .ok()
        };
        Some((num(" p = ")?, num("p/a = ")?))
    }

    /// Its verdict word (`PASS`, `FAIL`, `SKIP`), from its last such line.
    pub fn verdict(&self) -> Option<&'static str> {
        self.lines.iter().rev().find_map(|l| {
            ["PASS", "FAIL", "SKIP"]
                .into_iter()
                .find(|w| l.starts_with(w))
        })
    }
}

/// Add an `FCR` line's record to `r`; `None` if it does not read.
pub fn parse_fcr(line: &str, r: &mut Repro) -> Option<()> {
    let at = line.find("FCR ")?;
    let v: serde_json::Value = serde_json::Deserializer::from_str(&line[at + 4..])
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()?;
    match &v {
        serde_json::Value::String(s) => r.lines.push(s.clone()),
        serde_json::Value::Object(o) => {
            if let Some(start) = o.get("start") {
                r.ran = true;
                r.k1 = start.get("k1")?.as_str()?.to_string();
                r.ids = serde_json::from_value(start.get("ids")?.clone()).ok()?;
            } else if let Some(e) = o.get("exit") {
                r.exit = Some(e.as_i64()? as i32);
            } else if let Some(e) = o.get("error") {
                r.error = e.as_str()?.to_string();
            } else {
                return None;
            }
        }
        _ => return None,
    }
    Some(())
}
