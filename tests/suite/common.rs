//! What the modules share: running the built `flushcheck`, the catalogue
//! and the standard suite, single runs of a variant (on a suite entry, as
//! the matrix runs it, or on a configuration of the test's own), verdict
//! assertions, and the named configurations several modules use.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::Command;
use std::sync::OnceLock;

use memcg_flush_model::check::{run::run, Entry, RunResult, RunSpec, Sizes, Suite, Verdict};
use memcg_flush_model::explore::{Backend, BackendName};
use memcg_flush_model::protocol::Variant;
use memcg_flush_model::{Config, Property};

/// What one `flushcheck` run printed and returned.
#[derive(Clone)]
pub struct Run {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Run `flushcheck` with `args`.
pub fn flushcheck<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .args(args)
        .output()
        .expect("run flushcheck");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Run `flushcheck` with the whitespace-separated `cmd` (from the package
/// root, where `cargo test` runs tests), once per test binary: the docs and the quoted outputs show many of
/// the same commands (a command's output depends only on its arguments).
/// A second caller of a command being run waits for the first.
pub fn flushcheck_once(cmd: &str) -> Run {
    type Runs = std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<OnceLock<Run>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let slot = RUNS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(cmd.to_string())
        .or_default()
        .clone();
    slot.get_or_init(|| flushcheck(&cmd.split_whitespace().collect::<Vec<_>>()))
        .clone()
}

/// Run `flushcheck` with `args` (a matrix run with `--json`) and read its
/// standard output as a matrix document, checked against its schema
/// (docs/schemas/matrix.json); returns the exit code and the cells.
pub fn flushcheck_json<S: AsRef<OsStr>>(args: &[S]) -> (i32, Vec<serde_json::Value>) {
    let r = flushcheck(args);
    assert!(r.stdout.starts_with('{'), "no JSON on stdout: {}", r.stderr);
    let v = crate::schemas::data(&r.stdout, "matrix");
    (r.code, v.as_array().expect("a JSON array").clone())
}

/// The replay token `explain` printed.
pub fn token(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("replay: flushcheck replay "))
        .unwrap_or_else(|| panic!("no replay line in:\n{out}"))
        .to_string()
}

/// Every variant of this process: the catalogue and the benchmark bound.
pub fn reg() -> &'static [Variant] {
    static REG: OnceLock<Vec<Variant>> = OnceLock::new();
    REG.get_or_init(|| memcg_flush_model::cli::registry(Vec::new()).expect("catalogue"))
}

/// The variant named `name`.
pub fn variant(name: &str) -> &'static Variant {
    reg()
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("unknown variant {name}"))
}

/// Whether `v` is one of the rstat updated-tree forms (issue 11: the
/// kernel forms, their mutant and their twins), whose flushers spin on the
/// per-CPU rstat lock and so make the unreduced searches explode.
pub fn tree_family(v: &Variant) -> bool {
    v.name.contains("-tree")
}

/// The standard suite at the default sizes.
pub fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(|| Suite::standard(&Sizes::default()))
}

/// The standard suite's entry `name`.
pub fn entry(name: &str) -> &'static Entry {
    suite()
        .entry(name)
        .unwrap_or_else(|| panic!("unknown entry {name}"))
}

/// The search entry `entry` runs under `backend` (a backend name).
pub fn entry_backend(entry: &Entry, backend: &str) -> Backend {
    let b = BackendName::parse(backend).expect("a backend name");
    entry
        .backends
        .iter()
        .find(|x| x.id() == b)
        .unwrap_or_else(|| panic!("{} has no {backend} search", entry.name))
        .clone()
}

/// `backend` as the matrix runs it for `variant`: loom within the
/// variant's own preemption cap.
pub fn capped(variant: &Variant, backend: Backend) -> Backend {
    match (backend, variant.loom_cap) {
        (Backend::Loom { preemption_bound }, Some(cap)) => Backend::Loom {
            preemption_bound: Some(preemption_bound.map_or(cap, |p| p.min(cap))),
        },
        (b, _) => b,
    }
}

/// One run of `variant` on `cfg` (named entry `entry`) under `backend`,
/// 120 s budget, every reader outcome collected if `collect`.
pub fn run_spec(
    variant: &str,
    entry: &str,
    cfg: &Config,
    backend: Backend,
    collect: bool,
) -> RunResult {
    let mut spec = RunSpec::new(variant, entry, cfg, backend, 120.0);
    spec.collect = collect;
    run(&spec, reg()).expect("runs")
}

/// One search of `variant` on `cfg` (120 s budget), named entry "test".
pub fn on_config(variant: &str, cfg: &Config, backend: Backend) -> RunResult {
    run_spec(variant, "test", cfg, backend, false)
}

/// [`on_config`], with every distinct reader outcome collected.
pub fn collecting(variant: &str, cfg: &Config, backend: Backend) -> RunResult {
    run_spec(variant, "test", cfg, backend, true)
}

/// The run the matrix makes of `variant` on the standard suite's entry
/// `entry` under `backend` (a backend name): the entry's search
/// parameters, loom capped as the variant asks.
pub fn on_entry(variant: &str, entry_name: &str, backend: &str) -> RunResult {
    let e = entry(entry_name);
    let b = capped(self::variant(variant), entry_backend(e, backend));
    run_spec(variant, entry_name, &e.cfg, b, false)
}

/// The verdict of `p` in `r`, and its note.
pub fn verdict(r: &RunResult, p: Property) -> (Verdict, String) {
    let v = r
        .verdict(p)
        .unwrap_or_else(|| panic!("{p} not judged for {}", r.spec.variant));
    (v.verdict, v.note.clone().unwrap_or_default())
}

