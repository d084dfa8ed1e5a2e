//! Undo the trace from the dump back to the window start. Each block object met on the way is a
//! lifetime: it is born at the dump (a live block) or where its `free_completed` is undone, and
//! its `alloc` closes it. What is still open at the end existed before the first event.

use super::ranges::{Range, RangeSet};
use super::{IssueLog, Lifetime, StackSource, NONE};
use crate::codes::IssueCode;
use crate::fasthash::FastMap;
use crate::format::exact_bytes;
use crate::model::{Action, BlockState, DeviceTrace, Pool, Snapshot};

pub(crate) struct Backward {
    pub lifetimes: Vec<Lifetime>,
    pub event_lifetime: Vec<u32>,
    /// Reserved ranges before the first event.
    pub start_ranges: RangeSet,
    /// Lifetimes open before the first event (allocated before the window).
    pub start_blocks: Vec<u32>,
}

pub(crate) fn dump_ranges(snap: &Snapshot, device: i64, log: &mut IssueLog) -> RangeSet {
    let mut ranges = RangeSet::default();
    for s in snap.segments.iter().filter(|s| s.device == device) {
        let r = Range { start: s.address, size: s.total_size, stream: s.stream, pool: s.pool, expandable: s.is_expandable };
        if let Err(e) = ranges.insert_separate(r) {
            log.add(None, IssueCode::DumpSegmentOverlap, format!("dump segment: {e}"));
        }
    }
    ranges
}

pub(crate) fn run(snap: &Snapshot, trace: &DeviceTrace, device: i64, log: &mut IssueLog) -> Backward {
    let events = &trace.events;
    // One lifetime per allocation plus the dump's live blocks (frees of blocks from before the
    // window add a few): reserved up front, a list of millions never doubles.
    let allocs = events.allocs();
    let live_blocks: usize = snap.segments.iter().filter(|s| s.device == device).map(|s| s.blocks.len()).sum();
    let mut lifetimes: Vec<Lifetime> = Vec::with_capacity(allocs + live_blocks);
    let mut event_lifetime = vec![NONE; events.len()];
    let mut unmatched: Vec<u32> = Vec::new();
    let mut open: FastMap<u64, u32> = FastMap::default();
    let mut ranges = dump_ranges(snap, device, log);

    for s in snap.segments.iter().filter(|s| s.device == device) {
        for b in s.blocks.iter().filter(|b| b.state != BlockState::Inactive) {
            let id = lifetimes.len() as u32;
            let mut lt = Lifetime::new(b.address, b.size, b.requested_size, s.stream);
            lt.state_at_dump = Some(b.state);
            lt.set_stack(b.stack);
            lt.stack_source = if b.stack.is_some() { StackSource::DumpBlock } else { StackSource::None };
            lt.size_exact = true;
            lifetimes.push(lt);
            if open.insert(b.address, id).is_some() {
                log.add(None, IssueCode::DumpBlockDuplicate, format!("two dump blocks start at 0x{:x}", b.address));
            }
        }
    }

    for (i, e) in (0..events.len()).rev().map(|i| (i, &events[i])) {
        match e.action() {
            Action::Alloc => match open.remove(&e.addr) {
                Some(l) => {
                    let lt = &mut lifetimes[l as usize];
                    lt.set_alloc_event(Some(i as u32));
                    lt.requested = e.size;
                    lt.stream = trace.stream(e);
                    if e.stack().is_some() {
                        lt.set_stack(e.stack());
                        lt.stack_source = StackSource::Alloc;
                    }
                    event_lifetime[i] = l;
                }
                None => {
                    unmatched.push(i as u32);
                    let id = lifetimes.len() as u32;
                    lifetimes.push(new_freed(e.addr, e.size, trace.stream(e), None));
                    let lt = &mut lifetimes[id as usize];
                    lt.set_alloc_event(Some(i as u32));
                    lt.orphan = true;
                    lt.set_stack(e.stack());
                    lt.stack_source = if e.stack().is_some() { StackSource::Alloc } else { StackSource::None };
                    event_lifetime[i] = id;
                }
            },
            Action::FreeRequested => {
                let fits = open.get(&e.addr).copied().filter(|&l| {
                    let lt = &lifetimes[l as usize];
                    lt.free_requested_event().is_none()
                        && (lt.free_completed_event().is_some() || lt.state_at_dump == Some(BlockState::ActivePendingFree))
                });
                match fits {
                    Some(l) => {
                        lifetimes[l as usize].set_free_requested_event(Some(i as u32));
                        event_lifetime[i] = l;
                    }
                    None => log.add(
                        Some(i),
                        IssueCode::FreeUnmatched,
                        format!("free_requested at 0x{:x} matches no block that is freed or pending later", e.addr),
                    ),
                }
            }
            Action::FreeCompleted | Action::Free => {
                if let Some(later) = open.remove(&e.addr) {
                    log.add(
                        Some(i),
                        IssueCode::FreeWhileOccupied,
                        format!(
                            "free of 0x{:x}, but the block there later has no alloc event in between (duplicated free or a missing alloc)",
                            e.addr
                        ),
                    );
                    lifetimes[later as usize].orphan = true;
                }
                let id = lifetimes.len() as u32;
                let mut lt = new_freed(e.addr, e.size, trace.stream(e), Some(i as u32));
                if e.action() == Action::Free {
                    lt.set_free_requested_event(Some(i as u32));
                }
                if e.stack().is_some() {
                    lt.set_stack(e.stack());
                    lt.stack_source = StackSource::Free;
                }
                lifetimes.push(lt);
                open.insert(e.addr, id);
                event_lifetime[i] = id;
            }
            Action::SegmentAlloc => {
                if let Err(m) = ranges.remove_exact(e.addr, e.size) {
                    log.add(Some(i), IssueCode::SegmentUnmatched, format!("segment_alloc: {m}"));
                }
            }
            Action::SegmentFree => {
                let pool = if e.size == 2 << 20 { Pool::Small } else { Pool::Large };
                if let Err(m) = ranges.insert(Range { start: e.addr, size: e.size, stream: trace.stream(e), pool, expandable: false }) {
                    log.add(Some(i), IssueCode::SegmentUnmatched, format!("segment_free: {m}"));
                }
            }
            Action::SegmentMap => {
                if let Err(m) = ranges.cut(e.addr, e.size) {
                    log.add(Some(i), IssueCode::SegmentUnmatched, format!("segment_map: {m}"));
                }
            }
            Action::SegmentUnmap => {
                let pool = neighbour_pool(&ranges, e.addr, e.size);
                if let Err(m) = ranges.insert(Range { start: e.addr, size: e.size, stream: trace.stream(e), pool, expandable: true }) {
                    log.add(Some(i), IssueCode::SegmentUnmatched, format!("segment_unmap: {m}"));
                }
            }
            _ => {}
        }
    }

    unrecorded_frees(trace, &unmatched, &event_lifetime, &mut lifetimes, log);
    let mut start_blocks: Vec<u32> = open.into_values().filter(|&l| !lifetimes[l as usize].orphan).collect();
    start_blocks.sort_by_key(|&l| lifetimes[l as usize].addr);
    Backward { lifetimes, event_lifetime, start_ranges: ranges, start_blocks }
}

