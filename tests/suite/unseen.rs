//! Variants the catalogue does not contain, written only against the public
//! API as a reviewer would: the default suite must fail every harmful one
//! and pass every benign one. Each is a one-function change to v6.0 (or,
//! in `later`, to v6.8 or v6.17).

use std::time::Duration;

use memcg_flush_model::check::{Entry, Sizes, Suite};
use memcg_flush_model::cli::registry;
use memcg_flush_model::drive::{matrix_ok, run_matrix, Cell, Executor, Plan};
use memcg_flush_model::explore::{BackendName, Platform};
use memcg_flush_model::kernel::{
    atomic_add, atomic_read, atomic_set, this_cpu_add_return, this_cpu_write,
    trace_memcg_flush_stats,
};
use memcg_flush_model::protocol::global::v5_19::{self, Memcontrol, State};
use memcg_flush_model::protocol::global::v6_0;
use memcg_flush_model::protocol::{Family, Kind, Variant};

/// `memcg_rstat_updated` of v6.0 with the skip test, the units added and
/// the crossing test given as closures (a reviewer's one-line changes).
#[derive(Clone, Copy)]
struct Updater {
    skip: fn(i64, i64) -> bool,
    units: fn(i64, i64) -> i64,
    crosses: fn(i64, i64) -> bool,
}

impl Memcontrol for Updater {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        let batch = mm.MEMCG_CHARGE_BATCH();
        if (self.crosses)(x, batch) {
            if !(self.skip)(atomic_read(&mm.stats_flush_threshold), mm.num_online_cpus()) {
                atomic_add((self.units)(x, batch), &mm.stats_flush_threshold);
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

const V6_0: Updater = Updater {
    skip: |t, n| t > n,
    units: |x, b| x / b,
    crosses: |x, b| x > b,
};

/// v6.0 with the reader's gate given as a closure.
#[derive(Clone, Copy)]
struct Gate(fn(i64, i64) -> bool);

impl Memcontrol for Gate {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, _memcg: u8) -> bool {
        let needs_flush = (self.0)(atomic_read(&mm.stats_flush_threshold), mm.num_online_cpus());
        trace_memcg_flush_stats(mm.root_mem_cgroup(), needs_flush);
        if needs_flush {
            self.__mem_cgroup_flush_stats(mm);
        }
        needs_flush
    }
}

/// v6.0 whose periodic work flushes only if the threshold is non-zero.
#[derive(Clone, Copy)]
struct PeriodicSkipsIdle;

impl Memcontrol for PeriodicSkipsIdle {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn flush_memcg_stats_dwork<P: Platform>(&self, mm: &State<P>) {
        if atomic_read(&mm.stats_flush_threshold) != 0 {
            self.__mem_cgroup_flush_stats(mm);
        }
    }
}

/// v6.0 whose flusher resets the threshold by subtracting what it read at
/// the start (adds that land during the walk survive).
#[derive(Clone, Copy)]
struct ResetBySubtraction;

impl Memcontrol for ResetBySubtraction {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn __mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>) -> bool {
        use memcg_flush_model::kernel::{
            spin_trylock, spin_unlock, trace_flush_begin, trace_flush_end,
        };
        if !spin_trylock(&mm.stats_flush_lock) {
            return false;
        }
        trace_flush_begin(mm.root_mem_cgroup());
        let seen = atomic_read(&mm.stats_flush_threshold);
        mm.flush_next_time
            .set(mm.env.jiffies_64() + 2 * v5_19::FLUSH_TIME);
        self.cgroup_rstat_flush_irqsafe(mm, 0);
        atomic_add(-seen, &mm.stats_flush_threshold);
        trace_flush_end(mm.root_mem_cgroup());
        spin_unlock(&mm.stats_flush_lock);
        true
    }
}

/// v6.0 with the skip test reading a per-CPU copy of the threshold that the
/// CPU refreshes only when it adds.
#[derive(Clone, Copy)]
struct StaleCopy;

impl Memcontrol for StaleCopy {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, _memcg: u8, val: i64) {
        use memcg_flush_model::kernel::this_cpu_read;
        let x = this_cpu_add_return(&mm.stats_updates, val.abs());
        if x > mm.MEMCG_CHARGE_BATCH() {
            if this_cpu_read(&mm.scratch.percpu) <= mm.num_online_cpus() {
                atomic_add(x / mm.MEMCG_CHARGE_BATCH(), &mm.stats_flush_threshold);
                let now = atomic_read(&mm.stats_flush_threshold);
                this_cpu_write(&mm.scratch.percpu, now);
            }
            this_cpu_write(&mm.stats_updates, 0);
        }
    }
}

