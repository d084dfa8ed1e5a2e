//! Device counters after every event, in allocator block bytes (what `memory_allocated()`,
//! `memory_reserved()` report), anchored at the dump: the state after the last event is the dump
//! by construction, and the window start is the dump minus every event's change.

use super::{IssueLog, Lifetime, NONE};
use crate::model::{Action, DeviceTrace, Snapshot};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub allocated: i64,
    pub active: i64,
    pub reserved: i64,
    pub requested: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peak {
    pub bytes: i64,
    /// Earliest event reaching the maximum; None when it is the state before the first event.
    pub event: Option<u32>,
}

/// Columnar counters: `after[i]` is the state right after event i.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub start: Counters,
    pub allocated: Vec<i64>,
    pub active: Vec<i64>,
    pub reserved: Vec<i64>,
    pub requested: Vec<i64>,
}

impl Series {
    pub fn len(&self) -> usize {
        self.allocated.len()
    }
    pub fn is_empty(&self) -> bool {
        self.allocated.is_empty()
    }
    pub fn at(&self, i: usize) -> Counters {
        Counters { allocated: self.allocated[i], active: self.active[i], reserved: self.reserved[i], requested: self.requested[i] }
    }
    /// State after event `event`, or before the first event for None.
    pub fn after(&self, event: Option<u32>) -> Counters {
        match event {
            Some(i) => self.at(i as usize),
            None => self.start,
        }
    }
    pub fn last(&self) -> Option<Counters> {
        (!self.is_empty()).then(|| self.at(self.len() - 1))
    }
    pub fn column(&self, name: &str) -> Option<&[i64]> {
        match name {
            "allocated" => Some(&self.allocated),
            "active" => Some(&self.active),
            "reserved" => Some(&self.reserved),
            "requested" => Some(&self.requested),
            _ => None,
        }
    }
    pub fn peak(&self, name: &str) -> Peak {
        let start = match name {
            "allocated" => self.start.allocated,
            "active" => self.start.active,
            "reserved" => self.start.reserved,
            _ => self.start.requested,
        };
        let mut best = Peak { bytes: start, event: None };
        for (i, &v) in self.column(name).unwrap_or(&[]).iter().enumerate() {
            if v > best.bytes {
                best = Peak { bytes: v, event: Some(i as u32) };
            }
        }
        best
    }
}

pub(crate) fn compute(
    snap: &Snapshot,
    trace: &DeviceTrace,
    device: i64,
    lifetimes: &[Lifetime],
    event_lifetime: &[u32],
    log: &mut IssueLog,
) -> Series {
    let n = trace.events.len();
    let mut delta = vec![Counters::default(); n];
    for (i, e) in trace.events.iter().enumerate() {
        let d = &mut delta[i];
        match e.action {
            Action::SegmentAlloc | Action::SegmentMap => d.reserved = e.size as i64,
            Action::SegmentFree | Action::SegmentUnmap => d.reserved = -(e.size as i64),
            _ => {}
        }
        let l = event_lifetime[i];
        if l == NONE || lifetimes[l as usize].orphan {
            continue;
        }
        let lt = &lifetimes[l as usize];
        let (size, req) = (lt.size as i64, lt.requested as i64);
        match e.action {
            Action::Alloc => {
                d.allocated = size;
                d.active = size;
                d.requested = req;
            }
            Action::FreeRequested => d.allocated = -size,
            Action::FreeCompleted | Action::Free => {
                d.active = -size;
                d.requested = -req;
                // Without a free_requested in the window, the block was either pending before
                // the window (allocated already dropped) or freed in one step.
                if lt.free_requested_event.is_none() && lt.alloc_event.is_some() || e.action == Action::Free {
                    d.allocated = -size;
                }
            }
            _ => {}
        }
    }
    let dump = snap.dump_totals(device);
    let mut cur = Counters {
        allocated: dump.allocated as i64,
        active: dump.active as i64,
        reserved: dump.reserved as i64,
        requested: dump.requested as i64,
    };
    for d in &delta {
        cur.allocated -= d.allocated;
        cur.active -= d.active;
        cur.reserved -= d.reserved;
        cur.requested -= d.requested;
    }
    if cur.allocated < 0 || cur.active < 0 || cur.reserved < 0 {
        log.add(
            None,
            "NEGATIVE_START",
            format!("the trace implies negative memory before its first event ({cur:?}); the trace does not fit the dump"),
        );
    }
    let mut s = Series {
        start: cur,
        allocated: Vec::with_capacity(n),
        active: Vec::with_capacity(n),
        reserved: Vec::with_capacity(n),
        requested: Vec::with_capacity(n),
    };
    for (i, d) in delta.iter().enumerate() {
        cur.allocated += d.allocated;
        cur.active += d.active;
        cur.reserved += d.reserved;
        cur.requested += d.requested;
        s.allocated.push(cur.allocated);
        s.active.push(cur.active);
        s.reserved.push(cur.reserved);
        s.requested.push(cur.requested);
        let e = &trace.events[i];
        // Each `snapshot` entry records the device's active bytes at that moment.
        if e.action == Action::Snapshot && e.size as i64 != cur.active {
            log.add(
                Some(i),
                "CHECKPOINT_MISMATCH",
                format!("the snapshot marker says {} B active, the replay has {} B", e.size, cur.active),
            );
        }
    }
    s
}
