//! The kernel side of a charge: which `memcg_rstat_updated()` calls one
//! unit of a scenario makes, per kernel, in the order the kernel makes
//! them (docs/real-kernels.md, section 3, with the functions and the
//! kprobe traces that confirm each row).
//!
//! Two pieces of per-CPU kernel state decide where and when a call lands,
//! and both are simulated here: the LRU add batch (`cpu_fbatches.lru_add`,
//! `folio_add_lru()`: a folio's LRU update reaches its memcg only when the
//! batch drains) and the objcg stock (`memcg_stock`: `obj_cgroup_charge()`,
//! `refill_obj_stock()` and `mod_objcg_state()` hold kernel-memory bytes
//! and slab bytes back until they pass a page). What 6.1 and 6.12 differ
//! in: the batch size, `PGPGIN` (charged by `memcg1_charge_statistics()`
//! in 6.1 on cgroup v2 too, a stub with `CONFIG_MEMCG_V1` off in 6.12),
//! the unit of slab updates (bytes in 6.1; pages in 6.12, through
//! `memcg_state_val_in_pages()`), and when a `struct file` is freed (an
//! RCU callback in 6.1, at the last `fput()` in 6.12).

use super::spec::Unit;

/// `PAGE_SIZE`.
pub const PAGE_SIZE: i64 = 4096;

/// Pages in a PMD-sized THP.
pub const HPAGE_PMD_NR: i64 = 512;

/// Pages in a 64 KiB mTHP folio (order 4).
pub const MTHP_NR: i64 = 16;

/// The kernel a scenario runs on, as the model's side sees it: the release
/// whose update calls [`Cpu`] derives, and the release whose protocol the
/// model runs (the same, but for [`Kernel::with_break`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kernel {
    /// The release the updates are derived for, (major, minor).
    pub release: (u32, u32),
    /// The release whose protocol decides the flushes.
    pub protocol: (u32, u32),
}

impl Kernel {
    /// Linux 6.1 (Debian 6.1.192): the global-threshold lineage with
    /// 873f64b791a2, the model's `v6.0`.
    pub const L6_1: Kernel = Kernel::of(6, 1);
    /// Linux 6.12 (Debian 6.12.117): the per-memcg lineage of v6.8, the
    /// model's `v6.8`.
    pub const L6_12: Kernel = Kernel::of(6, 12);
    /// Linux 6.16 and later: the per-memcg lineage with the early `break`,
    /// the model's `v6.17`.
    pub const L6_17: Kernel = Kernel::of(6, 17);

    /// Release `major.minor`, its own protocol.
    pub const fn of(major: u32, minor: u32) -> Kernel {
        Kernel {
            release: (major, minor),
            protocol: (major, minor),
        }
    }

    /// The kernel of a release string (`uname -r`): 6.1 to 6.7 are the
    /// global lineage, 6.8 to 6.15 per memcg, 6.16 on with the break.
    pub fn from_release(release: &str) -> Result<Kernel, String> {
        let mut it = release.split(|c: char| !c.is_ascii_digit());
        let major: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let minor: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        match (major, minor) {
            (6, 1..) | (7, _) => Ok(Kernel::of(major, minor)),
            _ => Err(format!(
                "kernel release {release:?}: the real-kernel scenarios predict 6.1 to 7.x only"
            )),
        }
    }

    /// This release's updates under the early `break`'s protocol (v6.17):
    /// what the release would show with the break.
    pub fn with_break(self) -> Kernel {
        Kernel {
            protocol: self.protocol.max((6, 17)),
            ..self
        }
    }

    /// The release whose protocol runs, (major, minor).
    pub fn release(self) -> (u32, u32) {
        self.protocol
    }

    /// The catalogue variant whose protocol this kernel runs.
    pub fn variant(self) -> Result<crate::protocol::Variant, String> {
        let (major, minor) = self.protocol;
        crate::protocol::catalogue::for_release(major, minor)
    }

    /// Short name for tables.
    pub fn name(self) -> String {
        format!("{}.{}", self.release.0, self.release.1)
    }

    /// Whether the flush protocol is the global-threshold one.
    pub fn global(self) -> bool {
        self.protocol < (6, 8)
    }

    /// Whether the updates are derived for the global lineage's kernels
    /// (6.1: byte-valued slab updates, `PGPGIN` and `PGFAULT` first).
    fn old(self) -> bool {
        self.release < (6, 8)
    }

    /// `PAGEVEC_SIZE`: folios a per-CPU LRU add batch holds before it
    /// drains (include/linux/pagevec.h: 15 in 6.1, 31 from 6.4's
    /// folio_batch).
    pub fn lru_batch(self) -> usize {
        if self.old() {
            15
        } else {
            31
        }
    }

