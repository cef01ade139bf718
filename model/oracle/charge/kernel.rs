//! The releases as the derivation sees them: [`Kernel`] and what each
//! release decides (the table of [`super`]), the statistic items, one
//! update call.

/// `PAGE_SIZE`.
pub const PAGE_SIZE: i64 = 4096;

/// Pages in a PMD-sized THP.
pub const HPAGE_PMD_NR: i64 = 512;

/// Pages in a 64 KiB mTHP folio (order 4).
pub const MTHP_NR: i64 = 16;

/// `NR_OBJ_STOCK`: the objcgs one CPU's stock caches from 7.2.
pub const NR_OBJ_STOCK: usize = 5;

/// The kernel a scenario runs on, as the model's side sees it: the release
/// whose update calls [`Cpu`](super::Cpu) derives, and the release whose protocol the
/// model runs (the same, but for [`Kernel::with_break`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kernel {
    /// The release the updates are derived for, (major, minor).
    pub release: (u32, u32),
    /// The release whose protocol decides the flushes.
    pub protocol: (u32, u32),
    /// The stable sublevel (`6.18.15`: 15; 0 when not known), for the one
    /// derivation choice that changed inside a stable series
    /// ([`Kernel::pt_memcg`]).
    pub sublevel: u32,
}

/// The form of the per-CPU objcg stock (mm/memcontrol.c), which decides
/// when kernel-memory and slab bytes reach `memcg_rstat_updated()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StockForm {
    /// 6.1 to 6.15 (`memcg_stock_pcp`'s object part): one objcg. An
    /// allocation charges whole pages, refills the rest (switching the
    /// stock to its objcg and uncharging past a page), then accounts its
    /// size (`mod_objcg_state()`, switching too); a free refills,
    /// uncharges, then accounts.
    Classic,
    /// 6.16 to 7.0 (`obj_stock_pcp`, V1 of docs/real-kernel-updates.md
    /// section 6.5): one objcg; an allocation's slow path switches, refills,
    /// accounts, and only then uncharges; a free accounts before it
    /// uncharges.
    OneSlot,
    /// 7.1 (V2): one objcg; refill and uncharge before the accounting,
    /// which writes straight to the memcg when the stock holds another
    /// objcg.
    Reordered,
    /// 7.2 on (V3, "memcg: multi objcg charge support"): five objcgs, each
    /// with its bytes, one of them owning the pending slab bytes; a
    /// refill evicts round robin only when all five are taken.
    FiveSlots,
}

impl Kernel {
    /// Linux 6.1 (Debian 6.1.x): the global-threshold lineage with
    /// 873f64b791a2, the model's `v6.0`.
    pub const L6_1: Kernel = Kernel::of(6, 1);
    /// Linux 6.12 (Debian 6.12.x): the per-memcg lineage of v6.8, the
    /// model's `v6.8`.
    pub const L6_12: Kernel = Kernel::of(6, 12);
    /// Linux 6.17: the per-memcg lineage with the early `break`, the
    /// model's `v6.17`.
    pub const L6_17: Kernel = Kernel::of(6, 17);

    /// Release `major.minor`, its own protocol, sublevel unknown (0).
    pub const fn of(major: u32, minor: u32) -> Kernel {
        Kernel {
            release: (major, minor),
            protocol: (major, minor),
            sublevel: 0,
        }
    }

