//! The hash maps of the hot paths (addresses per replayed event, ids per decoded frame, memo
//! slots per fold). Std's SipHash costs more than the work around it there; this is the Fx word
//! mix of rustc with a seeded avalanche at the end, so that aligned addresses (whose low bits
//! are all zero) still spread over the buckets, and a file cannot be crafted to collide without
//! knowing the process's seed.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::OnceLock;

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

pub struct FastHasher(u64);

/// Per process, from std's random keys (fixed where the platform has no randomness, as in wasm).
pub fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| RandomState::new().hash_one(0x5eed_u64) | 1)
}

impl Default for FastHasher {
    fn default() -> Self {
        FastHasher(seed())
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().unwrap()));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    /// The splitmix64 finalizer: every output bit depends on every input bit.
    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_addresses_spread_over_low_bits() {
        // 4096 addresses 2 MiB apart: their hashes' low 12 bits (a 4096-bucket table) must not
        // collapse onto a few values.
        let build = BuildHasherDefault::<FastHasher>::default();
        let lows: HashSet<u64> = (0..4096u64).map(|i| build.hash_one(0x7f00_0000_0000 + (i << 21)) & 0xfff).collect();
        assert!(lows.len() > 2000, "only {} distinct low-bit patterns", lows.len());
    }
}