    /// Whether a charge counts `PGPGIN` (`memcg1_charge_statistics()`).
    fn pgpgin(self) -> bool {
        self.old()
    }

    /// The value `memcg_rstat_updated()` receives for a byte-sized item:
    /// the bytes in 6.1; `memcg_state_val_in_pages()` from v6.8.
    pub fn slab_val(self, bytes: i64) -> i64 {
        if self.old() {
            bytes
        } else {
            val_in_pages(bytes)
        }
    }

    /// Whether a `struct file` is freed by an RCU callback after its last
    /// `fput()` (6.1: `file_free()` calls `call_rcu()`), rather than at once.
    pub fn file_free_rcu(self) -> bool {
        self.old()
    }
}

impl Default for super::predict::Setup {
    fn default() -> Self {
        super::predict::Setup {
            lru_fill: 0,
            residual: 0,
            old_slab: 0,
            own_tables: 0,
        }
    }
}

/// mm/memcontrol.c v6.8 on, `memcg_state_val_in_pages()` of a byte-sized
/// item: `max(val * unit / PAGE_SIZE, 1UL)` with `unit` 1. The division is
/// unsigned, so a negative `val` wraps: the quotient, truncated to `int`,
/// is `-ceil(|val| / PAGE_SIZE)` (or one less when `|val|` is a multiple
/// of `PAGE_SIZE`), which only its magnitude reaches the counters through.
pub fn val_in_pages(bytes: i64) -> i64 {
    if bytes == 0 {
        return 0;
    }
    if bytes > 0 {
        return (bytes / PAGE_SIZE).max(1);
    }
    let wrapped = (bytes as i32 as u64) / PAGE_SIZE as u64;
    wrapped as u32 as i32 as i64
}

/// A statistic item, for traces and docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// `PGFAULT` (`count_memcg_event_mm()`).
    PgFault,
    /// `PGPGIN` (`memcg1_charge_statistics()`, 6.1).
    PgPgIn,
    /// `NR_ANON_MAPPED` (`__lruvec_stat_mod_folio()` from the rmap).
    AnonMapped,
    /// `NR_ANON_THPS`.
    AnonThps,
    /// `THP_FAULT_ALLOC`.
    ThpFaultAlloc,
    /// `NR_LRU_BASE + lru` (`update_lru_size()` when a batch drains).
    Lru,
    /// `NR_FILE_PAGES`.
    FilePages,
    /// `NR_SHMEM`.
    Shmem,
    /// `MEMCG_KMEM` (`memcg_account_kmem()`).
    Kmem,
    /// `NR_PAGETABLE`.
    PageTable,
    /// `NR_SLAB_UNRECLAIMABLE_B` (`mod_objcg_state()`'s stock flush).
    SlabUnreclaimableB,
    /// `NR_SLAB_RECLAIMABLE_B`.
    SlabReclaimableB,
}

/// One `memcg_rstat_updated()` call: `val` as the function receives it
/// (bytes for 6.1's slab items, pages otherwise), on `memcg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    /// The memcg charged (the model's memcg number).
    pub memcg: u8,
    /// The item.
    pub item: Item,
    /// The value passed to `memcg_rstat_updated()`.
    pub val: i64,
    /// Pages of `anon` this call adds to the memcg's memory.stat
    /// (`NR_ANON_MAPPED`), for the value bookkeeping.
    pub anon: i64,
}

/// The charged size of a slab object: its slot (`s->size`) plus the
/// `struct obj_cgroup *` that `obj_full_size()` adds.
pub fn obj_full_size(slab_size: i64) -> i64 {
    slab_size + 8
}

/// `sizeof(struct seq_file)` charged (120, in a 128-byte slot; only its
/// slot matters): `seq_open()`'s `kmem_cache_zalloc(seq_file_cache)`.
pub const SEQ_FILE: i64 = 128;

/// `seq_buf_alloc(PAGE_SIZE)`: `kvmalloc(.., GFP_KERNEL_ACCOUNT)` of the
/// first `seq_read()`, from kmalloc-4k.
pub const SEQ_BUF: i64 = 4096 + 8;

/// The CPU the scenario's task runs on: its LRU add batch and objcg stock.
#[derive(Clone, Debug)]
pub struct Cpu {
    kernel: Kernel,
    /// The folios waiting in `lru_add`: (memcg, pages).
    lru: Vec<(u8, i64)>,
    stock: Stock,
    /// The charged size of a `struct file` in this kernel.
    filp: i64,
    /// The charged size of a `struct dentry`.
    dentry: i64,
    /// `struct file`s closed and not yet freed (6.1's RCU callbacks).
    rcu_pending: Vec<u8>,
    /// `obj_cgroup_charge()` calls so far (what the probe's kprobe on it
    /// counts).
    pub objcg_charges: u64,
}

