//! `flushprobe`: runs the real-kernel scenarios of memcg-flush-model.
//!
//! As a guest's `/init` (pid 1) it mounts what it needs, runs the scenarios
//! the harness put in `/plan.json` (every scenario if there is none),
//! prints one `FCP {json}` line per read and the kernel's update stream and
//! flush decisions as `FCE` lines (module `trace`), runs the C reproducer
//! if the harness asked for it, and powers the guest off. As root on the
//! machine's own kernel (`flushprobe --host`), it runs the scenarios below
//! a cgroup of its own and removes it again.
//!
//! Each scenario runs in memcgs of its own below `<base>/<scenario>`, with
//! every file it needs opened and every buffer allocated before it enters
//! them, so that what a memcg is charged is the scenario's charges and
//! nothing of the probe's own (docs/real-kernels.md, section 7).

// The scenario types are the model crate's own (`memcg_flush_model::oracle::spec`):
// the same file, compiled here as a module, so the probe needs no copy.
#[allow(dead_code)] // the model crate uses every item; the probe only some
#[path = "../../model/oracle/spec.rs"]
mod scenario;

mod btf;
mod memory;
mod reread;
mod run;
mod sys;
mod trace;

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use memory::{Memory, Profile};
use run::{pin, run_scenario};
use scenario::{Done, Hello, Scenario};
use sys::*;
use trace::{Tracing, TRACEFS};

const PAGE: usize = 4096;
const HPAGE: usize = 2 << 20;
/// 4 KiB pages reserved for anonymous charges (virtual only until touched).
const ANON_PAGES: usize = 16384;
/// 2 MiB extents reserved for THP charges.
const THP_EXTENTS: usize = 24;
const MTHP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled";
/// 2 MiB blocks reserved for 64 KiB mTHP charges (31 usable extents each).
const MTHP_BLOCKS: usize = 8;
/// The C reproducer in the initramfs (docs/reproducers/test_c12_skew.c).
const REPRODUCER: &str = "/bin/test_c12_skew";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let guest = std::process::id() == 1;
    if !guest && args.iter().any(|a| a == "--print-scenarios") {
        print!("{}", scenario::SCENARIOS_JSON);
        return;
    }
    let code = match run(guest, &args) {
        Ok(()) => 0,
        Err(e) => {
            say(&format!("FCP {{\"fatal\":{}}}", json_str(&e)));
            1
        }
    };
    if guest {
        // SAFETY: plain syscalls at the end of the guest's only process.
        unsafe {
            libc::sync();
            libc::reboot(libc::LINUX_REBOOT_CMD_POWER_OFF);
        }
    }
    std::process::exit(code);
}

fn usage() -> String {
    "usage: flushprobe --host [--base DIR] [SCENARIO...] (root, cgroup v2 at /sys/fs/cgroup \
     with the memory controller); flushprobe --print-scenarios"
        .to_string()
}

/// The kernel functions a kprobe can be put on (`available_filter_functions`).
fn probe_points() -> HashSet<String> {
    std::fs::read_to_string(format!("{TRACEFS}/available_filter_functions"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// `num_online_cpus()`, read once before any scenario: glibc answers
/// `sysconf(_SC_NPROCESSORS_ONLN)` by opening a sysfs file, an accounted
/// allocation that must not happen inside a scenario's memcg.
fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize
}

/// `fcp.KEY=VALUE` on the kernel's command line (the harness's per-boot
/// parameters), if any.
fn cmdline(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cmdline").ok()?;
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("fcp.{key}=")).map(str::to_string))
}

