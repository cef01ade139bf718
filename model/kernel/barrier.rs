//! Memory barriers.

use std::sync::atomic::Ordering;

use crate::vocab::Platform;

/// `smp_mb()`: a full barrier.
///
/// NOTE(kernel): a `SeqCst` fence, the only SC operation loom models as SC
/// (docs/model.md, section 4; a SeqCst access is only acquire/release there). Under
/// shuttle and std every access is already SC, so the fence changes nothing.
pub fn smp_mb<P: Platform>() {
    P::fence(Ordering::SeqCst);
}

/// `smp_rmb()`: orders the loads before it against the loads after it.
///
/// NOTE(kernel): an `Acquire` fence, which C11 lets order the earlier loads
/// against later stores too: stronger than LKMM's `smp_rmb()`, which orders
/// loads against loads only. A fix that relies on it is therefore checked
/// with a little more ordering than the kernel's barrier gives; the litmus
/// export says so. Under shuttle and std every access is SC already.
pub fn smp_rmb<P: Platform>() {
    P::fence(Ordering::Acquire);
}