/// `struct memcg_stock_pcp`'s object part.
#[derive(Clone, Debug, Default)]
struct Stock {
    cached: Option<u8>,
    nr_bytes: i64,
    /// `nr_slab_unreclaimable_b`.
    slab_b: i64,
    /// `nr_slab_reclaimable_b`.
    slab_rb: i64,
    /// Per memcg, `objcg->nr_charged_bytes` left by a drain.
    charged_bytes: Vec<(u8, i64)>,
}

impl Cpu {
    /// CPU state at a scenario's start: the LRU batch holds `foreign`
    /// folios of `other` (a memcg outside the scenario), the objcg stock
    /// caches `other`'s objcg with `old_slab` slab bytes not yet flushed,
    /// and `slots` are the slot sizes of `struct file` and `struct dentry`
    /// (0: this kernel's default).
    pub fn new(
        kernel: Kernel,
        foreign: usize,
        other: u8,
        old_slab: i64,
        slots: (i64, i64),
    ) -> Self {
        let or = |v: i64, d: i64| obj_full_size(if v > 0 { v } else { d });
        Cpu {
            kernel,
            lru: vec![(other, 1); foreign],
            stock: Stock {
                cached: Some(other),
                slab_b: old_slab,
                ..Stock::default()
            },
            filp: or(slots.0, default_filp_slot(kernel)),
            dentry: or(slots.1, DENTRY_SLOT),
            rcu_pending: Vec::new(),
            objcg_charges: 0,
        }
    }

    /// The calls one unit charged to `memcg` makes, appended to `out`.
    pub fn unit(&mut self, unit: Unit, memcg: u8, out: &mut Vec<Update>) {
        let k = self.kernel;
        let up = |item, val, anon| Update {
            memcg,
            item,
            val,
            anon,
        };
        match unit {
            Unit::Anon4k => {
                // do_anonymous_page(): 6.1 counts PGFAULT at the start of
                // handle_mm_fault() and PGPGIN at the charge; 6.12 counts
                // PGFAULT in mm_account_fault() at the end.
                if k.old() {
                    out.push(up(Item::PgFault, 1, 0));
                }
                if k.pgpgin() {
                    out.push(up(Item::PgPgIn, 1, 0));
                }
                out.push(up(Item::AnonMapped, 1, 1));
                self.lru_add(memcg, 1, out);
                if !k.old() {
                    out.push(up(Item::PgFault, 1, 0));
                }
            }
            Unit::Thp => {
                // do_huge_pmd_anonymous_page(): the charge, the deposited
                // page table (kmem page, NR_PAGETABLE), the rmap, the LRU
                // (a large folio drains the batch at once), the events.
                if k.old() {
                    out.push(up(Item::PgFault, 1, 0));
                }
                if k.pgpgin() {
                    out.push(up(Item::PgPgIn, 1, 0));
                }
                out.push(up(Item::Kmem, 1, 0));
                out.push(up(Item::PageTable, 1, 0));
                out.push(up(Item::AnonThps, HPAGE_PMD_NR, 0));
                out.push(up(Item::AnonMapped, HPAGE_PMD_NR, HPAGE_PMD_NR));
                self.lru_add(memcg, HPAGE_PMD_NR, out);
                self.lru_drain(out);
                out.push(up(Item::ThpFaultAlloc, 1, 0));
                if !k.old() {
                    out.push(up(Item::PgFault, 1, 0));
                }
            }
            Unit::Mthp64k if k.old() => self.unit(Unit::Anon4k, memcg, out),
            Unit::Mthp64k => {
                // do_anonymous_page() with alloc_anon_folio() of order 4: the
                // rmap, the LRU (a large folio drains the batch), PGFAULT.
                out.push(up(Item::AnonMapped, MTHP_NR, MTHP_NR));
                self.lru_add(memcg, MTHP_NR, out);
                self.lru_drain(out);
                out.push(up(Item::PgFault, 1, 0));
            }
            Unit::Shmem4k => {
                // shmem_add_to_page_cache() under the charge, then the LRU.
                if k.pgpgin() {
                    out.push(up(Item::PgPgIn, 1, 0));
                }
                out.push(up(Item::FilePages, 1, 0));
                out.push(up(Item::Shmem, 1, 0));
                self.lru_add(memcg, 1, out);
            }
            Unit::OpenKeep => {
                // path_openat(): alloc_empty_file(), then ->open() =
                // dcache_dir_open(): d_alloc_cursor().
                self.free_rcu(out);
                self.slab_alloc(memcg, self.filp, out);
                self.obj_cgroup_charge(memcg, self.dentry, out);
                self.mod_objcg_state_item(memcg, Item::SlabReclaimableB, self.dentry, out);
            }
            Unit::OpenClose => {
                self.free_rcu(out);
                self.open_stat(memcg, out);
                self.close_stat(memcg, false, out);
            }
        }
    }

