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
mod trace;

use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::io::Write;
use std::time::Instant;

use scenario::{Done, Hello, Op, Scenario, Unit};
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

/// The kernfs id of a cgroup directory, as the trace names its memcg: the
/// directory's inode number.
fn cgroup_id(dir: &str) -> Result<u64, String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .map(|m| m.ino())
        .map_err(|e| format!("stat {dir}: {e}"))
}

/// The scenario names in the guest's `/plan.json` (`{"scenarios":[...]}`).
fn plan_names() -> Option<Vec<String>> {
    let text = std::fs::read_to_string("/plan.json").ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(
        v.get("scenarios")?
            .as_array()?
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
    )
}

fn mount_guest() -> Result<(), String> {
    for (src, dir, fs) in [
        ("proc", "/proc", "proc"),
        ("sysfs", "/sys", "sysfs"),
        ("cgroup2", "/sys/fs/cgroup", "cgroup2"),
        ("tracefs", TRACEFS, "tracefs"),
        ("tmpfs", "/tmp", "tmpfs"),
    ] {
        let _ = std::fs::create_dir_all(dir);
        let (s, d, f) = (cstr(src), cstr(dir), cstr(fs));
        // SAFETY: valid NUL-terminated strings, no data argument.
        let rc = unsafe { libc::mount(s.as_ptr(), d.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
        if rc != 0 && fs != "tracefs" && fs != "tmpfs" {
            return Err(format!(
                "mount {fs} on {dir}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // A guest under 512 MiB starts with THP off ("disabled by default on
    // small systems", hugepage_init()); the THP scenarios madvise.
    let _ = write_file("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
    // Every anonymous mTHP size below the PMD size off: a size set to
    // `always` would change what a scenario's faults allocate (the
    // scenarios that want 64 KiB folios turn that one size on). The PMD
    // size keeps `inherit` (the THP scenarios madvise), and a size without
    // an `enabled` file (file-only sizes) is left alone.
    let pmd_kb = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map_or(2048, |b| b / 1024);
    if let Ok(rd) = std::fs::read_dir("/sys/kernel/mm/transparent_hugepage") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let enabled = format!("{}/enabled", e.path().display());
            if name.starts_with("hugepages-")
                && name != format!("hugepages-{pmd_kb}kB")
                && std::fs::metadata(&enabled).is_ok()
            {
                let _ = write_file(&enabled, "never");
            }
        }
    }
    // khugepaged would collapse the THP mapping's pre-touched spare extent
    // (one page present, 511 none) into a THP charged to whichever memcg
    // the probe is in ~10 s after boot: no collapse of sparse extents.
    let _ = write_file(
        "/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none",
        "0",
    );
    Ok(())
}

fn uname_release() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in paths")
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn write_file(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("write {text:?} to {path}: {e}"))
}

fn mkdir(path: &str) -> Result<(), String> {
    match std::fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("mkdir {path}: {e}")),
    }
}

fn enable_memory(dir: &str) -> Result<(), String> {
    let ctl = format!("{dir}/cgroup.subtree_control");
    let now = std::fs::read_to_string(&ctl).unwrap_or_default();
    if now.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    write_file(&ctl, "+memory")
}

fn remove_tree(dir: &str) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                remove_tree(&e.path().to_string_lossy());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// An open file reread from offset 0 (no allocation in the caller's memcg
/// after the first read).
struct Reread {
    fd: i32,
}

impl Reread {
    fn open(path: &str) -> Result<Self, String> {
        let p = cstr(path);
        // SAFETY: valid path.
        let fd = unsafe { libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(format!("open {path}: {}", std::io::Error::last_os_error()));
        }
        Ok(Reread { fd })
    }
    fn read<'a>(&self, buf: &'a mut [u8]) -> &'a [u8] {
        // SAFETY: fd is open; buf is writable for its length.
        unsafe {
            libc::lseek(self.fd, 0, libc::SEEK_SET);
            let mut len = 0usize;
            loop {
                let n = libc::read(
                    self.fd,
                    buf[len..].as_mut_ptr() as *mut libc::c_void,
                    buf.len() - len,
                );
                if n <= 0 {
                    break;
                }
                len += n as usize;
                if len == buf.len() {
                    break;
                }
            }
            &buf[..len]
        }
    }
}

