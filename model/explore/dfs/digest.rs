//! State digests: 128-bit hashes of a search's states.

use std::hash::Hasher;

/// A 128-bit digest of a sequence of words: two independent 64-bit lanes,
/// each a chain of splitmix64 finalisers. It is a [`Hasher`], so anything
/// that derives `Hash` can be fed into it.
///
/// The stateful search stores these instead of states (hash compaction):
/// two distinct states that collide would make it skip the second. With
/// `k` states stored the chance of any collision is about `k^2 / 2^129`,
/// below `10^-24` for the `10^7` states a search here can store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest {
    pub(super) a: u64,
    pub(super) b: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            a: 0x243F_6A88_85A3_08D3,
            b: 0x1319_8A2E_0370_7344,
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Digest {
    /// Fold one word in.
    pub fn word(&mut self, x: u64) {
        self.a = mix(self.a ^ x);
        self.b = mix(self
            .b
            .rotate_left(23)
            .wrapping_add(x ^ 0xA076_1D64_78BD_642F));
    }
}

impl Hasher for Digest {
    fn finish(&self) -> u64 {
        self.a
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 60));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.word(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
}

/// A hasher for maps keyed by [`Digest`]s, which are hashes already.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 ^= i;
    }
}
