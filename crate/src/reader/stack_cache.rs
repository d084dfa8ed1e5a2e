//! Frames lists by the memo references that make them. A stack recorded again is pickled as the
//! same memo references to the same frame dicts, so the bytes of those references name it: one
//! hash of them replaces resolving each frame and hashing the frame ids. The slots mean the same
//! stack only while they hold the same frame dicts, so the cache empties whenever a slot that held
//! a dict is overwritten or a frame dict is folded as a trace entry (never, in a pickle Python
//! wrote). The same slots written as other bytes (a one-byte slot as a four-byte reference) only
//! miss the cache.
//!
//! The key is a 128-bit hash of the bytes, not the bytes themselves: comparing a stored list of
//! thirty references waited on memory at every lookup. Two lists share a key with a chance of
//! about n²/2¹²⁹ (n lists in the cache: below 10⁻²⁶) as far as the mix behaves as a random
//! function, which its tests check for spread and avalanche but cannot prove; a file built to
//! collide can only make one of its own stacks read as another of its own stacks, which its bytes
//! could say anyway.

use crate::fasthash::{fold_mul, fold_mul_round, seed};
use crate::model::StackId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Entries kept at most; past it the cache starts afresh (memory stays bounded, also with
/// millions of distinct lists).
const MAX_ENTRIES: usize = 1 << 19;

/// A 128-bit hash of a list's memo reference bytes, from [`ListKey::of_bytes`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ListKey(u64, u64);

impl std::hash::Hash for ListKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0);
    }
}

/// Two folded-multiply lanes with their own seeds and constants.
const K: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xd6e8_feb8_6659_fd93];

#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

impl ListKey {
    /// The key of these bytes: their 8-byte words (the last one zero-padded), then their length,
    /// through both lanes. The even and the odd words go through chains of their own, and the odd
    /// chain's lanes then through the even one as two more words: each chain waits on its own
    /// multiplies only, so the two run side by side (one chain of every word was bound by the
    /// multiplies' latency: in wasm a tenth of the page's decoding), and each still keeps 128
    /// bits of state. A word takes one round of mixing per lane ([`fold_mul_round`]: one
    /// multiply in wasm, not two), the key a full mix at the end.
    #[inline]
    pub fn of_bytes(bytes: &[u8]) -> ListKey {
        ListKey::with_mixes(bytes, fold_mul_round, fold_mul)
    }

    /// [`ListKey::of_bytes`] with the mixes given: a round per word, a full mix at the end (the
    /// tests run wasm's natively).
    #[inline(always)]
    fn with_mixes(bytes: &[u8], round: fn(u64, u64) -> u64, full: fn(u64, u64) -> u64) -> ListKey {
        let step = |lanes: &mut [u64; 2], w: u64| {
            for (lane, k) in lanes.iter_mut().zip(K) {
                *lane = round(*lane ^ w, k);
            }
        };
        let s = seed();
        let mut even = [s, s.rotate_left(32) ^ 0x5851_f42d_4c95_7f2d];
        // Another start than the even chain's: the same words in the other chain differ.
        let mut odd = [even[0] ^ 0x2545_f491_4f6c_dd1d, even[1] ^ 0x6a09_e667_f3bc_c909];
        let mut pairs = bytes.chunks_exact(16);
        for p in &mut pairs {
            step(&mut even, word(&p[..8]));
            step(&mut odd, word(&p[8..]));
        }
        let rest = pairs.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            step(&mut even, word(&last[..8]));
            if rest.len() > 8 {
                step(&mut odd, word(&last[8..]));
            }
        }
        for w in [odd[0], odd[1], bytes.len() as u64] {
            step(&mut even, w);
        }
        let [a, b] = even;
        ListKey(full(a, K[1]), full(b, K[0]))
    }
}

/// The key is a hash already: the table takes its first half as it is.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, _: &[u8]) {
        unreachable!("ListKey hashes as u64s")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Default)]
pub struct StackCache {
    stacks: HashMap<ListKey, Option<StackId>, BuildHasherDefault<KeyHasher>>,
    /// The count of changes (see [`StackCache::get`]) when the entries were made.
    changes: u64,
}

