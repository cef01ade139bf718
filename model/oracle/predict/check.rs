//! The derivation against the kernel's own record of a boot: every update
//! call the trace holds from the probe's task on a scenario's memcgs.

use super::super::charge::{Item, Kernel};
use super::super::replay::{rstat_val, window};
use super::super::spec::{Done, Hello, Op, Scenario, Start, Unit};
use super::super::trace::{Ev, Event, UpdateFn};
use super::setup::{Setup, Tree};
use super::steps::{derive, Step};

/// Pages scenario `s` leaves in the probe's memfd at `cpus` CPUs (its
/// `shmem4k` charges less its frees).
fn shmem_net(s: &Scenario, cpus: usize) -> usize {
    let mut pages = 0usize;
    for op in &s.ops {
        match op {
            Op::Charge {
                kind: Unit::Shmem4k,
                n,
                n_by_cpus,
                ..
            } => pages += super::super::spec::units_at(*n, n_by_cpus, cpus),
            Op::Free {
                kind: Unit::Shmem4k,
                n,
                ..
            } => pages = pages.saturating_sub(*n),
            _ => {}
        }
    }
    pages
}

/// One boot's record as the check reads it: the parts of an
/// `Observation` (judge.rs) it needs, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Traced<'a> {
    /// The guest's facts (release, CPUs, item numbers, how values read).
    pub hello: &'a Hello,
    /// Where each scenario began (its cgroup ids, the probe's mappings).
    pub starts: &'a [Start],
    /// How each scenario ended, in run order.
    pub done: &'a [Done],
    /// The kernel's trace of the boot.
    pub events: &'a [Event],
}

/// Pages in the probe's memfd when scenario `name` of boot `obs` begins:
/// the net `shmem4k` pages of the scenarios that ran before it in that
/// boot (the probe makes one memfd per boot; a scenario frees only its
/// own pages).
///
/// NOTE(kernel): taken from the scenario file, since the probe's start
/// record does not say where the memfd stands.
pub fn shmem_before(scenarios: &[Scenario], obs: &Traced, name: &str) -> usize {
    let cpus = obs.hello.cpus.max(1);
    obs.done
        .iter()
        .take_while(|d| d.s != name)
        .filter_map(|d| scenarios.iter().find(|s| s.name == d.s))
        .map(|s| shmem_net(s, cpus))
        .sum()
}

/// One call as the comparison sees it: memcg (cgroup id), whether it is
/// an event, the item number, the value `memcg_rstat_updated()` receives,
/// the CPU; and where it stands (the reads before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Call {
    id: u64,
    event: bool,
    item: i64,
    val: i64,
    cpu: usize,
}

