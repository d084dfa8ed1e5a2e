//! Device counters after every event, in allocator block bytes (what `memory_allocated()`,
//! `memory_reserved()` report), anchored at the dump: the state after the last event is the dump
//! by construction, and the window start is the dump minus every event's change.

use super::column::Column;
use super::{IssueLog, Lifetime, NONE};
use crate::codes::IssueCode;
use crate::format::exact_bytes;
use crate::model::{Action, DeviceTrace, Snapshot};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Counters {
    pub allocated: i64,
    pub active: i64,
    pub reserved: i64,
    pub requested: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Peak {
    pub bytes: i64,
    /// Earliest event reaching the maximum; None when it is the state before the first event.
    pub event: Option<u32>,
}

/// Columnar counters: `allocated.at(i)` is the allocated bytes right after event i.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub start: Counters,
    pub allocated: Column,
    pub active: Column,
    pub reserved: Column,
    pub requested: Column,
    /// Extremes of every `SERIES_BLOCK` events (the last block may be shorter): a chart of
    /// millions of events reads these instead of every event (see `Series::extremes`).
    pub blocks: Vec<Extremes>,
}

pub const SERIES_BLOCK: usize = super::column::BLOCK;

/// The largest value and the first index holding it (what `MAX()` over rows in order finds).
pub fn first_max(values: impl IntoIterator<Item = i64>) -> Option<(i64, usize)> {
    let mut best: Option<(i64, usize)> = None;
    for (i, v) in values.into_iter().enumerate() {
        if best.is_none_or(|(b, _)| v > b) {
            best = Some((v, i));
        }
    }
    best
}

/// What a chart column shows of a run of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extremes {
    pub allocated_min: i64,
    pub allocated_max: i64,
    pub active_max: i64,
    pub reserved_max: i64,
    pub requested_max: i64,
}

impl Extremes {
    const NONE: Extremes = Extremes {
        allocated_min: i64::MAX,
        allocated_max: i64::MIN,
        active_max: i64::MIN,
        reserved_max: i64::MIN,
        requested_max: i64::MIN,
    };

    fn merge(&mut self, o: &Extremes) {
        self.allocated_min = self.allocated_min.min(o.allocated_min);
        self.allocated_max = self.allocated_max.max(o.allocated_max);
        self.active_max = self.active_max.max(o.active_max);
        self.reserved_max = self.reserved_max.max(o.reserved_max);
        self.requested_max = self.requested_max.max(o.requested_max);
    }
}

impl Series {
    /// Extremes of events `r` read one by one.
    fn scan(&self, r: std::ops::Range<usize>) -> Extremes {
        let max = |c: &Column| c.range(r.clone()).max().unwrap_or(i64::MIN);
        Extremes {
            allocated_min: self.allocated.range(r.clone()).min().unwrap_or(i64::MAX),
            allocated_max: max(&self.allocated),
            active_max: max(&self.active),
            reserved_max: max(&self.reserved),
            requested_max: max(&self.requested),
        }
    }

    /// Append the counters after a run of events (at most `SERIES_BLOCK`, the series at a
    /// run's start), their extremes included.
    fn push_run(&mut self, run: &[Counters]) {
        if run.is_empty() {
            return;
        }
        let mut values = [0i64; SERIES_BLOCK];
        let mut column = |c: &mut Column, get: fn(&Counters) -> i64| {
            for (v, x) in values.iter_mut().zip(run) {
                *v = get(x);
            }
            c.push_run(&values[..run.len()]);
            let v = &values[..run.len()];
            (v.iter().copied().min().unwrap_or(i64::MAX), v.iter().copied().max().unwrap_or(i64::MIN))
        };
        let (allocated_min, allocated_max) = column(&mut self.allocated, |c| c.allocated);
        let (_, active_max) = column(&mut self.active, |c| c.active);
        let (_, reserved_max) = column(&mut self.reserved, |c| c.reserved);
        let (_, requested_max) = column(&mut self.requested, |c| c.requested);
        self.blocks.push(Extremes { allocated_min, allocated_max, active_max, reserved_max, requested_max });
    }

    /// Fill `blocks` (once the series is complete).
    pub fn summarize(&mut self) {
        self.blocks = (0..self.len()).step_by(SERIES_BLOCK).map(|a| self.scan(a..(a + SERIES_BLOCK).min(self.len()))).collect();
    }

    /// Extremes of events `r` (non-empty, within the series): whole blocks from `blocks`, the
    /// ragged ends event by event.
    pub fn extremes(&self, r: std::ops::Range<usize>) -> Extremes {
        let mut acc = Extremes::NONE;
        let mut i = r.start;
        while i < r.end {
            let block_end = (i / SERIES_BLOCK + 1) * SERIES_BLOCK;
            match self.blocks.get(i / SERIES_BLOCK) {
                Some(b) if i.is_multiple_of(SERIES_BLOCK) && block_end <= r.end.min(self.len()) => {
                    acc.merge(b);
                    i = block_end;
                }
                _ => {
                    let end = block_end.min(r.end);
                    acc.merge(&self.scan(i..end));
                    i = end;
                }
            }
        }
        acc
    }

