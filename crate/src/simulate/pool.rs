//! The caching allocator's state as PyTorch keeps it: blocks chained per segment (prev/next),
//! free blocks per pool ordered by (stream, size, address), expandable segments as chains of
//! mapped and unmapped blocks over a VA reservation. Each method is one of the allocator's own
//! functions (`get_free_block`, `alloc_block`, `free_block`, `release_cached_blocks`, ...), so
//! the code can be read next to `CUDACachingAllocator.cpp`.

use super::addresses::AddressSource;
use super::largest::{FreeKey, LargestFree};
use super::settings::Settings;
use crate::replay::rules::MIB;
use std::collections::BTreeSet;

pub(crate) const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Mapped, not allocated, in its pool's free set.
    Free,
    Allocated,
    /// Freed by the program, waiting for other streams (record_stream): not reusable yet.
    Pending,
    /// Part of an expandable reservation with no physical pages.
    Unmapped,
}

#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub addr: u64,
    pub size: u64,
    pub stream: u64,
    pub small: bool,
    pub state: State,
    pub prev: u32,
    pub next: u32,
    /// Expandable reservation the block lies in, or NIL for a cudaMalloc segment.
    pub region: u32,
    /// `get_free_blocks_call_count` when the block entered the pool (GC age).
    gc_base: u64,
}

impl Block {
    fn end(&self) -> u64 {
        self.addr + self.size
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentAction {
    Alloc,
    Free,
    Map,
    Unmap,
}

impl SegmentAction {
    pub fn name(self) -> &'static str {
        match self {
            SegmentAction::Alloc => "segment_alloc",
            SegmentAction::Free => "segment_free",
            SegmentAction::Map => "segment_map",
            SegmentAction::Unmap => "segment_unmap",
        }
    }
}

/// A segment event the simulated allocator emits, with the trace event that caused it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegmentEvent {
    pub action: SegmentAction,
    pub size: u64,
    pub trigger: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Region {
    pub base: u64,
    pub small: bool,
}

fn pool_index(small: bool) -> usize {
    usize::from(!small)
}

pub(crate) struct Allocator {
    pub settings: Settings,
    /// Device memory the allocator may reserve (None: unlimited, no OOM).
    pub capacity: Option<u64>,
    blocks: Vec<Block>,
    spare: Vec<u32>,
    /// Free mapped blocks of the small (0) and large (1) pool: (stream, size, addr, id).
    free: [BTreeSet<FreeKey>; 2],
    /// The largest size in `free` (both pools, all streams).
    largest: LargestFree,
    /// Unmapped expandable blocks per pool: (stream, addr, id).
    unmapped: [BTreeSet<(u64, u64, u32)>; 2],
    pub regions: Vec<Region>,
    pub addresses: AddressSource,
    free_calls: [u64; 2],
    pub reserved: u64,
    /// The small pool's share of `reserved`.
    pub reserved_small: u64,
    pub allocated: u64,
    pub active: u64,
    pub segment_allocs: u64,
    pub segment_frees: u64,
    /// The segment events made since the simulation last took them, when `keep_emitted` (only
    /// the self-check reads them, after each event: a simulation under other settings makes
    /// none).
    pub emitted: Vec<SegmentEvent>,
    pub keep_emitted: bool,
    /// The event being processed (recorded as the trigger of segment events).
    pub trigger: u32,
}

impl Allocator {
    pub fn new(settings: Settings, capacity: Option<u64>, addresses: AddressSource) -> Allocator {
        Allocator {
            settings,
            capacity,
            blocks: Vec::new(),
            spare: Vec::new(),
            free: [BTreeSet::new(), BTreeSet::new()],
            largest: LargestFree::new(),
            unmapped: [BTreeSet::new(), BTreeSet::new()],
            regions: Vec::new(),
            addresses,
            free_calls: [0; 2],
            reserved: 0,
            reserved_small: 0,
            allocated: 0,
            active: 0,
            segment_allocs: 0,
            segment_frees: 0,
            emitted: Vec::new(),
            keep_emitted: true,
            trigger: 0,
        }
    }

