//! RCU: `rcu_read_lock()`, `rcu_read_unlock()`, `rcu_dereference()`,
//! `rcu_assign_pointer()`, `synchronize_rcu()` and `queue_rcu_work()`, on
//! two implementations behind one facade.
//!
//! | flavour | what it is | where it is sound |
//! |---|---|---|
//! | [`RcuFlavor::Epoch`] | crossbeam-epoch: a `Collector` per execution, a registered `LocalHandle` per model thread, `pin()` as the read-side critical section | std threads; shuttle (random, PCT); loom only in a build with `--cfg crossbeam_loom` |
//! | [`RcuFlavor::Flag`] | a reader flag per model thread in the backend's own atomics (docs/model.md, "RCU") | every backend, including the default loom build, where loom cannot see crossbeam-epoch at all |
//!
//! Why two: loom models crossbeam-epoch's atomics only when crossbeam-epoch
//! itself is built with `--cfg crossbeam_loom`, and that build panics outside
//! a loom model; in the normal build loom sees none of its operations and
//! none of its happens-before edges (missed bugs and false alarms;
//! docs/model.md, section 11). The flag RCU is what loom
//! checks by default; `tests/suite/lifetime.rs` shows the two give the same
//! verdicts wherever both run.
//!
//! NOTE(kernel): a memcg is never really freed inside an execution: "free"
//! is a ghost flag plus a poison store (see
//! [`crate::protocol::lifetime`]), so no model work ever runs inside an
//! epoch `defer` (deferred functions run on whichever thread pins next).
//! `queue_rcu_work()` is modelled as `synchronize_rcu()` on the releasing
//! thread followed by the work, which is what the work queue guarantees
//! about ordering.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::kernel::atomic::observe;
use crate::kernel::Atomic;
use crate::vocab::footprint;
use crate::vocab::obs::{Idiom, Op, Var};
use crate::vocab::{BackendKind, ModelAtomic, Platform};

/// Which RCU implementation an execution uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RcuFlavor {
    /// Reader flags in the backend's atomics.
    Flag,
    /// crossbeam-epoch.
    Epoch,
}

impl RcuFlavor {
    /// Both flavours.
    pub const ALL: [RcuFlavor; 2] = [RcuFlavor::Flag, RcuFlavor::Epoch];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RcuFlavor::Flag => "flag",
            RcuFlavor::Epoch => "epoch",
        }
    }

    /// Parse a flavour name; the error is one line.
    pub fn parse(s: &str) -> Result<RcuFlavor, String> {
        RcuFlavor::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("--rcu {s}: expected flag or epoch"))
    }

    /// The flavour a backend uses unless told otherwise: crossbeam-epoch
    /// wherever the backend can see it.
    pub fn default_for(kind: BackendKind) -> RcuFlavor {
        if RcuFlavor::Epoch.visible_to(kind) {
            RcuFlavor::Epoch
        } else {
            RcuFlavor::Flag
        }
    }

    /// Whether `kind` observes this flavour's operations correctly.
    pub fn visible_to(self, kind: BackendKind) -> bool {
        match (self, kind) {
            (RcuFlavor::Flag, _) => true,
            // crossbeam-epoch built for loom panics outside a loom model.
            (RcuFlavor::Epoch, BackendKind::Loom) => cfg!(crossbeam_loom),
            (RcuFlavor::Epoch, _) => !cfg!(crossbeam_loom),
        }
    }

    /// Why this flavour cannot run on `kind`, if it cannot.
    pub fn check(self, kind: BackendKind) -> Result<(), String> {
        if self.visible_to(kind) {
            return Ok(());
        }
        Err(match kind {
            BackendKind::Loom => "--rcu epoch: loom cannot see crossbeam-epoch in this build \
                 (build with RUSTFLAGS=\"--cfg loom --cfg crossbeam_loom\"); use --rcu flag"
                .into(),
            _ => "--rcu epoch: in the crossbeam_loom build crossbeam-epoch runs only under \
                 loom; use --rcu flag on shuttle and std"
                .into(),
        })
    }
}

/// A deliberate defect in the flag RCU (mutants only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RcuDefect {
    /// `synchronize_rcu()` checks the reader flags with relaxed loads: it
    /// still waits for every reader to leave, but does not order the
    /// readers' critical sections before what follows the grace period.
    pub gp_without_acquire: bool,
}