impl Drop for Reread {
    fn drop(&mut self) {
        // SAFETY: fd is ours.
        unsafe { libc::close(self.fd) };
    }
}

/// The value of `key` in a `name value` file.
fn field(text: &[u8], key: &str) -> u64 {
    for line in text.split(|&b| b == b'\n') {
        let mut it = line.split(|&b| b == b' ');
        if it.next() == Some(key.as_bytes()) {
            if let Some(v) = it.next() {
                return std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
            }
        }
    }
    0
}

/// The periodic work's kprobe hits, counted through `kprobe_profile`
/// (opened and first read outside any scenario's memcg, so that rereading
/// it allocates nothing).
struct Profile {
    file: Option<Reread>,
    buf: std::cell::RefCell<Vec<u8>>,
}

impl Profile {
    fn open(tr: &Tracing) -> Profile {
        let file = if tr.events.iter().any(|e| e == "fcp/fcp_dwork") {
            Reread::open(&format!("{TRACEFS}/kprobe_profile")).ok()
        } else {
            None
        };
        let p = Profile {
            file,
            buf: std::cell::RefCell::new(vec![0u8; 16384]),
        };
        p.dwork();
        p
    }

    /// Runs of `flush_memcg_stats_dwork()` so far, if they can be counted.
    fn dwork(&self) -> Option<u64> {
        let f = self.file.as_ref()?;
        let mut buf = self.buf.borrow_mut();
        let text = f.read(&mut buf);
        for line in text.split(|&b| b == b'\n') {
            let mut it = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
            let (Some(name), Some(hits)) = (it.next(), it.next()) else {
                continue;
            };
            if name.ends_with(b"fcp_dwork") {
                return std::str::from_utf8(hits).ok().and_then(|s| s.parse().ok());
            }
        }
        None
    }
}

/// The mappings charges come from, reserved before any scenario.
struct Memory {
    mthp: *mut u8,
    /// Next 64 KiB extent (extent 0 of each block is skipped).
    mthp_next: usize,
    anon: *mut u8,
    anon_next: usize,
    thp: *mut u8,
    thp_next: usize,
    memfd: i32,
    shmem_next: usize,
    page: Vec<u8>,
    kept: Vec<i32>,
    /// What this scenario charged, newest last, for `free`: (unit, index
    /// of its page, extent or descriptor slot). Reserved before the
    /// scenario: pushing within the capacity allocates nothing.
    charged: Vec<(Unit, usize)>,
}

fn align(p: *mut u8, to: usize) -> *mut u8 {
    ((p as usize + to - 1) & !(to - 1)) as *mut u8
}

