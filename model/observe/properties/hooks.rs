//! The hook points at which the monitors call the properties' checks, and
//! what a check may read there.

use crate::config::Config;
use crate::observe::ghost::Ghost;
use crate::observe::twin::TwinGate;
use crate::observe::window::Windows;
use crate::vocab::{Access, Actor, Family};

/// Where the flush monitor calls the checks.
#[derive(Clone, Copy, Debug)]
pub enum At {
    /// A reader's gate decided not to flush `memcg`.
    Skipped {
        /// The reader.
        actor: Actor,
        /// The memcg it reads.
        memcg: u8,
    },
    /// A reader's gate decided to flush `memcg`, before its flush begins.
    Flushing {
        /// The reader.
        actor: Actor,
        /// The memcg it reads.
        memcg: u8,
    },
    /// A reader read `value` of `memcg`.
    Read {
        /// The reader (or main).
        actor: Actor,
        /// The memcg read.
        memcg: u8,
        /// The value.
        value: i64,
        /// Its gate's last decision, if it made one.
        decided: Option<bool>,
        /// The value it read of `memcg` last time (main: the largest any
        /// reader read of it).
        floor: Option<i64>,
    },
    /// A ratelimited reader's time gate said not yet, at `jiffies`.
    RatelimitSkipped {
        /// The reader.
        actor: Actor,
        /// The `jiffies_64` its gate compared.
        jiffies: i64,
    },
    /// A flush section began; `open` are open now.
    FlushBegan {
        /// Flush sections open, this one included.
        open: usize,
    },
    /// After the final flush, `memcg`'s aggregate is `value`.
    Final {
        /// The memcg.
        memcg: u8,
        /// Its aggregate.
        value: i64,
    },
    /// After the final flush and `flushes` more, `memcg`'s aggregate is
    /// `value`.
    Settled {
        /// Flushes after the final one.
        flushes: usize,
        /// The memcg.
        memcg: u8,
        /// Its aggregate.
        value: i64,
    },
    /// A threshold (`memcg`'s from v6.8 on) was written: it now holds `new`.
    ThresholdWritten {
        /// The memcg, from v6.8 on.
        memcg: Option<u8>,
        /// The value written.
        new: i64,
    },
    /// An updater CPU read a threshold.
    ThresholdRead {
        /// The memcg, from v6.8 on.
        memcg: Option<u8>,
        /// The value read.
        value: i64,
    },
}

/// What a flush check may read: the run's facts, the ghost state, the
/// twin gates.
pub struct Ctx<'a> {
    /// The configuration.
    pub cfg: &'a Config,
    /// Whether the backend is sequentially consistent, so that checks made
    /// in execution order are exact (shuttle, std).
    pub sc: bool,
    /// The variant's family.
    pub family: Family,
    /// The variant's reader trigger on the configuration.
    pub trigger: i64,
    /// v5.19's derived worst case behind the gate, where it applies.
    pub baseline_since_reset: Option<i64>,
    /// The execution's ghost state.
    pub ghost: &'a Ghost,
    /// The no-skip twin's gate, placed as a legal twin schedule.
    pub twin: Option<&'a dyn TwinGate>,
    /// The twin's gate on the variant's own schedule.
    pub same_schedule: Option<&'a dyn TwinGate>,
    /// The readers' gate read windows, over both twins.
    pub windows: &'a Windows,
    /// Every thread has been joined (main's reads from here are quiescent).
    pub quiescent: bool,
}

impl Ctx<'_> {
    /// How a message names `actor` reading `memcg`.
    pub fn who(&self, actor: Actor, memcg: u8) -> String {
        if self.cfg.memcgs() > 1 {
            format!("{actor} of memcg {memcg}")
        } else {
            actor.to_string()
        }
    }
}

/// Where the lifetime monitor calls the checks.
#[derive(Clone, Copy, Debug)]
pub enum LifeAt {
    /// `actor` accessed shared memory.
    Access {
        /// Who.
        actor: Actor,
        /// What.
        access: Access,
    },
    /// `css_rstat_exit()`'s check of `memcg` found it on `on_tree` CPUs'
    /// updated trees.
    ExitCheck {
        /// The memcg.
        memcg: u8,
        /// CPUs whose tree still held it.
        on_tree: u8,
    },
    /// After quiescence and a final flush, `memcg`'s aggregate is `value`.
    Final {
        /// The memcg read.
        memcg: u8,
        /// Its aggregate.
        value: i64,
    },
}

/// What a lifetime check may read.
pub struct LifeCtx<'a> {
    /// Per memcg: freed.
    pub freed: &'a [bool],
    /// Per memcg: its updated-tree node freed (with the memcg from v6.16,
    /// with its cgroup up to v6.15).
    pub rstat_freed: &'a [bool],
    /// Per memcg: pages charged to it (updates returned).
    pub charged: &'a [i64],
    /// Per memcg: pages a CPU added after its release flush.
    pub late: &'a [i64],
}

impl LifeCtx<'_> {
    /// Pages charged to `memcg`'s subtree (the lifetime tree: root, parent
    /// 1, child 2).
    pub fn charged_to_subtree(&self, memcg: u8) -> i64 {
        let subtree: &[usize] = match memcg {
            0 => &[0, 1, 2],
            1 => &[1, 2],
            _ => &[2],
        };
        subtree.iter().map(|m| self.charged[*m]).sum()
    }
}