/// v6.0 whose flusher zeroes the threshold before its walk *and* after it.
#[derive(Clone, Copy)]
struct ResetTwice;

impl Memcontrol for ResetTwice {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        v6_0::memcg_rstat_updated(self, mm, memcg, val);
    }
    fn cgroup_rstat_flush_irqsafe<P: Platform>(&self, mm: &State<P>, root: u8) {
        use memcg_flush_model::kernel::{spin_lock, spin_unlock};
        atomic_set(&mm.stats_flush_threshold, 0);
        spin_lock(&mm.cgroup_rstat_lock);
        for cpu in mm.stats_updates.cpus() {
            for memcg in (root..mm.memcgs.len() as u8).rev() {
                self.mem_cgroup_css_rstat_flush(mm, memcg, cpu);
            }
        }
        spin_unlock(&mm.cgroup_rstat_lock);
    }
}

fn candidate(name: &str, code: impl Memcontrol + Clone) -> Variant {
    Variant::new(name, Kind::Candidate, name, v5_19::model(code)).twin("v5.19")
}

fn harmful() -> Vec<Variant> {
    let mut v = later::harmful();
    v.extend([
        candidate(
            "skip-above-half",
            Updater {
                skip: |t, n| t > n / 2,
                ..V6_0
            },
        ),
        candidate(
            "units-minus-one",
            Updater {
                units: |x, b| x / b - 1,
                ..V6_0
            },
        ),
        candidate(
            "one-unit-per-crossing",
            Updater {
                units: |_, _| 1,
                ..V6_0
            },
        ),
        candidate(
            "cross-at-two-batches",
            Updater {
                crosses: |x, b| x > 2 * b,
                ..V6_0
            },
        ),
        candidate("reader-gate-twice-n", Gate(|t, n| t > 2 * n)),
        candidate("periodic-skips-idle", PeriodicSkipsIdle),
        candidate("skip-on-stale-copy", StaleCopy),
    ]);
    v
}

fn benign() -> Vec<Variant> {
    let mut v = later::benign();
    v.extend([
        candidate(
            "skip-above-twice-n",
            Updater {
                skip: |t, n| t > 2 * n,
                ..V6_0
            },
        ),
        candidate(
            "never-skip",
            Updater {
                skip: |_, _| false,
                ..V6_0
            },
        ),
        candidate("reader-gate-at-n", Gate(|t, n| t >= n)),
        candidate("reset-by-subtraction", ResetBySubtraction),
        candidate("reset-twice", ResetTwice),
    ]);
    v
}

/// The default plan for `variants` on `entries` of the standard suite, in
/// this process.
fn plan(variants: &[Variant], entries: &[&Entry]) -> Plan {
    let reg = registry(variants.to_vec()).expect("unique names");
    let mut plan = Plan::new(Suite::standard(&Sizes::default()), reg);
    plan.suite.entries = entries.iter().map(|e| (*e).clone()).collect();
    plan.variants = variants.to_vec();
    plan.budget = Duration::from_secs(60);
    plan.jobs = 2;
    plan
}

/// Run `plan`; the names of its variants whose every cell is as the matrix
/// expects, printing the cells that are not.
fn passing(plan: &Plan) -> Vec<String> {
    let m = run_matrix(plan, &Executor::InProcess, &|_, _, _| {});
    for c in m.cells.iter().filter(|c| !c.ok) {
        eprintln!(
            "{} {} {}: {} {}",
            c.variant,
            c.property,
            c.backend,
            c.verdict.name(),
            c.note.as_deref().unwrap_or("")
        );
    }
    plan.variants
        .iter()
        .filter(|v| {
            let mine: Vec<Cell> = m
                .cells
                .iter()
                .filter(|c| c.variant == v.name)
                .cloned()
                .collect();
            assert!(!mine.is_empty(), "{}: no cell", v.name);
            matrix_ok(&mine)
        })
        .map(|v| v.name.clone())
        .collect()
}

/// The standard suite's entries that run `v`.
fn entries_of(v: &Variant) -> Vec<&'static Entry> {
    crate::common::suite()
        .entries
        .iter()
        .filter(|e| e.applies_to(v.family))
        .collect()
}