    pub fn len(&self) -> usize {
        self.allocated.len()
    }
    pub fn is_empty(&self) -> bool {
        self.allocated.is_empty()
    }
    pub fn at(&self, i: usize) -> Counters {
        Counters {
            allocated: self.allocated.at(i),
            active: self.active.at(i),
            reserved: self.reserved.at(i),
            requested: self.requested.at(i),
        }
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
    pub fn column(&self, name: &str) -> Option<&Column> {
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
        match self.first_max(name) {
            Some((bytes, i)) if bytes > start => Peak { bytes, event: Some(i as u32) },
            _ => Peak { bytes: start, event: None },
        }
    }

    /// The counter's largest value after an event and the first event that reaches it (None
    /// without events), as `first_max` over the column finds it: the first run holding the
    /// largest maximum, then the first event in it that reaches it (every event when the runs'
    /// extremes are not there).
    pub fn first_max(&self, name: &str) -> Option<(i64, usize)> {
        let block_max: fn(&Extremes) -> i64 = match name {
            "allocated" => |b| b.allocated_max,
            "active" => |b| b.active_max,
            "reserved" => |b| b.reserved_max,
            _ => |b| b.requested_max,
        };
        let column = self.column(name).unwrap_or(&self.requested);
        if self.blocks.len() != self.len().div_ceil(SERIES_BLOCK) {
            return first_max(column.iter());
        }
        first_max(self.blocks.iter().map(block_max)).and_then(|(bytes, run)| {
            let from = run * SERIES_BLOCK;
            let at = column.range(from..(from + SERIES_BLOCK).min(self.len())).position(|v| v == bytes)?;
            Some((bytes, from + at))
        })
    }
}

/// How event `e` changes the counters (its lifetime `l`, or `NONE`).
fn change_of(e: &crate::model::Event, l: u32, lifetimes: &[Lifetime]) -> Counters {
    let mut d = Counters::default();
    match e.action() {
        Action::SegmentAlloc | Action::SegmentMap => d.reserved = e.size as i64,
        Action::SegmentFree | Action::SegmentUnmap => d.reserved = -(e.size as i64),
        _ => {}
    }
    if l == NONE || lifetimes[l as usize].orphan {
        return d;
    }
    let lt = &lifetimes[l as usize];
    let (size, req) = (lt.size as i64, lt.requested as i64);
    match e.action() {
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
            if lt.free_requested_event().is_none() && lt.alloc_event().is_some() || e.action() == Action::Free {
                d.allocated = -size;
            }
        }
        _ => {}
    }
    d
}

/// The sum of every event's change (`change_of`), gathered per lifetime: each non-orphan
/// lifetime is named by at most its alloc, its free_requested and its free_completed (or one
/// `free`, which sets both), so its events' changes follow from the lifetime alone. Wrapping,
/// like the event-by-event sum in a release build, so the order of the terms cannot matter.
fn total_change(trace: &DeviceTrace, lifetimes: &[Lifetime], segment_events: &[u32]) -> Counters {
    let mut t = Counters::default();
    for e in segment_events.iter().filter_map(|&i| trace.events.get(i as usize)) {
        match e.action() {
            Action::SegmentAlloc | Action::SegmentMap => t.reserved = t.reserved.wrapping_add(e.size as i64),
            Action::SegmentFree | Action::SegmentUnmap => t.reserved = t.reserved.wrapping_sub(e.size as i64),
            _ => {}
        }
    }
    // A block freed after the last event is not in the dump: it has no part in the start.
    for lt in lifetimes.iter().filter(|lt| !lt.orphan && !lt.free_unrecorded) {
        let (size, req) = (lt.size as i64, lt.requested as i64);
        let (alloc, freq, fcomp) = (lt.alloc_event(), lt.free_requested_event(), lt.free_completed_event());
        if alloc.is_some() {
            t.allocated = t.allocated.wrapping_add(size);
            t.active = t.active.wrapping_add(size);
            t.requested = t.requested.wrapping_add(req);
        }
        if fcomp.is_some() {
            t.active = t.active.wrapping_sub(size);
            t.requested = t.requested.wrapping_sub(req);
        }
        // A free_requested (or the one `free`) drops allocated; so does a free_completed
        // without one when the alloc is in the window.
        if freq.is_some() || (fcomp.is_some() && alloc.is_some()) {
            t.allocated = t.allocated.wrapping_sub(size);
        }
    }
    t
}