fn run(guest: bool, args: &[String]) -> Result<(), String> {
    let mut all = scenario::scenarios();
    // A scenario file the harness or the user passes replaces the built-in one.
    let file = if guest {
        Some("/scenarios.json".to_string())
    } else {
        args.iter()
            .position(|a| a == "--scenarios")
            .and_then(|i| args.get(i + 1).cloned())
    };
    if let Some(f) = file {
        if let Ok(text) = std::fs::read_to_string(&f) {
            all = serde_json::from_str::<scenario::ScenarioFile>(&text)
                .map_err(|e| format!("{f}: {e}"))?
                .scenarios;
        }
    }
    let (base, names) = if guest {
        mount_guest()?;
        (
            "/sys/fs/cgroup/fcp".to_string(),
            plan_names().unwrap_or_default(),
        )
    } else {
        let mut base = "/sys/fs/cgroup/flushprobe".to_string();
        let mut names = Vec::new();
        let mut host = false;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--host" => host = true,
                "--scenarios" => {
                    it.next();
                }
                "--base" => {
                    base = it
                        .next()
                        .ok_or_else(|| "--base needs a directory".to_string())?
                        .clone()
                }
                s if s.starts_with('-') => {
                    return Err(format!("unknown flag {s:?}; {}", usage()));
                }
                s => names.push(s.to_string()),
            }
        }
        if !host {
            return Err(format!(
                "not pid 1: pass --host to run on this machine's kernel; {}",
                usage()
            ));
        }
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            return Err("--host needs root (it creates memcgs)".into());
        }
        (base, names)
    };
    for n in &names {
        if !all.iter().any(|s| &s.name == n) {
            let known: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "unknown scenario {n:?}; known: {}",
                known.join(", ")
            ));
        }
    }
    let chosen: Vec<&Scenario> = all
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect();

    let root = "/sys/fs/cgroup";
    if std::fs::metadata(format!("{root}/cgroup.controllers")).is_err() {
        return Err(format!("no cgroup v2 hierarchy at {root}"));
    }
    enable_memory(root)?;
    mkdir(&base)?;
    enable_memory(&base)?;
    let cpus = online_cpus();
    let points = probe_points();
    let mut tr = Tracing::setup(&points);
    drop(points);
    let profile = Profile::open(&tr);
    let hello = Hello {
        release: uname_release(),
        cpus,
        kprobes: tr
            .events
            .iter()
            .filter(|e| e.starts_with("fcp/"))
            .cloned()
            .collect(),
        thp: std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default()
            .trim()
            .to_string(),
        mthp: std::fs::read_to_string(MTHP_ENABLED)
            .unwrap_or_default()
            .trim()
            .to_string(),
        trace: tr.mode.name().to_string(),
        trace_why: tr.why_none.clone(),
        events: tr.events.clone(),
        items: tr.items.clone(),
        vals: tr.vals.to_string(),
    };
    say(&format!(
        "FCP {{\"hello\":{}}}",
        serde_json::to_string(&hello).unwrap()
    ));
    let mut mem = Memory::new()?;
    let root_procs = format!("{root}/cgroup.procs");
    calibrate(&base, cpus, &tr)?;
    let _ = write_file(&root_procs, "0");
    tr.drain(&say);
    for s in chosen {
        let t0 = Instant::now();
        let mthp_was = std::fs::read_to_string(MTHP_ENABLED).ok();
        if s.mthp && mthp_was.is_some() {
            let _ = write_file(MTHP_ENABLED, "always");
        }
        let before = tr.overruns();
        let res = run_scenario(s, &base, &tr, &profile, &mut mem, cpus, t0);
        // The window ends with the scenario's last op; then back to the
        // root (or where the host probe started) before anything allocates.
        tr.mark(format!("fcp e {}", s.name).as_bytes());
        let _ = write_file(&root_procs, "0");
        if let (true, Some(was)) = (s.mthp, &mthp_was) {
            // The file shows "always [inherit] madvise never": restore the
            // bracketed one.
            let cur = was
                .split_whitespace()
                .find(|w| w.starts_with('['))
                .unwrap_or("[never]");
            let _ = write_file(MTHP_ENABLED, cur.trim_matches(|c| c == '[' || c == ']'));
        }
        mem.close_kept();
        tr.drain(&say);
        let done = Done {
            s: s.name.clone(),
            ok: res.is_ok(),
            error: res.err().unwrap_or_default(),
            t: t0.elapsed().as_micros() as u64,
            overrun: tr.overruns().saturating_sub(before),
        };
        say(&format!(
            "FCP {{\"done\":{}}}",
            serde_json::to_string(&done).unwrap()
        ));
    }
    if guest {
        if let Some(k1) = cmdline("k1") {
            reproducer(&k1, &tr)?;
            tr.drain(&say);
        }
    } else {
        remove_tree(&base);
    }
    say("FCP {\"end\":true}");
    Ok(())
}

/// Before the first scenario, on every CPU in turn: one accounted slab
/// charge of a page or more (a memory.stat open, read and close, twice) in
/// a memcg of the probe's own. On 6.1 this puts a value above
/// `MEMCG_CHARGE_BATCH` through every CPU's global `stats_updates`, which
/// then folds and restarts from 0, so that the traced stream from here on
/// determines it (docs/real-kernels.md, section 7).
fn calibrate(base: &str, cpus: usize, tr: &Tracing) -> Result<(), String> {
    let dir = format!("{base}/cal");
    mkdir(&dir)?;
    let stat = format!("{dir}/memory.stat");
    write_file(&format!("{dir}/cgroup.procs"), "0")?;
    tr.mark(b"fcp cal");
    for cpu in 0..cpus {
        pin(cpu)?;
        for _ in 0..2 {
            let _ = std::fs::read(&stat);
        }
    }
    tr.mark(b"fcp cal end");
    pin(0)
}

/// Run the C reproducer (`/bin/test_c12_skew -k K1`) in the root cgroup,
/// with the trace filtered to the cgroups it uses (made here first, so that
/// their ids are known; it keeps cgroups it did not make), and print its
/// output as `FCR` lines.
fn reproducer(k1: &str, tr: &Tracing) -> Result<(), String> {
    if std::fs::metadata(REPRODUCER).is_err() {
        say(&format!(
            "FCR {{\"error\":{}}}",
            json_str(&format!("no {REPRODUCER} in the initramfs"))
        ));
        return Ok(());
    }
    let top = "/sys/fs/cgroup/c12";
    let mut ids = BTreeMap::new();
    for (name, d) in [
        (".", top.to_string()),
        ("p", format!("{top}/p")),
        ("p/a", format!("{top}/p/a")),
        ("p/b", format!("{top}/p/b")),
    ] {
        mkdir(&d)?;
        if name == "." || name == "p" {
            enable_memory(&d)?;
        }
        ids.insert(name.to_string(), cgroup_id(&d)?);
    }
    let update: Vec<u64> = ["p", "p/a", "p/b"].iter().map(|n| ids[*n]).collect();
    let mut flush = update.clone();
    flush.extend([ids["."], 1]);
    tr.filter(&update, &flush);
    say(&format!(
        "FCR {{\"start\":{{\"k1\":{},\"ids\":{}}}}}",
        json_str(k1),
        serde_json::to_string(&ids).unwrap()
    ));
    tr.mark(b"fcp s repro");
    let out = std::process::Command::new(REPRODUCER)
        .args(["-k", k1])
        .output()
        .map_err(|e| format!("running {REPRODUCER}: {e}"))?;
    tr.mark(b"fcp e repro");
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        say(&format!("FCR {}", json_str(line)));
    }
    say(&format!(
        "FCR {{\"exit\":{}}}",
        out.status.code().unwrap_or(-1)
    ));
    Ok(())
}