    /// Reserved bytes change in a pool.
    fn grow(&mut self, small: bool, delta: i64) {
        self.reserved = self.reserved.wrapping_add_signed(delta);
        if small {
            self.reserved_small = self.reserved_small.wrapping_add_signed(delta);
        }
    }

    /// The largest free mapped block (asked at each new reserved peak).
    pub fn largest_free(&mut self) -> u64 {
        self.largest.get(&self.free)
    }

    fn new_block(&mut self, b: Block) -> u32 {
        match self.spare.pop() {
            Some(id) => {
                self.blocks[id as usize] = b;
                id
            }
            None => {
                self.blocks.push(b);
                (self.blocks.len() - 1) as u32
            }
        }
    }

    fn emit(&mut self, action: SegmentAction, size: u64) {
        if self.keep_emitted {
            self.emitted.push(SegmentEvent { action, size, trigger: self.trigger });
        }
    }

    // ---- pool bookkeeping -------------------------------------------------------------------

    fn insert_free(&mut self, id: u32) {
        let b = &mut self.blocks[id as usize];
        b.state = State::Free;
        b.gc_base = self.free_calls[pool_index(b.small)];
        if self.free[pool_index(b.small)].insert((b.stream, b.size, b.addr, id)) {
            self.largest.insert(b.size);
        }
    }

    fn remove_free(&mut self, id: u32) {
        let b = &self.blocks[id as usize];
        if self.free[pool_index(b.small)].remove(&(b.stream, b.size, b.addr, id)) {
            self.largest.remove(b.size);
        }
    }

    fn insert_unmapped(&mut self, id: u32) {
        let b = &mut self.blocks[id as usize];
        b.state = State::Unmapped;
        self.unmapped[pool_index(b.small)].insert((b.stream, b.addr, id));
    }

    fn remove_unmapped(&mut self, id: u32) {
        let b = &self.blocks[id as usize];
        self.unmapped[pool_index(b.small)].remove(&(b.stream, b.addr, id));
    }

    /// Put `id` between `prev` and `next` (either may be NIL) in a chain.
    fn link_between(&mut self, prev: u32, id: u32, next: u32) {
        self.blocks[id as usize].prev = prev;
        self.blocks[id as usize].next = next;
        if prev != NIL {
            self.blocks[prev as usize].next = id;
        }
        if next != NIL {
            self.blocks[next as usize].prev = id;
        }
    }

    fn link_after(&mut self, after: u32, id: u32) {
        self.link_between(after, id, self.blocks[after as usize].next);
    }

    fn link_before(&mut self, before: u32, id: u32) {
        self.link_between(self.blocks[before as usize].prev, id, before);
    }

    /// `try_merge_blocks`: `dst` absorbs its neighbour `src` (taking it out of its index) when
    /// both are free and mapped, or both unmapped.
    fn try_merge(&mut self, dst: u32, src: u32) {
        if src == NIL {
            return;
        }
        let (d, s) = (self.blocks[dst as usize].state, self.blocks[src as usize].state);
        let mergeable = match s {
            State::Free => d != State::Unmapped,
            State::Unmapped => d == State::Unmapped,
            _ => false,
        };
        if !mergeable {
            return;
        }
        if s == State::Free {
            self.remove_free(src);
        } else {
            self.remove_unmapped(src);
        }
        let sb = self.blocks[src as usize].clone();
        let db = &mut self.blocks[dst as usize];
        if db.prev == src {
            db.addr = sb.addr;
            db.prev = sb.prev;
            if sb.prev != NIL {
                self.blocks[sb.prev as usize].next = dst;
            }
        } else {
            db.next = sb.next;
            if sb.next != NIL {
                self.blocks[sb.next as usize].prev = dst;
            }
        }
        self.blocks[dst as usize].size += sb.size;
        self.spare.push(src);
    }

    // ---- seeding ------------------------------------------------------------------------------