/// Whether the default run fails `v`, found search by search: a candidate
/// must hold every property, so a cell is as expected only if every
/// (entry, backend) search (with its twin's, for loom's outcome
/// comparison) holds; the default run fails exactly when some search
/// does. Cheapest backends first (the exhaustive SC search, the samples,
/// loom, real threads), each over the entries in suite order, stopping at
/// the first search that fails `v` instead of running the rest.
fn caught(v: &Variant) -> Option<String> {
    let order = [
        BackendName::ShuttleDfs,
        BackendName::ShuttleRandom,
        BackendName::ShuttlePct,
        BackendName::Loom,
        BackendName::Std,
    ];
    let entries = entries_of(v);
    order.iter().find_map(|b| {
        entries
            .iter()
            .filter(|e| e.backends.iter().any(|x| x.id() == *b))
            .find_map(|e| {
                let mut plan = plan(std::slice::from_ref(v), &[e]);
                plan.backends = vec![*b];
                passing(&plan)
                    .is_empty()
                    .then(|| format!("{} under {}", e.name, b.name()))
            })
    })
}

#[test]
fn harmful_candidates_fail_the_default_run() {
    // No quiet_panics() here: its silent panic hook is process-wide, and in
    // the one test binary it would hide every other test's failure message
    // (libtest captures the violations' panic messages anyway).
    let survivors: Vec<String> = harmful()
        .into_iter()
        .filter(|v| match caught(v) {
            Some(e) => {
                eprintln!("{}: caught on {e}", v.name);
                false
            }
            None => true,
        })
        .map(|v| v.name)
        .collect();
    assert!(survivors.is_empty(), "not caught: {survivors:?}");
}

/// Every benign candidate, in one matrix per family on the family's
/// entries of the standard suite, under `backends` (all when empty), so
/// that the twins' loom runs (v5.19's for every global candidate) are made
/// once; each variant's cells depend only on its own runs and its twin's.
/// The names of those with a cell not as expected.
fn false_alarms(backends: &[BackendName]) -> Vec<String> {
    let benign = benign();
    let mut passed = Vec::new();
    for family in [Family::Global, Family::PerMemcg] {
        let mine: Vec<Variant> = benign
            .iter()
            .filter(|v| v.family == family)
            .cloned()
            .collect();
        assert!(!mine.is_empty(), "no benign {} candidate", family.name());
        let mut plan = plan(&mine, &entries_of(&mine[0]));
        plan.backends = backends.to_vec();
        passed.extend(passing(&plan));
    }
    benign
        .into_iter()
        .map(|v| v.name)
        .filter(|n| !passed.contains(n))
        .collect()
}

/// The whole default run of the seven benign candidates: 57 s of CPU
/// (125 s on a loaded 2-core machine), so not in the default `cargo test`;
/// [`benign_candidates_hold_on_every_sc_interleaving_of_the_suite`] is.
#[test]
#[ignore = "the default run of 7 candidates, 57 s of CPU: run with --ignored"]
fn benign_candidates_pass_the_default_run() {
    let alarms = false_alarms(&[]);
    assert!(alarms.is_empty(), "false alarms: {alarms:?}");
}

/// The part of the default run that decides under sequential consistency:
/// every benign candidate holds every property on every SC interleaving of
/// the suite's exhaustive entries.
#[test]
fn benign_candidates_hold_on_every_sc_interleaving_of_the_suite() {
    let alarms = false_alarms(&[BackendName::ShuttleDfs]);
    assert!(alarms.is_empty(), "false alarms: {alarms:?}");
}

/// Unseen variants of the per-memcg versions (v6.8, v6.17), each a
/// one-function change.
mod later {
    use memcg_flush_model::explore::Platform;
    use memcg_flush_model::kernel::{
        atomic64_add, atomic64_read, atomic64_set, read_once, spin_lock, spin_unlock,
        trace_flush_begin, trace_flush_end, trace_memcg_flush_stats, write_once,
    };
    use memcg_flush_model::protocol::memcg;
    use memcg_flush_model::protocol::per_memcg::v6_17;
    use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
    use memcg_flush_model::protocol::variant::batch_times_cpus;
    use memcg_flush_model::protocol::{Kind, Variant};

    fn candidate(name: &str, twin: &str, code: impl Memcontrol + Clone) -> Variant {
        Variant::new(name, Kind::Candidate, name, v6_8::model(code))
            .per_memcg(batch_times_cpus)
            .twin(twin)
    }

    /// v6.8's reader gate at twice the trigger.
    #[derive(Clone, Copy)]
    struct LazyGate;

