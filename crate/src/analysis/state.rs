//! Allocator state at an event: the reserved ranges alive right after it and the blocks in them,
//! with the free space between blocks as free blocks (the allocator merges neighbouring free
//! blocks, so each gap is one free block).

use super::live;
use crate::model::{BlockState, Pool};
use crate::replay::ranges::Range;
use crate::replay::Lifetime;
use crate::Loaded;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StateBlock {
    pub address: i64,
    pub size: i64,
    pub requested: i64,
    pub state: BlockState,
    pub stack_id: Option<i64>,
    pub lifetime_id: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StateSegment {
    pub address: i64,
    pub size: i64,
    pub stream: i64,
    pub segment_type: Pool,
    pub is_expandable: bool,
    pub blocks: Vec<StateBlock>,
    pub free_bytes: i64,
    pub largest_free: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct AllocatorState {
    pub device: i64,
    pub event: Option<i64>,
    pub segments: Vec<StateSegment>,
    pub reserved: i64,
    pub allocated: i64,
    pub active: i64,
    /// Free bytes in reserved segments (pending frees excluded: they count as active).
    pub free: i64,
    /// `free` / `reserved` (0 when nothing is reserved).
    pub free_share: f64,
    pub largest_free: i64,
    /// Live blocks outside every known range (an inconsistent trace).
    pub unplaced_blocks: i64,
}

/// The allocator state of device position `pos` right after `event` (None = the window start),
/// from the replay: the window-start ranges with the segment events up to it applied, and the
/// live blocks in address order.
pub fn state(l: &Loaded, pos: usize, event: Option<i64>) -> AllocatorState {
    let d = &l.devices[pos];
    let at = live::event_index(event);
    let mut set = d.start_ranges.clone();
    if let (Some(e), Some(trace)) = (at, l.snapshot.trace(d.device)) {
        for &i in d.segment_events.iter().take_while(|&&i| i <= e) {
            let ev = &trace.events[i as usize];
            // Inconsistent events were reported by the replay; the state shows what still applies.
            let _ = set.apply(ev.action(), ev.addr, ev.size, trace.stream(ev));
        }
    }
    // Lifetime ids run across devices.
    let lifetime_base: i64 = l.devices[..pos].iter().map(|d| d.lifetimes.len() as i64).sum();
    let mut live = live::live(d, at);
    live.sort_by_key(|&i| d.lifetimes[i].addr as i64);
    let blocks = live
        .into_iter()
        .map(|i| {
            let lt = &d.lifetimes[i];
            StateBlock {
                address: lt.addr as i64,
                size: lt.size as i64,
                requested: lt.requested as i64,
                state: block_state(lt, at),
                stack_id: lt.stack().map(i64::from),
                lifetime_id: Some(lifetime_base + i as i64),
            }
        })
        .collect();
    place(d.device, event, set.iter().copied().collect(), blocks)
}

/// A live block's state right after `event`: pending once the program freed it (or, from before
/// the window, when only its completed free or the dump says so), else allocated.
fn block_state(lt: &Lifetime, event: Option<u32>) -> BlockState {
    let requested = lt.free_requested_event();
    let freed = event.is_some_and(|e| requested.is_some_and(|f| f <= e));
    let before_unrequested = lt.before_window() && requested.is_none();
    let pending_before = before_unrequested
        && match lt.free_completed_event() {
            Some(_) => true,
            None => lt.state_at_dump == Some(BlockState::ActivePendingFree),
        };
    if freed || pending_before {
        BlockState::ActivePendingFree
    } else {
        BlockState::ActiveAllocated
    }
}

/// The live blocks (in address order) placed in the reserved ranges, with the gaps as free
/// blocks, and the totals.
fn place(device: i64, event: Option<i64>, ranges: Vec<Range>, blocks: Vec<StateBlock>) -> AllocatorState {
    let segs = ranges.into_iter().map(|r| StateSegment {
        address: r.start as i64,
        size: r.size as i64,
        stream: r.stream as i64,
        segment_type: r.pool,
        is_expandable: r.expandable,
        blocks: vec![],
        free_bytes: 0,
        largest_free: 0,
    });
    let mut st = AllocatorState {
        device,
        event,
        segments: vec![],
        reserved: 0,
        allocated: 0,
        active: 0,
        free: 0,
        free_share: 0.0,
        largest_free: 0,
        unplaced_blocks: 0,
    };
    let mut bi = 0;
    for mut s in segs {
        let end = s.address + s.size;
        while bi < blocks.len() && blocks[bi].address < s.address {
            st.unplaced_blocks += 1;
            bi += 1;
        }
        let mut cursor = s.address;
        while bi < blocks.len() && blocks[bi].address < end {
            let b = blocks[bi].clone();
            if b.address > cursor {
                s.blocks.push(free_block(cursor, b.address - cursor));
            }
            cursor = cursor.max(b.address + b.size);
            s.blocks.push(b);
            bi += 1;
        }
        if cursor < end {
            s.blocks.push(free_block(cursor, end - cursor));
        }
        for b in &s.blocks {
            match b.state {
                BlockState::Inactive => {
                    s.free_bytes += b.size;
                    s.largest_free = s.largest_free.max(b.size);
                }
                BlockState::ActiveAllocated => {
                    st.allocated += b.size;
                    st.active += b.size;
                }
                _ => st.active += b.size,
            }
        }
        st.reserved += s.size;
        st.free += s.free_bytes;
        st.largest_free = st.largest_free.max(s.largest_free);
        st.segments.push(s);
    }
    st.unplaced_blocks += (blocks.len() - bi) as i64;
    st.free_share = share(st.free, st.reserved);
    st
}

/// `part / whole`, 0 for an empty whole.
pub fn share(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

fn free_block(address: i64, size: i64) -> StateBlock {
    StateBlock { address, size, requested: 0, state: BlockState::Inactive, stack_id: None, lifetime_id: None }
}
