//! Private pools (CUDA graphs, `MemPool`) are kept as recorded: their segments and blocks follow
//! the recording under every setting (graph memory is laid out at capture and replayed without
//! the allocator), and only the default pools are simulated. A segment is private when the dump
//! says so (`segment_pool_id` ≠ (0, 0)) or its `segment_alloc` event carries a private `pool_id`.

use crate::model::{Action, DeviceTrace, Snapshot};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub(crate) struct PrivateRanges {
    /// start → end of every private segment seen.
    ranges: BTreeMap<u64, u64>,
}

fn is_private(id: Option<(i64, i64)>) -> bool {
    id.is_some_and(|p| p != (0, 0))
}

impl PrivateRanges {
    pub fn of(snap: &Snapshot, device: i64, trace: &DeviceTrace) -> PrivateRanges {
        let mut ranges = BTreeMap::new();
        for s in snap.segments.iter().filter(|s| s.device == device && is_private(s.pool_id)) {
            ranges.insert(s.address, s.address + s.total_size);
        }
        for e in trace.events.iter().filter(|e| matches!(e.action(), Action::SegmentAlloc | Action::SegmentMap)) {
            if is_private(trace.extra(e).and_then(|x| x.pool_id)) {
                ranges.insert(e.addr, e.addr + e.size);
            }
        }
        PrivateRanges { ranges }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.ranges.range(..=addr).next_back().is_some_and(|(_, &end)| addr < end)
    }
}

/// The private pools' share of the counters, as recorded.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AsRecorded {
    pub reserved: u64,
    pub allocated: u64,
    pub active: u64,
}
