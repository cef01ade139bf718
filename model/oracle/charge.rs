//! The kernel side of a charge: which `memcg_rstat_updated()` calls one
//! unit of a scenario makes, per release, in the order the kernel makes
//! them (docs/real-kernels.md, section 3; docs/real-kernel-updates.md,
//! section 6, for 6.16 to 7.3, with the functions and the traces that
//! confirm each row).
//!
//! Per-CPU kernel state decides where and when a call lands, and it is
//! simulated here, one [`Cpu`] per online CPU inside a [`Machine`]: the LRU
//! add batch (`cpu_fbatches.lru_add`, `folio_add_lru()`: a folio's LRU
//! update reaches its memcg only when the batch drains) and the objcg stock
//! (`obj_stock_pcp`: `obj_cgroup_charge()`, `refill_obj_stock()` and
//! `__account_obj_stock()` hold kernel-memory bytes and slab bytes back
//! until they pass a page). What the releases differ in, each a method of
//! [`Kernel`]:
//!
//! | | 6.1 | 6.12 | 6.16 to 7.0 | 7.1 | 7.2, 7.3 |
//! |---|---|---|---|---|---|
//! | stock ([`StockForm`]) | classic, bytes | classic | one slot | one slot, reordered | five slots |
//! | slab value | bytes | pages, unsigned | pages, unsigned | pages, signed | pages, signed |
//! | LRU batch | 15 | 31 | 31 | 31 | 31 |
//! | `PGPGIN`/`PGPGOUT` | yes | no | no | no | no |
//! | `NR_PAGETABLE` on the memcg | yes | yes | yes (not 6.18.0 to 6.18.18, 6.19.0 to 6.19.13) | yes | yes |
//! | THP rmap | `NR_ANON_THPS` first | `NR_ANON_MAPPED` first | the same | the same | the same |
//! | `open("/")` on tmpfs | file and cursor dentry | file | file | file | file |
//! | `MADV_DONTNEED` drains the LRU batch | yes | yes | no | no | no |
//! | `struct file` freed | RCU callback | at `fput()` | at `fput()` | at `fput()` | at `fput()` |
//! | `struct seq_file`, kernfs inode (charged bytes) | 128, - | 128, - | 128, 640 or 624 | 120, 576 | 120, 576 |
//! | slab bytes a `mkdir` leaves pending in the parent's stock | 0 | 1,032 | 1,032 | 0 | 0 |
//!
//! Frees ([`Machine::free`]) are the charges' calls negative, in the
//! kernel's order for the path (`MADV_DONTNEED`'s zap, `ftruncate()`'s
//! `shmem_undo_range()`, `close()`'s `__fput()`); moves between memcgs
//! ([`Machine::enter`]) cost nothing when the common ancestor's
//! `cgroup.procs` is open, as the probe keeps them; the boot's first PMD
//! THP fault also makes its mapping's `anon_vma` and wakes khugepaged,
//! whose `lru_add_drain_all()` drains every CPU's batch from a kworker.
//! Objects left to RCU callbacks (6.1's files, emptied xarray nodes, an
//! unheld move's inode) are counted ([`Cpu::rcu_deferred`]) but never
//! freed here: a grace period's end is not the derivation's to know.

use super::spec::Unit;

/// `PAGE_SIZE`.
pub const PAGE_SIZE: i64 = 4096;

/// Pages in a PMD-sized THP.
pub const HPAGE_PMD_NR: i64 = 512;

/// Pages in a 64 KiB mTHP folio (order 4).
pub const MTHP_NR: i64 = 16;

/// `NR_OBJ_STOCK`: the objcgs one CPU's stock caches from 7.2.
pub const NR_OBJ_STOCK: usize = 5;

/// `XA_CHUNK_SIZE`: an xarray node has 64 slots.
const XA_CHUNK: usize = 64;

