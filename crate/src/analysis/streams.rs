//! Memory per stream: each stream's peak of active bytes, its share at the device's allocated
//! peak, and its pending frees (blocks the program freed that wait for another stream's work,
//! `record_stream`) over time and at the dump.

use crate::replay::{DeviceReplay, Peak};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StreamFigures {
    /// The raw stream handle (0 = the legacy default stream).
    pub stream: u64,
    /// Blocks allocated on it in the window.
    pub allocations: u64,
    pub peak_active: Peak,
    /// Its active bytes right after the device's allocated peak.
    pub at_allocated_peak: i64,
    /// The most bytes freed by the program but not yet returned (waiting on other streams'
    /// work; a block returned at the very next event does not count).
    pub peak_pending_free: Peak,
    pub pending_free_at_dump: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StreamAnalysis {
    pub device: i64,
    /// The [`MAX_STREAMS`] streams with the largest active peaks.
    pub streams: Vec<StreamFigures>,
    /// Streams the device used, listed or not.
    #[serde(default)]
    pub streams_total: usize,
    /// Whether `streams` leaves some out.
    #[serde(default)]
    pub truncated: bool,
}

/// Streams a stream analysis lists: programs use a few to a few dozen; 100,000 made 63 MB.
pub const MAX_STREAMS: usize = 1000;

pub fn streams(d: &DeviceReplay) -> StreamAnalysis {
    // (event, stream, Δactive, Δpending) for every change; blocks alive before the window start
    // in the initial sums.
    let mut start: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    let mut changes: Vec<(u32, u64, i64, i64)> = Vec::new();
    let mut allocations: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pending_at_dump: BTreeMap<u64, i64> = BTreeMap::new();
    for l in d.lifetimes.iter().filter(|l| !l.orphan) {
        let size = l.size as i64;
        match l.alloc_event() {
            Some(e) => {
                changes.push((e, l.stream, size, 0));
                *allocations.entry(l.stream).or_default() += 1;
            }
            None => start.entry(l.stream).or_default().0 += size,
        }
        match (l.free_requested_event(), l.free_completed_event()) {
            // Returned right after the free (the next event): nothing waited on another stream.
            (Some(r), Some(c)) if c > r + 1 => {
                changes.push((r, l.stream, 0, size));
                changes.push((c, l.stream, -size, -size));
            }
            (Some(r), None) => {
                changes.push((r, l.stream, 0, size));
                *pending_at_dump.entry(l.stream).or_default() += size;
            }
            (None, Some(c)) if l.alloc_event().is_none() => {
                // Freed before the window, returned inside it: pending from the start.
                start.entry(l.stream).or_default().1 += size;
                changes.push((c, l.stream, -size, -size));
            }
            (_, Some(c)) => changes.push((c, l.stream, -size, 0)),
            _ => {}
        }
    }
    changes.sort_unstable_by_key(|c| c.0);
    let allocated_peak = d.series.peak("allocated").event;
    let mut names: Vec<u64> = start.keys().chain(allocations.keys()).copied().collect();
    names.extend(changes.iter().map(|c| c.1));
    names.sort_unstable();
    names.dedup();
    let mut out: BTreeMap<u64, StreamFigures> = names
        .iter()
        .map(|&s| {
            let (a, p) = start.get(&s).copied().unwrap_or((0, 0));
            let f = StreamFigures {
                stream: s,
                allocations: allocations.get(&s).copied().unwrap_or(0),
                peak_active: Peak { bytes: a, event: None },
                at_allocated_peak: if allocated_peak.is_none() { a } else { 0 },
                peak_pending_free: Peak { bytes: p, event: None },
                pending_free_at_dump: pending_at_dump.get(&s).copied().unwrap_or(0),
            };
            (s, f)
        })
        .collect();
    let mut running: BTreeMap<u64, (i64, i64)> = start.clone();
    let mut i = 0;
    while i < changes.len() {
        let e = changes[i].0;
        let mut touched = Vec::new();
        while i < changes.len() && changes[i].0 == e {
            let (_, s, da, dp) = changes[i];
            let r = running.entry(s).or_default();
            r.0 += da;
            r.1 += dp;
            touched.push(s);
            i += 1;
        }
        for s in touched {
            let (a, p) = running[&s];
            let f = out.get_mut(&s).expect("every stream has figures");
            if a > f.peak_active.bytes {
                f.peak_active = Peak { bytes: a, event: Some(e) };
            }
            if p > f.peak_pending_free.bytes {
                f.peak_pending_free = Peak { bytes: p, event: Some(e) };
            }
        }
        if Some(e) == allocated_peak {
            for (s, f) in out.iter_mut() {
                f.at_allocated_peak = running.get(s).map_or(0, |r| r.0);
            }
        }
    }
    let mut streams: Vec<StreamFigures> = out.into_values().collect();
    streams.sort_by_key(|s| (-s.peak_active.bytes, s.stream));
    let streams_total = streams.len();
    streams.truncate(MAX_STREAMS);
    StreamAnalysis { device: d.device, truncated: streams.len() < streams_total, streams_total, streams }
}