/// The allocs the backward pass could not place (`unmatched`, latest first): never freed in the
/// window and not in the dump. One whose address no later alloc uses was freed after the last
/// recorded event (the trace was cut short, or frees were skipped): it holds its memory to the
/// window's end. One whose address is used again lost its free inside the window: where it
/// ended cannot be known, so it is left out.
fn unrecorded_frees(trace: &DeviceTrace, unmatched: &[u32], event_lifetime: &[u32], lifetimes: &mut [Lifetime], log: &mut IssueLog) {
    if unmatched.is_empty() {
        return;
    }
    let mut last_alloc: FastMap<u64, u32> = FastMap::default();
    for (i, e) in trace.events.iter().enumerate().filter(|(_, e)| e.action() == Action::Alloc) {
        last_alloc.insert(e.addr, i as u32);
    }
    for &i in unmatched.iter().rev() {
        let e = &trace.events[i as usize];
        let what =
            format!("alloc of {} at 0x{:x} is neither freed later in the window nor live at the dump", exact_bytes(e.size as i64), e.addr);
        if last_alloc.get(&e.addr) == Some(&i) {
            let lt = &mut lifetimes[event_lifetime[i as usize] as usize];
            lt.orphan = false;
            lt.free_unrecorded = true;
            log.add(
                Some(i as usize),
                IssueCode::AllocUnmatched,
                format!("{what}: its free is not in the trace (cut short, or recorded with skip_actions); counted as allocated to the window's end"),
            );
        } else {
            log.add(
                Some(i as usize),
                IssueCode::AllocUnmatched,
                format!("{what}, and its address is used again: left out of the counters"),
            );
        }
    }
}

fn new_freed(addr: u64, requested: u64, stream: u64, free_completed: Option<u32>) -> Lifetime {
    let mut lt = Lifetime::new(addr, 0, requested, stream);
    lt.set_free_completed_event(free_completed);
    lt
}

/// An unmapped range that is mapped again belongs to the pool of the range it touches.
fn neighbour_pool(ranges: &RangeSet, addr: u64, size: u64) -> Pool {
    ranges.containing(addr.wrapping_sub(1)).or_else(|| ranges.containing(addr.saturating_add(size))).map(|r| r.pool).unwrap_or(Pool::Large)
}