    /// The kernel of a release string (`uname -r`, `6.18.15+deb13-amd64`):
    /// 6.1 to 6.7 are the global lineage, 6.8 to 6.15 per memcg, 6.16 on
    /// with the break.
    pub fn from_release(release: &str) -> Result<Kernel, String> {
        let mut it = release.split(|c: char| !c.is_ascii_digit());
        let mut num = || -> u32 { it.next().and_then(|s| s.parse().ok()).unwrap_or(0) };
        let (major, minor, sublevel) = (num(), num(), num());
        match (major, minor) {
            (6, 1..) | (7, _) => Ok(Kernel {
                sublevel,
                ..Kernel::of(major, minor)
            }),
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
    pub(super) fn old(self) -> bool {
        self.release < (6, 8)
    }

    /// `PAGEVEC_SIZE`: folios a per-CPU LRU add batch holds before it
    /// drains (include/linux/pagevec.h: 15 in 6.1, 31 from 6.4's
    /// folio_batch; `FOLIO_BATCH_SIZE` from 7.1).
    pub fn lru_batch(self) -> usize {
        if self.old() {
            15
        } else {
            31
        }
    }

    /// Whether a charge counts `PGPGIN` and an uncharge `PGPGOUT`
    /// (`memcg_charge_statistics()`, `uncharge_batch()`: on cgroup v2 too in
    /// 6.1; `memcg1_*` stubs with `CONFIG_MEMCG_V1` off from 6.12).
    pub(super) fn pgpg(self) -> bool {
        self.old()
    }

    /// The value `memcg_rstat_updated()` receives for a byte-sized item:
    /// the bytes in 6.1; `memcg_state_val_in_pages()` from v6.8, unsigned
    /// up to 7.0 ([`val_in_pages`]), signed from 7.1
    /// ([`val_in_pages_signed`]).
    pub fn slab_val(self, bytes: i64) -> i64 {
        if self.old() {
            bytes
        } else if self.release >= (7, 1) {
            val_in_pages_signed(bytes)
        } else {
            val_in_pages(bytes)
        }
    }

    /// Whether a `struct file` is freed by an RCU callback after its last
    /// `fput()` (6.1: `file_free()` calls `call_rcu()`), rather than at once.
    pub fn file_free_rcu(self) -> bool {
        self.old()
    }

    /// The objcg stock's form.
    pub fn stock_form(self) -> StockForm {
        match self.release {
            r if r < (6, 16) => StockForm::Classic,
            r if r < (7, 1) => StockForm::OneSlot,
            (7, 1) => StockForm::Reordered,
            _ => StockForm::FiveSlots,
        }
    }

    /// Whether a page table's `NR_PAGETABLE` reaches its memcg
    /// (`__pagetable_ctor()` through `lruvec_stat_add_folio()`).
    ///
    /// NOTE(kernel): f0c92726e89f ("ptdesc: remove references to folios
    /// from __pagetable_ctor() and pagetable_dtor()") counted it on the
    /// node only in 6.18.0 to 6.18.16 (the v6.18.16 import; 6.18.15
    /// traced) and v6.19.0; its revert is in 6.18.19 and in the booted
    /// 6.19.14. The first 6.18.y and 6.19.y with the revert are not known
    /// here: 6.18.17-18 and 6.19.1-13 are taken as without it, the last
    /// known state.
    pub fn pt_memcg(self) -> bool {
        match self.release {
            (6, 18) => self.sublevel >= 19,
            (6, 19) => self.sublevel >= 14,
            _ => true,
        }
    }

    /// Whether a PMD THP's rmap counts `NR_ANON_MAPPED` before
    /// `NR_ANON_THPS` (`__folio_mod_stat()`, 6.12.0 mm/rmap.c:1284; 6.1's
    /// `page_add_new_anon_rmap()` and `page_remove_anon_compound_rmap()`
    /// count `NR_ANON_THPS` first; 6.16 to 7.3 traced).
    pub(super) fn thp_mapped_first(self) -> bool {
        self.release >= (6, 12)
    }

    /// Whether `open()` of a directory on the guest's root (tmpfs) allocates
    /// a cursor dentry: `dcache_dir_open()`'s `d_alloc_cursor()` up to 6.5;
    /// from 6.6 tmpfs directories use `simple_offset_dir_operations`, which
    /// has no `open` (traced: 6.1 allocates both, 6.12 and 6.16 on only the
    /// `struct file`).
    pub(super) fn open_cursor(self) -> bool {
        self.release < (6, 6)
    }

    /// Whether `madvise(MADV_DONTNEED)` drains the CPU's LRU add batch
    /// before it zaps: `zap_page_range()`/`zap_page_range_single()` call
    /// `lru_add_drain()` in 6.1 and 6.12 (v6.1 mm/memory.c:1760, v6.12.0
    /// :1924); from 6.16 the madvise path batches its TLB flushes through
    /// `zap_page_range_single_batched()` (6.17 mm/memory.c:1995) and
    /// `zap_vma_range_batched()` (7.3 mm/memory.c:2330), neither of which
    /// drains (7.3 mm/madvise.c:862-873).
    ///
    /// NOTE(kernel): 6.16 is taken as 6.17 (no 6.16 tree was read; the
    /// batching series is 6.16's).
    pub(super) fn dontneed_drains(self) -> bool {
        self.release < (6, 16)
    }

    /// The charged size (`obj_full_size()`) of a `struct seq_file`:
    /// 128 up to 7.0, 120 from 7.1 (traced `bytes_alloc` plus 8).
    pub fn seq_file(self) -> i64 {
        if self.release >= (7, 1) {
            120
        } else {
            128
        }
    }

    /// The charged size of a kernfs inode (`inode_cache`), which a move
    /// between memcgs allocates when the common ancestor's `cgroup.procs`
    /// is not open (6.16 to 7.3; not read for older releases).
    pub fn inode(self) -> Option<i64> {
        match self.release {
            (6, 16) | (6, 17) => Some(640),
            r if ((6, 18)..(7, 1)).contains(&r) => Some(624),
            r if r >= (7, 1) => Some(576),
            _ => None,
        }
    }

    /// The charged size of a `struct anon_vma` (`anon_vma_cachep`:
    /// `SLAB_TYPESAFE_BY_RCU` with a constructor, so the free pointer
    /// follows the object): 96 bytes up to 7.0, 88 from 7.1 (BTF of the
    /// booted images), plus 8, plus 8.
    ///
    /// NOTE(kernel): the slot is inferred from the flags, not traced; the
    /// traces show only that it and the chain fit in one page.
    pub fn anon_vma(self) -> i64 {
        if self.release >= (7, 1) {
            88 + 16
        } else {
            96 + 16
        }
    }

    /// Unreclaimable slab bytes a memcg's objcg still holds in CPU 0's
    /// stock after the probe made its children (`mem_cgroup_css_alloc()`
    /// charges a child's `struct mem_cgroup`, its per-node and stats
    /// structures to the parent, under `set_active_memcg(parent)`): traced
    /// as the parent's first flush, `NR_SLAB_UNRECLAIMABLE_B` of 1,032 bytes
    /// on 6.12.117 and 1 page on 6.16 to 7.0 when a child's first slab
    /// charge switched the stock; nothing on 6.1 and from 7.1 (7.1's
    /// per-node objcgs and reordered stock leave none; 7.2 on, the parent
    /// keeps a slot).
    pub fn mkdir_pending(self) -> i64 {
        if ((6, 8)..(7, 1)).contains(&self.release) {
            1032
        } else {
            0
        }
    }

    /// The kernel's name of an item: what the probe's `hello.items` maps
    /// to its number in this release.
    pub fn item_name(self, item: Item) -> &'static str {
        match item {
            Item::PgFault => "PGFAULT",
            Item::PgPgIn => "PGPGIN",
            Item::PgPgOut => "PGPGOUT",
            Item::AnonMapped => "NR_ANON_MAPPED",
            Item::AnonThps => "NR_ANON_THPS",
            Item::ThpFaultAlloc => "THP_FAULT_ALLOC",
            // NOTE(kernel): a new anonymous or shmem folio lands on the
            // inactive list in 6.1 (`lru_cache_add_inactive_or_unevictable()`,
            // Debian's 6.1 leaves the multi-generational LRU off) and in a
            // young generation, counted as active, where Debian enables
            // MGLRU (6.12 on; traced).
            Item::Lru if self.old() => "NR_INACTIVE_ANON",
            Item::Lru => "NR_ACTIVE_ANON",
            Item::FilePages => "NR_FILE_PAGES",
            Item::Shmem => "NR_SHMEM",
            Item::Kmem => "MEMCG_KMEM",
            Item::PageTable => "NR_PAGETABLE",
            Item::SlabUnreclaimableB => "NR_SLAB_UNRECLAIMABLE_B",
            Item::SlabReclaimableB => "NR_SLAB_RECLAIMABLE_B",
        }
    }
}

/// mm/memcontrol.c v6.8 to 7.0, `memcg_state_val_in_pages()` of a
/// byte-sized item: `max(val * unit / PAGE_SIZE, 1UL)` with `unit` 1. The
/// division is unsigned, so a negative `val` wraps: the quotient, truncated
/// to `int`, is `-ceil(|val| / PAGE_SIZE)` (or one less when `|val|` is a
/// multiple of `PAGE_SIZE`), which only its magnitude reaches the counters
/// through.
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

/// mm/memcontrol.c 7.1 on (7.3.4 :846-860), `memcg_state_val_in_pages()`
/// signed: the magnitude `max(|val| / PAGE_SIZE, 1)` with `val`'s sign.
pub fn val_in_pages_signed(bytes: i64) -> i64 {
    if bytes == 0 {
        return 0;
    }
    bytes.signum() * (bytes.abs() / PAGE_SIZE).max(1)
}

/// A statistic item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// `PGFAULT` (`count_memcg_event_mm()`).
    PgFault,
    /// `PGPGIN` (`memcg_charge_statistics()`, 6.1).
    PgPgIn,
    /// `PGPGOUT` (`uncharge_batch()`, 6.1).
    PgPgOut,
    /// `NR_ANON_MAPPED` (`__lruvec_stat_mod_folio()` from the rmap).
    AnonMapped,
    /// `NR_ANON_THPS`.
    AnonThps,
    /// `THP_FAULT_ALLOC`.
    ThpFaultAlloc,
    /// `NR_LRU_BASE + lru` (`update_lru_size()` when a batch drains, or a
    /// folio leaves the LRU): `NR_ACTIVE_ANON` or `NR_INACTIVE_ANON`, per
    /// release ([`Kernel::item_name`]).
    Lru,
    /// `NR_FILE_PAGES`.
    FilePages,
    /// `NR_SHMEM`.
    Shmem,
    /// `MEMCG_KMEM` (`memcg_account_kmem()`).
    Kmem,
    /// `NR_PAGETABLE`.
    PageTable,
    /// `NR_SLAB_UNRECLAIMABLE_B` (the stock's flush).
    SlabUnreclaimableB,
    /// `NR_SLAB_RECLAIMABLE_B`.
    SlabReclaimableB,
}

