//! The self-check: under the recorded settings the simulation must make the recording's segment
//! events (same action and size, caused by the same event) and reach the same reserved and
//! allocated bytes after every event.

use super::pool::{SegmentAction, SegmentEvent};
use super::private::PrivateRanges;
use super::{Difference, Simulation};
use crate::format::{bytes, count, exact_bytes};
use crate::model::{Action, DeviceTrace};
use crate::replay::DeviceReplay;

/// The self-check in one sentence, for the page's health line and the report.
pub fn health(sim: &Simulation) -> String {
    match (sim.reproduces_recording, &sim.first_difference) {
        (Some(true), _) => {
            "The simulator reproduces this recording exactly (every segment event, reserved and allocated bytes after every event).".into()
        }
        (Some(false), Some(d)) => {
            format!("The simulator first differs from the recording at event {}: {}.", count(d.event as i64), d.reason)
        }
        _ => "Nothing to check: the trace has no events.".into(),
    }
}

fn describe(action: SegmentAction, size: u64) -> String {
    let verb = match action {
        SegmentAction::Alloc => "cudaMallocs a segment of",
        SegmentAction::Free => "frees a segment of",
        SegmentAction::Map => "maps",
        SegmentAction::Unmap => "unmaps",
    };
    format!("{verb} {} ({})", bytes(size as i64), action.name())
}

/// The first event (not a segment event) after which the simulation's reserved or allocated
/// bytes are not the recording's, watched as the simulation goes: no column of them is kept (4
/// to 8 bytes an event, per simulation, for one comparison).
#[derive(Default)]
pub(crate) struct CounterWatch {
    /// (event, recorded, simulated)
    reserved: Option<(u32, i64, i64)>,
    allocated: Option<(u32, i64, i64)>,
}

impl CounterWatch {
    #[inline]
    pub fn after(&mut self, replay: &DeviceReplay, trace: &DeviceTrace, i: usize, reserved: i64, allocated: i64) {
        if (self.reserved.is_some() && self.allocated.is_some()) || trace.events[i].action().is_segment() {
            return;
        }
        let first_differing = |first: &mut Option<(u32, i64, i64)>, recorded: i64, simulated: i64| {
            if first.is_none() && recorded != simulated {
                *first = Some((i as u32, recorded, simulated));
            }
        };
        first_differing(&mut self.reserved, replay.series.reserved.at(i), reserved);
        first_differing(&mut self.allocated, replay.series.allocated.at(i), allocated);
    }
}

/// The recording's segment events of the default pools, each with the event it precedes (the
/// request that caused it), read in order as the simulation emits its own: the first pair that
/// differs is kept, and neither side's list is (a trace can hold millions).
pub(crate) struct SegmentWatch {
    /// Where the search for the next recorded segment event goes on.
    next: usize,
    /// The first event after `next` that is not a segment event (a run's trigger, found once).
    trigger: usize,
    difference: Option<Difference>,
}

impl SegmentWatch {
    pub fn new() -> SegmentWatch {
        SegmentWatch { next: 0, trigger: 0, difference: None }
    }

    /// The next recorded segment event outside the private pools: (trigger, action, size, event).
    fn next_recorded(&mut self, trace: &DeviceTrace, private: &PrivateRanges) -> Option<(u32, SegmentAction, u64, u32)> {
        let events = &trace.events;
        while self.next < events.len() {
            let k = self.next;
            self.next += 1;
            let e = &events[k];
            let action = match e.action() {
                Action::SegmentAlloc => SegmentAction::Alloc,
                Action::SegmentFree => SegmentAction::Free,
                Action::SegmentMap => SegmentAction::Map,
                Action::SegmentUnmap => SegmentAction::Unmap,
                _ => continue,
            };
            // Private pools are kept as recorded: only the default pools' segment events compare.
            if private.contains(e.addr) {
                continue;
            }
            // Every event between k and a trigger found after an earlier k is a segment event.
            if self.trigger <= k {
                self.trigger = (k + 1..events.len()).find(|&j| !events[j].action().is_segment()).unwrap_or(events.len());
            }
            return Some((self.trigger as u32, action, e.size, k as u32));
        }
        None
    }

