//! Ghost state split for the exhaustive search's symmetry reduction
//! (explore/dfs): the part each CPU owns, and the rest with CPU numbers
//! renamed. Together they cover exactly what [`Ghost`]'s `Hash` covers.

use std::hash::{Hash, Hasher};

use crate::vocab::obs::renamed;

use super::Ghost;

impl Ghost {
    /// Everything of the ghost state that belongs to CPU `c`: its running
    /// sums, what walks read of it, its stamps, the bits of the open
    /// sections' walks on its counters, and its entries in every domain.
    #[doc(hidden)]
    pub fn digest_cpu(&self, c: usize, mut h: &mut dyn Hasher) {
        for m in 0..self.written.len() {
            (self.written[m][c], self.seen[m][c], self.lost[m][c]).hash(&mut h);
        }
        (self.folded[c], &self.stamps[c]).hash(&mut h);
        self.open.len().hash(&mut h);
        for s in &self.open {
            let bits = (0..self.written.len())
                .map(|m| (s.walked >> (m * self.cpus + c)) & 1)
                .fold(0u64, |acc, b| acc << 1 | b);
            bits.hash(&mut h);
        }
        self.domains.len().hash(&mut h);
        for (k, d) in &self.domains {
            k.hash(&mut h);
            (d.residue[c], d.flight[c], d.skipped_at[c]).hash(&mut h);
            (d.in_update[c], d.epoch[c]).hash(&mut h);
        }
    }

    /// The rest of the ghost state, CPU `c` written as `rename[c]`: the
    /// aggregates, the open sections (who, where, stamped), the folds
    /// pending, abstract time, and each domain's counts.
    #[doc(hidden)]
    pub fn digest_renamed(&self, rename: &[usize], mut h: &mut dyn Hasher) {
        self.agg.hash(&mut h);
        self.open.len().hash(&mut h);
        for s in &self.open {
            (renamed(s.actor, rename), s.root, s.stamped).hash(&mut h);
        }
        self.pending_fold.len().hash(&mut h);
        for (a, c, v) in &self.pending_fold {
            (
                renamed(*a, rename),
                rename.get(*c).copied().unwrap_or(*c),
                v,
            )
                .hash(&mut h);
        }
        (self.now, self.root_flush_at).hash(&mut h);
        self.domains.len().hash(&mut h);
        for (k, d) in &self.domains {
            k.hash(&mut h);
            (d.counted, d.skipped, d.threshold).hash(&mut h);
            (d.added_during_flush.min(1), d.resets.min(2)).hash(&mut h);
        }
    }
}
