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

mod cpu;
mod kernel;
mod machine;
mod stock;

pub use cpu::Cpu;
pub use kernel::{
    default_filp_slot, obj_full_size, val_in_pages, val_in_pages_signed, FolioId, Item, Kernel,
    StockForm, Update, AVC, DENTRY_SLOT, HPAGE_PMD_NR, MTHP_NR, NR_OBJ_STOCK, PAGE_SIZE, SEQ_BUF,
    XA_NODE,
};
pub use machine::{xa_nodes, Machine};
