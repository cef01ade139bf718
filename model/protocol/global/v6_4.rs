//! mm/memcontrol.c as of v6.4 (through v6.7): `stats_flush_lock` replaced
//! by the atomic `stats_flush_ongoing`, `flush_next_time` read and written
//! with `READ_ONCE`/`WRITE_ONCE` (3cd9992b9302), flushes that may sleep
//! (Yosry Ahmed's v6.4 series; docs/claims.md, C9; docs/model.md 3.1).
//!
//! The protocol is still the global one of v5.16-v6.7: one
//! `stats_flush_threshold` counted in batches by v6.0's
//! `memcg_rstat_updated()`, the reader's gate `> num_online_cpus()`, one
//! flusher at a time flushing the whole tree, the losers returning at once.
//! So v6.4 implements [`Memcontrol`] of [`crate::protocol::global::v5_19`] and
//! overrides the functions that changed; the model functions it keeps map
//! to the v6.4 kernel as follows.
//!
//! | model | kernel, v6.4.0-v6.6.9 | what changed since v6.0 |
//! |---|---|---|
//! | [`Memcontrol::__mod_memcg_state`] (v5.19's) | `__mod_memcg_state()` | nothing |
//! | [`memcg_rstat_updated`] | `memcg_rstat_updated()` | returns at once on `val == 0` (f9d911ca49d7) |
//! | [`Memcontrol::mem_cgroup_flush_stats`] (v5.19's) | `mem_cgroup_flush_stats()` (v6.4.0: the gate is `should_flush_stats()`) | calls `do_flush_stats()` |
//! | [`do_flush_stats`] | `do_flush_stats()` (v6.4.0: `do_flush_stats(bool atomic)`) | `stats_flush_ongoing` for `stats_flush_lock`; `WRITE_ONCE(flush_next_time)` |
//! | [`Memcontrol::cgroup_rstat_flush_irqsafe`] (v5.19's) | `cgroup_rstat_flush()` | may sleep; may drop `cgroup_rstat_lock` between CPUs |
//! | [`mem_cgroup_flush_stats_ratelimited`] | `mem_cgroup_flush_stats_ratelimited()` | renamed from `_delayed()` (92fbbc7202ac); `READ_ONCE(flush_next_time)` |
//! | [`Memcontrol::flush_memcg_stats_dwork`] (overridden by [`V6_4`]) | `flush_memcg_stats_dwork()` | calls `do_flush_stats()`, so it skips while a flush is ongoing |
//!
//! State, and who touches it (the fields of [`State`]):
//!
//! | model field | kernel | written by | read by |
//! |---|---|---|---|
//! | `memcgs[m].vmstats_percpu[cpu].state`, `state_prev`, `vmstats.state`, `state_pending` | as in v5.19 | as in v5.19 | as in v5.19 |
//! | `stats_updates` | `DEFINE_PER_CPU(unsigned int, stats_updates)` | owner CPU | owner CPU |
//! | `stats_flush_threshold` | `static atomic_t stats_flush_threshold` | updaters (`atomic_add`), the winning flusher (`atomic_set(0)`, after the walk) | updaters, readers (`atomic_read`) |
//! | `stats_flush_ongoing` | `static atomic_t stats_flush_ongoing` | flushers: `atomic_xchg(1)` to win, `atomic_set(0)` to release | flushers (`atomic_read` before the xchg) |
//! | `flush_next_time_once` | `static u64 flush_next_time` | the winning flusher (`WRITE_ONCE`, before the walk) | ratelimited readers (`READ_ONCE`) |
//! | `cgroup_rstat_lock` | `static DEFINE_SPINLOCK(cgroup_rstat_lock)` (rstat.c) | flushers | flushers |
//!
//! `stats_flush_lock` and the plain `flush_next_time` of v5.16-v6.3 are
//! not used.
//!
//! `stats_flush_ongoing` orders no data: it is taken with a fully ordered
//! `atomic_xchg()` but released with `atomic_set()`, which is unordered in
//! LKMM. The walk's data is ordered by `cgroup_rstat_lock`, and the other
//! fields a flusher writes are atomics.

