//! One scenario: its memcgs made and entered, its ops run in order, each
//! read printed as an `FCP` line, and the memcgs left and removed.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::time::Instant;

use crate::memory::{Memory, Profile};
use crate::reread::{field, Reread};
use crate::scenario::{self, Op, Scenario};
use crate::sys::*;
use crate::trace::Tracing;
use crate::PAGE;

/// Everything a scenario's reads touch, made before it enters its memcgs.
pub(crate) struct Ctx<'a> {
    pub(crate) name: &'a str,
    pub(crate) t0: Instant,
    pub(crate) tr: &'a Tracing,
    pub(crate) profile: &'a Profile,
    /// Per memcg: memory.stat and memory.current, open; cgroup.procs,
    /// open for writing; memory.stat's path for `reopen` reads.
    pub(crate) stat: BTreeMap<String, (Reread, Reread, std::fs::File, CString)>,
    pub(crate) buf: Vec<u8>,
    pub(crate) line: Vec<u8>,
    /// Reads so far.
    pub(crate) reads: usize,
}

pub(crate) fn run_scenario(
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
pub(crate) fn deep_stack() {
    let mut a = [0u8; 256 * 1024];
    for i in (0..a.len()).step_by(PAGE) {
        a[i] = 1;
    }
    std::hint::black_box(&a);
}

pub(crate) fn pin(cpu: usize) -> Result<(), String> {
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

pub(crate) fn sleep_ms(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// Wait until `flush_memcg_stats_dwork()` has run once more (at most 5 s);
/// without its kprobe, wait one period and a little.
pub(crate) fn wait_periodic(cx: &Ctx) {
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

pub(crate) fn read_one(
    cx: &mut Ctx,
    op: usize,
    n: usize,
    cg: &str,
    reopen: bool,
) -> Result<(), String> {
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
