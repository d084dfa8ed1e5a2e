//! The hash maps of the hot paths (addresses per replayed event, ids per decoded frame, memo
//! slots per fold). Std's SipHash costs more than the work around it there; this is one folded
//! multiply per word from a per-process seed (the mix of foldhash and wyhash; in wasm one 64-bit
//! multiply between xor-shifts, [`fold_mul_round`]): every output bit
//! depends on every input bit, so aligned addresses (whose low bits are all zero) still spread
//! over the buckets. Natively the seed is random per process, so a file cannot be crafted to
//! collide without knowing it; in wasm (no randomness in std) the seed is fixed, and a crafted
//! file can at most slow its own lookups down.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::OnceLock;

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

pub struct FastHasher(u64);

/// `a` mixed by the odd constant `b`: every input bit reaches every output bit. Natively the
/// high and low halves of the full product, folded; in wasm [`mix_by_words`].
#[inline(always)]
pub fn fold_mul(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "wasm32")]
    return mix_by_words(a, b);
    #[cfg(not(target_arch = "wasm32"))]
    fold_wide(a, b)
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
#[inline(always)]
pub(crate) fn fold_wide(a: u64, b: u64) -> u64 {
    let p = (a as u128) * (b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// wasm has no 64×64→128 multiply: a `u128` product is a call to `__multi3` through memory
/// (LLVM turns a product written by 32-bit halves back into that call), which took a tenth of
/// the page's decoding. Two 64-bit multiplies between xor-shifts instead (a bijection of `a`
/// for odd `b`, as the murmur3 finalizer): each step folds the high bits back into the low ones.
#[cfg_attr(not(any(target_arch = "wasm32", test)), allow(dead_code))]
#[inline(always)]
pub(crate) fn mix_by_words(a: u64, b: u64) -> u64 {
    let x = (a ^ (a >> 32)).wrapping_mul(b);
    let x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 32)
}

/// One round of mixing for a chain of words that is mixed in full ([`fold_mul`]) at its end
/// (`ListKey::of_bytes`): in wasm one multiply ([`mix_once`]) where [`fold_mul`] takes two,
/// natively [`fold_mul`] itself.
#[inline(always)]
pub fn fold_mul_round(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "wasm32")]
    return mix_once(a, b);
    #[cfg(not(target_arch = "wasm32"))]
    fold_wide(a, b)
}

/// The first half of [`mix_by_words`]: the high half folded onto the low one, one multiply, the
/// product's high half folded back (a bijection of `a` for odd `b`).
#[cfg_attr(not(any(target_arch = "wasm32", test)), allow(dead_code))]
#[inline(always)]
pub(crate) fn mix_once(a: u64, b: u64) -> u64 {
    let x = (a ^ (a >> 32)).wrapping_mul(b);
    x ^ (x >> 32)
}

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
        self.0 = fold_mul_round(self.0 ^ v, 0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
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

    /// Both builds' mixes (the native one and wasm's, tested here natively): aligned addresses
    /// spread over the low bits and the top 7 (hashbrown's tags), and flipping any one input bit
    /// flips about half of the output bits (none stays tied to a few).
    #[test]
    fn both_mixes_reach_every_output_bit() {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        for (name, mix) in [("native", fold_wide as fn(u64, u64) -> u64), ("wasm", mix_by_words), ("wasm, one round", mix_once)] {
            let lows: HashSet<u64> = (0..4096u64).map(|i| mix(0x7f00_0000_0000 + (i << 21), K) & 0xfff).collect();
            assert!(lows.len() > 2000, "{name}: only {} distinct low-bit patterns", lows.len());
            let tops: HashSet<u64> = (0..4096u64).map(|i| mix(0x7f00_0000_0000 + (i << 21), K) >> 57).collect();
            assert_eq!(tops.len(), 128, "{name}: top 7 bits");
            let mut x = 0x1234_5678_9abc_def0_u64;
            for _ in 0..256 {
                x = mix(x, K);
                for bit in 0..64 {
                    let flipped = (mix(x, K) ^ mix(x ^ 1 << bit, K)).count_ones();
                    assert!((12..=52).contains(&flipped), "{name}: bit {bit} of {x:#x} flips {flipped} bits");
                }
            }
        }
    }
}
