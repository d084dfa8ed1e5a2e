//! What the analyses cite from the simulator: the recording with expandable segments toggled
//! (OOM and fragmentation findings, the OOM view), and the recorded and simulated reserved lines
//! for a chart.

use super::{Settings, SimPeak, Simulation};
use crate::format::{bytes, count};
use crate::replay::DeviceReplay;
use serde::{Deserialize, Serialize};

/// The one counterfactual every analysis cites: the recording with expandable segments
/// toggled (on, or off when it was recorded with them).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct WhatIf {
    pub conf: String,
    pub reserved_peak: SimPeak,
    /// The reserved peak of the recorded settings, simulated (the recording's own when the
    /// simulator reproduces it).
    pub recorded_reserved_peak: SimPeak,
    /// Simulated minus the recorded settings' reserved peak.
    pub change: i64,
    /// Each recorded OOM event and whether it would still happen.
    pub ooms: Vec<OomWhatIf>,
    /// For people: what the toggle would have done.
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct OomWhatIf {
    pub event: u32,
    pub happens: bool,
    pub sentence: String,
}

impl WhatIf {
    pub fn toggle_conf(recorded: &Settings) -> &'static str {
        if recorded.rules.expandable {
            "expandable_segments:False"
        } else {
            "expandable_segments:True"
        }
    }

    /// `sim` under `conf` against `baseline`, the simulation of the recorded settings (the same
    /// model on both sides: where the simulator does not reproduce the recording exactly, it is
    /// still compared with itself, and the sentence says so).
    pub fn from_simulation(conf: &str, sim: &Simulation, baseline: &Simulation, recorded_ooms: &[u32]) -> WhatIf {
        let change = sim.reserved_peak.bytes as i64 - baseline.reserved_peak.bytes as i64;
        let ooms = recorded_ooms
            .iter()
            .map(|&e| {
                let happens = !sim.recorded_ooms_avoided.contains(&e);
                let sentence = if happens {
                    format!("With {conf} this OOM would still have happened (simulated).")
                } else {
                    // The trace after an OOM is the program's recovery, not what it would have
                    // done next: only this request is known to fit.
                    format!(
                        "With {conf} this request would have been served (simulated): the allocator would have found room for it. What the program would have allocated after it is not in the trace."
                    )
                };
                OomWhatIf { event: e, happens, sentence }
            })
            .collect();
        let earlier_oom = sim.oom_detail.as_ref().filter(|o| !o.recorded);
        let caveat = if baseline.reproduces_recording == Some(false) {
            " The simulator does not reproduce this recording exactly: both figures are simulated."
        } else {
            ""
        };
        let sentence = match change {
            _ if earlier_oom.is_some() => {
                let o = earlier_oom.expect("checked");
                format!(
                    "With {conf} the program would have run out of memory at event {} (simulated: {} requested with {} reserved).",
                    count(o.event as i64),
                    bytes(o.bytes as i64),
                    bytes(o.reserved as i64)
                )
            }
            c if c < 0 => format!(
                "With {conf} the reserved peak would have been {} instead of {} ({} less, simulated).",
                bytes(sim.reserved_peak.bytes as i64),
                bytes(baseline.reserved_peak.bytes as i64),
                bytes(-c)
            ),
            0 => format!("With {conf} the reserved peak would have been the same, {} (simulated).", bytes(sim.reserved_peak.bytes as i64)),
            c => format!(
                "With {conf} the reserved peak would have been {} instead of {} ({} more, simulated).",
                bytes(sim.reserved_peak.bytes as i64),
                bytes(baseline.reserved_peak.bytes as i64),
                bytes(c)
            ),
        } + caveat;
        WhatIf {
            conf: conf.to_string(),
            reserved_peak: sim.reserved_peak.clone(),
            recorded_reserved_peak: baseline.reserved_peak.clone(),
            change,
            ooms,
            sentence,
        }
    }
}

/// Recorded and simulated reserved bytes over the same event axis, one point per column.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LinePoint {
    pub first: u32,
    pub last: u32,
    pub recorded_max: i64,
    pub simulated_max: i64,
}

/// The largest recorded and simulated reserved bytes in each of `columns` runs of events of
/// equal length, gathered while the simulation runs (the simulated bytes after every event
/// are not kept: 4 to 8 bytes an event).
pub(super) struct ReservedLines<'a> {
    replay: &'a DeviceReplay,
    events: usize,
    columns: usize,
    /// The column being gathered and the event that ends it.
    column: usize,
    end: usize,
    simulated_max: i64,
    out: Vec<LinePoint>,
}

impl<'a> ReservedLines<'a> {
    pub fn new(replay: &'a DeviceReplay, events: usize, columns: u32) -> ReservedLines<'a> {
        // No more columns than events, so none is empty.
        let columns = (columns.max(1) as usize).min(events.max(1));
        let end = events / columns;
        ReservedLines { replay, events, columns, column: 0, end, simulated_max: i64::MIN, out: Vec::with_capacity(columns) }
    }

    /// The simulation's reserved bytes after event `i` (called for every event in order).
    #[inline]
    pub fn after(&mut self, i: usize, reserved: i64) {
        self.simulated_max = self.simulated_max.max(reserved);
        if i + 1 == self.end {
            let first = self.column * self.events / self.columns;
            self.out.push(LinePoint {
                first: first as u32,
                last: i as u32,
                recorded_max: self.replay.series.reserved.range(first..i + 1).max().unwrap_or(0),
                simulated_max: self.simulated_max,
            });
            self.column += 1;
            self.end = (self.column + 1) * self.events / self.columns;
            self.simulated_max = i64::MIN;
        }
    }

    pub fn finish(self) -> Vec<LinePoint> {
        self.out
    }
}
