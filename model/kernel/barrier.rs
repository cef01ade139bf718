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