    /// Lay out one segment or reservation that exists at the window start: its pieces in
    /// address order (free gaps, live blocks, unmapped holes), chained. `region` is NIL for a
    /// cudaMalloc segment.
    pub fn seed_chain(&mut self, pieces: &[(u64, u64, State)], stream: u64, small: bool, region: u32) -> Vec<u32> {
        let mut ids = Vec::with_capacity(pieces.len());
        let mut prev = NIL;
        for &(addr, size, state) in pieces {
            let id = self.new_block(Block { addr, size, stream, small, state, prev, next: NIL, region, gc_base: 0 });
            if prev != NIL {
                self.blocks[prev as usize].next = id;
            }
            prev = id;
            ids.push(id);
            match state {
                State::Free => self.insert_free(id),
                State::Unmapped => self.insert_unmapped(id),
                State::Allocated => {
                    self.allocated += size;
                    self.active += size;
                }
                State::Pending => self.active += size,
            }
            if state != State::Unmapped {
                self.grow(small, size as i64);
            }
        }
        if region == NIL {
            if let (Some(&(a, _, _)), Some(&(z, zs, _))) = (pieces.first(), pieces.last()) {
                self.addresses.occupy(a, z + zs - a);
            }
        }
        ids
    }

    /// Add an expandable reservation; returns its index.
    pub fn add_region(&mut self, base: u64, small: bool) -> u32 {
        self.regions.push(Region { base, small });
        (self.regions.len() - 1) as u32
    }

    /// A new reservation as one unmapped block.
    fn seed_region(&mut self, base: u64, size: u64, stream: u64, small: bool) -> u32 {
        let region = self.add_region(base, small);
        self.seed_chain(&[(base, size, State::Unmapped)], stream, small, region)[0]
    }

    // ---- malloc -------------------------------------------------------------------------------

    /// `malloc` for a rounded size `s`: a block of at least `s` bytes, or None (out of memory).
    pub fn malloc(&mut self, s: u64, stream: u64) -> Option<u32> {
        let small = s <= MIB;
        let found = self.get_free_block(small, s, stream).or_else(|| {
            if self.settings.garbage_collection_threshold > 0.0 {
                self.garbage_collect();
            }
            self.alloc_block(small, s, stream)
                .or_else(|| if self.release_available_cached_blocks(small, s, stream) { self.alloc_block(small, s, stream) } else { None })
                .or_else(|| {
                    self.release_cached_blocks();
                    self.alloc_block(small, s, stream)
                })
        })?;
        Some(self.take(found, s))
    }

    /// Hand out `s` bytes from the free block `id` (already out of the pool): split or not.
    fn take(&mut self, mut id: u32, s: u64) -> u32 {
        let b = self.blocks[id as usize].clone();
        // torch_npu: a large expandable block starts on an alignment boundary; the front stays free.
        let align = self.settings.npu_align;
        if align > 0 && self.settings.rules.expandable && s >= 2 * MIB && !b.addr.is_multiple_of(align) {
            let aligned = b.addr.next_multiple_of(align);
            if aligned + s <= b.end() {
                let front = aligned - b.addr;
                let rest = self.new_block(Block { addr: aligned, size: b.size - front, ..b.clone() });
                self.blocks[id as usize].size = front;
                self.link_after(id, rest);
                self.insert_free(id);
                id = rest;
            }
        }
        let b = self.blocks[id as usize].clone();
        let remaining = b.size - s;
        if self.settings.rules.should_split(self.settings.rules.pool_of(s), s, remaining) {
            let rest = self.new_block(Block { addr: b.addr + s, size: remaining, ..b.clone() });
            self.blocks[id as usize].size = s;
            self.link_after(id, rest);
            self.insert_free(rest);
        }
        let blk = &mut self.blocks[id as usize];
        blk.state = State::Allocated;
        self.allocated += blk.size;
        self.active += blk.size;
        id
    }

    /// Size a block in an expandable reservation could grow to: itself plus the unmapped space
    /// right after it.
    fn expandable_size(&self, id: u32) -> u64 {
        let b = &self.blocks[id as usize];
        match b.next {
            NIL => b.size,
            n if self.blocks[n as usize].state == State::Unmapped => b.size + self.blocks[n as usize].size,
            _ => b.size,
        }
    }

