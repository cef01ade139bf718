//! One CPU as the scenario's task sees it: its LRU add batch, and the
//! units' calls in the order the kernel makes them (the stock's side is
//! [`super::stock`]).

use super::super::spec::Unit;
use super::kernel::{
    default_filp_slot, obj_full_size, FolioId, Item, Kernel, StockForm, Update, AVC, DENTRY_SLOT,
    HPAGE_PMD_NR, MTHP_NR, NR_OBJ_STOCK, SEQ_BUF, XA_NODE,
};

/// One folio in an LRU add batch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) memcg: u8,
    pub(super) pages: i64,
    /// The scenario's folio, `None` for another task's.
    pub(super) id: Option<FolioId>,
    /// Freed while in the batch: the batch's reference is the last, so the
    /// drain adds it to the LRU and then takes it off again.
    pub(super) freed: bool,
}

/// The objcg stock of one CPU.
#[derive(Clone, Debug)]
pub(super) struct Stock {
    pub(super) form: StockForm,
    /// The cached objcgs (one for the one-slot forms) with their bytes:
    /// `cached_objcg`/`nr_bytes`, or `cached[i]`/`nr_bytes[i]`.
    pub(super) slots: [Option<(u8, i64)>; NR_OBJ_STOCK],
    /// The slot whose memcg owns the pending slab bytes (`index`, 7.2 on;
    /// the one slot otherwise).
    pub(super) index: Option<usize>,
    /// `nr_slab_reclaimable_b`.
    pub(super) rb: i64,
    /// `nr_slab_unreclaimable_b`.
    pub(super) ub: i64,
    /// `drain_idx`: the slot a full stock evicts next (7.2 on).
    pub(super) drain_idx: usize,
}

/// The CPU a scenario's task runs on: its LRU add batch and objcg stock.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub(super) kernel: Kernel,
    pub(super) index: usize,
    pub(super) lru: Vec<Pending>,
    pub(super) stock: Stock,
    /// `objcg->nr_charged_bytes` per memcg: global state, lent to the CPU
    /// that runs by its [`Machine`] (a lone `Cpu` keeps its own).
    pub(super) charged: Vec<(u8, i64)>,
    /// The charged size of a `struct file` in this kernel.
    pub(super) filp: i64,
    /// The charged size of a `struct dentry`.
    pub(super) dentry: i64,
    /// `struct file`s closed and not yet freed (6.1's RCU callbacks).
    pub(super) rcu_pending: Vec<u8>,
    /// Folios faulted on this CPU so far (their [`FolioId`]s).
    pub(super) folios: u32,
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

    pub(super) fn up(&self, memcg: u8, item: Item, val: i64, anon: i64) -> Update {
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
    pub(super) fn thp_begin(&mut self, memcg: u8, prepare: bool, out: &mut Vec<Update>) {
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
    pub(super) fn thp_rest(&mut self, memcg: u8, out: &mut Vec<Update>) -> FolioId {
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
    pub(super) fn close_keep(&mut self, memcg: u8, out: &mut Vec<Update>) {
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
    pub(super) fn shmem_write(
        &mut self,
        memcg: u8,
        xa_nodes: usize,
        out: &mut Vec<Update>,
    ) -> FolioId {
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
    pub(super) fn pt_uncharge(&mut self, memcg: u8, out: &mut Vec<Update>) {
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
    pub(super) fn lru_drain_by_worker(&mut self, out: &mut Vec<Update>) {
        let from = out.len();
        self.lru_drain(out);
        for u in &mut out[from..] {
            u.by_task = false;
        }
    }

    /// `release_pages()`/`folios_put_refs()` of folios on the LRU:
    /// `lruvec_del_folio()` each, then (6.1) `uncharge_batch()`'s
    /// `PGPGOUT`, one call per run of folios of one memcg.
    pub(super) fn release(&mut self, folios: &[(u8, i64)], out: &mut Vec<Update>) {
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
    pub(super) fn free_in_batch(&mut self, id: FolioId) -> bool {
        match self.lru.iter_mut().find(|p| p.id == Some(id)) {
            Some(p) => {
                p.freed = true;
                true
            }
            None => false,
        }
    }
}