impl Memory {
    fn new() -> Result<Self, String> {
        // SAFETY: anonymous private mappings; madvise and writes inside them.
        unsafe {
            // 2 MiB-aligned, with the first page of every 2 MiB touched
            // here, outside any scenario's memcg: every page table the
            // scenarios' faults need exists already, and those pages are
            // skipped (`Memory::next_anon`).
            let raw = map((ANON_PAGES + 512) * PAGE)?;
            let anon = align(raw, HPAGE);
            libc::madvise(
                anon as *mut libc::c_void,
                ANON_PAGES * PAGE,
                libc::MADV_NOHUGEPAGE,
            );
            for i in (0..ANON_PAGES).step_by(512) {
                std::ptr::write_volatile(anon.add(i * PAGE), 1);
            }
            // THP extents inside one 1 GiB range, with a 4 KiB page of a
            // spare extent of that range touched here, so that the PMD
            // table exists and a THP fault allocates only its deposited
            // page table.
            let span = 2 * THP_EXTENTS + 2;
            let raw = map((span + 1) * HPAGE)?;
            let first = align(raw, HPAGE) as usize;
            let gib = 1usize << 30;
            let mut start = first;
            let boundary = (first / gib + 1) * gib;
            if boundary < first + (THP_EXTENTS + 1) * HPAGE {
                start = boundary;
            }
            let thp = start as *mut u8;
            libc::madvise(
                thp as *mut libc::c_void,
                THP_EXTENTS * HPAGE,
                libc::MADV_HUGEPAGE,
            );
            std::ptr::write_volatile(thp.add(THP_EXTENTS * HPAGE), 1);
            // 64 KiB extents: the first of each 2 MiB block is touched here
            // (its page table), the other 31 stay empty for order-4 folios.
            let raw = map((MTHP_BLOCKS + 1) * HPAGE)?;
            let mthp = align(raw, HPAGE);
            for b in 0..MTHP_BLOCKS {
                std::ptr::write_volatile(mthp.add(b * HPAGE), 1);
            }
            let name = cstr("fcp");
            let memfd = libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC);
            if memfd < 0 {
                return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
            }
            Ok(Memory {
                mthp,
                mthp_next: 1,
                anon,
                anon_next: 1,
                thp,
                thp_next: 0,
                memfd,
                shmem_next: 0,
                page: vec![0x5a; PAGE],
                kept: Vec::with_capacity(64),
                charged: Vec::with_capacity(ANON_PAGES + 4096),
            })
        }
    }

    /// Free the newest unit of `unit` this scenario charged and still
    /// holds: `madvise(MADV_DONTNEED)` of its page or folio, `ftruncate()`
    /// of the memfd's last page, or `close()` of the descriptor.
    fn free(&mut self, unit: Unit) -> Result<(), String> {
        let Some(pos) = self.charged.iter().rposition(|(u, _)| *u == unit) else {
            return Err(format!(
                "free {unit:?}: this scenario holds no such unit (charge it first)"
            ));
        };
        let (_, at) = self.charged.remove(pos);
        let dontneed = |addr: *mut u8, len: usize| {
            // SAFETY: inside a reserved private anonymous mapping.
            let rc = unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            if rc != 0 {
                return Err(format!("madvise: {}", std::io::Error::last_os_error()));
            }
            Ok(())
        };
        match unit {
            // SAFETY (the three adds): inside the reserved mappings.
            Unit::Anon4k => dontneed(unsafe { self.anon.add(at * PAGE) }, PAGE),
            Unit::Mthp64k => dontneed(unsafe { self.mthp.add(at * 65536) }, 65536),
            Unit::Thp => dontneed(unsafe { self.thp.add(at * HPAGE) }, HPAGE),
            Unit::Shmem4k => {
                // Only the last page can go: truncate to it.
                // SAFETY: memfd is ours.
                let rc = unsafe { libc::ftruncate(self.memfd, (at * PAGE) as libc::off_t) };
                if rc != 0 {
                    return Err(format!("ftruncate: {}", std::io::Error::last_os_error()));
                }
                self.shmem_next = at;
                Ok(())
            }
            Unit::OpenKeep => {
                if let Some(fd) = self.kept.get(at).copied() {
                    // SAFETY: our descriptor; the slot is marked closed.
                    unsafe { libc::close(fd) };
                    self.kept[at] = -1;
                }
                Ok(())
            }
            Unit::OpenClose => Err("open_close holds nothing to free".into()),
        }
    }

    /// `lru_add_drain()` on this CPU: `madvise(MADV_COLD)` of a range
    /// with no page present drains the CPU's LRU add batch first
    /// (`madvise_cold()`) and then finds nothing to deactivate, so that a
    /// scenario's folios start in an empty batch. Allocates nothing.
    fn lru_add_drain(&self) {
        // SAFETY: the last 4 KiB page of the anonymous reservation, never
        // touched (`charge` stops before it).
        unsafe {
            libc::madvise(
                self.anon.add((ANON_PAGES - 1) * PAGE) as *mut libc::c_void,
                PAGE,
                libc::MADV_COLD,
            );
        }
    }

    /// Close what `OpenKeep` opened.
    fn close_kept(&mut self) {
        self.charged.clear();
        for fd in self.kept.drain(..).filter(|fd| *fd >= 0) {
            // SAFETY: our descriptors.
            unsafe { libc::close(fd) };
        }
    }

    fn charge(&mut self, unit: Unit, cg_stat: &std::ffi::CStr) -> Result<(), String> {
        match unit {
            Unit::Anon4k => {
                if self.anon_next >= ANON_PAGES - 1 {
                    return Err("out of reserved 4 KiB pages".into());
                }
                // SAFETY: inside the reserved mapping.
                unsafe { std::ptr::write_volatile(self.anon.add(self.anon_next * PAGE), 1) };
                self.charged.push((unit, self.anon_next));
                self.anon_next += 1;
                if self.anon_next.is_multiple_of(512) {
                    self.anon_next += 1;
                }
            }
            Unit::Thp => {
                if self.thp_next == THP_EXTENTS {
                    return Err("out of reserved 2 MiB extents".into());
                }
                // SAFETY: inside the reserved, aligned mapping.
                unsafe { std::ptr::write_volatile(self.thp.add(self.thp_next * HPAGE), 1) };
                self.charged.push((unit, self.thp_next));
                self.thp_next += 1;
            }
            Unit::Mthp64k => {
                if self.mthp_next == MTHP_BLOCKS * 32 {
                    return Err("out of reserved 64 KiB extents".into());
                }
                // SAFETY: inside the reserved mapping.
                unsafe { std::ptr::write_volatile(self.mthp.add(self.mthp_next * 65536), 1) };
                self.charged.push((unit, self.mthp_next));
                self.mthp_next += 1;
                if self.mthp_next.is_multiple_of(32) {
                    self.mthp_next += 1;
                }
            }
            Unit::Shmem4k => {
                // SAFETY: memfd is ours; page is PAGE bytes.
                let n = unsafe {
                    libc::pwrite(
                        self.memfd,
                        self.page.as_ptr() as *const libc::c_void,
                        PAGE,
                        (self.shmem_next * PAGE) as libc::off_t,
                    )
                };
                if n != PAGE as isize {
                    return Err(format!("memfd write: {}", std::io::Error::last_os_error()));
                }
                self.charged.push((unit, self.shmem_next));
                self.shmem_next += 1;
            }
            Unit::OpenKeep => {
                if self.kept.len() == 48 {
                    return Err(
                        "at most 48 open_keep units a scenario (the fd table would grow)".into(),
                    );
                }
                let root = cstr("/");
                // SAFETY: valid path.
                let fd = unsafe {
                    libc::open(
                        root.as_ptr(),
                        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                    )
                };
                if fd < 0 {
                    return Err(format!("open /: {}", std::io::Error::last_os_error()));
                }
                self.charged.push((unit, self.kept.len()));
                self.kept.push(fd);
            }
            Unit::OpenClose => {
                // SAFETY: valid path; the descriptor is closed at once.
                unsafe {
                    let fd = libc::open(cg_stat.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(format!("open: {}", std::io::Error::last_os_error()));
                    }
                    libc::close(fd);
                }
            }
        }
        Ok(())
    }
}

