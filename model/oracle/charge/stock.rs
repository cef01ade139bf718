//! The objcg stock of one CPU, in the release's form ([`StockForm`]):
//! when kernel-memory and slab bytes reach `memcg_rstat_updated()`.

use super::cpu::Cpu;
use super::kernel::{Item, StockForm, Update, NR_OBJ_STOCK, PAGE_SIZE};

impl Cpu {
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
    pub(super) fn slab_alloc(
        &mut self,
        memcg: u8,
        size: i64,
        reclaimable: bool,
        out: &mut Vec<Update>,
    ) {
        self.objcg_charges += 1;
        match self.stock.form {
            StockForm::FiveSlots => self.alloc5(memcg, size, reclaimable, out),
            _ => self.alloc1(memcg, size, reclaimable, out),
        }
    }

    /// `memcg_slab_free_hook()` of an object charged to `memcg`.
    pub(super) fn slab_free(
        &mut self,
        memcg: u8,
        size: i64,
        reclaimable: bool,
        out: &mut Vec<Update>,
    ) {
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
