//! Replay the layout forward from the window start with the allocator's rules to derive the block
//! size of every lifetime, then check that the replay lands exactly on the dump.
//!
//! The layout is kept as reserved ranges plus the non-free blocks: the allocator merges adjacent
//! free blocks, so the free space between two blocks is always one free block and needs no
//! bookkeeping of its own.

use super::backward::{dump_ranges, Backward};
use super::free_blocks::FreeBlocks;
use super::ranges::{Range, RangeSet};
use super::rules::{Rules, MIB, MIN_BLOCK};
use super::{IssueLog, Lifetime, SegmentLife, NONE};
use crate::codes::IssueCode;
use crate::fasthash::{FastMap, FastSet};
use crate::format::exact_bytes;
use crate::model::{Action, BlockState, DeviceTrace, Pool, Snapshot};
use std::collections::BTreeMap;

pub(crate) struct Forward {
    pub lifetimes: Vec<Lifetime>,
    pub event_lifetime: Vec<u32>,
    /// Indices of the segment events, ascending.
    pub segment_events: Vec<u32>,
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
    /// addr -> lifetime of every allocated or pending block (stale while `free` is set).
    blocks: BTreeMap<u64, u32>,
    /// The same layout by its free blocks, while every event fits it (see `free_blocks`).
    free: Option<FreeBlocks>,
    lifetimes: Vec<Lifetime>,
    /// Smallest free gap seen after each before-window block whose size is still a lower bound.
    gap_after: FastMap<u32, u64>,
}