enum Imp<P: Platform> {
    Flag(Vec<Atomic<P>>),
    Epoch(crossbeam_epoch::Collector),
}

/// The RCU state of one execution.
pub struct Rcu<P: Platform> {
    imp: Imp<P>,
    defect: RcuDefect,
}

/// A model thread's registration with RCU: its reader flag, or its
/// crossbeam-epoch handle (which must be registered on the thread itself).
pub struct RcuThread {
    /// The reader flag's index; `usize::MAX` for a thread that never reads
    /// (it only waits for grace periods).
    slot: usize,
    handle: Option<crossbeam_epoch::LocalHandle>,
    /// Read-side sections open on this thread (they nest).
    depth: std::cell::Cell<u32>,
}

/// An open read-side critical section; dropping it is `rcu_read_unlock()`.
pub struct RcuReadGuard<'a, P: Platform> {
    rcu: &'a Rcu<P>,
    th: &'a RcuThread,
    _pin: Option<crossbeam_epoch::Guard>,
}

fn flag_name(slot: usize) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        (0..16)
            .map(|c| &*Box::leak(format!("rcu{c}").into_boxed_str()))
            .collect()
    })[slot]
}

impl<P: Platform> Rcu<P> {
    /// RCU for `threads` reader threads (slots `0..threads`).
    ///
    /// # Panics
    /// If `flavor` cannot run on this backend ([`RcuFlavor::check`]), or a
    /// defect is asked of crossbeam-epoch.
    pub fn new(flavor: RcuFlavor, threads: usize, defect: RcuDefect) -> Self {
        if let Err(e) = flavor.check(P::BACKEND_KIND) {
            panic!("{e}");
        }
        assert!(threads <= 16, "model: at most 16 RCU threads");
        let imp = match flavor {
            RcuFlavor::Flag => Imp::Flag(
                (0..threads)
                    .map(|s| {
                        Atomic::new(
                            Var::Other {
                                name: flag_name(s),
                                cpu: None,
                            },
                            0,
                        )
                    })
                    .collect(),
            ),
            RcuFlavor::Epoch => {
                assert!(
                    defect == RcuDefect::default(),
                    "model: RCU defects exist for the flag RCU only"
                );
                Imp::Epoch(crossbeam_epoch::Collector::new())
            }
        };
        Rcu { imp, defect }
    }

    /// Register the calling model thread as reader `slot`, or (`None`) as a
    /// thread that only waits for grace periods.
    pub fn register(&self, slot: Option<usize>) -> RcuThread {
        RcuThread {
            slot: slot.unwrap_or(usize::MAX),
            depth: std::cell::Cell::new(0),
            handle: match &self.imp {
                Imp::Flag(_) => None,
                Imp::Epoch(c) => Some(c.register()),
            },
        }
    }

    /// Which flavour this is.
    pub fn flavor(&self) -> RcuFlavor {
        match self.imp {
            Imp::Flag(_) => RcuFlavor::Flag,
            Imp::Epoch(_) => RcuFlavor::Epoch,
        }
    }
}

/// `rcu_read_lock()`.
///
/// Flag RCU: set the thread's flag, then a full barrier, so that either the
/// grace period sees the flag or this reader sees every store that preceded
/// the grace period (store buffering ruled out by the two SC fences).
///
/// Sections nest: only the outermost sets and clears the flag.
pub fn rcu_read_lock<'a, P: Platform>(rcu: &'a Rcu<P>, th: &'a RcuThread) -> RcuReadGuard<'a, P> {
    let outer = th.depth.replace(th.depth.get() + 1) == 0;
    let pin = match &rcu.imp {
        Imp::Flag(_) if !outer => None,
        Imp::Flag(flags) => {
            let f = flags
                .get(th.slot)
                .expect("model: rcu_read_lock() on a thread registered as no reader");
            f.a.store(1, Ordering::Relaxed);
            observe::<P>(f.var(), Op::Write(1), Idiom::Plain);
            P::fence(Ordering::SeqCst);
            None
        }
        Imp::Epoch(_) => {
            let g = th.handle.as_ref().expect("registered").pin();
            // crossbeam-epoch's pin is not a scheduling point of the model's
            // checkers; the next model operation is.
            Some(g)
        }
    };
    RcuReadGuard { rcu, th, _pin: pin }
}