/// Assert that `r` violates `p` with a message naming `p`; the message.
pub fn assert_killed(r: &RunResult, p: Property) -> String {
    let (v, note) = verdict(r, p);
    assert_eq!(
        v,
        Verdict::Violated,
        "{} {p} on {} {}: {note}",
        r.spec.variant,
        r.spec.entry,
        r.spec.backend
    );
    assert!(note.starts_with(&format!("{}:", p.name())), "{note}");
    note
}

/// Assert that `p` holds in `r`.
pub fn assert_holds(r: &RunResult, p: Property) {
    let (v, note) = verdict(r, p);
    assert_eq!(
        v,
        Verdict::Holds,
        "{} {p} on {} {}: {note}",
        r.spec.variant,
        r.spec.entry,
        r.spec.backend
    );
}

/// shuttle's random scheduler, `iterations` schedules, seed 1.
pub fn random(iterations: usize) -> Backend {
    Backend::ShuttleRandom {
        iterations,
        seed: 1,
    }
}

/// shuttle's PCT scheduler at depth 3, `iterations` schedules, seed 1.
pub fn pct(iterations: usize) -> Backend {
    Backend::ShuttlePct {
        iterations,
        depth: 3,
        seed: 1,
    }
}

/// The depth-first SC search (one worker, no symmetry reduction: the
/// reference the reduced searches are compared with).
pub fn dfs(max_schedules: usize, sleep_sets: bool, stateful: bool) -> Backend {
    Backend::ShuttleDfs {
        max_schedules,
        sleep_sets,
        stateful,
        symmetry: false,
        workers: 1,
    }
}

/// loom at preemption bound `bound` (`None`: unbounded).
pub fn loom(bound: Option<usize>) -> Backend {
    Backend::Loom {
        preemption_bound: bound,
    }
}

/// Named configurations.
pub mod cfg {
    use memcg_flush_model::Config;

    /// The default configuration with the update values swapped (3 pages on
    /// CPU 0, 2 on CPU 1): the monitors' hand-written histories.
    pub fn pair_3_2() -> Config {
        Config::default().vals(&[3, 2])
    }

    /// One CPU updating twice by 2 pages over a batch of 1, one reader, no
    /// periodic work: the small configuration every exhaustive reference
    /// finishes on.
    pub fn one_cpu_reader() -> Config {
        Config::default()
            .cpus(1)
            .updates(2)
            .vals(&[2])
            .periodic(false)
    }

    /// [`one_cpu_reader`] with the periodic work instead of the reader.
    pub fn one_cpu_periodic() -> Config {
        one_cpu_reader().readers(0).periodic(true)
    }

    /// C1's smallest violation: one CPU, two 1-page updates, batch 1, a
    /// reader, no periodic work.
    pub fn smallest_c1() -> Config {
        Config::bounds().cpus(1).updates(2)
    }

    /// One CPU charging a child of the root by 2 pages `updates` times
    /// (batch 2) while the periodic work flushes, `readers` readers of the
    /// root: the setting of the C12 finding (three updates).
    pub fn c12(updates: usize, readers: usize) -> Config {
        Config::default()
            .cpus(1)
            .batch(2)
            .updates(updates)
            .vals(&[2])
            .readers(readers)
            .tree(&[0])
            .charge(&[1])
            .read(&[0])
    }
}

/// One exploration of `variant` on `cfg` under `backend` with what its
/// monitors recorded (measures, outcomes) and the verdicts a run judges.
pub struct Explored {
    /// How the search went.
    pub exploration: memcg_flush_model::explore::Exploration,
    /// What its executions reported.
    pub shared: std::sync::Arc<memcg_flush_model::observe::Shared>,
    /// The verdict on every property the run judges.
    pub verdicts: Vec<memcg_flush_model::check::run::PropertyVerdict>,
}

impl Explored {
    /// The verdict on `p`, and its note.
    pub fn verdict(&self, p: Property) -> (Verdict, String) {
        let v = self
            .verdicts
            .iter()
            .find(|v| v.property == p)
            .unwrap_or_else(|| panic!("{p} not judged"));
        (v.verdict, v.note.clone().unwrap_or_default())
    }
}

/// Explore `variant` on `cfg` under `backend` (120 s budget) judging what
/// a run judges; with `armed`, the search stops at that property's first
/// violation (as `flushcheck explain` and `perf` search), so only its
/// verdict is meaningful.
pub fn explore(
    variant: &str,
    cfg: &Config,
    backend: &Backend,
    armed: Option<Property>,
) -> Explored {
    use memcg_flush_model::check::run::{explore_variant, judge, judged, monitor_plan, subject};
    let v = self::variant(variant);
    let checks = judged(v, cfg, backend);
    let mut plan = monitor_plan(v, reg(), cfg, backend, checks.clone()).expect("plan");
    plan.armed = armed.into_iter().collect();
    let (exploration, shared) = explore_variant(
        v,
        plan,
        backend,
        memcg_flush_model::explore::Shard::default(),
        std::time::Duration::from_secs(120),
        None,
        None,
    );
    let s = subject(v, cfg, backend);
    let verdicts = checks
        .into_iter()
        .map(|p| judge(p, &s, &exploration.outcome, &shared))
        .collect();
    Explored {
        exploration,
        shared,
        verdicts,
    }
}

/// Held while a test writes or reads `docs/figures/`: the docs module runs
/// the documented `flushcheck plot --out docs/figures`, which rewrites the
/// files the figures module compares with, and both run in one process.
pub fn figures_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