    /// `get_free_block`: best fit by (stream, size, address) with the oversize rules.
    fn get_free_block(&mut self, small: bool, s: u64, stream: u64) -> Option<u32> {
        let p = pool_index(small);
        self.free_calls[p] += 1;
        let mut candidates = self.free[p].range((stream, s, 0, 0)..).take_while(|k| k.0 == stream).map(|k| k.3);
        let mut id = candidates.next()?;
        if self.blocks[id as usize].region != NIL {
            if self.settings.rules.expandable {
                for next in candidates {
                    if self.blocks[id as usize].region == NIL || self.expandable_size(next) >= self.expandable_size(id) {
                        break;
                    }
                    id = next;
                }
            } else {
                // Expandable memory cached from before the setting was turned off stays unused.
                id = candidates.find(|&c| self.blocks[c as usize].region == NIL)?;
            }
        }
        let size = self.blocks[id as usize].size;
        let rules = &self.settings.rules;
        if s < rules.max_split_size && size >= rules.max_split_size {
            return None;
        }
        if s >= rules.max_split_size && size >= s + rules.max_non_split_rounding {
            return None;
        }
        self.remove_free(id);
        Some(id)
    }

    /// `alloc_block`: a new segment (cudaMalloc) or newly mapped pages, within the capacity.
    fn alloc_block(&mut self, small: bool, s: u64, stream: u64) -> Option<u32> {
        if self.settings.rules.expandable {
            return self.try_allocate_expandable_block(small, s, stream);
        }
        let size = self.settings.allocation_size(s);
        if self.capacity.is_some_and(|c| self.reserved + size > c) {
            return None;
        }
        let addr = self.addresses.segment(size);
        self.grow(small, size as i64);
        self.segment_allocs += 1;
        self.emit(SegmentAction::Alloc, size);
        Some(self.new_block(Block { addr, size, stream, small, state: State::Free, prev: NIL, next: NIL, region: NIL, gc_base: 0 }))
    }

    fn release_block(&mut self, id: u32) {
        self.remove_free(id);
        let b = &self.blocks[id as usize];
        let (addr, size, small) = (b.addr, b.size, b.small);
        self.grow(small, -(size as i64));
        self.segment_frees += 1;
        self.addresses.release(addr);
        self.emit(SegmentAction::Free, size);
        self.spare.push(id);
    }

    fn is_unsplit_segment(&self, id: u32) -> bool {
        let b = &self.blocks[id as usize];
        b.region == NIL && b.prev == NIL && b.next == NIL
    }

    /// `release_available_cached_blocks`: with max_split_size set, free oversize cached
    /// segments (the smallest that is large enough, else the largest first) before retrying.
    fn release_available_cached_blocks(&mut self, small: bool, s: u64, stream: u64) -> bool {
        let max_split = self.settings.rules.max_split_size;
        if max_split == u64::MAX {
            return false;
        }
        let p = pool_index(small);
        let key = s.max(max_split);
        let hit = self.free[p].range((stream, key, 0, 0)..).next().copied();
        if let Some((st, _, _, id)) = hit {
            if st == stream && self.blocks[id as usize].region == NIL {
                if self.is_unsplit_segment(id) {
                    self.release_block(id);
                }
                return true;
            }
        }
        let below: Vec<(u64, u64, u64, u32)> = self.free[p].range(..(stream, key, 0, 0)).rev().copied().collect();
        let mut released = 0;
        for (st, size, _, id) in below {
            if released >= key || size < max_split || st != stream {
                break;
            }
            if self.is_unsplit_segment(id) {
                self.release_block(id);
                released += size;
            }
        }
        released >= key
    }

    /// `release_cached_blocks` (empty_cache, the OOM path): every unsplit cached segment is
    /// freed and every fully free expandable page unmapped, large pool first.
    pub fn release_cached_blocks(&mut self) {
        for small in [false, true] {
            let p = pool_index(small);
            let ids: Vec<u32> = self.free[p].iter().map(|k| k.3).collect();
            let mut to_unmap = Vec::new();
            for id in ids {
                if self.blocks[id as usize].region != NIL {
                    to_unmap.push(id);
                } else if self.is_unsplit_segment(id) {
                    self.release_block(id);
                }
            }
            for id in to_unmap {
                self.unmap_block(id);
            }
        }
    }