pub(crate) fn compute(
    snap: &Snapshot,
    trace: &DeviceTrace,
    device: i64,
    lifetimes: &[Lifetime],
    event_lifetime: &[u32],
    segment_events: &[u32],
    log: &mut IssueLog,
) -> Series {
    let n = trace.events.len();
    // The sum of all changes, taken per lifetime (in memory order) rather than per event (which
    // reads the lifetimes at random); then one pass over the events for the running state.
    let changes = || trace.events.iter().zip(event_lifetime).map(|(e, &l)| change_of(e, l, lifetimes));
    let dump = snap.dump_totals(device);
    let total = total_change(trace, lifetimes, segment_events);
    let start = Counters {
        allocated: (dump.allocated as i64).wrapping_sub(total.allocated),
        active: (dump.active as i64).wrapping_sub(total.active),
        reserved: (dump.reserved as i64).wrapping_sub(total.reserved),
        requested: (dump.requested as i64).wrapping_sub(total.requested),
    };
    if start.allocated < 0 || start.active < 0 || start.reserved < 0 {
        log.add(
            None,
            IssueCode::NegativeStart,
            format!("the trace implies negative memory before its first event ({start:?}); the trace does not fit the dump"),
        );
    }
    let mut cur = start;
    let mut s = Series {
        start,
        allocated: Column::with_capacity(n),
        active: Column::with_capacity(n),
        reserved: Column::with_capacity(n),
        requested: Column::with_capacity(n),
        blocks: Vec::with_capacity(n.div_ceil(SERIES_BLOCK)),
    };
    // A run of events at a time: the columns take it in one copy each, and its extremes come
    // with it (no pass over the columns afterwards).
    let mut run = [Counters::default(); SERIES_BLOCK];
    let mut filled = 0;
    for ((i, d), e) in changes().enumerate().zip(trace.events.iter()) {
        cur.allocated += d.allocated;
        cur.active += d.active;
        cur.reserved += d.reserved;
        cur.requested += d.requested;
        run[filled] = cur;
        filled += 1;
        if filled == SERIES_BLOCK {
            s.push_run(&run);
            filled = 0;
        }
        // Each `snapshot` entry records the device's active bytes at that moment.
        if e.action() == Action::Snapshot && e.size as i64 != cur.active {
            log.add(
                Some(i),
                IssueCode::CheckpointMismatch,
                format!("the snapshot marker says {} active, the replay has {}", exact_bytes(e.size as i64), exact_bytes(cur.active)),
            );
        }
    }
    s.push_run(&run[..filled]);
    for c in [&mut s.allocated, &mut s.active, &mut s.reserved, &mut s.requested] {
        c.shrink_to_fit();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Filled a run at a time, the series holds the same values and extremes as filled one
    /// value at a time and summarized afterwards; whole runs add no empty block.
    #[test]
    fn runs_give_the_values_and_extremes_of_a_summary() {
        for n in [0, 1, 255, 256, 257, 1000, 1024] {
            let at = |i: i64| Counters {
                allocated: ((i * 7919) % 5000) << 20,
                active: ((i * 104_729) % 9000) << 21,
                reserved: (i / 300) << 31,
                requested: (i * 31) % 1_000_003,
            };
            let values: Vec<Counters> = (0..n).map(at).collect();
            let mut by_run = Series::default();
            values.chunks(SERIES_BLOCK).for_each(|run| by_run.push_run(run));
            let mut summarized = Series {
                allocated: values.iter().map(|c| c.allocated).collect(),
                active: values.iter().map(|c| c.active).collect(),
                reserved: values.iter().map(|c| c.reserved).collect(),
                requested: values.iter().map(|c| c.requested).collect(),
                ..Default::default()
            };
            summarized.summarize();
            assert_eq!(by_run.blocks, summarized.blocks, "{n} events");
            assert_eq!(by_run.blocks.len(), (n as usize).div_ceil(SERIES_BLOCK));
            assert!((0..n as usize).all(|i| by_run.at(i) == values[i]), "{n} events");
            // The peaks from the runs' extremes are those of every event, and without the
            // extremes they are still found.
            for name in ["allocated", "active", "reserved", "requested"] {
                let column = summarized.column(name).unwrap();
                let expected = match first_max(column.iter()) {
                    Some((bytes, i)) if bytes > 0 => Peak { bytes, event: Some(i as u32) },
                    _ => Peak { bytes: 0, event: None },
                };
                let unsummarized = Series { blocks: Vec::new(), ..summarized.clone() };
                for s in [&by_run, &summarized, &unsummarized] {
                    assert_eq!(s.peak(name), expected, "{name}, {n} events");
                    assert_eq!(s.first_max(name), first_max(column.iter()), "{name}, {n} events");
                }
            }
        }
    }
}
