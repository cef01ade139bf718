//! Tracepoints: the events protocol code reports that are not single
//! accesses. Each is one line at the place the kernel would have it.

use std::marker::PhantomData;

use crate::vocab::obs::{Obs, Tp};
use crate::vocab::Platform;

/// A cgroup subsystem state (`struct cgroup_subsys_state`) as tracepoints
/// name it: its place in the model's memcg tree.
pub trait Css<P: Platform> {
    /// The memcg's number in the model (0 is `root_mem_cgroup`).
    fn css_id(&self) -> u8;
}

/// A `Css` for code that has no memcg struct at hand.
pub struct CssId<P>(pub u8, pub PhantomData<P>);

impl<P: Platform> Css<P> for CssId<P> {
    fn css_id(&self) -> u8 {
        self.0
    }
}

/// `trace_memcg_flush_stats(memcg, stats_updates, force, needs_flush)`: a
/// reader's flush decision, reported right after the gate's read.
///
/// NOTE(kernel): the tracepoint exists from v6.13; the model places it at
/// the same point in every version so that properties can compare the
/// decisions of different versions.
pub fn trace_memcg_flush_stats<P: Platform>(memcg: &impl Css<P>, needs_flush: bool) {
    let memcg = memcg.css_id();
    P::emit(|| Obs::Trace(Tp::FlushStats { memcg, needs_flush }));
}

/// The time gate of a ratelimited reader of `memcg`
/// (`mem_cgroup_flush_stats_ratelimited()`): `jiffies` is the value of
/// `jiffies_64` it compared, `due` whether it goes on to
/// `mem_cgroup_flush_stats()`. Reported right after the gate's last read.
///
/// NOTE(kernel): no such tracepoint exists (see [`Tp::FlushRatelimited`]).
pub fn trace_memcg_flush_stats_ratelimited<P: Platform>(
    memcg: &impl Css<P>,
    jiffies: i64,
    due: bool,
) {
    let memcg = memcg.css_id();
    P::emit(|| {
        Obs::Trace(Tp::FlushRatelimited {
            memcg,
            jiffies,
            due,
        })
    });
}

/// The start of a flush section: this flusher now holds the right to flush
/// the subtree of `root` (the trylock, the `ongoing` flag, or entry to a
/// flush that nobody skips).
///
/// NOTE(kernel): no such tracepoint exists; `trace_cgroup_rstat_locked()`
/// (v6.10 on) is the nearest. Properties about flushers (exclusion, and
/// when the twin of a version resets its threshold) are stated on these
/// sections.
pub fn trace_flush_begin<P: Platform>(root: &impl Css<P>) {
    let root = root.css_id();
    P::emit(|| Obs::Trace(Tp::FlushBegin { root }));
}

/// The end of a flush section: after the threshold reset, before the
/// exclusion is given up (see [`trace_flush_begin`]).
pub fn trace_flush_end<P: Platform>(_root: &impl Css<P>) {
    P::emit(|| Obs::Trace(Tp::FlushEnd));
}
