//! Memory barriers.
//!
//! Each barrier is reported as an observation, an
//! [`Access`](crate::vocab::obs::Access) with the
//! barrier's idiom on the pseudo-variable [`FENCE`] (it reads and writes
//! nothing), so that traces and litmus exports show where it stands.

use std::sync::atomic::Ordering;

use crate::kernel::atomic::observe;
use crate::vocab::obs::{Idiom, Op, Var};
use crate::vocab::Platform;

/// The pseudo-variable barriers are reported on.
pub const FENCE: Var = Var::Other {
    name: "barrier",
    cpu: None,
};

/// `smp_mb()`: a full barrier.
///
/// NOTE(kernel): a `SeqCst` fence, the only SC operation loom models as SC
/// (docs/model.md, section 4; a SeqCst access is only acquire/release there). Under
/// shuttle and std every access is already SC, so the fence changes nothing.
pub fn smp_mb<P: Platform>() {
    P::fence(Ordering::SeqCst);
    observe::<P>(FENCE, Op::Read(0), Idiom::SmpMb);
}

/// `smp_rmb()`: orders the loads before it against the loads after it.
///
/// NOTE(kernel): an `Acquire` fence. C11 has no load-load fence. The
/// acquire fence also orders earlier loads before later stores, which
/// `smp_rmb()` does not (so the model can be stronger than the kernel
/// there), and it orders an earlier load against later accesses only
/// through a release (fence, store or RMW) that the load read from,
/// where LKMM orders the two loads outright. Paired with [`smp_wmb`] or
/// any release, as the kernel pairs it, the message-passing outcome is
/// forbidden in both (docs/weak-memory.md measures the shapes).
pub fn smp_rmb<P: Platform>() {
    P::fence(Ordering::Acquire);
    observe::<P>(FENCE, Op::Read(0), Idiom::SmpRmb);
}

/// `smp_wmb()`: orders the stores before it against the stores after it.
///
/// NOTE(kernel): a `Release` fence, which also orders earlier loads before
/// later stores (stronger than `smp_wmb()`). As in LKMM it is not
/// cumulative by itself: it synchronises only with an acquire (fence or
/// load) that reads a store after it.
pub fn smp_wmb<P: Platform>() {
    P::fence(Ordering::Release);
    observe::<P>(FENCE, Op::Read(0), Idiom::SmpWmb);
}
