//! Per-device replay of the allocator trace.
//!
//! 1. `backward`: undo the events from the dump state back to the window start. This links every
//!    event to a block lifetime and finds what existed before the first event.
//! 2. `forward`: replay the layout from the window start with the allocator's rounding and split
//!    rules to derive the block size of every lifetime the dump does not show, and check that the
//!    replay ends exactly at the dump.
//! 3. `counters`: allocated/active/reserved/requested after every event, anchored at the dump.
//!
//! An event that cannot be applied becomes an [`Issue`] with its index; the replay goes on.

mod backward;
pub mod column;
mod counters;
mod forward;
mod free_blocks;
pub mod ranges;
pub mod rules;

use crate::model::{packed_id, unpacked_id, BlockState, Pool, Snapshot, StackId};
pub use counters::{first_max, Counters, Peak, Series};
pub use rules::Rules;
use serde::{Deserialize, Serialize};

pub const NONE: u32 = u32::MAX;

/// Where a lifetime's stack came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StackSource {
    /// The `alloc` event's frames.
    Alloc,
    /// The dump-time block's frames (blocks allocated before the window).
    DumpBlock,
    /// Only the free event's frames are known (alloc happened before the window).
    Free,
    None,
}

/// One block from allocation to release (or to the dump). 56 bytes: event ids and the stack are
/// kept as `u32` with `NONE` for "absent" (an `Option<u32>` takes 8), read through accessors,
/// and the size uncertainty (at most 1 MiB) in three bytes, which leaves room for the flags.
#[derive(Debug, Clone)]
pub struct Lifetime {
    pub addr: u64,
    /// Block bytes (rounded). A lower bound when `size_exact` is false.
    pub size: u64,
    pub requested: u64,
    pub stream: u64,
    /// Bytes by which the true size may exceed `size` (0 when exact; at most 1 MiB), little-endian.
    size_uncertainty: [u8; 3],
    alloc_event: u32,
    free_requested_event: u32,
    free_completed_event: u32,
    stack: u32,
    /// State at the dump; None when freed inside the window.
    pub state_at_dump: Option<BlockState>,
    pub stack_source: StackSource,
    pub size_exact: bool,
    /// The trace contradicts this lifetime (it is left out of the counters).
    pub orphan: bool,
    /// Allocated in the window, never freed in it, absent from the dump and its address never
    /// used again in the window: its free came after the last recorded event (a trimmed trace,
    /// `skip_actions`). Counted as allocated from its alloc to the window's end; the counters
    /// before the first event leave it out (the dump does not have it).
    pub free_unrecorded: bool,
}

impl Lifetime {
    /// A lifetime with no events or stack yet.
    pub(crate) fn new(addr: u64, size: u64, requested: u64, stream: u64) -> Lifetime {
        Lifetime {
            addr,
            size,
            requested,
            stream,
            size_uncertainty: [0; 3],
            alloc_event: NONE,
            free_requested_event: NONE,
            free_completed_event: NONE,
            stack: NONE,
            state_at_dump: None,
            stack_source: StackSource::None,
            size_exact: false,
            orphan: false,
            free_unrecorded: false,
        }
    }
    pub fn alloc_event(&self) -> Option<u32> {
        unpacked_id(self.alloc_event)
    }
    pub fn free_requested_event(&self) -> Option<u32> {
        unpacked_id(self.free_requested_event)
    }
    pub fn free_completed_event(&self) -> Option<u32> {
        unpacked_id(self.free_completed_event)
    }
    pub fn stack(&self) -> Option<StackId> {
        unpacked_id(self.stack)
    }
    pub fn set_alloc_event(&mut self, e: Option<u32>) {
        self.alloc_event = packed_id(e);
    }
    pub fn set_free_requested_event(&mut self, e: Option<u32>) {
        self.free_requested_event = packed_id(e);
    }
    pub fn set_free_completed_event(&mut self, e: Option<u32>) {
        self.free_completed_event = packed_id(e);
    }
    pub fn set_stack(&mut self, s: Option<StackId>) {
        self.stack = packed_id(s);
    }