impl StackCache {
    /// The stack of the list with this key, if seen before; `changes` counts the memo slots of
    /// dicts changed so far (`Memo::dict_changes` + `DecodeState::frames_folded`).
    #[inline]
    pub fn get(&mut self, changes: u64, key: ListKey) -> Option<Option<StackId>> {
        if changes != self.changes {
            self.stacks.clear();
            self.changes = changes;
        }
        self.stacks.get(&key).copied()
    }

    pub fn insert(&mut self, key: ListKey, stack: Option<StackId>) {
        if self.stacks.len() >= MAX_ENTRIES {
            self.stacks.clear();
        }
        self.stacks.insert(key, stack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of `slots` written as LONG_BINGET references.
    fn key(slots: &[u32]) -> ListKey {
        let bytes: Vec<u8> = slots.iter().flat_map(|&s| std::iter::once(b'j').chain(s.to_le_bytes())).collect();
        ListKey::of_bytes(&bytes)
    }

    /// Lists differing in one slot, in order, or in length (also by a trailing slot 0) get
    /// different keys.
    #[test]
    fn keys_tell_lists_apart() {
        let base: Vec<u32> = (0..31).map(|i| 300 + 7 * i).collect();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(key(&base)));
        assert_eq!(key(&base), key(&base));
        for i in 0..base.len() {
            let mut other = base.clone();
            other[i] ^= 1;
            assert!(seen.insert(key(&other)), "slot {i}");
        }
        let mut swapped = base.clone();
        swapped.swap(0, 1);
        assert!(seen.insert(key(&swapped)));
        for n in 0..base.len() {
            assert!(seen.insert(key(&base[..n])), "prefix {n}");
        }
        let mut zero = base.clone();
        zero.push(0);
        assert!(seen.insert(key(&zero)));
        zero.push(0);
        assert!(seen.insert(key(&zero)));
        // Zero padding of the last word is told apart by the length (no bytes: the empty list's key, above).
        for n in 1..20 {
            assert!(seen.insert(ListKey::of_bytes(&vec![0; n])), "{n} zero bytes");
        }
    }

    /// Both builds' keys (wasm's mixes run here natively): flipping any one bit of a list's bytes
    /// flips about half of the key's 128 bits, for lists of every length up to 48 bytes.
    #[test]
    fn one_bit_changes_half_the_key() {
        use crate::fasthash::{fold_wide, mix_by_words, mix_once};
        type Mix = fn(u64, u64) -> u64;
        let builds: [(&str, Mix, Mix); 2] = [("native", fold_wide, fold_wide), ("wasm", mix_once, mix_by_words)];
        for (name, round, full) in builds {
            let mut x = 0x9e37_79b9_7f4a_7c15_u64;
            for len in 1..=48 {
                let bytes: Vec<u8> = (0..len).map(|_| (x = x.rotate_left(7).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ 1, x as u8).1).collect();
                let ListKey(a, b) = ListKey::with_mixes(&bytes, round, full);
                for bit in 0..len * 8 {
                    let mut other = bytes.clone();
                    other[bit / 8] ^= 1 << (bit % 8);
                    let ListKey(c, d) = ListKey::with_mixes(&other, round, full);
                    let flipped = (a ^ c).count_ones() + (b ^ d).count_ones();
                    assert!((36..=92).contains(&flipped), "{name}: {len} bytes, bit {bit}: {flipped} of 128 key bits");
                }
            }
        }
    }

    /// A word read by the even chain and the same word read by the odd one give other keys: two
    /// words swapped, a word moved by one place, every length of one word repeated.
    #[test]
    fn chains_tell_their_words_apart() {
        let a = 0x0123_4567_89ab_cdef_u64.to_le_bytes();
        let b = 0xfedc_ba98_7654_3210_u64.to_le_bytes();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(ListKey::of_bytes(&[a, b].concat())));
        assert!(seen.insert(ListKey::of_bytes(&[b, a].concat())));
        assert!(seen.insert(ListKey::of_bytes(&[a, a].concat())));
        assert!(seen.insert(ListKey::of_bytes(&[b, b].concat())));
        assert!(seen.insert(ListKey::of_bytes(&[[0; 8], a].concat())));
        assert!(seen.insert(ListKey::of_bytes(&[a, [0; 8]].concat())));
        let c = 0x1111_2222_3333_4444_u64.to_le_bytes();
        for n in 1..9 {
            assert!(seen.insert(ListKey::of_bytes(&c.repeat(n))), "{n} words");
        }
    }
}
