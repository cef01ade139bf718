//! The worst-case staleness of the 2026 thread's four triggers (linear,
//! v1's `ilog2`, v2's `int_sqrt(nr_cpus + 2)` and the reviewer's
//! `nr_cpus / (ln nr_cpus + 1)`): the closed formula, the derivation that
//! enumerates every per-CPU state ([`crate::check::derived::
//! derive_per_memcg`]) at 2 to 1024 CPUs, and the exhaustive search's
//! maxima where it finishes; and [`gather`], every figure of the reply to
//! the thread (whose text is model/publish/mail/scaled.rs).
//!
//! A reader that does not flush sees the atomic at most `T` (its gate); the
//! atomic holds whole folds, and every fold of 1-page updates is exactly
//! `B` pages, so counted <= `T` (`T` is a multiple of `B` in every form);
//! each CPU holds at most `B - 1` pages in its counter plus the page in
//! flight between `__this_cpu_add()` and the fold's `atomic_add()`: `B`.
//! So `T + N·B`, reached when every CPU pauses with `B` pages beside `T /
//! B` folds in the atomic. With updates of up to `V` pages a CPU holds
//! `B - 1 + V`: at most `T + N·(B - 1 + V)`.

use std::time::Duration;

use serde::Serialize;

use crate::check::derived::derive_per_memcg;
use crate::config::Config;
use crate::measure::bounds::measure_exhaustive;
use crate::measure::eagerness::{self, EagerCheck, Eagerness};
use crate::protocol::per_memcg::proposal_2026::{eager_mutant, FORMS};
use crate::protocol::Variant;

/// The CPU counts of the table: 2, 4, ..., 1024.
pub const TABLE_CPUS: [usize; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// The worst case for 1-page updates: `T + N·B`.
pub fn worst(trigger: i64, cpus: usize, batch: i64) -> i64 {
    trigger + cpus as i64 * batch
}

/// The bound with updates of up to `v` pages: `T + N·(B - 1 + V)`.
pub fn worst_huge(trigger: i64, cpus: usize, batch: i64, v: i64) -> i64 {
    trigger + cpus as i64 * (batch - 1 + v)
}

/// The review's figure: `N·(B - 1) + T`.
pub fn claimed(trigger: i64, cpus: usize, batch: i64) -> i64 {
    cpus as i64 * (batch - 1) + trigger
}

/// The smallest configuration on which `T + N·B` can be reached: `N` CPUs,
/// 1-page updates, enough per CPU for its share of the `T / B` folds plus a
/// full batch in flight, one reader that reads once, no periodic flush.
pub fn reaching(cpus: usize, batch: i64, trigger: i64) -> Config {
    let folds = (trigger / batch) as usize;
    Config::bounds()
        .cpus(cpus)
        .batch(batch)
        .updates(batch as usize * (folds.div_ceil(cpus) + 1))
        .readers(1)
        .reads(1)
}

/// One form at one CPU count.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The trigger `T` (pages).
    pub trigger: i64,
    /// `T + N·B`.
    pub worst: i64,
    /// The derivation's maximum on [`reaching`] (equals `worst`).
    pub derived: Option<i64>,
    /// The review's `N·(B - 1) + T`.
    pub claimed: i64,
}

/// One row of the table: a CPU count and each form, in [`FORMS`] order.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `nr_cpus`.
    pub cpus: usize,
    /// Per form.
    pub cells: Vec<Cell>,
}

/// The variants of [`FORMS`], found in `registry`.
pub fn variants(registry: &[Variant]) -> Result<Vec<Variant>, String> {
    FORMS
        .iter()
        .map(|(_, v)| Variant::find(registry, v))
        .collect()
}

/// The table at `cpus` with `MEMCG_CHARGE_BATCH` = `batch`; `derive` also
/// runs the derivation on each [`reaching`] configuration.
pub fn table(
    registry: &[Variant],
    cpus: &[usize],
    batch: i64,
    derive: bool,
) -> Result<Vec<Row>, String> {
    let forms = variants(registry)?;
    Ok(cpus
        .iter()
        .map(|&n| Row {
            cpus: n,
            cells: forms
                .iter()
                .map(|v| {
                    let t = v.trigger_on(&Config::bounds().cpus(n).batch(batch));
                    let derived = derive
                        .then(|| derive_per_memcg(&reaching(n, batch, t), t).ok())
                        .flatten()
                        .map(|d| d.since_reset);
                    Cell {
                        trigger: t,
                        worst: worst(t, n, batch),
                        derived,
                        claimed: claimed(t, n, batch),
                    }
                })
                .collect(),
        })
        .collect())
}

/// The configurations the exhaustive search confirms the formula on, with
/// the schedules it is allowed: 1 CPU at batch 1 and 2, 2 CPUs and 3 CPUs
/// at batch 1 (where the forms' triggers differ: 3 pages linear, 2 the
/// others), each with enough updates to reach `T + N·B`.
pub fn confirm_configs() -> Vec<Config> {
    vec![
        reaching(1, 1, 1),
        reaching(1, 2, 2),
        reaching(2, 1, 2),
        reaching(3, 1, 3),
    ]
}

/// One exhaustive confirmation.
#[derive(Clone, Debug, Serialize)]
pub struct Confirmed {
    /// The thread's name for the form.
    pub form: &'static str,
    /// The configuration.
    pub cfg: Config,
    /// The trigger on it.
    pub trigger: i64,
    /// `T + N·B` on it.
    pub formula: i64,
    /// The search's largest residue + counted at a decision not to flush.
    pub measured: i64,
    /// The derivation's.
    pub derived: Option<i64>,
    /// Executions the search ran.
    pub executions: u64,
    /// Whether it finished and covered every interleaving.
    pub exhaustive: bool,
    /// Seconds it took.
    pub seconds: f64,
}