    pub fn size_uncertainty(&self) -> u64 {
        let [a, b, c] = self.size_uncertainty;
        u64::from_le_bytes([a, b, c, 0, 0, 0, 0, 0])
    }
    /// Sets the uncertainty, at most 1 MiB (the replay's bound; more is kept as 16 MiB - 1).
    pub(crate) fn set_size_uncertainty(&mut self, x: u64) {
        let [a, b, c, ..] = x.min((1 << 24) - 1).to_le_bytes();
        self.size_uncertainty = [a, b, c];
    }
    /// The size is the dump block's (only blocks live at the dump have a state there).
    pub(crate) fn size_known(&self) -> bool {
        self.state_at_dump.is_some()
    }

    pub fn before_window(&self) -> bool {
        self.alloc_event().is_none()
    }
    /// Counted in `allocated` at the window start.
    pub fn allocated_at_start(&self) -> bool {
        self.before_window()
            && (self.free_requested_event().is_some()
                || (self.free_completed_event().is_none() && self.state_at_dump == Some(BlockState::ActiveAllocated)))
    }
}

/// A reserved range: a cudaMalloc segment or an expandable mapping, from its event (or the
/// window start) to its release (or the dump).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SegmentLife {
    pub addr: u64,
    pub size: u64,
    pub stream: u64,
    pub pool: Pool,
    pub expandable: bool,
    pub alloc_event: Option<u32>,
    pub free_event: Option<u32>,
    pub at_dump: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Issue {
    pub event: Option<u32>,
    pub code: crate::codes::IssueCode,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Consistency {
    pub ok: bool,
    pub issues: Vec<Issue>,
    /// Issues beyond the ones listed.
    pub more_issues: u64,
    /// Dump blocks reproduced by the replay / dump blocks (allocated or pending).
    pub dump_blocks_matched: [u64; 2],
    /// Upper bound of bytes the counters may be low by (blocks allocated before the window whose
    /// exact size cannot be known).
    pub ambiguous_bytes: u64,
}

#[derive(Debug)]
pub struct DeviceReplay {
    pub device: i64,
    pub rules: Rules,
    pub events: usize,
    pub lifetimes: Vec<Lifetime>,
    /// Ids of the lifetimes allocated before the window, and of those never freed in it (both
    /// ascending): what live-at queries look up besides one scan.
    pub before_window: Vec<u32>,
    pub never_freed: Vec<u32>,
    /// Indices of the segment events (segment_alloc/free/map/unmap), ascending.
    pub segment_events: Vec<u32>,
    /// For each event, the lifetime it acts on (alloc/free) or `NONE`.
    pub event_lifetime: Vec<u32>,
    pub segments: Vec<SegmentLife>,
    /// Reserved ranges before the first event.
    pub start_ranges: ranges::RangeSet,
    pub series: Series,
    pub consistency: Consistency,
}

impl DeviceReplay {
    /// Whether any event of `first..=last` hands out a block (an allocation of the window).
    pub fn allocates_in(&self, first: u32, last: u32) -> bool {
        (first..=last).any(|e| {
            let l = self.event_lifetime.get(e as usize).copied().unwrap_or(NONE);
            l != NONE && self.lifetimes[l as usize].alloc_event() == Some(e)
        })
    }
}

const MAX_ISSUES: usize = 200;

#[derive(Default)]
pub(crate) struct IssueLog {
    pub issues: Vec<Issue>,
    pub more: u64,
}

impl IssueLog {
    pub fn add(&mut self, event: Option<usize>, code: crate::codes::IssueCode, message: String) {
        if self.issues.len() < MAX_ISSUES {
            self.issues.push(Issue { event: event.map(|e| e as u32), code, message });
        } else {
            self.more += 1;
        }
    }
    pub fn is_empty(&self) -> bool {
        self.issues.is_empty() && self.more == 0
    }
}

pub fn replay_device(snap: &Snapshot, rules: &Rules, device: i64) -> DeviceReplay {
    let empty = crate::model::DeviceTrace::default();
    let trace = snap.trace(device).unwrap_or(&empty);
    let mut log = IssueLog::default();
    let back = backward::run(snap, trace, device, &mut log);
    let mut fwd = forward::run(snap, trace, device, rules, back, &mut log);
    // Growth slack is a quarter of a large list on average: give it back before the counters.
    fwd.lifetimes.shrink_to_fit();
    let series = counters::compute(snap, trace, device, &fwd.lifetimes, &fwd.event_lifetime, &fwd.segment_events, &mut log);
    let ok = log.is_empty() && fwd.dump_blocks_matched[0] == fwd.dump_blocks_matched[1];
    // One pass over the lifetimes for both lists.
    let (mut before_window, mut never_freed) = (Vec::new(), Vec::new());
    for (i, l) in fwd.lifetimes.iter().enumerate() {
        if l.alloc_event().is_none() {
            before_window.push(i as u32);
        }
        if l.free_completed_event().is_none() {
            never_freed.push(i as u32);
        }
    }
    DeviceReplay {
        before_window,
        never_freed,
        segment_events: fwd.segment_events,
        device,
        rules: rules.clone(),
        events: trace.events.len(),
        lifetimes: fwd.lifetimes,
        event_lifetime: fwd.event_lifetime,
        segments: fwd.segments,
        start_ranges: fwd.start_ranges,
        series,
        consistency: Consistency {
            ok,
            issues: log.issues,
            more_issues: log.more,
            dump_blocks_matched: fwd.dump_blocks_matched,
            ambiguous_bytes: fwd.ambiguous_bytes,
        },
    }
}

/// Replay one device with the rules its dump implies; when the dump cannot tell the torch_npu pad
/// apart, replay with each candidate and keep the one the self-check accepts.
pub fn replay_inferred(snap: &Snapshot, device: i64) -> DeviceReplay {
    let rules = Rules::infer(snap, device);
    if rules.pad_certain {
        return replay_device(snap, &rules, device);
    }
    let score = |r: &DeviceReplay| r.consistency.issues.len() as u64 + r.consistency.more_issues;
    let cuda = replay_device(snap, &rules, device);
    if score(&cuda) == 0 {
        return cuda;
    }
    let npu_rules = Rules { pad: 32, source: format!("{}; torch_npu 32-byte pad (chosen by the self-check)", rules.source), ..rules };
    let npu = replay_device(snap, &npu_rules, device);
    if score(&npu) < score(&cuda) {
        npu
    } else {
        cuda
    }
}

/// Replay every device of the snapshot.
pub fn replay_all(snap: &Snapshot) -> Vec<DeviceReplay> {
    snap.devices().into_iter().map(|d| replay_inferred(snap, d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Millions of lifetimes stay at 56 bytes each, and absent ids read back as absent.
    #[test]
    fn lifetime_packs_into_56_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<Lifetime>(), 56);
        let mut l = Lifetime::new(0x7f00_0000_0000, 512, 500, 7);
        assert_eq!((l.alloc_event(), l.free_requested_event(), l.free_completed_event(), l.stack()), (None, None, None, None));
        l.set_alloc_event(Some(0));
        l.set_free_requested_event(Some(NONE - 1));
        l.set_free_completed_event(Some(12));
        l.set_stack(Some(3));
        assert_eq!(
            (l.alloc_event(), l.free_requested_event(), l.free_completed_event(), l.stack()),
            (Some(0), Some(NONE - 1), Some(12), Some(3))
        );
        assert!(!l.before_window());
        l.set_alloc_event(None);
        l.set_stack(None);
        assert_eq!((l.alloc_event(), l.stack()), (None, None));
        assert!(l.before_window() && l.allocated_at_start());
        l.set_size_uncertainty(1 << 20);
        assert_eq!(l.size_uncertainty(), 1 << 20);
        l.set_size_uncertainty(u64::MAX);
        assert_eq!(l.size_uncertainty(), (1 << 24) - 1, "more than the bound saturates");
    }
}
