//! Memory per stream: each stream's peak of active bytes, its share at the device's allocated
//! peak, and its pending frees (blocks the program freed that wait for another stream's work,
//! `record_stream`) over time and at the dump.

use crate::replay::{DeviceReplay, Lifetime, Peak};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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

/// One lifetime's changes to its stream's (active, pending-free) bytes, as (event, Δactive,
/// Δpending): at most three, at distinct events (a block is allocated, freed and returned at
/// different events).
fn changes_of(l: &Lifetime) -> impl Iterator<Item = (u32, i64, i64)> {
    let size = l.size as i64;
    let alloc = l.alloc_event().map(|e| (e, size, 0));
    let (requested, completed) = match (l.free_requested_event(), l.free_completed_event()) {
        // Returned right after the free (the next event): nothing waited on another stream.
        (Some(r), Some(c)) if c > r + 1 => (Some((r, 0, size)), Some((c, -size, -size))),
        (Some(r), None) => (Some((r, 0, size)), None),
        // Freed before the window, returned inside it: pending from the start.
        (None, Some(c)) if l.alloc_event().is_none() => (None, Some((c, -size, -size))),
        (_, Some(c)) => (None, Some((c, -size, 0))),
        _ => (None, None),
    };
    [alloc, requested, completed].into_iter().flatten()
}

pub fn streams(d: &DeviceReplay) -> StreamAnalysis {
    // Blocks alive (or pending) before the window start go in the initial sums; every later
    // change is read in event order from the lifetime its event names, its deltas from the
    // lifetime (a sorted list of (event, lifetime) took 8 bytes a change, and before it one of
    // (event, stream, Δactive, Δpending) 32 bytes: at millions of blocks, most of this
    // analysis's memory).
    let mut start: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    let mut allocations: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pending_at_dump: BTreeMap<u64, i64> = BTreeMap::new();
    let mut names: BTreeSet<u64> = BTreeSet::new();
    let live = || d.lifetimes.iter().enumerate().filter(|(_, l)| !l.orphan);
    for (_, l) in live() {
        let size = l.size as i64;
        match l.alloc_event() {
            Some(_) => *allocations.entry(l.stream).or_default() += 1,
            None => start.entry(l.stream).or_default().0 += size,
        }
        match (l.alloc_event(), l.free_requested_event(), l.free_completed_event()) {
            (_, Some(_), None) => *pending_at_dump.entry(l.stream).or_default() += size,
            (None, None, Some(_)) => start.entry(l.stream).or_default().1 += size,
            _ => {}
        }
        names.insert(l.stream);
    }
    let allocated_peak = d.series.peak("allocated").event;
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
    let mut touched = Vec::new();
    // The changes in event order: each event names the lifetime it acts on.
    for (e, &i) in d.event_lifetime.iter().enumerate() {
        let Some(l) = d.lifetimes.get(i as usize).filter(|l| !l.orphan) else { continue };
        let e = e as u32;
        touched.clear();
        for (_, da, dp) in changes_of(l).filter(|c| c.0 == e) {
            let r = running.entry(l.stream).or_default();
            r.0 += da;
            r.1 += dp;
            touched.push(l.stream);
        }
        if touched.is_empty() {
            continue;
        }
        for &s in &touched {
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