    /// `garbage_collect_cached_blocks`: above `threshold` × capacity, free cached unsplit large
    /// segments older than the average age until enough is reclaimed.
    fn garbage_collect(&mut self) {
        let Some(capacity) = self.capacity else { return };
        let threshold = (self.settings.garbage_collection_threshold * capacity as f64) as u64;
        if self.reserved <= threshold {
            return;
        }
        let target = self.reserved - threshold;
        let now = self.free_calls[1];
        let age = |a: &Allocator, id: u32| now - a.blocks[id as usize].gc_base;
        let freeable: Vec<u32> = self.free[1].iter().map(|k| k.3).filter(|&id| self.is_unsplit_segment(id)).collect();
        let mut total_age: u64 = freeable.iter().map(|&id| age(self, id)).sum();
        let mut count = freeable.len() as u64;
        let mut reclaimed = 0;
        let mut freed_one = true;
        while reclaimed < target && freed_one && count > 0 {
            let threshold_age = total_age as f64 / count as f64;
            freed_one = false;
            let ids: Vec<u32> = self.free[1].iter().map(|k| k.3).collect();
            for id in ids {
                if self.is_unsplit_segment(id) && age(self, id) as f64 >= threshold_age {
                    freed_one = true;
                    reclaimed += self.blocks[id as usize].size;
                    total_age -= age(self, id);
                    count -= 1;
                    self.release_block(id);
                }
            }
        }
    }

    /// `free_block`: the block returns to its pool merged with free neighbours.
    pub fn free_block(&mut self, id: u32) {
        let b = &self.blocks[id as usize];
        self.active -= b.size;
        if b.state == State::Allocated {
            self.allocated -= b.size;
        }
        let (prev, next) = (b.prev, b.next);
        self.blocks[id as usize].state = State::Free;
        self.try_merge(id, prev);
        self.try_merge(id, next);
        self.insert_free(id);
    }

    /// `free` without completion: the block stops counting as allocated but is not reusable.
    pub fn free_requested(&mut self, id: u32) {
        let b = &mut self.blocks[id as usize];
        if b.state == State::Allocated {
            b.state = State::Pending;
            self.allocated -= b.size;
        }
    }

    // ---- expandable segments --------------------------------------------------------------------

    fn allocatable(&self, id: u32) -> bool {
        id != NIL && matches!(self.blocks[id as usize].state, State::Free | State::Unmapped)
    }

    /// `find_expandable_block`: the lowest unmapped range of the stream (with the free block just
    /// before it) that has room, else a new reservation.
    fn find_expandable_block(&mut self, small: bool, s: u64, stream: u64) -> u32 {
        let p = pool_index(small);
        let candidates: Vec<u32> = self.unmapped[p].range((stream, 0, 0)..).take_while(|k| k.0 == stream).map(|k| k.2).collect();
        for c in candidates {
            let prev = self.blocks[c as usize].prev;
            let start = if self.allocatable(prev) { prev } else { c };
            let mut bytes = 0;
            let mut id = start;
            while bytes < s && self.allocatable(id) {
                bytes += self.blocks[id as usize].size;
                id = self.blocks[id as usize].next;
            }
            if bytes >= s {
                return start;
            }
        }
        let base = self.addresses.region(stream, small);
        let size = self.addresses.region_size();
        self.seed_region(base, size, stream, small)
    }

    fn try_allocate_expandable_block(&mut self, small: bool, s: u64, stream: u64) -> Option<u32> {
        let mut c = self.find_expandable_block(small, s, stream);
        if self.blocks[c as usize].state == State::Unmapped {
            let n = self.blocks[c as usize].size.min(s);
            c = self.map_block(c, n)?;
        }
        while self.blocks[c as usize].size < s {
            let remaining = s - self.blocks[c as usize].size;
            let next = self.blocks[c as usize].next;
            if next == NIL || self.blocks[next as usize].state != State::Unmapped {
                return None;
            }
            let n = remaining.min(self.blocks[next as usize].size);
            c = self.map_block(next, n)?;
        }
        self.remove_free(c);
        Some(c)
    }

    fn page_of(&self, id: u32) -> (u64, u64) {
        let r = &self.regions[self.blocks[id as usize].region as usize];
        (r.base, self.settings.page(r.small))
    }

