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
//! about n²/2¹²⁹ (n lists in the cache: below 10⁻²⁶); a file built to collide can only make one of
//! its own stacks read as another of its own stacks, which its bytes could say anyway.

use crate::fasthash::{fold_mul, seed};
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

impl ListKey {
    /// The key of these bytes: their 8-byte words (the last one zero-padded), then their length,
    /// through both lanes.
    #[inline]
    pub fn of_bytes(bytes: &[u8]) -> ListKey {
        let s = seed();
        let mut lanes = [s, s.rotate_left(32) ^ 0x5851_f42d_4c95_7f2d];
        let mut word = |w: u64| {
            for (lane, k) in lanes.iter_mut().zip(K) {
                *lane = fold_mul(*lane ^ w, k);
            }
        };
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            word(u64::from_le_bytes(last));
        }
        word(bytes.len() as u64);
        let [a, b] = lanes;
        ListKey(fold_mul(a, K[1]), fold_mul(b, K[0]))
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
}
