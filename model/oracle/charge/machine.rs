//! Every CPU of the guest and what they share: `objcg->nr_charged_bytes`,
//! the scenario's folios and where each waits, the probe's memfd; the
//! frees and the moves.

use super::super::spec::Unit;
use super::cpu::{Cpu, Pending};
use super::kernel::{FolioId, Item, Kernel, Update, HPAGE_PMD_NR, MTHP_NR, NR_OBJ_STOCK};

/// `XA_CHUNK_SIZE`: an xarray node has 64 slots.
const XA_CHUNK: usize = 64;

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