unsafe fn map(len: usize) -> Result<*mut u8, String> {
    let p = libc::mmap(
        std::ptr::null_mut(),
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        -1,
        0,
    );
    if p == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    Ok(p as *mut u8)
}

/// Everything a scenario's reads touch, made before it enters its memcgs.
struct Ctx<'a> {
    name: &'a str,
    t0: Instant,
    tr: &'a Tracing,
    profile: &'a Profile,
    /// Per memcg: memory.stat and memory.current, open; cgroup.procs,
    /// open for writing; memory.stat's path for `reopen` reads.
    stat: BTreeMap<String, (Reread, Reread, std::fs::File, CString)>,
    buf: Vec<u8>,
    line: Vec<u8>,
    /// Reads so far.
    reads: usize,
}

fn run_scenario(
    s: &Scenario,
    base: &str,
    tr: &Tracing,
    profile: &Profile,
    mem: &mut Memory,
    cpus: usize,
    t0: Instant,
) -> Result<(), String> {
    let dir = format!("{base}/{}", s.name);
    mkdir(&dir)?;
    enable_memory(&dir)?;
    let mut ids = BTreeMap::new();
    ids.insert("..".to_string(), cgroup_id(base)?);
    ids.insert(".".to_string(), cgroup_id(&dir)?);
    // A move between two memcgs checks write access to their common
    // ancestor's cgroup.procs, which looks its inode up: an accounted
    // allocation charged to the memcg left, unless the file is open. The
    // scenario's own memcgs' files are opened below; these are the
    // ancestors' (docs/real-kernel-updates.md, section 6).
    let hold: Vec<std::fs::File> = [&dir, base]
        .iter()
        .filter_map(|d| std::fs::File::open(format!("{d}/cgroup.procs")).ok())
        .collect();
    let mut stat = BTreeMap::new();
    for cg in &s.cgroups {
        let d = format!("{dir}/{cg}");
        mkdir(&d)?;
        if s.cgroups.iter().any(|o| o.starts_with(&format!("{cg}/"))) {
            enable_memory(&d)?;
        }
        ids.insert(cg.clone(), cgroup_id(&d)?);
        let st = Reread::open(&format!("{d}/memory.stat"))?;
        let cur = Reread::open(&format!("{d}/memory.current"))?;
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("{d}/cgroup.procs"))
            .map_err(|e| format!("open {d}/cgroup.procs: {e}"))?;
        stat.insert(
            cg.clone(),
            (st, cur, procs, cstr(&format!("{d}/memory.stat"))),
        );
    }
    // The trace: the scenario's memcgs' updates; their flushes and gates
    // and those of every ancestor (a flush of an ancestor flushes them).
    let update: Vec<u64> = s.cgroups.iter().map(|c| ids[c]).collect();
    let mut flush = update.clone();
    flush.extend([ids["."], ids[".."], 1]);
    tr.filter(&update, &flush);
    let mut cx = Ctx {
        name: &s.name,
        t0,
        tr,
        profile,
        stat,
        buf: vec![0u8; 65536],
        line: vec![0u8; 4096],
        reads: 0,
    };
    cx.line.clear();
    // Warm every buffer and seq_file outside the scenario's memcgs.
    for (st, cur, _, _) in cx.stat.values() {
        st.read(&mut cx.buf);
        cur.read(&mut cx.buf);
    }
    let slot = |cache: &str| {
        std::fs::read_to_string(format!("/sys/kernel/slab/{cache}/slab_size"))
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            .unwrap_or(0)
    };
    let (filp_size, dentry_size) = (slot("filp"), slot("dentry"));
    // Printed now, outside the memcgs: formatting allocates.
    say(&format!(
        "FCP {{\"start\":{{\"s\":\"{}\",\"anon\":{},\"thp\":{},\"filp\":{},\"dentry\":{},\"ids\":{}}}}}",
        s.name,
        mem.anon_next,
        mem.thp_next,
        filp_size,
        dentry_size,
        serde_json::to_string(&ids).unwrap()
    ));
    let paths: BTreeMap<String, CString> = cx
        .stat
        .iter()
        .map(|(k, v)| (k.clone(), v.3.clone()))
        .collect();
    let fallback = cstr("/proc/self/stat");
    let mark = format!("fcp s {}", s.name);
    let _hold = hold;
    deep_stack();
    tr.mark(mark.as_bytes());
    // Nothing below allocates on the heap (a heap page faulted in would be
    // charged to the scenario's memcg), but for errors.
    let mut current: &str = "";
    for (i, op) in s.ops.iter().enumerate() {
        match op {
            Op::Pin { cpu } => pin(*cpu)?,
            Op::Enter { cg } => {
                // Through a descriptor opened outside the memcgs.
                let mut procs = &cx.stat.get(cg).ok_or_else(|| format!("no memcg {cg}"))?.2;
                procs
                    .write_all(b"0")
                    .map_err(|e| format!("enter {cg}: {e}"))?;
                current = cg.as_str();
            }
            Op::WaitPeriodic { settle_ms } => {
                wait_periodic(&cx);
                sleep_ms(*settle_ms);
                mem.lru_add_drain();
                cx.t0 = Instant::now();
            }
            Op::Charge {
                kind,
                n,
                n_by_cpus,
                read,
                every,
                reopen,
                trace: _,
            } => {
                let path = paths.get(current).unwrap_or(&fallback);
                for k in 1..=scenario::units_at(*n, n_by_cpus, cpus) {
                    mem.charge(*kind, path)?;
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            read_one(&mut cx, i, k, cg, *reopen)?;
                        }
                    }
                }
            }
            Op::Free {
                kind,
                n,
                read,
                every,
            } => {
                for k in 1..=*n {
                    mem.free(*kind)?;
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            read_one(&mut cx, i, k, cg, false)?;
                        }
                    }
                }
            }
            Op::Read { cg, reopen } => read_one(&mut cx, i, 0, cg, *reopen)?,
            Op::Poll { cg, ms, every_ms } => {
                let end = Instant::now() + std::time::Duration::from_millis(*ms);
                let mut k = 0;
                while Instant::now() < end {
                    sleep_ms(*every_ms);
                    read_one(&mut cx, i, k, cg, false)?;
                    k += 1;
                }
            }
        }
    }
    Ok(())
}