    /// A memory.stat read that opens and closes the file: `struct file`,
    /// seq_file, the seq buffer of the first read, then their frees.
    /// `before_gate` receives the calls made before the read's
    /// `mem_cgroup_flush_stats()`, `after` the rest.
    pub fn reopen_read(
        &mut self,
        memcg: u8,
        before_gate: &mut Vec<Update>,
        after: &mut Vec<Update>,
    ) {
        self.free_rcu(before_gate);
        self.open_stat(memcg, before_gate);
        // seq_read() -> seq_buf_alloc() before ->show() = memory_stat_show().
        self.slab_alloc(memcg, SEQ_BUF, before_gate);
        self.close_stat(memcg, true, after);
    }

    fn open_stat(&mut self, memcg: u8, out: &mut Vec<Update>) {
        self.slab_alloc(memcg, self.filp, out);
        self.slab_alloc(memcg, SEQ_FILE, out);
    }

    fn close_stat(&mut self, memcg: u8, buf: bool, out: &mut Vec<Update>) {
        // seq_release(): kvfree(m->buf), then kmem_cache_free(seq_file).
        if buf {
            self.slab_free(memcg, SEQ_BUF, out);
        }
        self.slab_free(memcg, SEQ_FILE, out);
        // __fput() -> file_free(): at once in 6.12, an RCU callback in 6.1.
        if self.kernel.file_free_rcu() {
            self.rcu_pending.push(memcg);
        } else {
            self.slab_free(memcg, self.filp, out);
        }
    }

    /// 6.1's RCU callbacks freeing closed `struct file`s.
    ///
    /// NOTE(kernel): they run after a grace period, whose end the model
    /// does not know; here they run at the task's next open, one choice of
    /// the many the kernel may make (docs/real-kernels.md, section 4).
    fn free_rcu(&mut self, out: &mut Vec<Update>) {
        for m in std::mem::take(&mut self.rcu_pending) {
            let filp = self.filp;
            self.slab_free(m, filp, out);
        }
    }

    /// `folio_add_lru()`: into the per-CPU batch; drained when full.
    fn lru_add(&mut self, memcg: u8, pages: i64, out: &mut Vec<Update>) {
        self.lru.push((memcg, pages));
        if self.lru.len() >= self.kernel.lru_batch() {
            self.lru_drain(out);
        }
    }

    /// `folio_batch_move_lru()`: each folio's `update_lru_size()`.
    fn lru_drain(&mut self, out: &mut Vec<Update>) {
        for (memcg, pages) in self.lru.drain(..) {
            out.push(Update {
                memcg,
                item: Item::Lru,
                val: pages,
                anon: 0,
            });
        }
    }

    /// An accounted slab allocation of `size` charged bytes:
    /// `obj_cgroup_charge()` in the pre-alloc hook, `mod_objcg_state()` in
    /// the post-alloc hook.
    fn slab_alloc(&mut self, memcg: u8, size: i64, out: &mut Vec<Update>) {
        self.obj_cgroup_charge(memcg, size, out);
        self.mod_objcg_state(memcg, size, out);
    }

    /// `memcg_slab_free_hook()`: `obj_cgroup_uncharge()`, then
    /// `mod_objcg_state()` with the negative size.
    fn slab_free(&mut self, memcg: u8, size: i64, out: &mut Vec<Update>) {
        self.refill_obj_stock(memcg, size, true, out);
        self.mod_objcg_state(memcg, -size, out);
    }