/// The derivation of scenario `s` checked against the kernel's trace of
/// one boot: the update calls derived for `kernel` (memcg, item, value,
/// CPU; items by the kernel's names, numbered by the boot's
/// `hello.items`) compared in order with the calls the trace recorded on
/// the scenario's memcgs, made by the probe's own task (the pid that wrote
/// the window's `fcp s NAME` marker), inside the window (`fcp s NAME` to
/// `fcp e NAME`). `scenarios` are the boot's scenario definitions (where
/// the memfd stands at `s`'s start depends on those before it).
///
/// Left out, by rule:
/// - on a CPU whose task has left an object to an RCU callback (6.1's
///   `struct file`s and cursor dentries, a memfd's emptied xarray nodes,
///   the inode of an unheld move), the objcg stock's calls (`MEMCG_KMEM`
///   and the slab items) from that point on, on both sides: the
///   callback's free reaches the stock at a grace period's end, which no
///   derivation knows;
/// - the whole pages (`MEMCG_KMEM` negative) the trace shows at the first
///   drain of the start objcg (the parent of the memcg the probe made
///   last) when the scenario never enters it: they depend on every
///   allocation of the probe's `mkdir`s, which the derivation does not
///   follow (traced once: 7.1 at 4 vCPUs);
/// - calls of other tasks on the scenario's memcgs (a kworker's
///   `lru_add_drain_all()` share, `ksoftirqd`): the derivation's kworker
///   calls are not compared, but may instead be the task's own, in the
///   same order, before the next read (the worker lost the race to the
///   task's own drain: traced at 4 vCPUs).
///
/// `Ok` with the calls compared, or the first difference, one line.
pub fn check_trace(
    scenarios: &[Scenario],
    s: &Scenario,
    obs: &Traced,
    kernel: Kernel,
) -> Result<usize, String> {
    let name = &s.name;
    let start = obs
        .starts
        .iter()
        .find(|x| &x.s == name)
        .ok_or_else(|| format!("{name}: no start record"))?;
    if let Some(done) = obs.done.iter().find(|d| &d.s == name) {
        if !done.ok {
            return Err(format!("{name}: the probe failed: {}", done.error));
        }
        if done.overrun > 0 {
            return Err(format!(
                "{name}: the trace lost {} events to a full ring buffer",
                done.overrun
            ));
        }
    }
    let (from, to) = window(obs.events, name)
        .ok_or_else(|| format!("{name}: the trace has no `fcp s {name}` marker"))?;
    let pid = obs.events[from].pid;
    let tree = Tree::of(s);
    // Model memcg -> cgroup id, for the scenario's memcgs.
    let mut ids = std::collections::BTreeMap::new();
    for cg in &s.cgroups {
        let id = start
            .ids
            .get(cg)
            .ok_or_else(|| format!("{name}: the start record has no id for {cg}"))?;
        ids.insert(tree.id(cg), *id);
    }
    let path = |id: u64| {
        start
            .ids
            .iter()
            .find(|(_, v)| **v == id)
            .map_or_else(|| id.to_string(), |(k, _)| k.clone())
    };
    let items = &obs.hello.items;
    let number = |item: Item| -> Result<i64, String> {
        let n = kernel.item_name(item);
        items
            .get(n)
            .copied()
            .ok_or_else(|| format!("the probe's hello gives no number for {n}"))
    };
    let describe = |c: &Call| {
        let item = items
            .iter()
            .filter(|(k, v)| **v == c.item && is_event_name(k) == c.event)
            .map(|(k, _)| k.as_str())
            .next()
            .unwrap_or("?");
        format!("{} {item} {:+} on CPU {}", path(c.id), c.val, c.cpu)
    };
    let stock_numbers = [
        number(Item::Kmem)?,
        number(Item::SlabReclaimableB)?,
        number(Item::SlabUnreclaimableB)?,
    ];
    let from_stock = |c: &Call| !c.event && stock_numbers.contains(&c.item);

    // The derived calls, with the reads before each.
    let setup = Setup {
        shmem_pages: shmem_before(scenarios, obs, name),
        thp_anon_vma: start.thp > 0,
        ..Setup::default()
    };
    let slots = (start.filp as i64, start.dentry as i64);
    let steps = derive(s, kernel, obs.hello.cpus.max(1), setup, slots)?;
    enum D {
        /// A call, the reads before it, whether the task makes it.
        Call(Call, usize, bool),
        Rcu(usize),
    }
    let mut derived = Vec::new();
    let mut reads = 0usize;
    for st in &steps {
        match st {
            Step::Update(u) => {
                if let Some(&id) = ids.get(&u.memcg) {
                    let call = Call {
                        id,
                        event: u.item.is_event(),
                        item: number(u.item)?,
                        val: u.val,
                        cpu: u.cpu,
                    };
                    derived.push(D::Call(call, reads, u.by_task));
                }
            }
            Step::Read { .. } => reads += 1,
            Step::Rcu { cpu } => derived.push(D::Rcu(*cpu)),
            Step::Gate | Step::Poll { .. } => {}
        }
    }
    // The start objcg (the parent of the last memcg the probe made), if
    // the scenario never charges it itself: its whole pages at its first
    // drain are left out.
    let entered: Vec<u8> = s
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Enter { cg } => Some(tree.id(cg)),
            _ => None,
        })
        .collect();
    let start_objcg = s
        .cgroups
        .last()
        .map(|last| tree.parents[tree.id(last) as usize - 1])
        .filter(|p| !entered.contains(p))
        .and_then(|p| ids.get(&p).copied());
    let kmem = number(Item::Kmem)?;
    let start_pages =
        |c: &Call| Some(c.id) == start_objcg && !c.event && c.item == kmem && c.val < 0;
    // The traced calls, with the probe's read markers before each.
    let wanted: std::collections::BTreeSet<u64> = ids.values().copied().collect();
    // The trace's values mean what the booted release passes on.
    let release = Kernel::from_release(&obs.hello.release).map_or(kernel.release, |k| k.release);
    let mut traced = Vec::new();
    let mut marks = 0usize;
    let marker = format!("fcp r {name} ");
    for e in &obs.events[from..to] {
        if e.pid != pid {
            continue;
        }
        match &e.ev {
            Ev::Marker(m) if m.starts_with(&marker) => marks += 1,
            Ev::Update {
                func,
                id,
                item,
                val,
            } if wanted.contains(id) => {
                let v = rstat_val(obs.hello, release, *func, *item, *val);
                traced.push((
                    Call {
                        id: *id,
                        event: *func == UpdateFn::Events,
                        item: *item,
                        val: v,
                        cpu: e.cpu,
                    },
                    marks,
                    e.t_us,
                ));
            }
            _ => {}
        }
    }
    // In order. Left out on both sides: the stock's calls on a CPU after
    // an RCU deferral; on the trace's side, the start objcg's pages. A
    // kworker's drain may instead be the task's own calls, in the same
    // order, before the next read (the worker lost the race to the task's
    // own drain: traced at 4 vCPUs).
    let mut uncertain = vec![false; obs.hello.cpus.max(1) + 1];
    let mut floating: std::collections::VecDeque<(Call, usize)> = Default::default();
    let mut j = 0usize;
    let mut compared = 0usize;
    let at = |reads: usize| {
        if reads == 0 {
            "before the first read".to_string()
        } else {
            format!("after read {reads}")
        }
    };
    let skip = |j: &mut usize, uncertain: &[bool]| {
        while let Some((t, _, _)) = traced.get(*j) {
            let unsure = from_stock(t) && uncertain.get(t.cpu).copied().unwrap_or(false);
            if !unsure && !start_pages(t) {
                break;
            }
            *j += 1;
        }
    };
    for d in &derived {
        let (call, reads, by_task) = match d {
            D::Rcu(c) => {
                if let Some(u) = uncertain.get_mut(*c) {
                    *u = true;
                }
                continue;
            }
            D::Call(c, r, b) => (c, *r, *b),
        };
        if from_stock(call) && uncertain.get(call.cpu).copied().unwrap_or(false) {
            continue;
        }
        floating.retain(|(_, r)| *r == reads);
        if !by_task {
            floating.push_back((*call, reads));
            continue;
        }
        loop {
            skip(&mut j, &uncertain);
            let Some((t, marks, t_us)) = traced.get(j) else {
                return Err(format!(
                    "call {} ({}): derived {}, the trace has no more calls",
                    compared + 1,
                    at(reads),
                    describe(call)
                ));
            };
            if t == call {
                compared += 1;
                j += 1;
                break;
            }
            if floating.front().is_some_and(|(f, _)| f == t) {
                floating.pop_front();
                compared += 1;
                j += 1;
                continue;
            }
            return Err(format!(
                "call {} (derived {}, traced {} at {:.6} s): derived {}, traced {}",
                compared + 1,
                at(reads),
                at(*marks),
                *t_us as f64 / 1e6,
                describe(call),
                describe(t)
            ));
        }
    }
    skip(&mut j, &uncertain);
    if let Some((t, marks, t_us)) = traced.get(j) {
        return Err(format!(
            "call {} (traced {} at {:.6} s): the derivation has no more calls, traced {} \
             ({} traced calls left)",
            compared + 1,
            at(*marks),
            *t_us as f64 / 1e6,
            describe(t),
            traced.len() - j
        ));
    }
    Ok(compared)
}

/// Whether a `hello.items` name is a `vm_event_item` (the names the
/// probe reads from both enums).
fn is_event_name(name: &str) -> bool {
    matches!(
        name,
        "PGFAULT" | "PGMAJFAULT" | "PGPGIN" | "PGPGOUT" | "THP_FAULT_ALLOC"
    )
}