#[inline(never)]
fn deep_stack() {
    let mut a = [0u8; 256 * 1024];
    for i in (0..a.len()).step_by(PAGE) {
        a[i] = 1;
    }
    std::hint::black_box(&a);
}

fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

fn sleep_ms(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// Wait until `flush_memcg_stats_dwork()` has run once more (at most 5 s);
/// without its kprobe, wait one period and a little.
fn wait_periodic(cx: &Ctx) {
    let Some(before) = cx.profile.dwork() else {
        sleep_ms(2200);
        return;
    };
    let end = Instant::now() + std::time::Duration::from_secs(5);
    while Instant::now() < end {
        if cx.profile.dwork().unwrap_or(0) > before {
            return;
        }
        sleep_ms(5);
    }
}

fn read_one(cx: &mut Ctx, op: usize, n: usize, cg: &str, reopen: bool) -> Result<(), String> {
    let (st, cur, _, path) = cx.stat.get(cg).ok_or_else(|| format!("no memcg {cg}"))?;
    // The read's place in the trace, just before its gate.
    let line = &mut cx.line;
    line.clear();
    let _ = write!(line, "fcp r {} {}", cx.name, cx.reads);
    cx.tr.mark(line);
    let text: &[u8] = if reopen {
        let r = Reread::open(path.to_str().unwrap())?;
        let len = r.read(&mut cx.buf).len();
        drop(r);
        &cx.buf[..len]
    } else {
        st.read(&mut cx.buf)
    };
    let (anon, shmem, slab) = (
        field(text, "anon"),
        field(text, "shmem"),
        field(text, "slab"),
    );
    let mut cbuf = [0u8; 64];
    let current = std::str::from_utf8(cur.read(&mut cbuf))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let t = cx.t0.elapsed().as_micros() as u64;
    let line = &mut cx.line;
    line.clear();
    let _ = writeln!(
        line,
        "FCP {{\"read\":{{\"s\":\"{}\",\"op\":{op},\"n\":{n},\"cg\":\"{cg}\",\"t\":{t},\"i\":{},\"anon\":{},\"shmem\":{},\"slab\":{slab},\"cur\":{}}}}}",
        cx.name,
        cx.reads,
        anon / PAGE as u64,
        shmem / PAGE as u64,
        current / PAGE as u64
    );
    cx.reads += 1;
    // SAFETY: fd 1 is the console; the buffer is initialised.
    unsafe { libc::write(1, line.as_ptr() as *const libc::c_void, line.len()) };
    Ok(())
}
