//! `flushprobe`: runs the real-kernel scenarios of memcg-flush-model.
//!
//! As a guest's `/init` (pid 1) it mounts what it needs, runs the scenarios
//! the harness put in `/plan.json` (every scenario if there is none),
//! prints one `FCP {json}` line per read, and powers the guest off. As root
//! on the machine's own kernel (`flushprobe --host`), it runs them below a
//! cgroup of its own and removes it again.
//!
//! Each scenario runs in memcgs of its own below `<base>/<scenario>`, with
//! every file it needs opened and every buffer allocated before it enters
//! them, so that what a memcg is charged is the scenario's charges and
//! nothing of the probe's own (docs/real-kernels.md).

// The scenario types are the model crate's own (`memcg_flush_model::oracle::spec`):
// the same file, compiled here as a module, so the probe needs no copy.
#[allow(dead_code)] // the model crate uses every item; the probe only some
#[path = "../../model/oracle/spec.rs"]
mod scenario;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::time::Instant;

use scenario::{Done, Hello, Op, Scenario, Unit};

const PAGE: usize = 4096;
const HPAGE: usize = 2 << 20;
/// 4 KiB pages reserved for anonymous charges (virtual only until touched).
const ANON_PAGES: usize = 16384;
/// 2 MiB extents reserved for THP charges.
const THP_EXTENTS: usize = 24;
const TRACEFS: &str = "/sys/kernel/tracing";
const MTHP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled";
/// 2 MiB blocks reserved for 64 KiB mTHP charges (31 usable extents each).
const MTHP_BLOCKS: usize = 4;

