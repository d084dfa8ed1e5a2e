//! The standard set of settings people try after an OOM message, simulated and ranked by
//! reserved peak, with the one to try first.

use super::{recorded_capacity, recorded_settings, Settings, Simulation, SimulationInputs};
use crate::error::Result;
use crate::format::bytes;
use crate::Loaded;
use serde::{Deserialize, Serialize};

/// Alloc-conf strings to try on a recording made under `recorded` (the recording itself is
/// always first, as ""). `with_capacity`: garbage collection only acts against a capacity.
pub fn standard_set(recorded: &Settings, with_capacity: bool) -> Vec<String> {
    let mut set = vec![String::new()];
    if recorded.rules.expandable {
        set.push("expandable_segments:False".into());
    } else {
        set.push("expandable_segments:True".into());
        for mb in [128, 256, 512] {
            set.push(format!("max_split_size_mb:{mb}"));
        }
    }
    set.push("roundup_power2_divisions:4".into());
    set.push("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]".into());
    if with_capacity && !(recorded.npu && recorded.rules.expandable) {
        for t in ["0.6", "0.8"] {
            set.push(format!("garbage_collection_threshold:{t}"));
        }
    }
    set
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TuneRow {
    /// The alloc-conf tried ("" = as recorded).
    pub conf: String,
    pub label: String,
    pub reserved_peak: u64,
    /// Reserved peak minus the simulated recorded settings' peak.
    pub change: i64,
    pub oom: serde_json::Value,
    pub segment_allocs: u64,
    pub largest_free_at_reserved_peak: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Tuning {
    pub device: i64,
    /// The self-check of the as-recorded simulation (None when the set was ranked from rows).
    pub reproduces_recording: Option<bool>,
    pub health: Option<String>,
    /// Best first (lowest reserved peak among those that do not run out of memory).
    pub rows: Vec<TuneRow>,
    pub try_first: Option<String>,
    pub verdict: String,
}

pub fn row(conf: &str, sim: &Simulation, baseline: u64) -> TuneRow {
    TuneRow {
        conf: conf.to_string(),
        label: if conf.is_empty() { "as recorded".into() } else { conf.to_string() },
        reserved_peak: sim.reserved_peak.bytes,
        change: sim.reserved_peak.bytes as i64 - baseline as i64,
        oom: sim.oom.clone(),
        segment_allocs: sim.segment_allocs,
        largest_free_at_reserved_peak: sim.largest_free_at_reserved_peak,
    }
}

/// Rank the rows and name the setting to try first.
pub fn rank(device: i64, mut rows: Vec<TuneRow>) -> Tuning {
    let fails = |r: &TuneRow| r.oom.is_u64();
    rows.sort_by_key(|r| (fails(r), r.reserved_peak, !r.conf.is_empty()));
    let recorded = rows.iter().find(|r| r.conf.is_empty()).cloned();
    let best = rows.iter().find(|r| !fails(r)).cloned();
    let (try_first, verdict) = match (best, recorded) {
        (Some(b), Some(rec)) if !b.conf.is_empty() && (fails(&rec) || b.reserved_peak * 100 < rec.reserved_peak * 99) => {
            let why = if fails(&rec) {
                "the recorded settings run out of memory and this one does not".to_string()
            } else {
                format!("it lowers the reserved peak by {} to {}", bytes(-b.change), bytes(b.reserved_peak as i64))
            };
            (Some(b.conf.clone()), format!("Try {} first: {why} (simulated).", b.conf))
        }
        (Some(_), Some(rec)) => (
            None,
            format!(
                "The recorded settings are already within 1% of the best of the set ({} reserved at the peak).",
                bytes(rec.reserved_peak as i64)
            ),
        ),
        _ => (None, "Every setting of the set runs out of memory: the program needs less memory, not other allocator settings.".into()),
    };
    Tuning { device, reproduces_recording: None, health: None, rows, try_first, verdict }
}

/// Why the ranking says nothing (None when it does): a window without allocations, or a
/// reserved peak from before the window, which no setting replayed on the window can change.
fn cannot_tell(l: &Loaded, device: i64, recorded: &Simulation) -> Option<&'static str> {
    let events = l.devices.iter().find(|d| d.device == device).map_or(0, |d| d.events);
    if events <= 1 {
        return Some("the trace has at most one event, so there is nothing to simulate");
    }
    if recorded.recorded_reserved_peak.event.is_none() {
        return Some("the reserved peak was reached before the trace window began, so no setting replayed on the window changes it");
    }
    None
}

/// The standard set for a device ("" = as recorded first).
pub fn candidates(l: &Loaded, device: i64, device_memory: Option<u64>) -> Result<Vec<String>> {
    let with_capacity = device_memory.is_some() || recorded_capacity(l, device).is_some();
    Ok(standard_set(&recorded_settings(l, device)?, with_capacity))
}

/// Simulate every candidate (in parallel where there are threads, from inputs prepared once) and
/// rank them.
pub fn tune(l: &Loaded, device: i64, device_memory: Option<u64>) -> Result<Tuning> {
    let confs = candidates(l, device, device_memory)?;
    let sims = simulate_all(&SimulationInputs::of(l, device, device_memory)?, &confs)?;
    let recorded = &sims[0];
    let baseline = recorded.reserved_peak.bytes;
    let rows = confs.iter().zip(&sims).map(|(c, s)| row(c, s, baseline)).collect();
    let mut t = rank(device, rows);
    if let Some(why) = cannot_tell(l, device, recorded) {
        t.try_first = None;
        t.verdict = format!("The simulation cannot tell which setting is best: {why}.");
    }
    t.reproduces_recording = recorded.reproduces_recording;
    t.health = Some(super::health(recorded));
    Ok(t)
}

#[cfg(not(target_arch = "wasm32"))]
fn simulate_all(inputs: &SimulationInputs, confs: &[String]) -> Result<Vec<Simulation>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(confs.len()).max(1);
    let chunks: Vec<&[String]> = confs.chunks(confs.len().div_ceil(threads)).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            chunks.iter().map(|chunk| scope.spawn(move || chunk.iter().map(|c| inputs.run(c)).collect::<Result<Vec<_>>>())).collect();
        let mut out = Vec::with_capacity(confs.len());
        for h in handles {
            out.extend(h.join().expect("a simulation thread panicked")?);
        }
        Ok(out)
    })
}

#[cfg(target_arch = "wasm32")]
fn simulate_all(inputs: &SimulationInputs, confs: &[String]) -> Result<Vec<Simulation>> {
    confs.iter().map(|c| inputs.run(c)).collect()
}