    impl Memcontrol for LazyGate {
        fn mem_cgroup_flush_stats<P: Platform>(&self, mm: &State<P>, memcg: u8) -> bool {
            let t = 2 * self.memcg_vmstats_flush_threshold(mm);
            let needs_flush = atomic64_read(&mm.memcg(memcg).vmstats.stats_updates) > t;
            trace_memcg_flush_stats(mm.memcg(memcg), needs_flush);
            if needs_flush {
                self.do_flush_stats(mm, memcg);
            }
            needs_flush
        }
    }

    /// v6.8's callback also zeroes the parent's atomic and per-CPU counter,
    /// though a subtree flush does not flush the parent.
    #[derive(Clone, Copy)]
    struct ResetsParent;

    impl Memcontrol for ResetsParent {
        fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
            memcg::mem_cgroup_css_rstat_flush(&mm.memcgs, memcg, cpu);
            for m in std::iter::once(memcg).chain(mm.parent_mem_cgroup(memcg)) {
                let x = mm.memcg(m);
                write_once(&x.vmstats_percpu.per_cpu(cpu).stats_updates, 0);
                if atomic64_read(&x.vmstats.stats_updates) != 0 {
                    atomic64_set(&x.vmstats.stats_updates, 0);
                }
            }
        }
    }

    /// v6.17's break tested on the parent: a level is skipped when the level
    /// above it is flushable.
    #[derive(Clone, Copy)]
    struct BreakOnParent;

    impl Memcontrol for BreakOnParent {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            let mut level = Some(memcg);
            while let Some(m) = level {
                level = mm.parent_mem_cgroup(m);
                if level.is_some_and(|p| self.memcg_vmstats_needs_flush(mm, p)) {
                    break;
                }
                let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
                let s = read_once(&statc.stats_updates) + val.abs();
                write_once(&statc.stats_updates, s);
                if s < mm.MEMCG_CHARGE_BATCH() {
                    continue;
                }
                write_once(&statc.stats_updates, 0);
                atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
            }
        }
        fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
            v6_17::css_rstat_flush(self, mm, root);
        }
    }

    /// v6.8's fold at twice the batch.
    #[derive(Clone, Copy)]
    struct FoldAtTwoBatches;

    impl Memcontrol for FoldAtTwoBatches {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            let mut level = Some(memcg);
            while let Some(m) = level {
                level = mm.parent_mem_cgroup(m);
                let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
                let s = read_once(&statc.stats_updates) + val.abs();
                write_once(&statc.stats_updates, s);
                if s < 2 * mm.MEMCG_CHARGE_BATCH() {
                    continue;
                }
                if !self.memcg_vmstats_needs_flush(mm, m) {
                    atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
                }
                write_once(&statc.stats_updates, 0);
            }
        }
    }

    /// v6.8's callback without the `if (atomic64_read())` test.
    #[derive(Clone, Copy)]
    struct UnconditionalReset;

    impl Memcontrol for UnconditionalReset {
        fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
            memcg::mem_cgroup_css_rstat_flush(&mm.memcgs, memcg, cpu);
            let m = mm.memcg(memcg);
            write_once(&m.vmstats_percpu.per_cpu(cpu).stats_updates, 0);
            atomic64_set(&m.vmstats.stats_updates, 0);
        }
    }

    /// v6.8 with v6.17's per-CPU lock holds.
    #[derive(Clone, Copy)]
    struct LockPerCpu;

    impl Memcontrol for LockPerCpu {
        fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
            let order = mm.subtree_post_order(root);
            for cpu in 0..mm.env.cfg.cpus {
                spin_lock(&mm.cgroup_rstat_lock);
                trace_flush_begin(mm.memcg(root));
                for &m in &order {
                    self.mem_cgroup_css_rstat_flush(mm, m, cpu);
                }
                trace_flush_end(mm.memcg(root));
                spin_unlock(&mm.cgroup_rstat_lock);
            }
        }
    }

    pub fn harmful() -> Vec<Variant> {
        vec![
            candidate("v6.8-lazy-gate", "v6.8-no-skip", LazyGate),
            candidate("v6.8-resets-parent", "v6.8-no-skip", ResetsParent),
            candidate("v6.17-break-on-parent", "v6.17-no-break", BreakOnParent),
            candidate("v6.8-fold-at-two-batches", "v6.8-no-skip", FoldAtTwoBatches),
        ]
    }

    pub fn benign() -> Vec<Variant> {
        vec![
            candidate(
                "v6.8-unconditional-reset",
                "v6.8-no-skip",
                UnconditionalReset,
            ),
            candidate("v6.8-lock-per-cpu", "v6.8-no-skip", LockPerCpu),
        ]
    }
}