impl Item {
    /// Whether the item is a `vm_event_item` (`count_memcg_events()`), not
    /// a state item: the two enums share numbers.
    pub fn is_event(self) -> bool {
        matches!(
            self,
            Item::PgFault | Item::PgPgIn | Item::PgPgOut | Item::ThpFaultAlloc
        )
    }

    /// Whether the objcg stock makes the call (its timing then depends on
    /// every slab user of the CPU).
    pub fn from_stock(self) -> bool {
        matches!(
            self,
            Item::Kmem | Item::SlabReclaimableB | Item::SlabUnreclaimableB
        )
    }
}

/// One `memcg_rstat_updated()` call: `val` as the function receives it
/// (bytes for 6.1's slab items, pages otherwise), on `memcg`, on CPU `cpu`.
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
    /// The CPU that makes the call.
    pub cpu: usize,
    /// Whether the scenario's task makes it (false: a kworker on `cpu`,
    /// e.g. `lru_add_drain_all()`'s per-CPU work).
    pub by_task: bool,
}

/// The charged size of a slab object: its slot (`s->size`) plus the
/// `struct obj_cgroup *` that `obj_full_size()` adds.
pub fn obj_full_size(slab_size: i64) -> i64 {
    slab_size + 8
}

/// `seq_buf_alloc(PAGE_SIZE)`: `kvmalloc(.., GFP_KERNEL_ACCOUNT)` of the
/// first `seq_read()`, from kmalloc-4k.
pub const SEQ_BUF: i64 = 4096 + 8;

/// An xarray node (`radix_tree_node`, 576 bytes in a 584-byte slot with
/// its free pointer, plus 8), reclaimable: the page cache's xarray
/// allocates it with `__GFP_ACCOUNT` (`XA_FLAGS_ACCOUNT`).
pub const XA_NODE: i64 = 592;

/// An `anon_vma_chain` (64 bytes, plus 8), unreclaimable.
pub const AVC: i64 = 72;

/// A folio the scenario charged: (the CPU that faulted it, its number
/// there).
pub type FolioId = (usize, u32);

/// `struct dentry`'s slot size (192 in both kernels) when the probe could
/// not read it.
pub const DENTRY_SLOT: i64 = 192;

/// `struct file`'s slot size when the probe could not read it: 256 in
/// 6.1, 192 from 6.12 (`sizeof(struct file)` 232 and 184 in Debian's
/// builds).
pub fn default_filp_slot(kernel: Kernel) -> i64 {
    if kernel.old() {
        256
    } else {
        192
    }
}