/// `rcu_read_unlock()`: ends the critical section `guard` opened.
pub fn rcu_read_unlock<P: Platform>(guard: RcuReadGuard<'_, P>) {
    drop(guard)
}

impl<P: Platform> Drop for RcuReadGuard<'_, P> {
    fn drop(&mut self) {
        let depth = self.th.depth.get() - 1;
        self.th.depth.set(depth);
        if let (Imp::Flag(flags), 0) = (&self.rcu.imp, depth) {
            let f = &flags[self.th.slot];
            // A release RMW: the grace period's acquire load of 0 then
            // orders this whole critical section before what follows it.
            f.a.swap(0, Ordering::AcqRel);
            observe::<P>(f.var(), Op::Write(0), Idiom::Plain);
        }
    }
}

/// `synchronize_rcu()`: wait until every read-side critical section that
/// began before the call has ended.
///
/// Flag RCU: a full barrier, then wait for each other thread's flag to read
/// 0 with an acquire load. crossbeam-epoch: defer a completion flag and flush
/// until it runs (a deferred function runs only once two epochs have passed
/// every pinned thread), three flushes per scheduling switch
/// (docs/model.md, section 11: a flush-then-yield loop hides bugs).
pub fn synchronize_rcu<P: Platform>(rcu: &Rcu<P>, th: &RcuThread) {
    match &rcu.imp {
        Imp::Flag(flags) => {
            P::fence(Ordering::SeqCst);
            let order = if rcu.defect.gp_without_acquire {
                Ordering::Relaxed
            } else {
                Ordering::Acquire
            };
            for (slot, f) in flags.iter().enumerate() {
                if slot == th.slot {
                    continue;
                }
                let mut snap = None;
                loop {
                    let v = f.a.load(order);
                    observe::<P>(f.var(), Op::Read(v), Idiom::Plain);
                    if v == 0 {
                        break;
                    }
                    if snap.is_none() {
                        snap = footprint::spin_snapshot();
                    } else {
                        footprint::spin_restore(snap);
                    }
                    P::yield_now();
                }
            }
        }
        Imp::Epoch(_) => {
            let handle = th.handle.as_ref().expect("registered");
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            {
                let d = done.clone();
                let g = handle.pin();
                g.defer(move || d.store(true, std::sync::atomic::Ordering::Release));
                g.flush();
            }
            let mut rounds = 0u64;
            loop {
                for _ in 0..3 {
                    handle.pin().flush();
                }
                // Switch only if the grace period is not over: a switch
                // here lets every checker run the readers first.
                if done.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                rounds += 1;
                assert!(rounds < 1_000_000, "model: synchronize_rcu() never ended");
                // Plain switches first, so that PCT does not learn to run the
                // readers first; then yields, so that a pinned reader of low
                // priority gets to leave its section.
                if rounds < 4 {
                    P::rcu_switch();
                } else {
                    P::yield_now();
                }
            }
        }
    }
}

/// An RCU-protected pointer to a memcg, by number (`objcg->memcg`).
pub struct RcuPointer<P: Platform>(Atomic<P>);

impl<P: Platform> RcuPointer<P> {
    /// A pointer to `memcg`, named `var`.
    pub fn new(var: Var, memcg: u8) -> Self {
        RcuPointer(Atomic::new(var, memcg as i64))
    }
}

/// `rcu_dereference(p)`: an acquire load (the kernel's address dependency,
/// which C11 relaxed loses; see [`crate::kernel`]).
pub fn rcu_dereference<P: Platform>(p: &RcuPointer<P>) -> u8 {
    crate::kernel::smp_load_acquire(&p.0) as u8
}

/// `rcu_assign_pointer(p, v)`: a release store.
pub fn rcu_assign_pointer<P: Platform>(p: &RcuPointer<P>, memcg: u8) {
    p.0.a.store(memcg as i64, Ordering::Release);
    observe::<P>(p.0.var(), Op::Write(memcg as i64), Idiom::WriteOnce);
}

/// `READ_ONCE(p)` of an RCU pointer outside a read-side section (the
/// writer's own check under its lock).
pub fn rcu_access_pointer<P: Platform>(p: &RcuPointer<P>) -> u8 {
    crate::kernel::read_once(&p.0) as u8
}