/// Run the exhaustive search of every form on `cfgs`, each capped at
/// `max_schedules` and `budget`.
pub fn confirm(
    registry: &[Variant],
    cfgs: &[Config],
    max_schedules: usize,
    budget: Duration,
) -> Result<Vec<Confirmed>, String> {
    let forms = variants(registry)?;
    let mut out = Vec::new();
    for cfg in cfgs {
        for ((label, _), v) in FORMS.iter().zip(&forms) {
            // The twin's gate only observes (no_lost_flush); without it the
            // stateful search stores fewer distinct states.
            let v = &Variant {
                twin: None,
                ..v.clone()
            };
            let t0 = std::time::Instant::now();
            let b = measure_exhaustive(cfg, v, registry, max_schedules, budget);
            let trigger = v.trigger_on(cfg);
            out.push(Confirmed {
                form: label,
                cfg: cfg.clone(),
                trigger,
                formula: worst(trigger, cfg.cpus, cfg.batch),
                measured: b.since_reset,
                derived: b.derived.map(|d| d.since_reset),
                executions: b.executions,
                exhaustive: b.exhaustive,
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
    }
    Ok(out)
}

/// `MEMCG_CHARGE_BATCH`.
pub const BATCH: i64 = 64;

/// What [`gather`] runs.
#[derive(Clone, Debug)]
pub struct Scope {
    /// Configurations the exhaustive search confirms the formula on.
    pub confirm: Vec<Config>,
    /// Configurations the eagerness check is searched on.
    pub eager_cfgs: Vec<Config>,
    /// CPU counts of the eagerness runs.
    pub eager_cpus: Vec<usize>,
    /// Charges per eagerness run.
    pub charges: usize,
    /// Run the derivation at every table entry.
    pub derive: bool,
    /// Cap on each search's schedules.
    pub max_schedules: usize,
    /// Cap on each search's time.
    pub budget: Duration,
}

impl Scope {
    /// Everything the reply states.
    pub fn full() -> Self {
        Scope {
            confirm: confirm_configs(),
            eager_cfgs: eagerness::exhaustive_configs(),
            eager_cpus: vec![4, 64, 1024],
            charges: 1 << 21,
            derive: true,
            max_schedules: 2_000_000,
            budget: Duration::from_secs(120),
        }
    }

    /// The same figures on the configurations that take seconds, not
    /// minutes (the reply's form checked in tests).
    pub fn quick() -> Self {
        Scope {
            confirm: confirm_configs()[..2].to_vec(),
            eager_cfgs: eagerness::exhaustive_configs()[..1].to_vec(),
            eager_cpus: vec![4, 64],
            charges: 1 << 17,
            derive: false,
            max_schedules: 1_000_000,
            budget: Duration::from_secs(120),
        }
    }
}

/// Every figure of the reply.
#[derive(Clone, Debug)]
pub struct ReplyData {
    /// The table at [`TABLE_CPUS`].
    pub table: Vec<Row>,
    /// The exhaustive confirmations.
    pub confirmed: Vec<Confirmed>,
    /// Eagerness, all CPUs charging then one, per form and CPU count.
    pub eager: Vec<Eagerness>,
    /// The eagerness check by exhaustive search, per form.
    pub eager_checks: Vec<EagerCheck>,
    /// The same on [`eagerness::racy_config`], per form.
    pub racy_checks: Vec<EagerCheck>,
    /// The too-eager reader on the deterministic schedule.
    pub mutant: Eagerness,
    /// The too-eager reader under the exhaustive search.
    pub mutant_check: EagerCheck,
}

/// Run every search and measurement of `scope`.
pub fn gather(registry: &[Variant], scope: &Scope) -> Result<ReplyData, String> {
    let table = table(registry, &TABLE_CPUS, BATCH, scope.derive)?;
    let confirmed = confirm(registry, &scope.confirm, scope.max_schedules, scope.budget)?;
    let forms = variants(registry)?;
    let mut eager = Vec::new();
    for v in &forms {
        for &n in &scope.eager_cpus {
            for active in [n, 1] {
                eager.push(eagerness::measure(v, n, active, BATCH, scope.charges, 1));
            }
        }
    }
    let mut eager_checks = Vec::new();
    for cfg in &scope.eager_cfgs {
        for v in &forms {
            eager_checks.push(eagerness::exhaustive(
                cfg,
                v,
                registry,
                scope.max_schedules,
                scope.budget,
            )?);
        }
    }
    let racy = eagerness::racy_config();
    let mut racy_checks = Vec::new();
    for v in &forms {
        racy_checks.push(eagerness::exhaustive(
            &racy,
            v,
            registry,
            scope.max_schedules,
            scope.budget,
        )?);
    }
    let m = eager_mutant();
    let mutant = eagerness::measure(&m, 4, 1, BATCH, 1 << 14, 1);
    let first = scope
        .eager_cfgs
        .first()
        .ok_or("no eagerness configuration")?;
    let mutant_check =
        eagerness::exhaustive(first, &m, registry, scope.max_schedules, scope.budget)?;
    Ok(ReplyData {
        table,
        confirmed,
        eager,
        eager_checks,
        racy_checks,
        mutant,
        mutant_check,
    })
}
