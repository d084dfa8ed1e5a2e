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

#[cfg(test)]
mod tests {
    use super::*;

    fn lifetime(alloc: Option<u32>, freed: Option<u32>) -> Lifetime {
        let mut l = Lifetime::new(0x1000, 512, 500, 0);
        l.set_alloc_event(alloc);
        l.set_free_completed_event(freed);
        l
    }

    /// Live from its allocation through the event before its completed free; from before the
    /// window, live at the start; contradicted by the trace, never.
    #[test]
    fn a_block_is_live_from_its_alloc_to_its_completed_free() {
        let l = lifetime(Some(3), Some(7));
        let live: Vec<u32> = (0..10).filter(|&e| is_live(&l, Some(e))).collect();
        assert_eq!(live, [3, 4, 5, 6]);
        assert!(!is_live(&l, None), "allocated in the window: not live at its start");
        let kept = lifetime(Some(3), None);
        assert!(is_live(&kept, Some(u32::MAX - 1)) && !is_live(&kept, Some(2)));
        let before = lifetime(None, Some(2));
        assert!(is_live(&before, None) && is_live(&before, Some(1)) && !is_live(&before, Some(2)));
        let mut orphan = lifetime(Some(0), None);
        orphan.orphan = true;
        assert!(!is_live(&orphan, Some(5)));
    }
}