    /// Switch the stock to `memcg`'s objcg (`drain_obj_stock()` of the old
    /// one: its slab bytes flushed to its memcg, its bytes kept in
    /// `objcg->nr_charged_bytes`).
    fn switch(&mut self, memcg: u8, out: &mut Vec<Update>) -> bool {
        if self.stock.cached == Some(memcg) {
            return false;
        }
        if let Some(old) = self.stock.cached {
            for (item, b) in [
                (Item::SlabReclaimableB, self.stock.slab_rb),
                (Item::SlabUnreclaimableB, self.stock.slab_b),
            ] {
                if b != 0 {
                    out.push(Update {
                        memcg: old,
                        item,
                        val: self.kernel.slab_val(b),
                        anon: 0,
                    });
                }
            }
            let left = self.stock.nr_bytes;
            let pages = left / PAGE_SIZE;
            if pages > 0 {
                out.push(Update {
                    memcg: old,
                    item: Item::Kmem,
                    val: -pages,
                    anon: 0,
                });
            }
            let rest = left % PAGE_SIZE;
            set_charged(&mut self.stock.charged_bytes, old, rest);
        }
        let mine = take_charged(&mut self.stock.charged_bytes, memcg);
        self.stock = Stock {
            cached: Some(memcg),
            nr_bytes: mine,
            slab_b: 0,
            slab_rb: 0,
            charged_bytes: std::mem::take(&mut self.stock.charged_bytes),
        };
        true
    }

    /// `obj_cgroup_charge()`: from the stock if it holds enough bytes of
    /// this objcg, else whole pages (`memcg_account_kmem()`), the rest of
    /// the last page refilled into the stock.
    fn obj_cgroup_charge(&mut self, memcg: u8, size: i64, out: &mut Vec<Update>) {
        self.objcg_charges += 1;
        if self.stock.cached == Some(memcg) && self.stock.nr_bytes >= size {
            self.stock.nr_bytes -= size;
            return;
        }
        let mut pages = size / PAGE_SIZE;
        let bytes = size % PAGE_SIZE;
        if bytes != 0 {
            pages += 1;
        }
        out.push(Update {
            memcg,
            item: Item::Kmem,
            val: pages,
            anon: 0,
        });
        if bytes != 0 {
            self.refill_obj_stock(memcg, PAGE_SIZE - bytes, false, out);
        }
    }

    /// `refill_obj_stock()`: bytes back into the stock; past a page, whole
    /// pages are uncharged (`memcg_account_kmem()` negative) when allowed.
    fn refill_obj_stock(
        &mut self,
        memcg: u8,
        bytes: i64,
        allow_uncharge: bool,
        out: &mut Vec<Update>,
    ) {
        let allow = self.switch(memcg, out) || allow_uncharge;
        self.stock.nr_bytes += bytes;
        if allow && self.stock.nr_bytes > PAGE_SIZE {
            let pages = self.stock.nr_bytes / PAGE_SIZE;
            self.stock.nr_bytes %= PAGE_SIZE;
            out.push(Update {
                memcg,
                item: Item::Kmem,
                val: -pages,
                anon: 0,
            });
        }
    }

    /// `mod_objcg_state()`: slab bytes held in the stock, flushed to the
    /// memcg once they pass `PAGE_SIZE` either way (the first value after
    /// a flush is held whatever its size).
    fn mod_objcg_state(&mut self, memcg: u8, nr: i64, out: &mut Vec<Update>) {
        self.mod_objcg_state_item(memcg, Item::SlabUnreclaimableB, nr, out);
    }

    fn mod_objcg_state_item(&mut self, memcg: u8, item: Item, nr: i64, out: &mut Vec<Update>) {
        self.switch(memcg, out);
        let b = if item == Item::SlabReclaimableB {
            &mut self.stock.slab_rb
        } else {
            &mut self.stock.slab_b
        };
        let flush = if *b == 0 {
            *b = nr;
            0
        } else {
            *b += nr;
            if b.abs() > PAGE_SIZE {
                std::mem::take(b)
            } else {
                0
            }
        };
        if flush != 0 {
            out.push(Update {
                memcg,
                item,
                val: self.kernel.slab_val(flush),
                anon: 0,
            });
        }
    }
}

fn set_charged(v: &mut Vec<(u8, i64)>, m: u8, bytes: i64) {
    v.retain(|(x, _)| *x != m);
    if bytes != 0 {
        v.push((m, bytes));
    }
}

fn take_charged(v: &mut Vec<(u8, i64)>, m: u8) -> i64 {
    let got = v
        .iter()
        .find(|(x, _)| *x == m)
        .map(|(_, b)| *b)
        .unwrap_or(0);
    v.retain(|(x, _)| *x != m);
    got
}

/// `struct dentry`'s slot size (192 in both kernels) when the probe could
/// not read it.
pub const DENTRY_SLOT: i64 = 192;

/// `struct file`'s slot size when the probe could not read it: 256 in
/// 6.1, 192 in 6.12 (`sizeof(struct file)` 232 and 184 in Debian's builds).
pub fn default_filp_slot(kernel: Kernel) -> i64 {
    if kernel.old() {
        256
    } else {
        192
    }
}
