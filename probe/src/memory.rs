//! The scenario's units in memory: anonymous pages, mTHP and PMD THP
//! extents, shmem, page cache and slab, each mapped or opened before the
//! scenario enters its memcgs, and freed by `free` (docs/real-kernels.md,
//! section 3).

use crate::reread::Reread;
use crate::scenario::Unit;
use crate::sys::*;
use crate::trace::{Tracing, TRACEFS};
use crate::{ANON_PAGES, HPAGE, MTHP_BLOCKS, PAGE, THP_EXTENTS};

/// The periodic work's kprobe hits, counted through `kprobe_profile`
/// (opened and first read outside any scenario's memcg, so that rereading
/// it allocates nothing).
pub(crate) struct Profile {
    pub(crate) file: Option<Reread>,
    pub(crate) buf: std::cell::RefCell<Vec<u8>>,
}

impl Profile {
    pub(crate) fn open(tr: &Tracing) -> Profile {
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
    pub(crate) fn dwork(&self) -> Option<u64> {
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
pub(crate) struct Memory {
    pub(crate) mthp: *mut u8,
    /// Next 64 KiB extent (extent 0 of each block is skipped).
    pub(crate) mthp_next: usize,
    pub(crate) anon: *mut u8,
    pub(crate) anon_next: usize,
    pub(crate) thp: *mut u8,
    pub(crate) thp_next: usize,
    pub(crate) memfd: i32,
    pub(crate) shmem_next: usize,
    pub(crate) page: Vec<u8>,
    pub(crate) kept: Vec<i32>,
    /// What this scenario charged, newest last, for `free`: (unit, index
    /// of its page, extent or descriptor slot). Reserved before the
    /// scenario: pushing within the capacity allocates nothing.
    pub(crate) charged: Vec<(Unit, usize)>,
}

pub(crate) fn align(p: *mut u8, to: usize) -> *mut u8 {
    ((p as usize + to - 1) & !(to - 1)) as *mut u8
}

impl Memory {
    pub(crate) fn new() -> Result<Self, String> {
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
    pub(crate) fn free(&mut self, unit: Unit) -> Result<(), String> {
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
    pub(crate) fn lru_add_drain(&self) {
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
    pub(crate) fn close_kept(&mut self) {
        self.charged.clear();
        for fd in self.kept.drain(..).filter(|fd| *fd >= 0) {
            // SAFETY: our descriptors.
            unsafe { libc::close(fd) };
        }
    }

    pub(crate) fn charge(&mut self, unit: Unit, cg_stat: &std::ffi::CStr) -> Result<(), String> {
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