    /// The simulation made `sim`: compare it with the recording's next segment event.
    pub fn emitted(&mut self, sim: SegmentEvent, trace: &DeviceTrace, private: &PrivateRanges) {
        if self.difference.is_none() {
            let rec = self.next_recorded(trace, private);
            self.difference = differs(rec, Some(sim));
        }
    }

    /// The first difference, once the simulation has made all its segment events.
    fn finish(mut self, trace: &DeviceTrace, private: &PrivateRanges) -> Option<Difference> {
        if self.difference.is_none() {
            let rec = self.next_recorded(trace, private);
            self.difference = differs(rec, None);
        }
        self.difference
    }
}

/// How a recorded segment event and the simulation's at the same position differ, if they do.
fn differs(rec: Option<(u32, SegmentAction, u64, u32)>, sim: Option<SegmentEvent>) -> Option<Difference> {
    let at = |e: u32| count(e as i64);
    match (rec, sim) {
        (Some(r), Some(s)) if r.0 == s.trigger && r.1 == s.action && r.2 == s.size => None,
        (Some(r), Some(s)) if r.1 == s.action && r.2 == s.size => Some(Difference {
            event: r.3.min(s.trigger),
            reason: format!(
                "the recording {} at event {}; the simulation does the same only at event {}",
                describe(r.1, r.2),
                at(r.3),
                at(s.trigger)
            ),
        }),
        (Some(r), Some(s)) => Some(Difference {
            event: r.3.min(s.trigger),
            reason: format!(
                "the recording {} at event {}, the simulation {} at event {}",
                describe(r.1, r.2),
                at(r.3),
                describe(s.action, s.size),
                at(s.trigger)
            ),
        }),
        (Some(r), None) => Some(Difference {
            event: r.3,
            reason: format!("the recording {} at event {}, the simulation does not", describe(r.1, r.2), at(r.3)),
        }),
        (None, Some(s)) => Some(Difference {
            event: s.trigger,
            reason: format!("the simulation {} at event {}, the recording does not", describe(s.action, s.size), at(s.trigger)),
        }),
        (None, None) => None,
    }
}

/// Compare the simulation under the recorded settings with the recording: the same segment
/// events (action and size, caused by the same event), the same reserved and allocated bytes
/// after every event.
pub(crate) fn self_check(
    trace: &DeviceTrace,
    private: &PrivateRanges,
    segments: SegmentWatch,
    counters: CounterWatch,
) -> (Option<bool>, Option<Difference>) {
    let events = &trace.events;
    let diff = segments.finish(trace, private);
    let reserved_diff = counters.reserved.map(|(i, rr, sr)| Difference {
        event: i,
        reason: format!("reserved bytes after it: recorded {}, simulated {}", exact_bytes(rr), exact_bytes(sr)),
    });
    let allocated_diff = counters.allocated.map(|(i, ra, sa)| Difference {
        event: i,
        reason: format!("allocated bytes after it: recorded {}, simulated {} (a block size differs)", exact_bytes(ra), exact_bytes(sa)),
    });
    // The earlier of the two; at one event, the reserved bytes are told.
    let counter_diff = match (reserved_diff, allocated_diff) {
        (Some(r), Some(a)) => Some(if a.event < r.event { a } else { r }),
        (r, a) => r.or(a),
    };
    let first = match (diff, counter_diff) {
        (Some(d), Some(c)) => Some(if c.event < d.event { c } else { d }),
        (d, c) => d.or(c),
    };
    // No segment events on either side and the same counters after every event is a
    // reproduction too; only a trace without events has nothing to check.
    if events.is_empty() {
        return (None, None);
    }
    (Some(first.is_none()), first)
}
