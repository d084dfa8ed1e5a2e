//! Replay the layout forward from the window start with the allocator's rules to derive the block
//! size of every lifetime, then check that the replay lands exactly on the dump.
//!
//! The layout is kept as reserved ranges plus the non-free blocks: the allocator merges adjacent
//! free blocks, so the free space between two blocks is always one free block and needs no
//! bookkeeping of its own.

use super::backward::{dump_ranges, Backward};
use super::ranges::{Range, RangeSet};
use super::rules::{Rules, MIB, MIN_BLOCK};
use super::{IssueLog, Lifetime, SegmentLife, NONE};
use crate::fasthash::{FastMap, FastSet};
use crate::format::exact_bytes;
use crate::model::{Action, BlockState, DeviceTrace, Pool, Snapshot};
use std::collections::BTreeMap;

pub(crate) struct Forward {
    pub lifetimes: Vec<Lifetime>,
    pub event_lifetime: Vec<u32>,
    pub segments: Vec<SegmentLife>,
    pub start_ranges: RangeSet,
    pub dump_blocks_matched: [u64; 2],
    pub ambiguous_bytes: u64,
}

/// torch_npu leaves the front of a free block (< 16 KiB) free to align large expandable blocks.
const NPU_ALIGN: u64 = 16 << 10;

struct Layout<'r> {
    rules: &'r Rules,
    ranges: RangeSet,
    /// addr -> lifetime of every allocated or pending block.
    blocks: BTreeMap<u64, u32>,
    lifetimes: Vec<Lifetime>,
    /// Smallest free gap seen after each before-window block whose size is still a lower bound.
    gap_after: FastMap<u32, u64>,
}

impl Layout<'_> {
    fn end_of(&self, l: u32) -> u64 {
        let lt = &self.lifetimes[l as usize];
        lt.addr.saturating_add(lt.size)
    }

    /// May this block still grow (a before-window block in a pool where blocks can be larger
    /// than the rounded request)?
    fn is_growable(&self, l: u32, range: &Range) -> bool {
        !self.lifetimes[l as usize].size_exact && !range.expandable && !self.rules.expandable && range.pool == Pool::Large
    }

    /// The first block at or after `addr`.
    fn block_from(&self, addr: u64) -> Option<u64> {
        self.blocks.range(addr..).next().map(|(&a, _)| a)
    }

    /// Where the free space from `addr` ends: the next block, or the range's end.
    fn next_start(next_block: Option<u64>, range: &Range) -> u64 {
        next_block.unwrap_or(u64::MAX).min(range.end())
    }

    fn prev_block(&self, addr: u64, range: &Range) -> Option<u32> {
        self.blocks.range(range.start..addr).next_back().map(|(_, &l)| l)
    }

    fn blocks_within(&self, start: u64, size: u64) -> usize {
        self.blocks.range(start..start.saturating_add(size)).count()
    }

    /// Grow a lower-bound block to `new_end`: the allocator must have handed it the whole free
    /// block (remainder ≤ 1 MiB is never split off in the large pool).
    fn grow_to(&mut self, l: u32, new_end: u64) {
        let lt = &mut self.lifetimes[l as usize];
        lt.size = new_end - lt.addr;
        lt.size_exact = true;
        self.gap_after.remove(&l);
    }

    fn place_start_blocks(&mut self, start_blocks: &[u32], log: &mut IssueLog) {
        for &l in start_blocks {
            let lt = &mut self.lifetimes[l as usize];
            if !lt.size_known {
                lt.size = self.rules.round_size(lt.requested);
            }
            if self.ranges.containing(lt.addr).is_none() {
                let first = lt.free_requested_event().or(lt.free_completed_event()).map(|e| e as usize);
                log.add(
                    first,
                    "BLOCK_OUTSIDE_SEGMENTS",
                    format!("the block at 0x{:x}, alive before the window, lies outside every segment reserved then (a missing alloc or segment event?)", lt.addr),
                );
            }
            self.blocks.insert(lt.addr, l);
        }
        // Exact whenever the pool never hands out more than the rounded request.
        for &l in start_blocks {
            if self.lifetimes[l as usize].size_exact {
                continue;
            }
            let addr = self.lifetimes[l as usize].addr;
            let Some(range) = self.ranges.containing(addr) else {
                continue;
            };
            if !self.is_growable(l, &range) {
                self.lifetimes[l as usize].size_exact = true;
                continue;
            }
            // A free block of ≤ 1 MiB cannot follow it in the large pool: such a gap is its tail.
            let end = self.end_of(l);
            let next = Layout::next_start(self.block_from(addr + 1), &range);
            if next > end && next - end <= MIB {
                self.grow_to(l, next);
            } else if next == end {
                self.lifetimes[l as usize].size_exact = true;
            } else {
                self.gap_after.insert(l, next.saturating_sub(end));
            }
        }
    }

    /// The block size the allocator gives a request at `addr`, or an issue text.
    fn derive_size(&mut self, addr: u64, requested: u64) -> Result<u64, String> {
        let s = self.rules.round_size(requested);
        let range = self.ranges.containing(addr).ok_or_else(|| format!("0x{addr:x} is outside every reserved segment"))?;
        // One walk finds both an allocation already at `addr` and the end of the free block.
        let next_block = self.block_from(addr);
        if next_block == Some(addr) {
            return Err(format!("0x{addr:x} is already allocated"));
        }
        let mut free_start = range.start;
        if let Some(p) = self.prev_block(addr, &range) {
            let prev_end = self.end_of(p);
            if prev_end > addr {
                if self.is_growable(p, &range) {
                    return Err(format!(
                        "0x{addr:x} lies inside the block at 0x{:x} allocated before the window",
                        self.lifetimes[p as usize].addr
                    ));
                }
                return Err(format!("0x{addr:x} lies inside the live block at 0x{:x}", self.lifetimes[p as usize].addr));
            }
            free_start = prev_end;
            if prev_end < addr && self.is_growable(p, &range) {
                if addr - prev_end <= MIB {
                    self.grow_to(p, addr);
                    free_start = addr;
                } else {
                    let g = self.gap_after.entry(p).or_insert(u64::MAX);
                    *g = (*g).min(addr - prev_end);
                }
            } else if prev_end == addr && !self.lifetimes[p as usize].size_exact {
                self.lifetimes[p as usize].size_exact = true;
                self.gap_after.remove(&p);
            }
        }
        let free_end = Layout::next_start(next_block, &range);
        if free_start < addr {
            let npu_aligned = self.rules.pad > 0
                && (range.expandable || self.rules.expandable)
                && s >= 2 * MIB
                && addr.is_multiple_of(NPU_ALIGN)
                && addr - free_start < NPU_ALIGN;
            if !npu_aligned {
                return Err(format!(
                    "0x{addr:x} is {} into a free block (allocations start at a free block's start)",
                    exact_bytes((addr - free_start) as i64)
                ));
            }
        }
        let avail = free_end.saturating_sub(addr);
        if avail < s {
            return Err(format!("{s} B do not fit the {avail} B free at 0x{addr:x}"));
        }
        let split = self.rules.should_split(self.rules.pool_of(s), s, avail - s);
        Ok(if split { s } else { avail })
    }
}

