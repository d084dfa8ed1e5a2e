//! The layout's free blocks by their two ends, for the forward pass while the trace does what
//! the allocator does: every alloc takes a free block from its start, every free merges with the
//! free blocks on either side, a segment comes and goes whole. Hash lookups answer each of those
//! where the ordered map of blocks needs a search for the neighbours of every event. Anything
//! else (an alloc inside a free block, a block of unknown size, an inconsistent event) is for the
//! ordered map: the caller takes the blocks back with [`FreeBlocks::into_blocks`] and goes on
//! there.
//!
//! Invariant: within each reserved range, the live blocks and the free blocks tile the range, and
//! no two free blocks of one range touch (the allocator merges them).

use super::ranges::RangeSet;
use super::Lifetime;
use crate::fasthash::FastMap;
use std::collections::BTreeMap;

pub(crate) struct FreeBlocks {
    /// Address -> lifetime of every block in the layout.
    live: FastMap<u64, u32>,
    /// Start -> end of every free block.
    end_of: FastMap<u64, u64>,
    /// End -> start of every free block.
    start_of: FastMap<u64, u64>,
}

impl FreeBlocks {
    /// The free blocks between `blocks` (by address) in `ranges`, if the blocks tile them: each
    /// inside a range, none overlapping another, each of known, non-zero size.
    pub fn build(ranges: &RangeSet, blocks: &BTreeMap<u64, u32>, lifetimes: &[Lifetime]) -> Option<FreeBlocks> {
        let mut free = FreeBlocks { live: FastMap::default(), end_of: FastMap::default(), start_of: FastMap::default() };
        for r in ranges.iter() {
            let mut at = r.start;
            for (&addr, &l) in blocks.range(r.start..r.end()) {
                let lt = &lifetimes[l as usize];
                let end = addr.checked_add(lt.size)?;
                if addr < at || end > r.end() || lt.size == 0 || !lt.size_exact {
                    return None;
                }
                if addr > at {
                    free.add(at, addr);
                }
                free.live.insert(addr, l);
                at = end;
            }
            if at < r.end() {
                free.add(at, r.end());
            }
        }
        // A block outside every range is not in the tiling.
        (free.live.len() == blocks.len()).then_some(free)
    }

    /// The ordered map of the blocks, for the general path.
    pub fn into_blocks(self) -> BTreeMap<u64, u32> {
        self.live.into_iter().collect()
    }

    /// The end of the free block that starts at `addr`.
    #[inline]
    pub fn free_from(&self, addr: u64) -> Option<u64> {
        self.end_of.get(&addr).copied()
    }

    /// Place lifetime `l` of `size` bytes at the start of the free block at `addr` (from
    /// [`FreeBlocks::free_from`], `size` within it).
    pub fn take(&mut self, addr: u64, size: u64, l: u32) {
        if let Some(end) = self.end_of.remove(&addr) {
            self.start_of.remove(&end);
            if addr + size < end {
                self.add(addr + size, end);
            }
        }
        self.live.insert(addr, l);
    }

    /// Free the block of `size` bytes at `addr` if it is lifetime `l`, merged with the free
    /// blocks on either side within its range (`starts_range` tells a range's first address).
    pub fn release(&mut self, addr: u64, l: u32, size: u64, starts_range: impl Fn(u64) -> bool) {
        if self.live.get(&addr) != Some(&l) {
            return;
        }
        self.live.remove(&addr);
        let (mut start, mut end) = (addr, addr.saturating_add(size));
        if let Some(&before) = self.start_of.get(&addr) {
            if !starts_range(addr) {
                self.remove(before, addr);
                start = before;
            }
        }
        if let Some(&after) = self.end_of.get(&end) {
            if !starts_range(end) {
                self.remove(end, after);
                end = after;
            }
        }
        self.add(start, end);
    }

    /// A new reserved range `[start, end)`, free; it continues the free block that ends at
    /// `start` (`merged_left`) or starts at `end` (`merged_right`) when the range merged with
    /// its neighbour there.
    pub fn add_range(&mut self, start: u64, end: u64, merged_left: bool, merged_right: bool) {
        let (mut from, mut to) = (start, end);
        if let Some(&before) = self.start_of.get(&start).filter(|_| merged_left) {
            self.remove(before, start);
            from = before;
        }
        if let Some(&after) = self.end_of.get(&end).filter(|_| merged_right) {
            self.remove(end, after);
            to = after;
        }
        self.add(from, to);
    }

    /// The free block that holds all of `[start, end)`, if any.
    pub fn free_around(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        match (self.end_of.get(&start), self.start_of.get(&end)) {
            (Some(&e), _) if e >= end => Some((start, e)),
            (_, Some(&s)) if s <= start => Some((s, end)),
            _ => None,
        }
    }

    /// Take `[start, end)` out of the free block `around` that holds it (its memory was
    /// released to the driver).
    pub fn cut(&mut self, (from, to): (u64, u64), start: u64, end: u64) {
        self.remove(from, to);
        if from < start {
            self.add(from, start);
        }
        if end < to {
            self.add(end, to);
        }
    }

    fn add(&mut self, start: u64, end: u64) {
        self.end_of.insert(start, end);
        self.start_of.insert(end, start);
    }

    fn remove(&mut self, start: u64, end: u64) {
        self.end_of.remove(&start);
        self.start_of.remove(&end);
    }
}
