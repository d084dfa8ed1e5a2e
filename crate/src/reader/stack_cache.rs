//! Frames lists by their opcode bytes. A stack recorded again is pickled as the same memo
//! references to the same frame dicts, so the bytes of its list name it: one hash of them
//! replaces resolving each frame and hashing the frame ids. The bytes mean the same stack only
//! while the memo slots they name hold the same frame dicts, so the cache empties whenever a
//! slot that held a dict is overwritten or a frame dict is folded as a trace entry (never, in a
//! pickle Python wrote).

use crate::fasthash::FastMap;
use crate::model::StackId;

/// Bytes kept at most, keys and their table entries and allocations; past it the cache starts
/// afresh (memory stays bounded, also with millions of tiny keys).
const MAX_BYTES: usize = 16 << 20;
/// What an entry costs besides its key's bytes: the table's slot and the key's allocation.
const ENTRY_BYTES: usize = 48;

#[derive(Default)]
pub struct StackCache {
    stacks: FastMap<Box<[u8]>, Option<StackId>>,
    /// Memory the entries take, as `MAX_BYTES` counts it.
    bytes: usize,
    /// The count of changes (see [`StackCache::get`]) when the entries were made.
    changes: u64,
}

impl StackCache {
    /// The stack of the list whose items' opcodes are `ops`, if seen before; `changes` counts
    /// the memo slots of dicts changed so far (`Memo::dict_changes` + `DecodeState::frames_folded`).
    #[inline]
    pub fn get(&mut self, changes: u64, ops: &[u8]) -> Option<Option<StackId>> {
        if changes != self.changes {
            self.clear();
            self.changes = changes;
        }
        self.stacks.get(ops).copied()
    }

    pub fn insert(&mut self, ops: &[u8], stack: Option<StackId>) {
        let bytes = ops.len() + ENTRY_BYTES;
        if self.bytes + bytes > MAX_BYTES {
            self.clear();
        }
        self.bytes += bytes;
        self.stacks.insert(ops.into(), stack);
    }

    fn clear(&mut self) {
        self.stacks.clear();
        self.bytes = 0;
    }
}