pub(crate) fn run(snap: &Snapshot, trace: &DeviceTrace, device: i64, rules: &Rules, back: Backward, log: &mut IssueLog) -> Forward {
    let Backward { lifetimes, event_lifetime, start_ranges, start_blocks } = back;
    let mut segments: Vec<SegmentLife> = start_ranges
        .iter()
        .map(|r| SegmentLife {
            addr: r.start,
            size: r.size,
            stream: r.stream,
            pool: r.pool,
            expandable: r.expandable,
            alloc_event: None,
            free_event: None,
            at_dump: false,
        })
        .collect();
    let mut open_segments: FastMap<(u64, u64), usize> = segments.iter().enumerate().map(|(i, s)| ((s.addr, s.size), i)).collect();
    let kept_start = start_ranges.clone();
    let mut lay = Layout { rules, ranges: start_ranges, blocks: BTreeMap::new(), lifetimes, gap_after: FastMap::default() };
    lay.place_start_blocks(&start_blocks, log);

    for (i, e) in trace.events.iter().enumerate() {
        let l = event_lifetime[i];
        match e.action() {
            Action::Alloc if l != NONE => {
                let derived = lay.derive_size(e.addr, e.size);
                let lt = &mut lay.lifetimes[l as usize];
                match derived {
                    Ok(size) if lt.size_known => {
                        if size != lt.size {
                            log.add(
                                Some(i),
                                "SIZE_MISMATCH",
                                format!(
                                    "alloc at 0x{:x}: the rules give {}, the dump block has {}",
                                    e.addr,
                                    exact_bytes(size as i64),
                                    exact_bytes(lt.size as i64)
                                ),
                            );
                        }
                    }
                    Ok(size) => {
                        lt.size = size;
                        lt.size_exact = true;
                    }
                    Err(m) => {
                        log.add(Some(i), "ALLOC_INCONSISTENT", format!("alloc of {}: {m}", exact_bytes(e.size as i64)));
                        if !lt.size_known {
                            lt.size = rules.round_size(e.size);
                        }
                    }
                }
                if !lt.orphan {
                    lay.blocks.insert(e.addr, l);
                }
            }
            Action::FreeCompleted | Action::Free if l != NONE => {
                if let std::collections::btree_map::Entry::Occupied(b) = lay.blocks.entry(e.addr) {
                    if *b.get() == l {
                        b.remove();
                    }
                }
            }
            Action::SegmentAlloc | Action::SegmentMap => {
                if let Err(m) = lay.ranges.apply(e.action(), e.addr, e.size, e.stream) {
                    log.add(Some(i), "SEGMENT_INCONSISTENT", format!("{}: {m}", e.action().name()));
                }
                let pool = if e.size == 2 * MIB { Pool::Small } else { Pool::Large };
                open_segments.insert((e.addr, e.size), segments.len());
                segments.push(SegmentLife {
                    addr: e.addr,
                    size: e.size,
                    stream: e.stream,
                    pool,
                    expandable: e.action() == Action::SegmentMap,
                    alloc_event: Some(i as u32),
                    free_event: None,
                    at_dump: false,
                });
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                if lay.blocks_within(e.addr, e.size) > 0 {
                    log.add(
                        Some(i),
                        "SEGMENT_INCONSISTENT",
                        format!("{} of 0x{:x}+{} while blocks in it are live", e.action().name(), e.addr, e.size),
                    );
                }
                let done = if e.action() == Action::SegmentFree {
                    lay.ranges.remove_exact(e.addr, e.size)
                } else {
                    lay.ranges.cut(e.addr, e.size)
                };
                if let Err(m) = done {
                    log.add(Some(i), "SEGMENT_INCONSISTENT", format!("{}: {m}", e.action().name()));
                }
                match open_segments.remove(&(e.addr, e.size)) {
                    Some(s) => segments[s].free_event = Some(i as u32),
                    None => segments.push(SegmentLife {
                        addr: e.addr,
                        size: e.size,
                        stream: e.stream,
                        pool: Pool::Large,
                        expandable: e.action() == Action::SegmentUnmap,
                        alloc_event: None,
                        free_event: Some(i as u32),
                        at_dump: false,
                    }),
                }
            }
            _ => {}
        }
    }
    for &s in open_segments.values() {
        segments[s].at_dump = true;
    }

    let dump_blocks_matched = check_against_dump(snap, device, &lay, log);
    let mut ambiguous_bytes = 0;
    for (&l, &gap) in &lay.gap_after {
        let lt = &mut lay.lifetimes[l as usize];
        if lt.size_exact {
            continue;
        }
        // Its tail x ≤ 1 MiB, and the free block after it stays > 1 MiB.
        let x = gap.saturating_sub(MIB + MIN_BLOCK).min(MIB);
        lt.size_uncertainty = x;
        ambiguous_bytes += x;
    }
    Forward { lifetimes: lay.lifetimes, event_lifetime, segments, start_ranges: kept_start, dump_blocks_matched, ambiguous_bytes }
}