/// The kernel a scenario runs on, as the model's side sees it: the release
/// whose update calls [`Cpu`] derives, and the release whose protocol the
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
    fn old(self) -> bool {
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
    fn pgpg(self) -> bool {
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
    fn thp_mapped_first(self) -> bool {
        self.release >= (6, 12)
    }

    /// Whether `open()` of a directory on the guest's root (tmpfs) allocates
    /// a cursor dentry: `dcache_dir_open()`'s `d_alloc_cursor()` up to 6.5;
    /// from 6.6 tmpfs directories use `simple_offset_dir_operations`, which
    /// has no `open` (traced: 6.1 allocates both, 6.12 and 6.16 on only the
    /// `struct file`).
    fn open_cursor(self) -> bool {
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
    fn dontneed_drains(self) -> bool {
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

/// One folio in an LRU add batch.
#[derive(Clone, Copy, Debug)]
struct Pending {
    memcg: u8,
    pages: i64,
    /// The scenario's folio, `None` for another task's.
    id: Option<FolioId>,
    /// Freed while in the batch: the batch's reference is the last, so the
    /// drain adds it to the LRU and then takes it off again.
    freed: bool,
}

/// The objcg stock of one CPU.
#[derive(Clone, Debug)]
struct Stock {
    form: StockForm,
    /// The cached objcgs (one for the one-slot forms) with their bytes:
    /// `cached_objcg`/`nr_bytes`, or `cached[i]`/`nr_bytes[i]`.
    slots: [Option<(u8, i64)>; NR_OBJ_STOCK],
    /// The slot whose memcg owns the pending slab bytes (`index`, 7.2 on;
    /// the one slot otherwise).
    index: Option<usize>,
    /// `nr_slab_reclaimable_b`.
    rb: i64,
    /// `nr_slab_unreclaimable_b`.
    ub: i64,
    /// `drain_idx`: the slot a full stock evicts next (7.2 on).
    drain_idx: usize,
}

/// The CPU a scenario's task runs on: its LRU add batch and objcg stock.
#[derive(Clone, Debug)]
pub struct Cpu {
    kernel: Kernel,
    index: usize,
    lru: Vec<Pending>,
    stock: Stock,
    /// `objcg->nr_charged_bytes` per memcg: global state, lent to the CPU
    /// that runs by its [`Machine`] (a lone `Cpu` keeps its own).
    charged: Vec<(u8, i64)>,
    /// The charged size of a `struct file` in this kernel.
    filp: i64,
    /// The charged size of a `struct dentry`.
    dentry: i64,
    /// `struct file`s closed and not yet freed (6.1's RCU callbacks).
    rcu_pending: Vec<u8>,
    /// Folios faulted on this CPU so far (their [`FolioId`]s).
    folios: u32,
    /// `obj_cgroup_charge()` calls so far (what the probe's kprobe on it
    /// counts).
    pub objcg_charges: u64,
    /// Objects of this CPU's task left to an RCU callback so far: their
    /// frees reach the stock at a grace period's end, which no derivation
    /// knows.
    pub rcu_deferred: u64,
}

impl Cpu {
    /// CPU state at a scenario's start: the LRU batch holds `foreign`
    /// folios of `other` (a memcg outside the scenario), the objcg stock
    /// caches `other`'s objcg with `old_slab` unreclaimable slab bytes not
    /// yet flushed, and `slots` are the slot sizes of `struct file` and
    /// `struct dentry` (0: this kernel's default).
    pub fn new(
        kernel: Kernel,
        foreign: usize,
        other: u8,
        old_slab: i64,
        slots: (i64, i64),
    ) -> Self {
        let or = |v: i64, d: i64| obj_full_size(if v > 0 { v } else { d });
        let mut stock = Stock {
            form: kernel.stock_form(),
            slots: [None; NR_OBJ_STOCK],
            index: Some(0),
            rb: 0,
            ub: old_slab,
            drain_idx: 0,
        };
        stock.slots[0] = Some((other, 0));
        Cpu {
            kernel,
            index: 0,
            lru: vec![
                Pending {
                    memcg: other,
                    pages: 1,
                    id: None,
                    freed: false,
                };
                foreign
            ],
            stock,
            charged: Vec::new(),
            filp: or(slots.0, default_filp_slot(kernel)),
            dentry: or(slots.1, DENTRY_SLOT),
            rcu_pending: Vec::new(),
            folios: 0,
            objcg_charges: 0,
            rcu_deferred: 0,
        }
    }

    fn up(&self, memcg: u8, item: Item, val: i64, anon: i64) -> Update {
        Update {
            memcg,
            item,
            val,
            anon,
            cpu: self.index,
            by_task: true,
        }
    }

    /// The calls one unit charged to `memcg` makes, appended to `out`; the
    /// folio it faulted, if any. A `shmem4k` unit here writes a page whose
    /// xarray needs no new node (see [`Machine::charge`]).
    pub fn unit(&mut self, unit: Unit, memcg: u8, out: &mut Vec<Update>) -> Option<FolioId> {
        let k = self.kernel;
        match unit {
            Unit::Anon4k => Some(self.fault(memcg, 1, out)),
            Unit::Mthp64k if k.old() => Some(self.fault(memcg, 1, out)),
            Unit::Mthp64k => Some(self.fault(memcg, MTHP_NR, out)),
            Unit::Thp => {
                self.thp_begin(memcg, false, out);
                Some(self.thp_rest(memcg, out))
            }
            Unit::Shmem4k => Some(self.shmem_write(memcg, 0, out)),
            Unit::OpenKeep => {
                self.open_keep(memcg, out);
                None
            }
            Unit::OpenClose => {
                self.free_rcu(out);
                self.open_stat(memcg, out);
                self.close_stat(memcg, false, out);
                None
            }
        }
    }

    /// A PMD THP fault up to its allocation (`do_huge_pmd_anonymous_page()`):
    /// 6.1's `PGFAULT`, then, for the mapping's first fault (`prepare`),
    /// `vmf_anon_prepare()`'s `anon_vma_chain` and `anon_vma`, accounted
    /// (`__anon_vma_prepare()`, 7.3 mm/rmap.c:194-201: the chain first).
    fn thp_begin(&mut self, memcg: u8, prepare: bool, out: &mut Vec<Update>) {
        if self.kernel.old() {
            out.push(self.up(memcg, Item::PgFault, 1, 0));
        }
        if prepare {
            self.slab_alloc(memcg, AVC, false, out);
            let size = self.kernel.anon_vma();
            self.slab_alloc(memcg, size, false, out);
        }
    }

    /// The rest of a PMD THP fault: the charge (6.1's `PGPGIN`), the
    /// deposited page table (a kmem page, `NR_PAGETABLE`), the rmap, the LRU
    /// (a large folio drains the batch at once), the events.
    fn thp_rest(&mut self, memcg: u8, out: &mut Vec<Update>) -> FolioId {
        let k = self.kernel;
        if k.pgpg() {
            out.push(self.up(memcg, Item::PgPgIn, 1, 0));
        }
        self.pt_charge(memcg, out);
        let mapped = self.up(memcg, Item::AnonMapped, HPAGE_PMD_NR, HPAGE_PMD_NR);
        let thps = self.up(memcg, Item::AnonThps, HPAGE_PMD_NR, 0);
        if k.thp_mapped_first() {
            out.extend([mapped, thps]);
        } else {
            out.extend([thps, mapped]);
        }
        let id = self.lru_add_new(memcg, HPAGE_PMD_NR, out);
        out.push(self.up(memcg, Item::ThpFaultAlloc, 1, 0));
        if !k.old() {
            out.push(self.up(memcg, Item::PgFault, 1, 0));
        }
        id
    }

    /// An anonymous fault of a folio of `pages` (`do_anonymous_page()`):
    /// 6.1 counts `PGFAULT` at the start of `handle_mm_fault()` and
    /// `PGPGIN` at the charge; from 6.8 `PGFAULT` comes last, from
    /// `mm_account_fault()`.
    fn fault(&mut self, memcg: u8, pages: i64, out: &mut Vec<Update>) -> FolioId {
        let k = self.kernel;
        if k.old() {
            out.push(self.up(memcg, Item::PgFault, 1, 0));
        }
        if k.pgpg() {
            out.push(self.up(memcg, Item::PgPgIn, 1, 0));
        }
        out.push(self.up(memcg, Item::AnonMapped, pages, pages));
        let id = self.lru_add_new(memcg, pages, out);
        if !k.old() {
            out.push(self.up(memcg, Item::PgFault, 1, 0));
        }
        id
    }

    /// A kept `open()` of the root directory: `alloc_empty_file()`, and on
    /// 6.1 `dcache_dir_open()`'s cursor dentry.
    fn open_keep(&mut self, memcg: u8, out: &mut Vec<Update>) {
        self.free_rcu(out);
        let (filp, dentry) = (self.filp, self.dentry);
        self.slab_alloc(memcg, filp, false, out);
        if self.kernel.open_cursor() {
            self.slab_alloc(memcg, dentry, true, out);
        }
    }

    /// `close()` of a kept directory descriptor opened in `memcg`: the
    /// `struct file` freed at once from 6.8 (`__fput()` from the task
    /// work); in 6.1 it and the cursor dentry go to RCU callbacks.
    fn close_keep(&mut self, memcg: u8, out: &mut Vec<Update>) {
        if self.kernel.file_free_rcu() {
            // NOTE(kernel): the cursor dentry is freed by `call_rcu()` too
            // (`dentry_free()`: a cursor is not `DCACHE_NORCU`); neither
            // free is modelled.
            self.rcu_deferred += 2;
        } else {
            let filp = self.filp;
            self.slab_free(memcg, filp, false, out);
        }
    }

    /// `shmem_add_to_page_cache()` of a new page (the memfd's next index),
    /// after `xa_nodes` new xarray nodes, then `folio_add_lru()`. 6.1
    /// charges first (`PGPGIN`), then the nodes.
    fn shmem_write(&mut self, memcg: u8, xa_nodes: usize, out: &mut Vec<Update>) -> FolioId {
        if self.kernel.pgpg() {
            out.push(self.up(memcg, Item::PgPgIn, 1, 0));
        }
        for _ in 0..xa_nodes {
            self.slab_alloc(memcg, XA_NODE, true, out);
        }
        out.push(self.up(memcg, Item::FilePages, 1, 0));
        out.push(self.up(memcg, Item::Shmem, 1, 0));
        self.lru_add_new(memcg, 1, out)
    }

    /// The page table of a PMD THP, charged outside the stock
    /// (`__memcg_kmem_charge_page()`): `MEMCG_KMEM` +1 and, where the
    /// release counts it on the memcg, `NR_PAGETABLE` +1.
    fn pt_charge(&mut self, memcg: u8, out: &mut Vec<Update>) {
        out.push(self.up(memcg, Item::Kmem, 1, 0));
        if self.kernel.pt_memcg() {
            out.push(self.up(memcg, Item::PageTable, 1, 0));
        }
    }

    /// Its free (`zap_deposited_table()`: `pagetable_dtor()`, then the
    /// page's uncharge).
    fn pt_uncharge(&mut self, memcg: u8, out: &mut Vec<Update>) {
        if self.kernel.pt_memcg() {
            out.push(self.up(memcg, Item::PageTable, -1, 0));
        }
        out.push(self.up(memcg, Item::Kmem, -1, 0));
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
        self.slab_alloc(memcg, SEQ_BUF, false, before_gate);
        self.close_stat(memcg, true, after);
    }

    fn open_stat(&mut self, memcg: u8, out: &mut Vec<Update>) {
        let (filp, seq) = (self.filp, self.kernel.seq_file());
        self.slab_alloc(memcg, filp, false, out);
        self.slab_alloc(memcg, seq, false, out);
    }

    fn close_stat(&mut self, memcg: u8, buf: bool, out: &mut Vec<Update>) {
        // seq_release(): kvfree(m->buf), then kmem_cache_free(seq_file).
        if buf {
            self.slab_free(memcg, SEQ_BUF, false, out);
        }
        let seq = self.kernel.seq_file();
        self.slab_free(memcg, seq, false, out);
        // __fput() -> file_free(): at once from 6.8, an RCU callback in 6.1.
        if self.kernel.file_free_rcu() {
            self.rcu_pending.push(memcg);
            self.rcu_deferred += 1;
        } else {
            let filp = self.filp;
            self.slab_free(memcg, filp, false, out);
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
            self.slab_free(m, filp, false, out);
        }
    }

    /// `folio_add_lru()` of a new folio: into the per-CPU batch, which
    /// drains when full or when the folio is large (a large folio is never
    /// held: `folio_may_be_lru_cached()` from 6.17, `folio_test_large()`
    /// in `folio_add_lru()` before).
    fn lru_add_new(&mut self, memcg: u8, pages: i64, out: &mut Vec<Update>) -> FolioId {
        let id = (self.index, self.folios);
        self.folios += 1;
        self.lru.push(Pending {
            memcg,
            pages,
            id: Some(id),
            freed: false,
        });
        if self.lru.len() >= self.kernel.lru_batch() || pages > 1 {
            self.lru_drain(out);
        }
        id
    }

    /// `folio_batch_move_lru()`: each folio's `update_lru_size()` in batch
    /// order, then `folios_put()`, which frees the folios whose last
    /// reference the batch held: off the LRU again, and 6.1's uncharge.
    pub fn lru_drain(&mut self, out: &mut Vec<Update>) {
        let batch = std::mem::take(&mut self.lru);
        for p in &batch {
            out.push(self.up(p.memcg, Item::Lru, p.pages, 0));
        }
        let freed: Vec<(u8, i64)> = batch
            .iter()
            .filter(|p| p.freed)
            .map(|p| (p.memcg, p.pages))
            .collect();
        self.release(&freed, out);
    }

    /// [`Cpu::lru_drain`] by a kworker on this CPU
    /// (`lru_add_drain_per_cpu()`, queued by `lru_add_drain_all()`).
    fn lru_drain_by_worker(&mut self, out: &mut Vec<Update>) {
        let from = out.len();
        self.lru_drain(out);
        for u in &mut out[from..] {
            u.by_task = false;
        }
    }

    /// `release_pages()`/`folios_put_refs()` of folios on the LRU:
    /// `lruvec_del_folio()` each, then (6.1) `uncharge_batch()`'s
    /// `PGPGOUT`, one call per run of folios of one memcg.
    fn release(&mut self, folios: &[(u8, i64)], out: &mut Vec<Update>) {
        for &(memcg, pages) in folios {
            out.push(self.up(memcg, Item::Lru, -pages, 0));
        }
        if self.kernel.pgpg() {
            let mut runs: Vec<(u8, i64)> = Vec::new();
            for &(memcg, _) in folios {
                match runs.last_mut() {
                    Some((m, n)) if *m == memcg => *n += 1,
                    _ => runs.push((memcg, 1)),
                }
            }
            for (memcg, n) in runs {
                out.push(self.up(memcg, Item::PgPgOut, n, 0));
            }
        }
    }

    /// Whether folio `id` waits in this CPU's batch; if so it is marked
    /// freed there.
    fn free_in_batch(&mut self, id: FolioId) -> bool {
        match self.lru.iter_mut().find(|p| p.id == Some(id)) {
            Some(p) => {
                p.freed = true;
                true
            }
            None => false,
        }
    }

    fn emit_slab(&self, memcg: u8, reclaimable: bool, bytes: i64, out: &mut Vec<Update>) {
        if bytes == 0 {
            return;
        }
        let item = if reclaimable {
            Item::SlabReclaimableB
        } else {
            Item::SlabUnreclaimableB
        };
        out.push(self.up(memcg, item, self.kernel.slab_val(bytes), 0));
    }

    fn kmem(&self, memcg: u8, pages: i64, out: &mut Vec<Update>) {
        if pages != 0 {
            out.push(self.up(memcg, Item::Kmem, pages, 0));
        }
    }

    fn take_charged(&mut self, m: u8) -> i64 {
        let got = self
            .charged
            .iter()
            .find(|(x, _)| *x == m)
            .map_or(0, |(_, b)| *b);
        self.charged.retain(|(x, _)| *x != m);
        got
    }

    fn add_charged(&mut self, m: u8, bytes: i64) {
        match self.charged.iter_mut().find(|(x, _)| *x == m) {
            Some((_, b)) => *b += bytes,
            None if bytes != 0 => self.charged.push((m, bytes)),
            None => {}
        }
    }

    /// An accounted slab allocation of `size` charged bytes in `memcg`'s
    /// objcg (the post-allocation hook: `obj_cgroup_charge()` and the
    /// accounting of its size).
    fn slab_alloc(&mut self, memcg: u8, size: i64, reclaimable: bool, out: &mut Vec<Update>) {
        self.objcg_charges += 1;
        match self.stock.form {
            StockForm::FiveSlots => self.alloc5(memcg, size, reclaimable, out),
            _ => self.alloc1(memcg, size, reclaimable, out),
        }
    }

    /// `memcg_slab_free_hook()` of an object charged to `memcg`.
    fn slab_free(&mut self, memcg: u8, size: i64, reclaimable: bool, out: &mut Vec<Update>) {
        match self.stock.form {
            StockForm::FiveSlots => {
                self.refill5(memcg, size, true, out);
                self.account5(memcg, reclaimable, -size, out);
            }
            StockForm::OneSlot => {
                self.switch1(memcg, out);
                self.stock_bytes_add(size);
                self.account1(memcg, reclaimable, -size, out);
                self.uncharge1(memcg, true, out);
            }
            StockForm::Classic | StockForm::Reordered => {
                self.switch1(memcg, out);
                self.stock_bytes_add(size);
                self.uncharge1(memcg, true, out);
                self.account1(memcg, reclaimable, -size, out);
            }
        }
    }

    // ---- one slot: 6.1 to 7.1

    fn cached1(&self) -> Option<u8> {
        self.stock.slots[0].map(|(m, _)| m)
    }

    fn stock_bytes_add(&mut self, n: i64) {
        if let Some((_, b)) = &mut self.stock.slots[0] {
            *b += n;
        }
    }

    fn stock_bytes(&self) -> i64 {
        self.stock.slots[0].map_or(0, |(_, b)| b)
    }

    /// `drain_obj_stock()`: the old objcg's whole pages uncharged
    /// (`MEMCG_KMEM`), the rest kept in its `nr_charged_bytes`, then its
    /// reclaimable and unreclaimable slab bytes flushed.
    fn drain1(&mut self, out: &mut Vec<Update>) {
        let Some((old, bytes)) = self.stock.slots[0].take() else {
            return;
        };
        if bytes != 0 {
            self.kmem(old, -(bytes / PAGE_SIZE), out);
            self.add_charged(old, bytes % PAGE_SIZE);
        }
        let (rb, ub) = (
            std::mem::take(&mut self.stock.rb),
            std::mem::take(&mut self.stock.ub),
        );
        self.emit_slab(old, true, rb, out);
        self.emit_slab(old, false, ub, out);
    }

    /// The stock switched to `memcg`'s objcg, taking its
    /// `nr_charged_bytes`; whether it switched (which allows the refill's
    /// uncharge).
    fn switch1(&mut self, memcg: u8, out: &mut Vec<Update>) -> bool {
        if self.cached1() == Some(memcg) {
            return false;
        }
        self.drain1(out);
        let mine = self.take_charged(memcg);
        self.stock.slots[0] = Some((memcg, mine));
        true
    }

    fn uncharge1(&mut self, memcg: u8, allow: bool, out: &mut Vec<Update>) {
        let bytes = self.stock_bytes();
        if allow && bytes > PAGE_SIZE {
            self.kmem(memcg, -(bytes / PAGE_SIZE), out);
            self.stock.slots[0] = Some((memcg, bytes % PAGE_SIZE));
        }
    }

    /// `__account_obj_stock()` / `mod_objcg_state()` with one slot: an empty
    /// bucket keeps the value whatever its size, a non-empty one adds it
    /// and is flushed when it passes `PAGE_SIZE` either way. 6.1 to 6.15
    /// switch the stock first; 7.1 writes straight to the memcg when the
    /// stock holds another objcg.
    fn account1(&mut self, memcg: u8, reclaimable: bool, n: i64, out: &mut Vec<Update>) {
        if self.cached1() != Some(memcg) {
            if self.stock.form == StockForm::Reordered {
                self.emit_slab(memcg, reclaimable, n, out);
                return;
            }
            self.switch1(memcg, out);
        }
        let b = if reclaimable {
            &mut self.stock.rb
        } else {
            &mut self.stock.ub
        };
        let flush = if *b == 0 {
            *b = n;
            0
        } else {
            *b += n;
            if b.abs() > PAGE_SIZE {
                std::mem::take(b)
            } else {
                0
            }
        };
        self.emit_slab(memcg, reclaimable, flush, out);
    }

    fn alloc1(&mut self, memcg: u8, size: i64, reclaimable: bool, out: &mut Vec<Update>) {
        if self.cached1() == Some(memcg) && self.stock_bytes() >= size {
            self.stock_bytes_add(-size);
            self.account1(memcg, reclaimable, size, out);
            return;
        }
        let pages = (size + PAGE_SIZE - 1) / PAGE_SIZE;
        let rem = pages * PAGE_SIZE - size;
        self.kmem(memcg, pages, out);
        match self.stock.form {
            StockForm::OneSlot => {
                // obj_cgroup_charge_account() (6.17 :3065): refill the
                // rest, account the object, then uncharge.
                let allow = self.switch1(memcg, out);
                self.stock_bytes_add(rem);
                self.account1(memcg, reclaimable, size, out);
                self.uncharge1(memcg, allow, out);
            }
            _ => {
                // obj_cgroup_charge() then the post-alloc hook's accounting
                // (6.1, 6.12); the 7.1 hook in the same order.
                if rem != 0 {
                    let allow = self.switch1(memcg, out);
                    self.stock_bytes_add(rem);
                    self.uncharge1(memcg, allow, out);
                }
                self.account1(memcg, reclaimable, size, out);
            }
        }
    }

    // ---- five slots: 7.2 on

    fn slot5(&self, memcg: u8) -> Option<usize> {
        self.stock
            .slots
            .iter()
            .position(|s| matches!(s, Some((m, _)) if *m == memcg))
    }

    /// Flush the pending slab bytes to the memcg of the slot that owns
    /// them (reclaimable, then unreclaimable).
    fn flush_stats5(&mut self, out: &mut Vec<Update>) {
        let Some(i) = self.stock.index else {
            return;
        };
        if let Some((old, _)) = self.stock.slots[i] {
            let (rb, ub) = (
                std::mem::take(&mut self.stock.rb),
                std::mem::take(&mut self.stock.ub),
            );
            self.emit_slab(old, true, rb, out);
            self.emit_slab(old, false, ub, out);
        }
    }

    /// `drain_obj_stock_slot()`.
    fn drain_slot5(&mut self, i: usize, out: &mut Vec<Update>) {
        let Some((old, bytes)) = self.stock.slots[i] else {
            return;
        };
        if bytes != 0 {
            self.kmem(old, -(bytes / PAGE_SIZE), out);
            self.add_charged(old, bytes % PAGE_SIZE);
        }
        if self.stock.index == Some(i) {
            self.flush_stats5(out);
            self.stock.index = None;
        }
        self.stock.slots[i] = None;
    }

    /// `__refill_obj_stock()` (7.3 mm/memcontrol.c:3471).
    fn refill5(&mut self, memcg: u8, n: i64, allow: bool, out: &mut Vec<Update>) {
        let (i, mut bytes, allow) = match self.slot5(memcg) {
            Some(i) => (i, self.stock.slots[i].map_or(0, |(_, b)| b), allow),
            None => {
                let i = match self.stock.slots.iter().position(Option::is_none) {
                    Some(i) => i,
                    None => {
                        let i = self.stock.drain_idx;
                        self.stock.drain_idx = (i + 1) % NR_OBJ_STOCK;
                        self.drain_slot5(i, out);
                        i
                    }
                };
                (i, self.take_charged(memcg), true)
            }
        };
        bytes += n;
        // `nr_bytes` is a uint16_t: past U16_MAX it is uncharged anyway.
        if (allow && bytes > PAGE_SIZE) || bytes > u16::MAX as i64 {
            self.kmem(memcg, -(bytes / PAGE_SIZE), out);
            bytes %= PAGE_SIZE;
        }
        self.stock.slots[i] = Some((memcg, bytes));
    }

    /// `__account_obj_stock()` (7.3 :3264): straight to the memcg if it has
    /// no slot; else the pending bytes of another slot flushed first, then
    /// kept or flushed as one slot does, never keeping more than
    /// `S16_MAX`.
    fn account5(&mut self, memcg: u8, reclaimable: bool, n: i64, out: &mut Vec<Update>) {
        let Some(i) = self.slot5(memcg) else {
            self.emit_slab(memcg, reclaimable, n, out);
            return;
        };
        match self.stock.index {
            None => self.stock.index = Some(i),
            Some(j) if j != i => {
                self.flush_stats5(out);
                self.stock.index = Some(i);
            }
            _ => {}
        }
        let b = if reclaimable {
            &mut self.stock.rb
        } else {
            &mut self.stock.ub
        };
        let cur = *b;
        let sum = cur + n;
        let flush = if sum.abs() <= i16::MAX as i64 && (cur == 0 || sum.abs() <= PAGE_SIZE) {
            *b = sum;
            0
        } else {
            *b = 0;
            sum
        };
        self.emit_slab(memcg, reclaimable, flush, out);
    }

    fn alloc5(&mut self, memcg: u8, size: i64, reclaimable: bool, out: &mut Vec<Update>) {
        if let Some(i) = self.slot5(memcg) {
            if let Some((m, b)) = self.stock.slots[i] {
                if b >= size {
                    self.stock.slots[i] = Some((m, b - size));
                    self.account5(memcg, reclaimable, size, out);
                    return;
                }
            }
        }
        let pages = (size + PAGE_SIZE - 1) / PAGE_SIZE;
        let rem = pages * PAGE_SIZE - size;
        self.kmem(memcg, pages, out);
        if rem != 0 {
            self.refill5(memcg, rem, false, out);
        }
        self.account5(memcg, reclaimable, size, out);
    }
}

/// What a scenario holds that a `free` op can release, newest last.
#[derive(Clone, Copy, Debug)]
enum Held {
    /// An anonymous folio (`anon4k`, `mthp64k`, `thp`) of `memcg`.
    Folio(Unit, FolioId, u8, i64),
    /// The memfd's page at this index, its folio, its memcg.
    Shmem(usize, FolioId, u8),
    /// A kept descriptor, opened in this memcg.
    Fd(u8),
}

/// Every CPU of the guest as the scenario's task sees it, and the state
/// they share: `objcg->nr_charged_bytes`, the folios the scenario charged
/// and where each waits, the probe's memfd.
#[derive(Clone, Debug)]
pub struct Machine {
    kernel: Kernel,
    cpus: Vec<Cpu>,
    charged: Vec<(u8, i64)>,
    held: Vec<Held>,
    /// Pages in the probe's memfd (indices 0 to this, less one): it is
    /// made once per boot, so earlier scenarios' pages stay.
    shmem_pages: usize,
    /// Whether the probe's THP mapping has its `anon_vma` (an earlier PMD
    /// THP fault of the boot made it).
    thp_anon_vma: bool,
}

impl Machine {
    /// `cpus` CPUs at a scenario's start: every LRU batch empty, every
    /// stock caching `other`'s objcg with nothing pending; `slots` as for
    /// [`Cpu::new`]; `shmem_pages` pages already in the memfd.
    pub fn new(
        kernel: Kernel,
        cpus: usize,
        other: u8,
        slots: (i64, i64),
        shmem_pages: usize,
    ) -> Machine {
        let cpus = (0..cpus.max(1))
            .map(|i| {
                let mut c = Cpu::new(kernel, 0, other, 0, slots);
                c.index = i;
                c
            })
            .collect();
        Machine {
            kernel,
            cpus,
            charged: Vec::new(),
            held: Vec::new(),
            shmem_pages,
            thp_anon_vma: false,
        }
    }

    /// Whether the probe's THP mapping has its `anon_vma` already (an
    /// earlier scenario of the boot faulted a THP).
    pub fn set_thp_anon_vma(&mut self, made: bool) {
        self.thp_anon_vma = made;
    }

    /// CPU `c`'s stock caches `memcg`'s objcg with `pending` unreclaimable
    /// slab bytes not yet flushed (what the probe's `mkdir` of `memcg`'s
    /// children leaves: [`Kernel::mkdir_pending`]).
    pub fn set_stock(&mut self, c: usize, memcg: u8, pending: i64) {
        if let Some(cpu) = self.cpus.get_mut(c) {
            cpu.stock.slots = [None; NR_OBJ_STOCK];
            cpu.stock.slots[0] = Some((memcg, 0));
            cpu.stock.index = Some(0);
            cpu.stock.rb = 0;
            cpu.stock.ub = pending;
        }
    }

    /// The CPUs.
    pub fn cpus(&self) -> usize {
        self.cpus.len()
    }

    /// CPU `c`'s state.
    fn cpu(&mut self, c: usize) -> Result<&mut Cpu, String> {
        let n = self.cpus.len();
        self.cpus
            .get_mut(c)
            .ok_or_else(|| format!("CPU {c}: the guest has {n} CPUs (0 to {})", n - 1))
    }

    /// CPU `c`'s batch holds `foreign` folios of `other` (a memcg outside
    /// the scenario) before its own: a start state the probe cannot see
    /// ([`super::predict::Setup`]).
    pub fn set_lru(&mut self, c: usize, foreign: usize, other: u8) {
        if let Some(cpu) = self.cpus.get_mut(c) {
            cpu.lru.retain(|p| p.id.is_some());
            cpu.lru.splice(
                0..0,
                std::iter::repeat_n(
                    Pending {
                        memcg: other,
                        pages: 1,
                        id: None,
                        freed: false,
                    },
                    foreign,
                ),
            );
        }
    }

    /// Run `f` on CPU `c` with the shared `nr_charged_bytes` lent to it.
    fn on<T>(&mut self, c: usize, f: impl FnOnce(&mut Cpu) -> T) -> Result<T, String> {
        let mut charged = std::mem::take(&mut self.charged);
        let cpu = self.cpu(c)?;
        std::mem::swap(&mut cpu.charged, &mut charged);
        let r = f(cpu);
        std::mem::swap(&mut cpu.charged, &mut charged);
        self.charged = charged;
        Ok(r)
    }

    /// One unit charged to `memcg` by the task on CPU `c`.
    pub fn charge(
        &mut self,
        c: usize,
        unit: Unit,
        memcg: u8,
        out: &mut Vec<Update>,
    ) -> Result<(), String> {
        match unit {
            Unit::Shmem4k => {
                // The xarray's nodes for indices 0..=i where 0..i had some.
                let i = self.shmem_pages;
                let nodes = xa_nodes(i + 1) - xa_nodes(i);
                let id = self.on(c, |cpu| cpu.shmem_write(memcg, nodes, out))?;
                self.shmem_pages += 1;
                self.held.push(Held::Shmem(i, id, memcg));
            }
            Unit::OpenKeep => {
                self.on(c, |cpu| cpu.unit(unit, memcg, out))?;
                self.held.push(Held::Fd(memcg));
            }
            Unit::OpenClose => {
                self.on(c, |cpu| cpu.unit(unit, memcg, out))?;
            }
            Unit::Thp => {
                // The mapping's first THP fault makes its anon_vma; the VMA
                // then qualifies for khugepaged (`thp_vma_allowable_order()`
                // wants an anon_vma outside a fault), so
                // `khugepaged_enter_vma()` registers the mm and wakes
                // khugepaged, whose scan begins with `lru_add_drain_all()`:
                // every CPU's batch drains in a kworker while the fault
                // zeroes its 2 MiB (traced on every release, 1 to 4 vCPUs).
                let prepare = !self.thp_anon_vma;
                self.on(c, |cpu| cpu.thp_begin(memcg, prepare, out))?;
                if prepare {
                    self.thp_anon_vma = true;
                    for i in 0..self.cpus.len() {
                        self.on(i, |cpu| cpu.lru_drain_by_worker(out))?;
                    }
                }
                let id = self.on(c, |cpu| cpu.thp_rest(memcg, out))?;
                self.held.push(Held::Folio(unit, id, memcg, HPAGE_PMD_NR));
            }
            Unit::Anon4k | Unit::Mthp64k => {
                let pages = match (unit, self.kernel.old()) {
                    (Unit::Mthp64k, false) => MTHP_NR,
                    _ => 1,
                };
                if let Some(id) = self.on(c, |cpu| cpu.unit(unit, memcg, out))? {
                    self.held.push(Held::Folio(unit, id, memcg, pages));
                }
            }
        }
        Ok(())
    }

    /// Free the newest unit of `unit` the scenario holds, from CPU `c`
    /// (the probe's `free` op): `madvise(MADV_DONTNEED)` of an anonymous
    /// folio, `ftruncate()` of the memfd's last page, `close()` of a kept
    /// descriptor. The calls are the uncharges (negative values).
    pub fn free(&mut self, c: usize, unit: Unit, out: &mut Vec<Update>) -> Result<(), String> {
        let pos = self
            .held
            .iter()
            .rposition(|h| match h {
                Held::Folio(u, ..) => *u == unit,
                Held::Shmem(..) => unit == Unit::Shmem4k,
                Held::Fd(_) => unit == Unit::OpenKeep,
            })
            .ok_or_else(|| {
                format!(
                    "free {unit:?}: the scenario holds no such unit (charge it first; \
                     open_close holds nothing)"
                )
            })?;
        let held = self.held.remove(pos);
        let k = self.kernel;
        match held {
            Held::Folio(unit, id, memcg, pages) => {
                self.on(c, |cpu| {
                    if k.dontneed_drains() {
                        cpu.lru_drain(out);
                    }
                    // zap_pte_range()/zap_huge_pmd(): the rmap, per page
                    // or per PMD.
                    let mapped = cpu.up(memcg, Item::AnonMapped, -pages, -pages);
                    if unit == Unit::Thp {
                        let thps = cpu.up(memcg, Item::AnonThps, -HPAGE_PMD_NR, 0);
                        if k.thp_mapped_first() {
                            out.extend([mapped, thps]);
                        } else {
                            out.extend([thps, mapped]);
                        }
                        cpu.pt_uncharge(memcg, out);
                    } else {
                        out.push(mapped);
                    }
                })?;
                // tlb_finish_mmu(): the folio's last reference, unless an
                // LRU add batch still holds one.
                self.put_folio(c, id, memcg, pages, out)?;
            }
            Held::Shmem(index, id, memcg) => {
                // shmem_undo_range(): filemap_unaccount_folio(), then the
                // first folio_batch_release() drains this CPU's batch
                // (lru_add_drain()), then the folio's last put.
                self.on(c, |cpu| {
                    out.push(cpu.up(memcg, Item::FilePages, -1, 0));
                    out.push(cpu.up(memcg, Item::Shmem, -1, 0));
                    cpu.lru_drain(out);
                })?;
                self.put_folio(c, id, memcg, 1, out)?;
                self.shmem_pages = index;
                // NOTE(kernel): emptied xarray nodes are freed by
                // `call_rcu()` (`xa_node_free()`), not modelled.
                let freed = xa_nodes(index + 1) - xa_nodes(index);
                self.cpu(c)?.rcu_deferred += freed as u64;
            }
            Held::Fd(memcg) => {
                self.on(c, |cpu| cpu.close_keep(memcg, out))?;
            }
        }
        Ok(())
    }

    /// The last put of a folio: off the LRU at once, or, if an LRU add
    /// batch holds it still, on and off at that batch's drain.
    fn put_folio(
        &mut self,
        c: usize,
        id: FolioId,
        memcg: u8,
        pages: i64,
        out: &mut Vec<Update>,
    ) -> Result<(), String> {
        let waiting = self.cpus.iter_mut().any(|cpu| cpu.free_in_batch(id));
        if !waiting {
            self.on(c, |cpu| cpu.release(&[(memcg, pages)], out))?;
        }
        Ok(())
    }

    /// `lru_add_drain()` on CPU `c`.
    pub fn drain(&mut self, c: usize, out: &mut Vec<Update>) -> Result<(), String> {
        self.on(c, |cpu| cpu.lru_drain(out))
    }

    /// The task moves from memcg `from` to `to` (a write to `to`'s
    /// `cgroup.procs`). `cgroup_procs_write_permission()` looks up the
    /// inode of the common ancestor's `cgroup.procs` (kernfs
    /// `kernfs_get_inode()`): a new inode is an accounted allocation in
    /// `from`'s objcg, freed by RCU after the `iput()`; none when the inode
    /// is cached because someone holds the file open (`held`: the probe
    /// holds every ancestor's), or when `from` is the root (no objcg).
    /// Nothing else a move does is accounted (docs/real-kernel-updates.md
    /// section 6.6).
    pub fn enter(
        &mut self,
        c: usize,
        from: u8,
        held: bool,
        out: &mut Vec<Update>,
    ) -> Result<(), String> {
        if held || from == 0 {
            return Ok(());
        }
        let Some(size) = self.kernel.inode() else {
            return Err(format!(
                "a move between memcgs with the common ancestor's cgroup.procs closed is not \
                 derived for {} (the kernfs inode's size is read for 6.16 to 7.3 only)",
                self.kernel.name()
            ));
        };
        self.on(c, |cpu| {
            cpu.slab_alloc(from, size, true, out);
            cpu.rcu_deferred += 1;
        })
    }

    /// A memory.stat read on CPU `c` that opens and closes the file
    /// ([`Cpu::reopen_read`]).
    pub fn reopen_read(
        &mut self,
        c: usize,
        memcg: u8,
        before_gate: &mut Vec<Update>,
        after: &mut Vec<Update>,
    ) -> Result<(), String> {
        self.on(c, |cpu| cpu.reopen_read(memcg, before_gate, after))
    }

    /// `obj_cgroup_charge()` calls on every CPU so far.
    pub fn objcg_charges(&self) -> u64 {
        self.cpus.iter().map(|c| c.objcg_charges).sum()
    }

    /// Objects CPU `c`'s task has left to RCU callbacks so far.
    pub fn rcu_deferred(&self, c: usize) -> u64 {
        self.cpus.get(c).map_or(0, |c| c.rcu_deferred)
    }
}

/// The nodes of an xarray holding indices `0..n` (the page cache of a
/// file of `n` pages): none for at most one entry at index 0 (kept in
/// `xa_head`), else one per 64 indices at the bottom level and up the
/// levels to one root node. Insertions and deletions keep the tree in this
/// shape (`xas_expand()`, `xas_delete_node()`, `xas_shrink()`).
pub fn xa_nodes(n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let mut total = 0;
    let mut width = XA_CHUNK;
    loop {
        let level = n.div_ceil(width);
        total += level;
        if level == 1 {
            return total;
        }
        width *= XA_CHUNK;
    }
}

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