use crate::kernel::{
    atomic_read, atomic_set, atomic_xchg, read_once, time_after64, trace_flush_begin,
    trace_flush_end, trace_memcg_flush_stats_ratelimited, write_once,
};
use crate::protocol::global::v5_19::{Memcontrol, State, FLUSH_TIME, V5_19};
use crate::protocol::global::v6_0;
use crate::protocol::memcg::ROOT_MEM_CGROUP;
use crate::vocab::Platform;

/// v6.4's `do_flush_stats()`: a flusher that finds `stats_flush_ongoing`
/// set, or loses the `atomic_xchg()` that sets it, returns at once ("We
/// always flush the entire tree, so concurrent flushers can just skip").
/// The winner stamps `flush_next_time`, flushes the whole tree, resets the
/// threshold and clears the flag. Returns whether this call flushed.
///
/// The `atomic_read() || atomic_xchg()` idiom is modelled as the kernel
/// has it. Its plain-store release would trip loom 0.7.3's RMW bug (a later
/// `atomic_xchg()` reading the flag as still set after the release); the
/// kernel layer's [`atomic_set`] issues its store as a swap under loom
/// (`NOTE(loom)` there), and `tests/suite/litmus.rs` pins both behaviours.
///
/// NOTE(kernel): v6.4.0 has `do_flush_stats(bool atomic)` and calls
/// `cgroup_rstat_flush_atomic()` for the atomic flushers of
/// `mem_cgroup_usage()` and `mem_cgroup_wb_stats()` (removed in v6.5); the
/// model has the sleepable flush only.
pub fn do_flush_stats<P: Platform, M: Memcontrol + ?Sized>(code: &M, mm: &State<P>) -> bool {
    if atomic_read(&mm.stats_flush_ongoing) != 0 || atomic_xchg(&mm.stats_flush_ongoing, 1) != 0 {
        return false;
    }
    flush_ongoing(code, mm);
    atomic_set(&mm.stats_flush_ongoing, 0);
    true
}

/// The part of [`do_flush_stats`] that runs while the caller holds
/// `stats_flush_ongoing`: stamp `flush_next_time`, flush the whole tree,
/// reset the threshold.
///
/// NOTE(kernel): one function with the trylock in the kernel; split here
/// so that the trylock's mutants share the rest.
pub fn flush_ongoing<P: Platform, M: Memcontrol + ?Sized>(code: &M, mm: &State<P>) {
    trace_flush_begin(mm.root_mem_cgroup());
    stamp_and_walk(code, mm);
    atomic_set(&mm.stats_flush_threshold, 0);
    trace_flush_end(mm.root_mem_cgroup());
}

/// The start of [`flush_ongoing`]: `WRITE_ONCE(flush_next_time)`, then the
/// walk of the whole tree.
pub fn stamp_and_walk<P: Platform, M: Memcontrol + ?Sized>(code: &M, mm: &State<P>) {
    write_once(
        &mm.flush_next_time_once,
        mm.env.jiffies_64() + 2 * FLUSH_TIME,
    );
    // NOTE(kernel): `cgroup_rstat_flush()` may sleep and may drop and
    // retake `cgroup_rstat_lock` between CPUs (`need_resched()`); the
    // model's walk holds it throughout. With `stats_flush_ongoing` keeping
    // out every other memcg flusher, only the rstat flushers of other
    // controllers (not modelled) could use the gap.
    code.cgroup_rstat_flush_irqsafe(mm, ROOT_MEM_CGROUP);
}

/// v6.4's `mem_cgroup_flush_stats_ratelimited()` (the refault path): run
/// the threshold gate only once `jiffies_64` is past `flush_next_time`,
/// that is, once no flush has started for `2 * FLUSH_TIME`. Returns the
/// threshold gate's decision, or `false` if it is not due.
///
/// NOTE(kernel): v6.4's function takes no memcg (it always flushes the
/// whole tree); the model passes the reader's memcg on to the threshold
/// gate, which ignores it in the global family.
pub fn mem_cgroup_flush_stats_ratelimited<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    memcg: u8,
) -> bool {
    let jiffies = mm.env.jiffies_64();
    let due = time_after64(jiffies, read_once(&mm.flush_next_time_once));
    trace_memcg_flush_stats_ratelimited(mm.root_mem_cgroup(), jiffies, due);
    due && code.mem_cgroup_flush_stats(mm, memcg)
}

