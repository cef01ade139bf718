//! The guest and the host as the probe sees them: mounts, cgroup files,
//! and small system calls, none of them inside a scenario's memcgs.

use std::ffi::CString;
use std::io::Write;

use crate::trace::TRACEFS;

/// The kernfs id of a cgroup directory, as the trace names its memcg: the
/// directory's inode number.
pub(crate) fn cgroup_id(dir: &str) -> Result<u64, String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .map(|m| m.ino())
        .map_err(|e| format!("stat {dir}: {e}"))
}

/// The scenario names in the guest's `/plan.json` (`{"scenarios":[...]}`).
pub(crate) fn plan_names() -> Option<Vec<String>> {
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

pub(crate) fn mount_guest() -> Result<(), String> {
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

pub(crate) fn uname_release() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

pub(crate) fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in paths")
}

pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

pub(crate) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

pub(crate) fn write_file(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("write {text:?} to {path}: {e}"))
}

pub(crate) fn mkdir(path: &str) -> Result<(), String> {
    match std::fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("mkdir {path}: {e}")),
    }
}

pub(crate) fn enable_memory(dir: &str) -> Result<(), String> {
    let ctl = format!("{dir}/cgroup.subtree_control");
    let now = std::fs::read_to_string(&ctl).unwrap_or_default();
    if now.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    write_file(&ctl, "+memory")
}

pub(crate) fn remove_tree(dir: &str) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                remove_tree(&e.path().to_string_lossy());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}
