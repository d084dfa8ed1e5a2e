//! The replay answers "what holds memory right after event E" itself: which lifetimes are live,
//! the counters there, and the peaks (already in the overview). Every analysis that reads the
//! replay asks these, so liveness is defined once, here, exactly as the SnapshotDB's `live at`
//! queries define it (a .db input still answers through them).

use super::basis::{Counter, PeakSet};
use super::overview::Peaks;
use crate::replay::{Counters, DeviceReplay, Lifetime, Peak};

/// Live right after `event` (None = the window start): allocated by then, not yet returned to
/// the allocator, and not contradicted by the trace. Pending frees count: they hold memory.
pub fn is_live(l: &Lifetime, event: Option<u32>) -> bool {
    !l.orphan
        && match event {
            None => l.before_window(),
            Some(e) => l.alloc_event().is_none_or(|a| a <= e) && l.free_completed_event().is_none_or(|f| f > e),
        }
}

/// Ids of the lifetimes live right after `event`, ascending. At the window start only the
/// lifetimes from before the window can be, and the replay lists those.
pub fn live(d: &DeviceReplay, event: Option<u32>) -> Vec<usize> {
    match event {
        None => d.before_window.iter().map(|&i| i as usize).filter(|&i| is_live(&d.lifetimes[i], None)).collect(),
        Some(_) => (0..d.lifetimes.len()).filter(|&i| is_live(&d.lifetimes[i], event)).collect(),
    }
}

/// An analysis's event (validated by the engine: within the trace) as the replay indexes it.
pub fn event_index(event: Option<i64>) -> Option<u32> {
    event.map(|e| u32::try_from(e).expect("an event the engine checked against the trace"))
}

/// The four counters right after `event` (None = before the first event).
pub fn counters_at(d: &DeviceReplay, event: Option<u32>) -> Counters {
    let s = &d.series;
    match event {
        None => s.start,
        Some(e) => {
            let e = e as usize;
            Counters { allocated: s.allocated.at(e), active: s.active.at(e), reserved: s.reserved.at(e), requested: s.requested.at(e) }
        }
    }
}

/// The peak of one counter, as the overview found it.
pub fn peak_of(peaks: &Peaks, counter: Counter) -> Peak {
    match counter {
        Counter::Allocated => peaks.allocated,
        Counter::Active => peaks.active,
        Counter::Reserved => peaks.reserved,
        Counter::Requested => peaks.requested,
    }
}

/// The overview's peaks as the analyses answer them.
pub fn peak_set(peaks: &Peaks) -> PeakSet {
    PeakSet { allocated: peaks.allocated, active: peaks.active, reserved: peaks.reserved, requested: peaks.requested }
}
