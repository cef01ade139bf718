//! Waiman Long's "memcg: scale vmstats flush threshold" (2026, not merged
//! as of v7.1.5): v7.1's protocol (v6.17 lineage) with the reader's
//! trigger `MEMCG_CHARGE_BATCH * num_online_cpus()` replaced by a
//! boot-time `vmstats_flush_threshold`, in two proposed forms:
//! `MEMCG_CHARGE_BATCH * (ilog2(num_possible_cpus()) + 1)` and
//! `MEMCG_CHARGE_BATCH * int_sqrt(nr_cpus + 2)` (docs/claims.md, C18).
//! Beside them, the form a reviewer of v2 proposed, `nr_cpus / (ln nr_cpus
//! + 1)` ([`ScaledLn`]), which was never posted as a patch.
//!
//! Where each form comes from (the stored mails, read 2026-12-02): v1,
//! `MEMCG_CHARGE_BATCH * (ilog2(num_possible_cpus()) + 1)` set once in
//! `mem_cgroup_init()`, Message-ID
//! 20260319173752.1472864-2-longman@redhat.com; v2, `MEMCG_CHARGE_BATCH *
//! (int_sqrt(num_possible_cpus() + 2))`, 20260320204241.1613861-2; both
//! gate on `atomic_read(&vmstats->stats_updates) > vmstats_flush_threshold`
//! in `memcg_vmstats_needs_flush()`. The ln form: Michal Koutný's reply to
//! v2, n6mhkjsxsami3qmczkdh57eep4lmcgbtyl7ox3ajzveke44yf6@m4bjevvsr47k
//! (1 Apr 2026), with three integer forms (var1, var2, var3).
//!
//! The same trigger is used by the updater's early `break`, since both go
//! through `memcg_vmstats_needs_flush()`.
//!
//! Its reviewers' counter-claim (C18): the worst case is "N *
//! (MEMCG_CHARGE_BATCH - 1) + vmstats_flush_threshold"; the author agreed
//! it "can indeed be worse than that". `flushcheck bounds --variant
//! scaled-2026` gives the exhaustive maximum (docs/findings.md).
//!
//! NOTE(kernel): CPU hotplug is not modelled, so `num_possible_cpus()` is
//! the model's CPU count.

use crate::config::Config;
use crate::kernel::{atomic64_read, trace_memcg_flush_stats};
use crate::protocol::per_memcg::v6_17;
use crate::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use crate::protocol::variant::{Kind, Variant};
use crate::vocab::Platform;

/// `ilog2(n)` for `n >= 1`.
pub fn ilog2(n: i64) -> i64 {
    63 - i64::from(n.max(1).leading_zeros())
}

/// `int_sqrt(n)`: the integer square root.
pub fn int_sqrt(n: i64) -> i64 {
    let mut r = (n.max(0) as f64).sqrt() as i64;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// `MEMCG_CHARGE_BATCH * (ilog2(num_possible_cpus()) + 1)` on `cfg`.
pub fn trigger_ilog2(cfg: &Config) -> i64 {
    cfg.batch * (ilog2(cfg.cpus as i64) + 1)
}

/// `MEMCG_CHARGE_BATCH * int_sqrt(nr_cpus + 2)` on `cfg`.
pub fn trigger_sqrt(cfg: &Config) -> i64 {
    cfg.batch * int_sqrt(cfg.cpus as i64 + 2)
}

/// The scale `nr_cpus / (ln nr_cpus + 1)` in integers, the reviewer's
/// `var2`: `DIV_ROUND_UP(65536 * nr_cpus, 45426 * ilog2(nr_cpus) + 65536)`,
/// that is ln(n) taken as `ilog2(n) * ln 2` with ln 2 = 45426 / 65536
/// (0.693146, the reviewer's constant), rounded up so that it is at least 1.
/// 1, 2, 2, 3, 5, 8, 13, 22, 40, 71, 130 at 1, 2, 4, ..., 1024 CPUs, the
/// reviewer's table.
///
/// NOTE(kernel): our proposal's form, not posted code. `ilog2()` rounds
/// ln down between powers of two (ln 3 is taken as 0.69, not 1.10); the
/// reviewer's `var1` (rounded down) and `var3`
/// (`roundup_pow_of_two(var2)`) are not modelled.
pub fn ln_scale(n: i64) -> i64 {
    let n = n.max(1);
    let d = 45426 * ilog2(n) + 65536;
    // DIV_ROUND_UP(a, d): (a + d - 1) / d.
    (65536 * n + d - 1) / d
}

/// `MEMCG_CHARGE_BATCH * nr_cpus / (ln nr_cpus + 1)` on `cfg`
/// ([`ln_scale`]).
pub fn trigger_ln(cfg: &Config) -> i64 {
    cfg.batch * ln_scale(cfg.cpus as i64)
}

/// The proposal in its `ilog2` form, on v7.1.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledIlog2;

impl Memcontrol for ScaledIlog2 {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ilog2(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The proposal in its `int_sqrt` form, on v7.1.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledSqrt;

impl Memcontrol for ScaledSqrt {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_sqrt(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The `ilog2` form without the early `break`: the twin of
/// [`ScaledIlog2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledIlog2NoBreak;

impl Memcontrol for ScaledIlog2NoBreak {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ilog2(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::NoBreak.memcg_rstat_updated(mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The `nr_cpus / (ln nr_cpus + 1)` form, on v7.1: [`ScaledSqrt`] with
/// [`trigger_ln`], set once like the posted forms (`num_possible_cpus()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledLn;

impl Memcontrol for ScaledLn {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ln(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// A too-eager reader for the eagerness check (model/measure/eagerness.rs):
/// [`ScaledLn`] whose reader compares the atomic with the scale alone,
/// `MEMCG_CHARGE_BATCH` dropped, so it flushes once a single fold lands.
/// Not in the catalogue: the property that kills it is the eagerness
/// check's own, not one of the suite's.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScaledLnNoBatch;

impl Memcontrol for ScaledLnNoBatch {
    fn memcg_vmstats_flush_threshold<P: Platform>(&self, mm: &State<P>) -> i64 {
        trigger_ln(&mm.env.cfg)
    }
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_17::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
        // MUTANT: the scale without MEMCG_CHARGE_BATCH in the reader's gate.
        let trigger = ln_scale(mm.env.cfg.cpus as i64);
        let needs_flush = atomic64_read(&mm.memcg(memcg).vmstats.stats_updates) > trigger;
        trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
        if needs_flush {
            self.do_flush_stats(mm, memcg);
        }
        needs_flush
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The variant of [`ScaledLnNoBatch`], registered with the ln form's
/// trigger (what its gate should compare with).
pub fn eager_mutant() -> Variant {
    Variant::new(
        "mutant-scaled-2026-ln-no-batch",
        Kind::Mutant,
        "ln form, reader: flushes above nr_cpus / (ln nr_cpus + 1) pages, MEMCG_CHARGE_BATCH dropped",
        v6_8::model(ScaledLnNoBatch),
    )
    .per_memcg(trigger_ln)
}

/// The four triggers the reply to the 2026 thread compares: the thread's
/// name for each and the variant that runs it (v7.1's code, v6.17 lineage,
/// for the linear one).
pub const FORMS: [(&str, &str); 4] = [
    ("linear (v6.8 to v7.1)", "v6.17"),
    ("v1 (ilog2)", "scaled-2026"),
    ("v2 (int_sqrt(nr_cpus + 2))", "scaled-2026-sqrt"),
    ("nr_cpus / (ln nr_cpus + 1)", "scaled-2026-ln"),
];
