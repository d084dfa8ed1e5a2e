//! Fragmentation: at the dump and at the allocated peak, how much reserved memory is free, in how
//! many pieces, the largest piece (the biggest request served without a new segment), bytes lost
//! to rounding, and bytes held by pending frees; overall and per segment.

use super::state::AllocatorState;
use crate::error::Result;
use crate::model::BlockState;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SegmentFrag {
    pub address: i64,
    pub size: i64,
    pub free_bytes: i64,
    pub free_blocks: i64,
    pub largest_free: i64,
    pub is_expandable: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FragAt {
    /// "dump" or "allocated_peak"
    pub label: String,
    pub event: Option<i64>,
    pub reserved: i64,
    pub allocated: i64,
    /// Free bytes in reserved segments, pending frees excluded.
    pub free_bytes: i64,
    /// `free_bytes` / `reserved`.
    pub free_share: f64,
    pub free_blocks: i64,
    pub largest_free: i64,
    /// 1 − largest free block / free bytes: 0 = one contiguous hole, → 1 = many small holes.
    pub fragmentation: f64,
    /// Σ (block size − requested size) of allocated blocks.
    pub rounding_waste: i64,
    pub pending_free_bytes: i64,
    pub segments: usize,
    /// Segments with the most free bytes.
    pub worst_segments: Vec<SegmentFrag>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Fragmentation {
    pub device: i64,
    pub at: Vec<FragAt>,
}

fn summarize(label: &str, st: &AllocatorState) -> FragAt {
    let mut segs: Vec<SegmentFrag> = st
        .segments
        .iter()
        .map(|s| SegmentFrag {
            address: s.address,
            size: s.size,
            free_bytes: s.free_bytes,
            free_blocks: s.blocks.iter().filter(|b| b.state == BlockState::Inactive).count() as i64,
            largest_free: s.largest_free,
            is_expandable: s.is_expandable,
        })
        .collect();
    let free_blocks = segs.iter().map(|s| s.free_blocks).sum();
    segs.sort_by_key(|s| (-s.free_bytes, s.address));
    segs.truncate(10);
    let blocks = st.segments.iter().flat_map(|s| s.blocks.iter());
    let (mut waste, mut pending) = (0, 0);
    for b in blocks {
        match b.state {
            BlockState::ActiveAllocated => waste += b.size - b.requested,
            BlockState::ActivePendingFree => pending += b.size,
            BlockState::Inactive => {}
        }
    }
    FragAt {
        label: label.into(),
        event: st.event,
        reserved: st.reserved,
        allocated: st.allocated,
        free_bytes: st.free,
        free_share: st.free_share,
        free_blocks,
        largest_free: st.largest_free,
        fragmentation: if st.free > 0 { 1.0 - st.largest_free as f64 / st.free as f64 } else { 0.0 },
        rounding_waste: waste,
        pending_free_bytes: pending,
        segments: st.segments.len(),
        worst_segments: segs,
    }
}

/// Fragmentation at the dump and at the allocated peak, from `state_at` (the allocator state
/// after an event) of a device with `events` events whose allocated peak is at `peak`.
pub fn fragmentation(
    device: i64,
    events: usize,
    peak: Option<u32>,
    mut state_at: impl FnMut(Option<i64>) -> Result<AllocatorState>,
) -> Result<Fragmentation> {
    let last = events.checked_sub(1).map(|e| e as i64);
    let mut at = vec![summarize("dump", &state_at(last)?)];
    if let Some(e) = peak {
        at.push(summarize("allocated_peak", &state_at(Some(e as i64))?));
    }
    Ok(Fragmentation { device, at })
}
