//! The self-check: under the recorded settings the simulation must make the recording's segment
//! events (same action and size, caused by the same event) and reach the same reserved and
//! allocated bytes after every event.

use super::pool::{Allocator, SegmentAction};
use super::private::PrivateRanges;
use super::{Difference, Simulation};
use crate::format::{bytes, count, exact_bytes};
use crate::model::{Action, DeviceTrace};
use crate::replay::column::Column;
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

/// The first event (not a segment event) after which the simulation's allocated bytes are not
/// the recording's, watched as the simulation goes: no column of them is kept (4 to 8 bytes an
/// event, per simulation, for one comparison).
#[derive(Default)]
pub(crate) struct AllocatedWatch {
    /// (event, recorded, simulated)
    first: Option<(u32, i64, i64)>,
}

impl AllocatedWatch {
    #[inline]
    pub fn after(&mut self, replay: &DeviceReplay, trace: &DeviceTrace, i: usize, simulated: i64) {
        if self.first.is_none() && !trace.events[i].action().is_segment() {
            let recorded = replay.series.allocated.at(i);
            if recorded != simulated {
                self.first = Some((i as u32, recorded, simulated));
            }
        }
    }
}

/// Compare the simulation under the recorded settings with the recording: the same segment
/// events (action and size, caused by the same event), the same reserved and allocated bytes
/// after every event.
pub(crate) fn self_check(
    replay: &DeviceReplay,
    trace: &DeviceTrace,
    a: &Allocator,
    reserved: &Column,
    allocated: AllocatedWatch,
    private: &PrivateRanges,
) -> (Option<bool>, Option<Difference>) {
    let events = &trace.events;
    // Each recorded segment event with the event it precedes (the request that caused it).
    let mut recorded = Vec::with_capacity(replay.segment_events.len());
    let mut trigger = events.len() as u32;
    for k in (0..events.len()).rev() {
        let e = &events[k];
        let action = match e.action() {
            Action::SegmentAlloc => SegmentAction::Alloc,
            Action::SegmentFree => SegmentAction::Free,
            Action::SegmentMap => SegmentAction::Map,
            Action::SegmentUnmap => SegmentAction::Unmap,
            _ => {
                trigger = k as u32;
                continue;
            }
        };
        // Private pools are kept as recorded: only the default pools' segment events compare.
        if private.contains(e.addr) {
            continue;
        }
        recorded.push((trigger, action, e.size, k as u32));
    }
    recorded.reverse();
    let mut diff: Option<Difference> = None;
    let n = recorded.len().max(a.emitted.len());
    for j in 0..n {
        let rec = recorded.get(j);
        let sim = a.emitted.get(j);
        let same = match (rec, sim) {
            (Some(r), Some(s)) => r.0 == s.trigger && r.1 == s.action && r.2 == s.size,
            _ => false,
        };
        if same {
            continue;
        }
        let at = |e: u32| count(e as i64);
        diff = Some(match (rec, sim) {
            (Some(r), Some(s)) if r.1 == s.action && r.2 == s.size => Difference {
                event: r.3.min(s.trigger),
                reason: format!(
                    "the recording {} at event {}; the simulation does the same only at event {}",
                    describe(r.1, r.2),
                    at(r.3),
                    at(s.trigger)
                ),
            },
            (Some(r), Some(s)) => Difference {
                event: r.3.min(s.trigger),
                reason: format!(
                    "the recording {} at event {}, the simulation {} at event {}",
                    describe(r.1, r.2),
                    at(r.3),
                    describe(s.action, s.size),
                    at(s.trigger)
                ),
            },
            (Some(r), None) => Difference {
                event: r.3,
                reason: format!("the recording {} at event {}, the simulation does not", describe(r.1, r.2), at(r.3)),
            },
            (None, Some(s)) => Difference {
                event: s.trigger,
                reason: format!("the simulation {} at event {}, the recording does not", describe(s.action, s.size), at(s.trigger)),
            },
            (None, None) => unreachable!("j < max of both lengths"),
        });
        break;
    }
    let reserved_diff = (0..events.len()).filter(|&i| !events[i].action().is_segment()).find_map(|i| {
        let (rr, sr) = (replay.series.reserved.at(i), reserved.at(i));
        (rr != sr).then(|| Difference {
            event: i as u32,
            reason: format!("reserved bytes after it: recorded {}, simulated {}", exact_bytes(rr), exact_bytes(sr)),
        })
    });
    let allocated_diff = allocated.first.map(|(i, ra, sa)| Difference {
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