/// The kprobes the probe asks for: (event name, kernel symbol). Missing
/// symbols (inlined, renamed) are skipped and reported in `Hello`.
/// Each with the arguments a trace records (x86-64: di, si, dx, cx).
const KPROBES: &[(&str, &str, &str)] = &[
    ("dwork", "flush_memcg_stats_dwork", ""),
    ("flush", "cgroup_rstat_flush", ""),
    ("flush_irqsafe", "cgroup_rstat_flush_irqsafe", ""),
    (
        "mod_memcg_state",
        "__mod_memcg_state",
        " m=%di idx=%si:s32 val=%dx:s32",
    ),
    (
        "mod_memcg_lruvec_state",
        "__mod_memcg_lruvec_state",
        " l=%di idx=%si:s32 val=%dx:s32",
    ),
    (
        "mod_lruvec_state",
        "__mod_lruvec_state",
        " l=%di idx=%si:s32 val=%dx:s32",
    ),
    (
        "count_memcg_events",
        "__count_memcg_events",
        " m=%di idx=%si:s32 val=%dx:s64",
    ),
    (
        "mod_objcg_state",
        "mod_objcg_state",
        " o=%di idx=%dx:s32 val=%cx:s32",
    ),
    ("objcg_charge", "obj_cgroup_charge", " o=%di n=%dx:u64"),
    ("objcg_uncharge", "obj_cgroup_uncharge", " o=%di n=%si:u64"),
    ("account_kmem", "memcg_account_kmem", " m=%di n=%si:s32"),
];

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
    let kp = Kprobes::register();
    let hello = Hello {
        release: uname_release(),
        // SAFETY: sysconf has no preconditions.
        cpus: unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as usize,
        kprobes: kp.names.iter().map(|(_, sym)| sym.clone()).collect(),
        thp: std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default()
            .trim()
            .to_string(),
        mthp: std::fs::read_to_string(MTHP_ENABLED)
            .unwrap_or_default()
            .trim()
            .to_string(),
    };
    say(&format!(
        "FCP {{\"hello\":{}}}",
        serde_json::to_string(&hello).unwrap()
    ));
    let mut mem = Memory::new()?;
    let root_procs = format!("{root}/cgroup.procs");
    for s in chosen {
        let t0 = Instant::now();
        let mthp_was = std::fs::read_to_string(MTHP_ENABLED).ok();
        if s.mthp && mthp_was.is_some() {
            let _ = write_file(MTHP_ENABLED, "always");
        }
        let res = run_scenario(s, &base, &kp, &mut mem, t0);
        if let (true, Some(was)) = (s.mthp, &mthp_was) {
            // The file shows "always [inherit] madvise never": restore the
            // bracketed one.
            let cur = was
                .split_whitespace()
                .find(|w| w.starts_with('['))
                .unwrap_or("[never]");
            let _ = write_file(MTHP_ENABLED, cur.trim_matches(|c| c == '[' || c == ']'));
        }
        // Back to the root (or where the host probe started) before the next.
        let _ = write_file(&root_procs, "0");
        mem.close_kept();
        let done = Done {
            s: s.name.clone(),
            ok: res.is_ok(),
            error: res.err().unwrap_or_default(),
            t: t0.elapsed().as_micros() as u64,
        };
        say(&format!(
            "FCP {{\"done\":{}}}",
            serde_json::to_string(&done).unwrap()
        ));
    }
    if !guest {
        remove_tree(&base);
    }
    kp.unregister();
    say("FCP {\"end\":true}");
    Ok(())
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
    ] {
        let _ = std::fs::create_dir_all(dir);
        let (s, d, f) = (cstr(src), cstr(dir), cstr(fs));
        // SAFETY: valid NUL-terminated strings, no data argument.
        let rc = unsafe { libc::mount(s.as_ptr(), d.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
        if rc != 0 && fs != "tracefs" {
            return Err(format!(
                "mount {fs} on {dir}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // A guest under 512 MiB starts with THP off ("disabled by default on
    // small systems", hugepage_init()); the THP scenarios madvise.
    let _ = write_file("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
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

/// The kprobes that registered, counted through `kprobe_profile`.
struct Kprobes {
    /// (event name, symbol).
    names: Vec<(String, String)>,
    profile: Option<Reread>,
}

impl Kprobes {
    fn register() -> Self {
        let events = format!("{TRACEFS}/kprobe_events");
        let mut names = Vec::new();
        if std::fs::metadata(&events).is_ok() {
            let _ = write_file(&format!("{TRACEFS}/tracing_on"), "0");
            let _ = write_file(&format!("{TRACEFS}/tracing_cpumask"), "1");
            for (ev, sym, args) in KPROBES {
                let def = format!("p:fcp/{ev} {sym}{args}\n");
                let ok = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&events)
                    .and_then(|mut f| f.write_all(def.as_bytes()))
                    .is_ok();
                if ok {
                    names.push((ev.to_string(), sym.to_string()));
                }
            }
            let _ = write_file(&format!("{TRACEFS}/events/fcp/enable"), "1");
        }
        let profile = if names.is_empty() {
            None
        } else {
            Reread::open(&format!("{TRACEFS}/kprobe_profile")).ok()
        };
        Kprobes { names, profile }
    }

    fn has(&self, ev: &str) -> bool {
        self.names.iter().any(|(e, _)| e == ev)
    }

    /// Hits per event, in `names` order, into `out`.
    fn sample(&self, buf: &mut [u8], out: &mut [u64]) {
        out.iter_mut().for_each(|x| *x = 0);
        let Some(p) = &self.profile else { return };
        let text = p.read(buf);
        for line in text.split(|&b| b == b'\n') {
            let mut it = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
            let (Some(name), Some(hits)) = (it.next(), it.next()) else {
                continue;
            };
            let name = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
            if let Some(i) = self.names.iter().position(|(e, _)| e.as_bytes() == name) {
                out[i] = std::str::from_utf8(hits)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
            }
        }
    }

    fn unregister(&self) {
        if self.names.is_empty() {
            return;
        }
        let _ = write_file(&format!("{TRACEFS}/events/fcp/enable"), "0");
        for (ev, _) in &self.names {
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .open(format!("{TRACEFS}/kprobe_events"))
                .and_then(|mut f| f.write_all(format!("-:fcp/{ev}\n").as_bytes()));
        }
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
            })
        }
    }

    /// Close what `OpenKeep` opened.
    fn close_kept(&mut self) {
        for fd in self.kept.drain(..) {
            // SAFETY: our descriptors.
            unsafe { libc::close(fd) };
        }
    }

    fn charge(&mut self, unit: Unit, cg_stat: &std::ffi::CStr) -> Result<(), String> {
        match unit {
            Unit::Anon4k => {
                if self.anon_next == ANON_PAGES {
                    return Err("out of reserved 4 KiB pages".into());
                }
                // SAFETY: inside the reserved mapping.
                unsafe { std::ptr::write_volatile(self.anon.add(self.anon_next * PAGE), 1) };
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
                self.thp_next += 1;
            }
            Unit::Mthp64k => {
                if self.mthp_next == MTHP_BLOCKS * 32 {
                    return Err("out of reserved 64 KiB extents".into());
                }
                // SAFETY: inside the reserved mapping.
                unsafe { std::ptr::write_volatile(self.mthp.add(self.mthp_next * 65536), 1) };
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
    kp: &'a Kprobes,
    /// Per memcg: memory.stat and memory.current, open; cgroup.procs,
    /// open for writing; memory.stat's path for `reopen` reads.
    stat: BTreeMap<String, (Reread, Reread, std::fs::File, CString)>,
    buf: Vec<u8>,
    kbuf: Vec<u8>,
    before: Vec<u64>,
    after: Vec<u64>,
    start: Vec<u64>,
    line: Vec<u8>,
}

fn run_scenario(
    s: &Scenario,
    base: &str,
    kp: &Kprobes,
    mem: &mut Memory,
    t0: Instant,
) -> Result<(), String> {
    let dir = format!("{base}/{}", s.name);
    mkdir(&dir)?;
    enable_memory(&dir)?;
    let mut stat = BTreeMap::new();
    for cg in &s.cgroups {
        let d = format!("{dir}/{cg}");
        mkdir(&d)?;
        if s.cgroups.iter().any(|o| o.starts_with(&format!("{cg}/"))) {
            enable_memory(&d)?;
        }
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
    let n = kp.names.len();
    let mut cx = Ctx {
        name: &s.name,
        t0,
        kp,
        stat,
        buf: vec![0u8; 65536],
        kbuf: vec![0u8; 16384],
        before: vec![0; n],
        after: vec![0; n],
        start: vec![0; n],
        line: vec![0u8; 4096],
    };
    cx.line.clear();
    // Warm every buffer and seq_file outside the scenario's memcgs.
    for (st, cur, _, _) in cx.stat.values() {
        st.read(&mut cx.buf);
        cur.read(&mut cx.buf);
    }
    kp.sample(&mut cx.kbuf, &mut cx.start);
    let slot = |cache: &str| {
        std::fs::read_to_string(format!("/sys/kernel/slab/{cache}/slab_size"))
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            .unwrap_or(0)
    };
    let (filp_size, dentry_size) = (slot("filp"), slot("dentry"));
    // Printed now, outside the memcgs: formatting allocates.
    say(&format!(
        "FCP {{\"start\":{{\"s\":\"{}\",\"anon\":{},\"thp\":{},\"filp\":{},\"dentry\":{}}}}}",
        s.name, mem.anon_next, mem.thp_next, filp_size, dentry_size
    ));
    let paths: BTreeMap<String, CString> = cx
        .stat
        .iter()
        .map(|(k, v)| (k.clone(), v.3.clone()))
        .collect();
    let fallback = cstr("/proc/self/stat");
    deep_stack();
    // Nothing below allocates on the heap (a heap page faulted in would be
    // charged to the scenario's memcg), but for errors.
    let mut current: &str = "";
    for (i, op) in s.ops.iter().enumerate() {
        match op {
            Op::Pin { cpu } => pin(*cpu)?,
            Op::Enter { cg } => {
                // Through a descriptor opened outside the memcgs: entering
                // allocates nothing the scenario's memcgs are charged.
                let mut procs = &cx.stat.get(cg).ok_or_else(|| format!("no memcg {cg}"))?.2;
                procs
                    .write_all(b"0")
                    .map_err(|e| format!("enter {cg}: {e}"))?;
                current = cg.as_str();
            }
            Op::WaitPeriodic { settle_ms } => {
                kp.sample(&mut cx.kbuf, &mut cx.start);
                wait_periodic(&mut cx);
                sleep_ms(*settle_ms);
                kp.sample(&mut cx.kbuf, &mut cx.start);
                cx.t0 = Instant::now();
            }
            Op::Charge {
                kind,
                n,
                n_by_cpus,
                read,
                every,
                reopen,
                trace,
            } => {
                let path = paths.get(current).unwrap_or(&fallback);
                // SAFETY: sysconf has no preconditions.
                let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as usize;
                for k in 1..=scenario::units_at(*n, n_by_cpus, cpus) {
                    if k <= *trace {
                        trace_unit(k, true);
                    }
                    mem.charge(*kind, path)?;
                    if let Some(cg) = read {
                        if *every > 0 && k % every == 0 {
                            read_one(&mut cx, i, k, cg, *reopen)?;
                        }
                    }
                    if k <= *trace {
                        trace_unit(k, false);
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

/// Around unit `k`: tracing on and a marker before, tracing off and the
/// trace printed as `FCT` lines after (diagnosis only: this allocates).
fn trace_unit(k: usize, before: bool) {
    if before {
        let _ = write_file(&format!("{TRACEFS}/trace"), "");
        let _ = write_file(&format!("{TRACEFS}/tracing_on"), "1");
        let _ = write_file(&format!("{TRACEFS}/trace_marker"), &format!("fcp unit {k}"));
    } else {
        let _ = write_file(&format!("{TRACEFS}/tracing_on"), "0");
        let text = std::fs::read_to_string(format!("{TRACEFS}/trace")).unwrap_or_default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            say(&format!("FCT {k} {}", line.trim()));
        }
    }
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
fn wait_periodic(cx: &mut Ctx) {
    let Some(d) = cx.kp.names.iter().position(|(e, _)| e == "dwork") else {
        sleep_ms(2200);
        return;
    };
    let before = cx.start[d];
    let end = Instant::now() + std::time::Duration::from_secs(5);
    while Instant::now() < end {
        cx.kp.sample(&mut cx.kbuf, &mut cx.after);
        if cx.after[d] > before {
            return;
        }
        sleep_ms(5);
    }
}

fn read_one(cx: &mut Ctx, op: usize, n: usize, cg: &str, reopen: bool) -> Result<(), String> {
    cx.kp.sample(&mut cx.kbuf, &mut cx.before);
    let (st, cur, _, path) = cx.stat.get(cg).ok_or_else(|| format!("no memcg {cg}"))?;
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
    cx.kp.sample(&mut cx.kbuf, &mut cx.after);
    let t = cx.t0.elapsed().as_micros() as u64;
    let kp = cx.kp;
    let idx = |ev: &str| kp.names.iter().position(|(e, _)| e == ev);
    let delta = |v: &[u64], w: &[u64], ev: &str| idx(ev).map(|i| v[i].saturating_sub(w[i]));
    let line = &mut cx.line;
    line.clear();
    let _ = write!(
        line,
        "FCP {{\"read\":{{\"s\":\"{}\",\"op\":{op},\"n\":{n},\"cg\":\"{cg}\",\"t\":{t},\"anon\":{},\"shmem\":{},\"slab\":{slab},\"cur\":{}",
        cx.name,
        anon / PAGE as u64,
        shmem / PAGE as u64,
        current / PAGE as u64
    );
    if kp.has("dwork") {
        let flushes = delta(&cx.after, &cx.before, "flush").unwrap_or(0)
            + delta(&cx.after, &cx.before, "flush_irqsafe").unwrap_or(0);
        let periodic = delta(&cx.after, &cx.before, "dwork").unwrap_or(0);
        let _ = write!(
            line,
            ",\"flushed\":{},\"dwork\":{}",
            flushes.saturating_sub(periodic),
            delta(&cx.after, &cx.start, "dwork").unwrap_or(0)
        );
    }
    if !kp.names.is_empty() {
        let _ = write!(line, ",\"k\":{{");
        for (i, (ev, _)) in kp.names.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(
                line,
                "{sep}\"{ev}\":{}",
                cx.before[i].saturating_sub(cx.start[i])
            );
        }
        let _ = write!(line, "}}");
    }
    let _ = writeln!(line, "}}}}");
    // SAFETY: fd 1 is the console; the buffer is initialised.
    unsafe { libc::write(1, line.as_ptr() as *const libc::c_void, line.len()) };
    Ok(())
}