impl Layout<'_> {
    /// Go on with the ordered map of blocks (the free blocks cannot answer what comes).
    fn ordered(&mut self) {
        if let Some(free) = self.free.take() {
            self.blocks = free.into_blocks();
        }
    }

    /// The block size for an alloc at the start of a free block, from the free blocks alone;
    /// None when that is not where it lands (the general path says why).
    fn fit(&self, addr: u64, requested: u64) -> Option<u64> {
        let avail = self.free.as_ref()?.free_from(addr)? - addr;
        let s = self.rules.round_size(requested);
        (avail >= s).then(|| if self.rules.should_split(self.rules.pool_of(s), s, avail - s) { s } else { avail })
    }

    fn insert_block(&mut self, addr: u64, l: u32) {
        match &mut self.free {
            Some(free) => free.take(addr, self.lifetimes[l as usize].size, l),
            None => {
                self.blocks.insert(addr, l);
            }
        }
    }

    fn remove_block(&mut self, addr: u64, l: u32) {
        match &mut self.free {
            Some(free) => free.release(addr, l, self.lifetimes[l as usize].size, |a| self.ranges.starts_at(a)),
            None => {
                if let std::collections::btree_map::Entry::Occupied(b) = self.blocks.entry(addr) {
                    if *b.get() == l {
                        b.remove();
                    }
                }
            }
        }
    }

    /// Whether `[addr, addr+size)` holds a block; with the free blocks, the free block around it
    /// when it holds none.
    fn free_around(&mut self, addr: u64, size: u64) -> Result<Option<(u64, u64)>, usize> {
        let end = addr.saturating_add(size);
        if let Some(around) = self.free.as_ref().and_then(|f| f.free_around(addr, end)) {
            return Ok(Some(around));
        }
        self.ordered();
        match self.blocks_within(addr, size) {
            0 => Ok(None),
            n => Err(n),
        }
    }
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
            if !lt.size_known() {
                lt.size = self.rules.round_size(lt.requested);
            }
            if self.ranges.containing(lt.addr).is_none() {
                let first = lt.free_requested_event().or(lt.free_completed_event()).map(|e| e as usize);
                log.add(
                    first,
                    IssueCode::BlockOutsideSegments,
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
    run_with(snap, trace, device, rules, back, log, true).0
}

/// `run`, optionally without the free blocks (to show they change nothing); also says whether
/// the free blocks answered every event.
fn run_with(
    snap: &Snapshot,
    trace: &DeviceTrace,
    device: i64,
    rules: &Rules,
    back: Backward,
    log: &mut IssueLog,
    use_free_blocks: bool,
) -> (Forward, bool) {
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
    let mut lay = Layout { rules, ranges: start_ranges, blocks: BTreeMap::new(), free: None, lifetimes, gap_after: FastMap::default() };
    lay.place_start_blocks(&start_blocks, log);
    let mut segment_events = Vec::new();
    if use_free_blocks && lay.gap_after.is_empty() {
        lay.free = FreeBlocks::build(&lay.ranges, &lay.blocks, &lay.lifetimes);
    }

    for (i, e) in trace.events.iter().enumerate() {
        let l = event_lifetime[i];
        match e.action() {
            Action::Alloc if l != NONE => {
                let derived = match lay.fit(e.addr, e.size) {
                    Some(size) => Ok(size),
                    None => {
                        lay.ordered();
                        lay.derive_size(e.addr, e.size)
                    }
                };
                let lt = &mut lay.lifetimes[l as usize];
                let orphan = lt.orphan;
                let mut mismatch = false;
                match derived {
                    Ok(size) if lt.size_known() => {
                        if size != lt.size {
                            mismatch = true;
                            log.add(
                                Some(i),
                                IssueCode::SizeMismatch,
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
                        log.add(Some(i), IssueCode::AllocInconsistent, format!("alloc of {}: {m}", exact_bytes(e.size as i64)));
                        if !lt.size_known() {
                            lt.size = rules.round_size(e.size);
                        }
                    }
                }
                if mismatch {
                    // The block keeps the dump's size, which no free block was cut for.
                    lay.ordered();
                }
                if !orphan {
                    lay.insert_block(e.addr, l);
                }
            }
            Action::FreeCompleted | Action::Free if l != NONE => lay.remove_block(e.addr, l),
            Action::SegmentAlloc | Action::SegmentMap => {
                segment_events.push(i as u32);
                match lay.ranges.apply(e.action(), e.addr, e.size, trace.stream(e)) {
                    Err(m) => {
                        log.add(Some(i), IssueCode::SegmentInconsistent, format!("{}: {m}", e.action().name()));
                        lay.ordered();
                    }
                    Ok(()) => {
                        if let (Some(free), Some(r)) = (&mut lay.free, lay.ranges.containing(e.addr)) {
                            let end = e.addr.saturating_add(e.size);
                            free.add_range(e.addr, end, r.start < e.addr, r.end() > end);
                        }
                    }
                }
                let pool = if e.size == 2 * MIB { Pool::Small } else { Pool::Large };
                open_segments.insert((e.addr, e.size), segments.len());
                segments.push(SegmentLife {
                    addr: e.addr,
                    size: e.size,
                    stream: trace.stream(e),
                    pool,
                    expandable: e.action() == Action::SegmentMap,
                    alloc_event: Some(i as u32),
                    free_event: None,
                    at_dump: false,
                });
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                segment_events.push(i as u32);
                let around = lay.free_around(e.addr, e.size);
                if around.is_err() {
                    log.add(
                        Some(i),
                        IssueCode::SegmentInconsistent,
                        format!("{} of 0x{:x}+{} while blocks in it are live", e.action().name(), e.addr, e.size),
                    );
                }
                let done = if e.action() == Action::SegmentFree {
                    lay.ranges.remove_exact(e.addr, e.size)
                } else {
                    lay.ranges.cut(e.addr, e.size)
                };
                match (done, around, &mut lay.free) {
                    (Err(m), _, _) => log.add(Some(i), IssueCode::SegmentInconsistent, format!("{}: {m}", e.action().name())),
                    (Ok(_), Ok(Some(around)), Some(free)) => free.cut(around, e.addr, e.addr.saturating_add(e.size)),
                    _ => {}
                }
                match open_segments.remove(&(e.addr, e.size)) {
                    Some(s) => segments[s].free_event = Some(i as u32),
                    None => segments.push(SegmentLife {
                        addr: e.addr,
                        size: e.size,
                        stream: trace.stream(e),
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
    let free_blocks_throughout = lay.free.is_some();
    lay.ordered();

    let dump_blocks_matched = check_against_dump(snap, device, &lay, log);
    let mut ambiguous_bytes = 0;
    for (&l, &gap) in &lay.gap_after {
        let lt = &mut lay.lifetimes[l as usize];
        if lt.size_exact {
            continue;
        }
        // Its tail x ≤ 1 MiB, and the free block after it stays > 1 MiB.
        let x = gap.saturating_sub(MIB + MIN_BLOCK).min(MIB);
        lt.set_size_uncertainty(x);
        ambiguous_bytes += x;
    }
    let fwd = Forward {
        lifetimes: lay.lifetimes,
        event_lifetime,
        segment_events,
        segments,
        start_ranges: kept_start,
        dump_blocks_matched,
        ambiguous_bytes,
    };
    (fwd, free_blocks_throughout)
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
                IssueCode::DumpSegmentMismatch,
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
        let lt = &lay.lifetimes[l as usize];
        if !dump_addrs.contains(&addr) && !lt.orphan && !lt.free_unrecorded {
            log.add(None, IssueCode::DumpBlockMissing, format!("the replay ends with a block at 0x{addr:x} that the dump does not have"));
        }
    }
    [matched, total]
}

#[cfg(test)]
mod tests {
    use super::super::{backward, Rules};
    use super::*;
    use crate::model::{Block, Event, Segment};

    /// A trace of allocs at free blocks' starts, frees, segments (some touching), expandable
    /// mappings that merge and unmaps of free tails, as the allocator writes them, with one
    /// wrong event in every `noise` (0: none) to force the ordered map from there on.
    fn trace(seed: u64, events: usize, noise: u64) -> Snapshot {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n.max(1)
        };
        // One setting per run, as PyTorch has: cudaMalloc segments, or expandable mappings.
        let expandable = seed.is_multiple_of(3);
        let rules = Rules { expandable, ..Rules::default() };
        // Ranges (start, end, expandable), free blocks (start, end), live blocks (addr, size, requested).
        let (mut ranges, mut free, mut live) = (Vec::<(u64, u64, bool)>::new(), Vec::<(u64, u64)>::new(), Vec::<(u64, u64, u64)>::new());
        let mut out = DeviceTrace::default();
        let mut top = 0x7f00_0000_0000u64;
        let push = |out: &mut DeviceTrace, a: Action, addr: u64, size: u64| out.events.push(Event::new(a, addr, size));
        while out.events.len() < events {
            match next(20) {
                0..=2 => {
                    let size = if next(2) == 0 { 2 << 20 } else { 20 << 20 };
                    let touching = next(3) == 0;
                    let start = if touching { top } else { top + (64 << 20) };
                    push(&mut out, if expandable { Action::SegmentMap } else { Action::SegmentAlloc }, start, size);
                    match ranges.iter_mut().find(|r| r.2 && r.1 == start).filter(|_| expandable) {
                        // Pages mapped right after an expandable range: it grows, its free tail too.
                        Some(r) => {
                            r.1 += size;
                            match free.iter_mut().find(|f| f.1 == start) {
                                Some(f) => f.1 += size,
                                None => free.push((start, start + size)),
                            }
                        }
                        None => {
                            ranges.push((start, start + size, expandable));
                            free.push((start, start + size));
                        }
                    }
                    top = start + size;
                }
                3 => {
                    // Release a wholly free range, or unmap the free tail pages of an expandable one.
                    let whole = free.iter().position(|f| ranges.iter().any(|r| (r.0, r.1) == *f));
                    if let Some(i) = whole {
                        let (s, e) = free.remove(i);
                        let r = ranges.iter().position(|r| (r.0, r.1) == (s, e)).unwrap();
                        let (_, _, expandable) = ranges.remove(r);
                        push(&mut out, if expandable { Action::SegmentUnmap } else { Action::SegmentFree }, s, e - s);
                    } else if let Some(r) = ranges
                        .iter()
                        .position(|r| r.2 && free.iter().any(|f| f.1 == r.1 && f.0 + (2 << 20) <= r.1 && f.0 < r.1 - (2 << 20)))
                    {
                        let end = ranges[r].1;
                        push(&mut out, Action::SegmentUnmap, end - (2 << 20), 2 << 20);
                        ranges[r].1 -= 2 << 20;
                        free.iter_mut().find(|f| f.1 == end).unwrap().1 -= 2 << 20;
                    }
                }
                4..=11 if !free.is_empty() => {
                    let i = next(free.len() as u64) as usize;
                    let (s, e) = free[i];
                    // Now and then nearly all of the free block: the allocator hands out all of it.
                    let requested = match next(4) {
                        0 => (e - s).saturating_sub(next(1 << 21)).max(1),
                        _ => [700, 4000, 300_000, 1 << 20, 3 << 20, 9 << 20][next(6) as usize] + next(512),
                    };
                    let b = rules.round_size(requested);
                    if b <= e - s {
                        let size = if rules.should_split(rules.pool_of(b), b, e - s - b) { b } else { e - s };
                        push(&mut out, Action::Alloc, s, requested);
                        live.push((s, size, requested));
                        if s + size < e {
                            free[i].0 = s + size;
                        } else {
                            free.remove(i);
                        }
                    }
                }
                12..=18 if !live.is_empty() => {
                    let (a, size, requested) = live.swap_remove(next(live.len() as u64) as usize);
                    push(&mut out, Action::FreeRequested, a, requested);
                    push(&mut out, Action::FreeCompleted, a, requested);
                    let range = *ranges.iter().find(|r| r.0 <= a && a < r.1).unwrap();
                    let (mut s, mut e) = (a, a + size);
                    if let Some(j) = free.iter().position(|f| f.1 == s && s != range.0) {
                        s = free.swap_remove(j).0;
                    }
                    if let Some(j) = free.iter().position(|f| f.0 == e && e != range.1) {
                        e = free.swap_remove(j).1;
                    }
                    free.push((s, e));
                }
                19 if noise > 0 && next(noise) == 0 => {
                    // An alloc in the middle of a free block or over a live one, or a stray free.
                    let a = free.first().map(|f| f.0 + 512).or(live.first().map(|l| l.0)).unwrap_or(top);
                    push(&mut out, [Action::Alloc, Action::FreeCompleted][next(2) as usize], a, 512);
                }
                _ => {}
            }
        }
        let segments = ranges
            .iter()
            .map(|&(start, end, expandable)| Segment {
                device: 0,
                address: start,
                total_size: end - start,
                allocated_size: 0,
                active_size: 0,
                requested_size: 0,
                stream: 0,
                pool: if end - start == 2 << 20 { Pool::Small } else { Pool::Large },
                pool_id: None,
                is_expandable: expandable,
                stack: None,
                blocks: live
                    .iter()
                    .filter(|l| start <= l.0 && l.0 < end)
                    .map(|&(address, size, requested_size)| Block {
                        address,
                        size,
                        requested_size,
                        state: BlockState::ActiveAllocated,
                        stack: None,
                    })
                    .collect(),
            })
            .collect();
        Snapshot { segments, traces: vec![out], ..Default::default() }
    }

    fn forward(snap: &Snapshot, use_free_blocks: bool) -> (String, Vec<String>, bool) {
        let trace = &snap.traces[0];
        let rules = Rules::infer(snap, 0);
        let mut log = IssueLog::default();
        let back = backward::run(snap, trace, 0, &mut log);
        let (f, throughout) = run_with(snap, trace, 0, &rules, back, &mut log, use_free_blocks);
        let issues = log.issues.iter().map(|i| format!("{:?} {} {}", i.event, i.code, i.message)).collect();
        (format!("{:?} {:?} {:?} {}", f.lifetimes, f.segments, f.dump_blocks_matched, f.ambiguous_bytes), issues, throughout)
    }

    /// The free blocks answer exactly what the ordered map answers: the same block sizes, the
    /// same issues, on consistent traces (free blocks all along) and on traces with wrong events
    /// (the ordered map from the first one on).
    #[test]
    fn free_blocks_change_nothing() {
        let mut handed_over = 0;
        for seed in 1..=60 {
            let noise = [0, 0, 50, 400][seed as usize % 4];
            let snap = trace(seed, 4000, noise);
            let (fast, fast_issues, throughout) = forward(&snap, true);
            let (ordered, ordered_issues, _) = forward(&snap, false);
            assert_eq!(fast_issues, ordered_issues, "seed {seed}");
            assert!(fast == ordered, "seed {seed}: the lifetimes differ");
            if noise == 0 {
                assert_eq!(fast_issues, Vec::<String>::new(), "seed {seed}: a consistent trace");
                assert!(throughout, "seed {seed}: the free blocks answered every event of a consistent trace");
            }
            handed_over += !throughout as usize;
        }
        assert!(handed_over >= 10, "wrong events hand over to the ordered map ({handed_over} traces did)");
    }
}
