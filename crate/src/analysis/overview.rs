//! The first answer for a snapshot: per device, the dump-time figures, the state after the last
//! event, the peaks of every counter, and whether the replay reproduces the dump.

use crate::model::Warning;
use crate::replay::{Consistency, Counters, DeviceReplay, Peak};
use crate::Loaded;
use serde::{Deserialize, Serialize};

/// Printed behind the envelope's `ok` and `schema_version` (`engine::envelope`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Overview {
    pub format: Option<crate::model::Format>,
    pub encoding: String,
    pub source_bytes: u64,
    /// The first [`MAX_DEVICES`] devices (in the snapshot's order); `devices_total` says how many
    /// the snapshot has.
    pub devices: Vec<DeviceOverview>,
    /// Devices in the snapshot, listed or not (one process sees a few; 10,000 are damage).
    #[serde(default)]
    pub devices_total: usize,
    pub warnings: Vec<Warning>,
}

/// Devices an overview lists, and every analysis of all devices covers: a snapshot is one
/// process (a few GPUs and the host); 10,000 devices made a 16 MB overview and a 60 s analysis.
pub const MAX_DEVICES: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceOverview {
    pub device: i64,
    /// This entry is pinned host memory (`host_segments` / `host_traces`), not a device.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned_host: bool,
    pub events: usize,
    pub segments_at_dump: u64,
    pub expandable_segments_at_dump: u64,
    /// Which allocator rules the replay used and where they came from.
    pub allocator_rules: String,
    pub at_dump: DumpFigures,
    pub at_window_start: Option<Counters>,
    pub at_last_event: Option<Counters>,
    pub peaks: Peaks,
    pub window: Window,
    pub consistency: Consistency,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DumpFigures {
    pub allocated: u64,
    pub active: u64,
    pub reserved: u64,
    pub requested: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Peaks {
    pub allocated: Peak,
    pub active: Peak,
    pub reserved: Peak,
    pub requested: Peak,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Window {
    pub first_time_us: Option<i64>,
    pub last_time_us: Option<i64>,
    pub blocks_before_window: u64,
    pub oom_events: u64,
    /// The ring buffer's size, when the file records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<u64>,
    /// The ring buffer wrapped: the oldest events are gone (recorded by the file, or the trace
    /// holds exactly `max_entries` events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflowed: Option<bool>,
}

pub fn overview(l: &Loaded) -> Overview {
    let s = &l.snapshot;
    Overview {
        format: s.format,
        encoding: s.encoding.clone(),
        source_bytes: s.source_bytes,
        devices: l.devices.iter().take(MAX_DEVICES).map(|d| device_overview(l, d)).collect(),
        devices_total: l.devices.len(),
        warnings: {
            let mut w = s.warnings.clone();
            if l.devices.len() > MAX_DEVICES {
                w.push(Warning {
                    code: crate::codes::WarningCode::DevicesTruncated,
                    message: format!(
                        "the snapshot has {} devices: the first {MAX_DEVICES} are listed and analyzed, the others are not",
                        l.devices.len()
                    ),
                    device: None,
                    event: None,
                });
            }
            w
        },
    }
}

fn device_overview(l: &Loaded, d: &DeviceReplay) -> DeviceOverview {
    let s = &l.snapshot;
    let dump = s.dump_totals(d.device);
    let trace = s.trace(d.device);
    // One pass over the events for the time span and the OOMs.
    let events = trace.map(|t| t.events.iter()).into_iter().flatten();
    let (first, last, ooms) = events.fold((None, None, 0u64), |(lo, hi, ooms): (Option<i64>, Option<i64>, u64), e| {
        let ooms = ooms + (e.action() == crate::model::Action::Oom) as u64;
        match e.time_us() {
            Some(t) => (Some(lo.map_or(t, |v| v.min(t))), Some(hi.map_or(t, |v| v.max(t))), ooms),
            None => (lo, hi, ooms),
        }
    });
    let has_events = d.events > 0;
    DeviceOverview {
        device: d.device,
        pinned_host: s.host_device == Some(d.device),
        events: d.events,
        segments_at_dump: dump.segments,
        allocator_rules: d.rules.source.clone(),
        expandable_segments_at_dump: s.segments.iter().filter(|x| x.device == d.device && x.is_expandable).count() as u64,
        at_dump: DumpFigures { allocated: dump.allocated, active: dump.active, reserved: dump.reserved, requested: dump.requested },
        at_window_start: has_events.then_some(d.series.start),
        at_last_event: d.series.last(),
        peaks: Peaks {
            allocated: d.series.peak("allocated"),
            active: d.series.peak("active"),
            reserved: d.series.peak("reserved"),
            requested: d.series.peak("requested"),
        },
        window: Window {
            first_time_us: first,
            last_time_us: last,
            blocks_before_window: d.before_window.iter().filter(|&&i| !d.lifetimes[i as usize].orphan).count() as u64,
            oom_events: ooms,
            max_entries: s.trace_max_entries,
            overflowed: s.trace_overflowed.or(s.trace_max_entries.map(|m| d.events as u64 >= m && m > 0)),
        },
        consistency: d.consistency.clone(),
    }
}