/// v6.4's `memcg_rstat_updated()`: v6.0's, after an early return for a
/// zero update (f9d911ca49d7).
///
/// NOTE(kernel): the model's update values are never zero (the
/// configuration refuses them), so the early return is never taken.
pub fn memcg_rstat_updated<P: Platform, M: Memcontrol + ?Sized>(
    code: &M,
    mm: &State<P>,
    memcg: u8,
    val: i64,
) {
    if val == 0 {
        return;
    }
    v6_0::memcg_rstat_updated(code, mm, memcg, val);
}

/// The overrides of v6.4's flushers and ratelimited reader, shared by
/// [`V6_4`] and its twin [`NoSkip`]: a variant of v6.4 writes
/// `memcg_flush_model::v6_4_flushers!();` in its `impl Memcontrol`
/// (docs/extending.md, section 9) for all three and overrides the rest, or
/// names the ones it keeps and writes its own of the others:
///
/// ```text
/// impl Memcontrol for MyV6_4 {
///     memcg_flush_model::v6_4_flushers!(__mem_cgroup_flush_stats, flush_memcg_stats_dwork);
///     fn mem_cgroup_flush_stats_delayed<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
///         // the change to the ratelimited reader
///     }
/// }
/// ```
#[macro_export]
macro_rules! v6_4_flushers {
    () => {
        $crate::v6_4_flushers!(
            __mem_cgroup_flush_stats,
            flush_memcg_stats_dwork,
            mem_cgroup_flush_stats_delayed
        );
    };
    ($($name:ident),+ $(,)?) => {
        $($crate::v6_4_flushers!(@one $name);)+
    };
    (@one __mem_cgroup_flush_stats) => {
        /// `do_flush_stats()`, the name v6.4 gives
        /// `__mem_cgroup_flush_stats()`.
        fn __mem_cgroup_flush_stats<P: $crate::vocab::Platform>(
            &self,
            mm: &$crate::protocol::global::v5_19::State<P>,
        ) -> bool {
            $crate::protocol::global::v6_4::do_flush_stats(self, mm)
        }
    };
    (@one flush_memcg_stats_dwork) => {
        /// `flush_memcg_stats_dwork()`: "Always flush here so that flushing
        /// in latency-sensitive paths is as cheap as possible" (the
        /// threshold is ignored), but through `do_flush_stats()`, so the
        /// periodic work too skips while another flush is ongoing.
        fn flush_memcg_stats_dwork<P: $crate::vocab::Platform>(
            &self,
            mm: &$crate::protocol::global::v5_19::State<P>,
        ) {
            $crate::protocol::global::v6_4::do_flush_stats(self, mm);
        }
    };
    (@one mem_cgroup_flush_stats_delayed) => {
        /// `mem_cgroup_flush_stats_ratelimited()`, the name v6.4 gives
        /// `mem_cgroup_flush_stats_delayed()`.
        fn mem_cgroup_flush_stats_delayed<P: $crate::vocab::Platform>(
            &self,
            mm: &$crate::protocol::global::v5_19::State<P>,
            memcg: u8,
        ) -> bool {
            $crate::protocol::global::v6_4::mem_cgroup_flush_stats_ratelimited(self, mm, memcg)
        }
    };
}

/// v6.4 (v6.4-v6.7).
#[derive(Clone, Copy, Debug, Default)]
pub struct V6_4;

impl Memcontrol for V6_4 {
    /// See [`memcg_rstat_updated`].
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        memcg_rstat_updated(self, mm, memcg, val);
    }
    v6_4_flushers!();
}

/// v6.4 without 873f64b791a2's skip: every batch is added to
/// `stats_flush_threshold`, as in v5.19. Not a kernel version: the no-skip
/// twin `no_lost_flush` compares v6.4 with (v5.19 is not, since its flush
/// lock differs).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSkip;

impl Memcontrol for NoSkip {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        // v5.19's updater: the trait's default method.
        V5_19.memcg_rstat_updated(mm, memcg, val);
    }
    v6_4_flushers!();
}