/// The replay must end on the dump: the same ranges and the same blocks with the same sizes.
fn check_against_dump(snap: &Snapshot, device: i64, lay: &Layout, log: &mut IssueLog) -> [u64; 2] {
    let mut scratch = IssueLog::default();
    let dump = dump_ranges(snap, device, &mut scratch);
    for r in dump.iter() {
        let got = lay.ranges.containing(r.start);
        if got.map(|g| (g.start, g.size)) != Some((r.start, r.size)) {
            log.add(
                None,
                "DUMP_SEGMENT_MISMATCH",
                format!("the dump has a segment 0x{:x}+{} that the replay does not end with", r.start, r.size),
            );
        }
    }
    let mut matched = 0;
    let mut total = 0;
    let mut dump_addrs = FastSet::default();
    for s in snap.segments.iter().filter(|s| s.device == device) {
        for b in s.blocks.iter().filter(|b| b.state != BlockState::Inactive) {
            total += 1;
            dump_addrs.insert(b.address);
            let got = lay.blocks.get(&b.address).map(|&l| lay.lifetimes[l as usize].size);
            if got == Some(b.size) {
                matched += 1;
            }
        }
    }
    for (&addr, &l) in &lay.blocks {
        if !dump_addrs.contains(&addr) && !lay.lifetimes[l as usize].orphan {
            log.add(None, "DUMP_BLOCK_MISSING", format!("the replay ends with a block at 0x{addr:x} that the dump does not have"));
        }
    }
    [matched, total]
}