    /// `map_block`: map whole pages covering the first `size` bytes of the unmapped block `id`,
    /// then merge with free neighbours. Returns the merged free block.
    fn map_block(&mut self, id: u32, size: u64) -> Option<u32> {
        let (base, page) = self.page_of(id);
        let b = self.blocks[id as usize].clone();
        let first = (b.addr - base) / page;
        let last = (b.addr + size - base).div_ceil(page);
        let mapped = ((last - first) * page).min(b.size);
        if self.capacity.is_some_and(|c| self.reserved + mapped > c) {
            return None;
        }
        self.remove_unmapped(id);
        if mapped < b.size {
            let rest = self.new_block(Block { addr: b.addr + mapped, size: b.size - mapped, ..b.clone() });
            self.blocks[id as usize].size = mapped;
            self.link_after(id, rest);
            self.insert_unmapped(rest);
        }
        self.blocks[id as usize].state = State::Free;
        let (prev, next) = (self.blocks[id as usize].prev, self.blocks[id as usize].next);
        self.try_merge(id, prev);
        self.try_merge(id, next);
        self.insert_free(id);
        self.grow(b.small, mapped as i64);
        self.segment_allocs += 1;
        self.emit(SegmentAction::Map, mapped);
        Some(id)
    }

    /// `unmap_block`: unmap the pages fully inside the free block `id`; partial pages at either
    /// end stay mapped free blocks.
    fn unmap_block(&mut self, id: u32) {
        let (base, page) = self.page_of(id);
        let b = self.blocks[id as usize].clone();
        let first = (b.addr - base).div_ceil(page);
        let last = (b.end() - base) / page;
        if first >= last {
            return;
        }
        let (start, end) = (base + first * page, base + last * page);
        self.remove_free(id);
        if start > b.addr {
            let before = self.new_block(Block { addr: b.addr, size: start - b.addr, ..b.clone() });
            self.link_before(id, before);
            self.insert_free(before);
        }
        if end < b.end() {
            let after = self.new_block(Block { addr: end, size: b.end() - end, ..b.clone() });
            self.link_after(id, after);
            self.insert_free(after);
        }
        let blk = &mut self.blocks[id as usize];
        blk.addr = start;
        blk.size = end - start;
        blk.state = State::Unmapped;
        let (prev, next) = (blk.prev, blk.next);
        self.try_merge(id, prev);
        self.try_merge(id, next);
        self.insert_unmapped(id);
        self.grow(b.small, -((end - start) as i64));
        self.segment_frees += 1;
        self.emit(SegmentAction::Unmap, end - start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fasthash::FastMap;
    use crate::replay::rules::Rules;

    /// The largest free block the slow way: every block of both pools.
    fn largest_by_scan(a: &Allocator) -> u64 {
        a.free.iter().flat_map(|set| set.iter().map(|k| k.1)).max().unwrap_or(0)
    }

    #[test]
    fn the_largest_free_block_stays_exact_across_streams() {
        // 5 streams: the count-and-walk bound; 300: past the walk's limit, the index of sizes.
        for streams in [5, 300] {
            largest_stays_exact(streams);
        }
    }

    fn largest_stays_exact(streams: u64) {
        let mut a = Allocator::new(Settings::recorded(&Rules::default()), None, AddressSource::new([], FastMap::default()));
        let mut live: Vec<u32> = Vec::new();
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        for step in 0..4000 {
            if live.is_empty() || next() % 3 != 0 {
                let size = a.settings.rules.round_size(1 + next() % (24 * MIB));
                live.push(a.malloc(size, next() % streams).expect("no capacity limit"));
            } else {
                let i = (next() as usize) % live.len();
                a.free_block(live.swap_remove(i));
            }
            if step % 500 == 499 {
                a.release_cached_blocks();
            }
            assert_eq!(a.largest_free(), largest_by_scan(&a), "{streams} streams, after step {step}");
        }
        let indexed = matches!(a.largest, LargestFree::Sizes(_));
        assert_eq!(indexed, streams > 64, "{streams} streams: the sizes indexed");
    }
}
