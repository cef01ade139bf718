//! `flushcheck kernels`: real kernels as the oracle. Boot each cached
//! Debian kernel under qemu at each vCPU count with the probe as `/init`,
//! judge what it printed against the model's prediction, and print one row
//! per scenario and boot (docs/real-kernels.md).
//!
//! `--from DIR` judges consoles a run saved (`--save DIR`) instead, so that
//! a recorded run can be re-judged, and tested, without qemu; `--host`
//! runs the probe on this machine's own kernel.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::guest::{self, cache, console, probe, qemu, Accel, Initrd, Kernel};
use crate::oracle::spec::scenarios;
use crate::oracle::{Row, Verdict};

pub use super::kernels_judge::outcome;
use super::kernels_judge::{from_saved, Picked};
use crate::publish::kernels::count;
pub use crate::publish::kernels::{summary, table, Outcome};

/// `flushcheck kernels`.
#[derive(clap::Args, Debug, Clone)]
pub struct KernelsArgs {
    /// The kernel cache (`probe/fetch-kernels.sh DIR` fills it) [default:
    /// $FLUSHCHECK_KERNELS, or target/kernels].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Kernels to boot, comma-separated (`6.1,6.12`) [default: every
    /// kernel in the cache].
    #[arg(long, value_delimiter = ',', conflicts_with = "set")]
    pub kernel: Vec<String>,
    /// A named set of kernels: `ci` (one per lineage: 6.1, 6.12, 6.16,
    /// 7.3) or `all` (6.1, 6.12, 6.16 to 6.19, 7.0 to 7.3), each of which
    /// must be in the cache (`probe/fetch-kernels.sh --set NAME DIR`).
    #[arg(long, value_parser = ["ci", "all"])]
    pub set: Option<String>,
    /// Boot every kernel of the `all` set (the same as `--set all`).
    #[arg(long, conflicts_with_all = ["set", "kernel"])]
    pub all: bool,
    /// Do not run the C reproducer (docs/reproducers/test_c12_skew.c) in
    /// the guests; by default it runs after the scenarios on every kernel
    /// with anonymous mTHP (6.8 on), with the model's `-k` for the release
    /// and vCPU count, as a row `reproducer` beside the model's forecast.
    #[arg(long)]
    pub no_reproducer: bool,
    /// Print the reproducer's plan instead of booting: for each release
    /// (`--kernel`, as releases or cache names; default: the cache's) and
    /// vCPU count, the model's `-k` and what the program will then print.
    #[arg(long, conflicts_with_all = ["from", "host"])]
    pub plan: bool,
    /// vCPU counts, comma-separated; one boot per kernel and count
    /// [default: 1,2,4].
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Scenarios to run (model/oracle/scenarios.json), comma-separated [default:
    /// all].
    #[arg(long, value_delimiter = ',')]
    pub scenario: Vec<String>,
    /// How qemu runs the guest: auto (KVM if it works here, else TCG), tcg
    /// or kvm.
    #[arg(long, default_value = "auto", value_parser = Accel::parse)]
    pub accel: Accel,
    /// Kill a boot after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,
    /// Boot a kernel and vCPU count once more when a row disagrees or the
    /// boot fails, this many times (a guest under TCG is timed by a busy
    /// host; every boot's rows are kept and the last is judged).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub retries: usize,
    /// Boots to run at once (each TCG guest uses as many host threads as
    /// it has vCPUs; the comparison does not depend on timing).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Print the boots and rows as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the rows as Markdown tables, one per kernel, and the early
    /// break's loss per boot (docs/real-kernels.md, section 4, is this).
    #[arg(long)]
    pub markdown: bool,
    /// Write each boot's raw console to `DIR/<kernel>-<cpus>.txt` (a boot
    /// that went wrong and was retried to `DIR/retried/`).
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    pub save: Option<PathBuf>,
    /// Judge the consoles saved in DIR (`--save`) instead of booting.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["host", "cache"])]
    pub from: Option<PathBuf>,
    /// Run the probe on this machine's own kernel instead of a VM (root,
    /// cgroup v2; it creates memcgs below /sys/fs/cgroup/flushprobe).
    #[arg(long, conflicts_with_all = ["kernel", "cpus", "cache", "accel"])]
    pub host: bool,
}

/// The chosen scenario names (every scenario if `given` is empty), in the
/// scenario file's order; an unknown name is an error listing the known.
pub fn chosen_scenarios(given: &[String]) -> Result<Vec<String>, String> {
    let known: Vec<String> = scenarios().into_iter().map(|s| s.name).collect();
    for g in given {
        if !known.contains(g) {
            return Err(format!(
                "unknown scenario {g:?}: expected one of {}",
                known.join(", ")
            ));
        }
    }
    Ok(known
        .into_iter()
        .filter(|k| given.is_empty() || given.contains(k))
        .collect())
}

/// Run `flushcheck kernels`.
pub fn kernels(a: &KernelsArgs) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let names = chosen_scenarios(&a.scenario)?;
    if a.timeout == 0 {
        return Err("--timeout 0: a boot needs at least 1 second".into());
    }
    if a.cpus.contains(&0) {
        return Err("--cpus 0: a guest needs at least 1 vCPU".into());
    }
    if a.plan {
        return plan(a);
    }
    let outcomes = if let Some(dir) = &a.from {
        let picked = Picked {
            kernel: &a.kernel,
            cpus: &a.cpus,
            scenario_given: !a.scenario.is_empty(),
        };
        from_saved(dir, &picked, &names)?
    } else if a.host {
        vec![on_host(a, &names)?]
    } else {
        boot_all(a, &names)?
    };
    let rows: Vec<&Row> = outcomes.iter().flat_map(|o| &o.rows).collect();
    let boot_failed = outcomes.iter().any(|o| o.error.is_some());
    let elapsed = t0.elapsed();
    if a.json {
        super::args::print_doc(
            "kernels",
            &serde_json::json!({
                "boots": outcomes,
                "seconds": elapsed.as_secs_f64(),
            }),
        )?;
    } else if a.markdown {
        print!("{}", crate::publish::kernels::markdown(&outcomes));
    } else {
        print!("{}", table(&rows));
        for o in outcomes.iter().filter(|o| o.error.is_some()) {
            println!(
                "boot {} at {} FAILED: {}",
                o.kernel,
                count(o.cpus, "vCPU"),
                o.error.as_deref().unwrap_or("")
            );
        }
        for o in &outcomes {
            if let Some(l) = &o.loss {
                println!(
                    "the early break's loss on {} at {}: the parent shows {} of the {} pages its \
                     child shows, {}",
                    l.release,
                    count(l.cpus, "vCPU"),
                    l.parent,
                    l.child,
                    l.lasted_ms.map_or(
                        format!("still short after {} ms", l.watched_ms),
                        |ms| format!("for {ms} ms (until the periodic flush)")
                    )
                );
            }
        }
        for o in outcomes.iter().filter(|o| !o.retried.is_empty()) {
            println!(
                "boot {} at {} was retried: {}",
                o.kernel,
                count(o.cpus, "vCPU"),
                o.retried.join("; ")
            );
        }
        println!("{}", summary(&outcomes, a.from.is_none(), elapsed));
    }
    let bad = rows
        .iter()
        .any(|r| matches!(r.verdict, Verdict::Disagree | Verdict::Failed));
    Ok(if bad || boot_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The cache directory: `--cache`, else $FLUSHCHECK_KERNELS, else
/// target/kernels.
fn cache_dir(a: &KernelsArgs) -> PathBuf {
    a.cache.clone().unwrap_or_else(|| {
        std::env::var_os("FLUSHCHECK_KERNELS")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("target/kernels"), PathBuf::from)
    })
}

fn cpu_counts(a: &KernelsArgs) -> Vec<usize> {
    if a.cpus.is_empty() {
        vec![1, 2, 4]
    } else {
        a.cpus.clone()
    }
}

/// Boot every chosen kernel at every vCPU count, one after the other.
fn boot_all(a: &KernelsArgs, names: &[String]) -> Result<Vec<Outcome>, String> {
    let cache = cache_dir(a);
    let found = cache::find(&cache)?;
    let set = if a.all { Some("all") } else { a.set.as_deref() };
    let kernels = match set {
        Some(set) => cache::select_set(&found, set),
        None => cache::select(&found, &a.kernel),
    }
    .map_err(|e| format!("{e} (in {})", cache.display()))?;
    let version = qemu::check_installed()?;
    let probe = build_probe()?;
    let reproducer = if a.no_reproducer {
        None
    } else {
        Some(probe::build_reproducer(&probe::source_root()?))
    };
    let repro_bin = reproducer.as_ref().and_then(|r| r.as_ref().ok());
    if let Some(Err(e)) = &reproducer {
        eprintln!("{e}: the reproducer rows will fail");
    }
    let initrd = Initrd::create(&probe, names, repro_bin.map(PathBuf::as_path))?;
    let cpus = cpu_counts(a);
    let list: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    eprintln!(
        "{} ({} at {} vCPU{}), {} each; {version}, accel {}, time limit {} s per boot",
        count(kernels.len() * cpus.len(), "boot"),
        list.join(", "),
        cpus.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        if cpus == [1] { "" } else { "s" },
        count(names.len(), "scenario"),
        a.accel.name(),
        a.timeout
    );
    let jobs: Vec<(&Kernel, usize)> = kernels
        .iter()
        .flat_map(|k| cpus.iter().map(move |&n| (k, n)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<(usize, Result<Outcome, String>)>> =
        std::sync::Mutex::new(Vec::new());
    // Boots in parallel, `--jobs` at a time: a TCG guest runs on as many host
    // threads as it has vCPUs, and the replay does not depend on timing.
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(k, n)) = jobs.get(i) else { break };
                let r = boot_with_retries(a, k, n, &initrd, names, &reproducer);
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// One kernel at one vCPU count, booted again while it goes wrong
/// (`--retries`).
fn boot_with_retries(
    a: &KernelsArgs,
    k: &Kernel,
    n: usize,
    initrd: &Initrd,
    names: &[String],
    reproducer: &Option<Result<PathBuf, String>>,
) -> Result<Outcome, String> {
    let repro = repro_plan(k, n, reproducer);
    let mut o = boot_one(a, k, n, initrd, names, &repro)?;
    let mut earlier = Vec::new();
    while went_wrong(&o) && earlier.len() < a.retries {
        let why = wrong_summary(&o);
        eprintln!(
            "boot {} at {}: {why}; booting once more (--retries {})",
            k.name,
            count(n, "vCPU"),
            a.retries
        );
        earlier.push(why);
        if let Some(dir) = &a.save {
            // The boot that went wrong is kept apart, for its diagnosis.
            let stem = format!("{}-{n}", k.name);
            let kept = dir.join("retried");
            let _ = std::fs::create_dir_all(&kept);
            let _ = std::fs::rename(
                dir.join(format!("{stem}.txt")),
                kept.join(format!("{stem}-{}.txt", earlier.len())),
            );
        }
        o = boot_one(a, k, n, initrd, names, &repro)?;
    }
    o.retried = earlier;
    Ok(o)
}

fn went_wrong(o: &Outcome) -> bool {
    o.error.is_some()
        || o.rows
            .iter()
            .any(|r| matches!(r.verdict, Verdict::Disagree | Verdict::Failed))
}

fn wrong_summary(o: &Outcome) -> String {
    if let Some(e) = &o.error {
        return format!("the boot failed: {e}");
    }
    let bad: Vec<&str> = o
        .rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Disagree | Verdict::Failed))
        .map(|r| r.scenario.as_str())
        .collect();
    format!(
        "{} disagreed or failed ({})",
        count(bad.len(), "row"),
        bad.join(", ")
    )
}

fn build_probe() -> Result<PathBuf, String> {
    let root = probe::source_root()?;
    let t = Instant::now();
    eprintln!("building the probe (cargo build -p memcg-probe, static)");
    let bin = probe::build(&root)?;
    eprintln!(
        "probe built: {} ({:.1} s)",
        bin.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(bin)
}

/// What the reproducer does on one boot.
#[derive(Clone, Debug)]
pub enum ReproPlan {
    /// Not asked for, or the kernel has no anonymous mTHP (before 6.8).
    None,
    /// It could not be planned or built: the row fails with this.
    Failed(String),
    /// Run with this forecast.
    Run(crate::oracle::plan::Forecast),
}

/// The reproducer's plan for kernel `k` at `cpus`: the model's `-k` and
/// what it then expects the program to print.
fn repro_plan(k: &Kernel, cpus: usize, built: &Option<Result<PathBuf, String>>) -> ReproPlan {
    let Some(built) = built else {
        return ReproPlan::None;
    };
    if crate::oracle::judge::release_of(&k.release).is_none_or(|r| r < (6, 8)) {
        return ReproPlan::None;
    }
    if let Err(e) = built {
        return ReproPlan::Failed(e.clone());
    }
    let plan = crate::oracle::plan::reproducer_k1(&k.release, cpus).and_then(|k1| {
        let k1 = k1.ok_or_else(|| {
            format!(
                "the model finds no k1 that shows the loss with {}'s updates at {cpus} vCPUs",
                k.release
            )
        })?;
        crate::oracle::plan::forecast(&k.release, cpus, k1)
    });
    match plan {
        Ok(f) => ReproPlan::Run(f),
        Err(e) => ReproPlan::Failed(e),
    }
}

fn boot_one(
    a: &KernelsArgs,
    k: &Kernel,
    cpus: usize,
    initrd: &Initrd,
    names: &[String],
    repro: &ReproPlan,
) -> Result<Outcome, String> {
    let b = guest::Boot {
        vmlinuz: k.vmlinuz.clone(),
        initrd: initrd.path.clone(),
        cpus,
        memory_mib: 512,
        accel: a.accel,
        timeout: Duration::from_secs(a.timeout),
        params: match repro {
            ReproPlan::Run(f) => vec![format!("fcp.k1={}", f.k1)],
            _ => Vec::new(),
        },
    };
    let booted = qemu::boot(&b)?;
    if let Some(why) = &booted.fell_back {
        eprintln!("KVM cannot run the guest here ({why}): TCG from now on");
    }
    if let Some(dir) = &a.save {
        save(dir, &format!("{}-{cpus}", k.name), &booted.console)?;
    }
    let mut o = outcome(&k.name, cpus, &booted.console, names);
    if let ReproPlan::Failed(e) = repro {
        o.rows.push(crate::oracle::judge::failed_row(
            &o.kernel,
            o.cpus,
            "reproducer",
            e,
        ));
    } else if let ReproPlan::Run(_) = repro {
        if !o.rows.iter().any(|r| r.scenario == "reproducer") {
            o.rows.push(crate::oracle::judge::failed_row(
                &o.kernel,
                o.cpus,
                "reproducer",
                "the console has no record of the reproducer's run",
            ));
        }
    }
    if booted.timed_out {
        o.error = o
            .error
            .map(|e| format!("killed at the time limit ({} s): {e}", a.timeout));
    }
    o.accel = Some(booted.accel.name());
    o.seconds = booted.elapsed.as_secs_f64();
    progress(&o, &booted.console);
    Ok(o)
}

fn save(dir: &Path, stem: &str, console: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--save {}: {e}", dir.display()))?;
    let f = dir.join(format!("{stem}.txt"));
    std::fs::write(&f, console).map_err(|e| format!("--save: {}: {e}", f.display()))
}

/// The progress line of one boot on stderr; a failed boot's console tail
/// below it.
fn progress(o: &Outcome, text: &str) {
    let garbled = if o.garbled > 0 {
        format!("; {} probe lines garbled on the console", o.garbled)
    } else {
        String::new()
    };
    match &o.error {
        None => eprintln!(
            "boot {} at {}: {}, {:.1} s{garbled}",
            o.kernel,
            count(o.cpus, "vCPU"),
            count(o.rows.len(), "scenario"),
            o.seconds
        ),
        Some(e) => {
            eprintln!(
                "boot {} at {}: FAILED after {:.1} s: {e}{garbled}",
                o.kernel,
                count(o.cpus, "vCPU"),
                o.seconds,
            );
            eprintln!("{}", console::tail(text, 20));
        }
    }
}

/// `--host`: the probe on this machine's kernel.
fn on_host(a: &KernelsArgs, names: &[String]) -> Result<Outcome, String> {
    probe::check_host()?;
    eprintln!(
        "warning: --host runs the probe on this machine's kernel: it creates memcgs below \
         /sys/fs/cgroup/flushprobe (removed at the end) and charges them"
    );
    let probe = build_probe()?;
    let t = Instant::now();
    let (text, _) = probe::run_on_host(&probe, crate::oracle::spec::SCENARIOS_JSON, names)?;
    let seen = console::read(&text).obs.hello;
    let kernel = cache::short_name(&seen.release).unwrap_or_else(|| "host".into());
    if let Some(dir) = &a.save {
        save(dir, &format!("{kernel}-host"), &text)?;
    }
    let mut o = outcome(&kernel, seen.cpus, &text, names);
    o.seconds = t.elapsed().as_secs_f64();
    progress(&o, &text);
    Ok(o)
}

/// `--plan`: the reproducer's `-k` and forecast per release and vCPU count.
fn plan(a: &KernelsArgs) -> Result<ExitCode, String> {
    let releases: Vec<String> = if a.kernel.is_empty() {
        let cache = cache_dir(a);
        cache::find(&cache)?
            .into_iter()
            .map(|k| k.release)
            .collect()
    } else {
        let found = cache::find(&cache_dir(a)).unwrap_or_default();
        a.kernel
            .iter()
            .map(|n| {
                found
                    .iter()
                    .find(|k| &k.name == n || &k.release == n)
                    .map_or_else(|| n.clone(), |k| k.release.clone())
            })
            .collect()
    };
    let mut rows = Vec::new();
    for r in &releases {
        for &n in &cpu_counts(a) {
            let k1 = crate::oracle::plan::reproducer_k1(r, n)?;
            let line = match k1 {
                None => format!("{r} at {}: no k1 shows the loss", count(n, "vCPU")),
                Some(k1) => {
                    let f = crate::oracle::plan::forecast(r, n, k1)?;
                    rows.push(serde_json::json!({"release": r, "cpus": n, "forecast": f}));
                    format!(
                        "{r} at {}: test_c12_skew -k {} -m {}: {} (p {} after the skew, p {} / p/a {})",
                        count(n, "vCPU"),
                        f.k1,
                        f.m,
                        f.verdict(),
                        f.p1,
                        f.p,
                        f.a
                    )
                }
            };
            if !a.json {
                println!("{line}");
            }
        }
    }
    if a.json {
        super::args::print_doc("kernels-plan", &serde_json::json!({ "plans": rows }))?;
    }
    Ok(ExitCode::SUCCESS)
}
