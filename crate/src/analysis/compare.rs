//! Two snapshots side by side (before/after a change, rank against rank): peaks per device, and
//! live bytes at each allocated peak per stack, with stacks that appeared or vanished.

use super::peak::{live_groups, peak_set, PeakSet};
use crate::error::Result;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StackDelta {
    pub label: String,
    pub bytes_a: i64,
    pub bytes_b: i64,
    pub delta: i64,
    /// new | vanished | changed | same
    pub change: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceComparison {
    pub device: i64,
    pub peaks_a: Option<PeakSet>,
    pub peaks_b: Option<PeakSet>,
    /// b − a of the allocated peak.
    pub allocated_peak_delta: Option<i64>,
    pub stacks: Vec<StackDelta>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub devices: Vec<DeviceComparison>,
}

fn devices(conn: &Connection) -> Result<Vec<i64>> {
    Ok(conn.prepare("SELECT device_index FROM devices ORDER BY 1")?.query_map([], |r| r.get(0))?.collect::<std::result::Result<_, _>>()?)
}

/// Live bytes per stack label at the allocated peak.
pub fn at_peak(conn: &Connection, device: i64) -> Result<(PeakSet, BTreeMap<String, i64>)> {
    let peaks = peak_set(conn, device)?;
    let (groups, _, _) = live_groups(conn, device, peaks.allocated.event.map(|e| e as i64), "stack", usize::MAX)?;
    let mut m = BTreeMap::new();
    for g in groups {
        *m.entry(g.label).or_insert(0) += g.bytes;
    }
    Ok((peaks, m))
}

/// Stacks of A and B by live bytes: new, vanished, changed, largest change first.
pub fn diff_stacks(ma: &BTreeMap<String, i64>, mb: &BTreeMap<String, i64>, top: usize) -> Vec<StackDelta> {
    let mut stacks: Vec<StackDelta> = ma
        .keys()
        .chain(mb.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|k| {
            let (x, y) = (ma.get(k).copied(), mb.get(k).copied());
            let change = match (x, y) {
                (None, Some(_)) => "new",
                (Some(_), None) => "vanished",
                (Some(x), Some(y)) if x != y => "changed",
                _ => "same",
            };
            StackDelta {
                label: k.clone(),
                bytes_a: x.unwrap_or(0),
                bytes_b: y.unwrap_or(0),
                delta: y.unwrap_or(0) - x.unwrap_or(0),
                change: change.into(),
            }
        })
        .collect();
    stacks.sort_by_key(|s| (-s.delta.abs(), s.label.clone()));
    stacks.truncate(top);
    stacks
}

pub fn compare(a: &Connection, b: &Connection, top: usize) -> Result<Comparison> {
    let mut all = devices(a)?;
    all.extend(devices(b)?);
    all.sort_unstable();
    all.dedup();
    let mut out = Vec::new();
    for d in all {
        let pa = if devices(a)?.contains(&d) { Some(at_peak(a, d)?) } else { None };
        let pb = if devices(b)?.contains(&d) { Some(at_peak(b, d)?) } else { None };
        let empty = BTreeMap::new();
        let stacks = diff_stacks(pa.as_ref().map(|p| &p.1).unwrap_or(&empty), pb.as_ref().map(|p| &p.1).unwrap_or(&empty), top);
        out.push(DeviceComparison {
            device: d,
            allocated_peak_delta: match (&pa, &pb) {
                (Some(x), Some(y)) => Some(y.0.allocated.bytes - x.0.allocated.bytes),
                _ => None,
            },
            peaks_a: pa.map(|p| p.0),
            peaks_b: pb.map(|p| p.0),
            stacks,
        });
    }
    Ok(Comparison { devices: out })
}
