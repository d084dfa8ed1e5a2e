//! What if: run the caching allocator forward on one device's recorded request stream under
//! other settings, and say what the reserved memory, the segment calls and the OOMs would have
//! been. Under the recorded settings the simulation must reproduce the recording's segment
//! events; that self-check is what makes the other answers trustworthy.
//!
//! `settings` (what to simulate) → `seed` (the window-start layout from the replay) → `pool`
//! (the allocator) driven by `run` over the trace → [`Simulation`]. `tune` runs a standard set.

mod addresses;
mod check;
mod inputs;
mod largest;
mod pool;
mod private;
mod seed;
pub mod settings;
pub mod tune;
mod whatif;

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::format::{bytes, count, exact_bytes};
use crate::model::{Action, DeviceTrace};
use crate::replay::{DeviceReplay, NONE};
use crate::Loaded;
pub use check::health;
pub use inputs::SimulationInputs;
use pool::Allocator;
use serde::{Deserialize, Serialize};
pub use settings::Settings;
pub use whatif::{LinePoint, OomWhatIf, WhatIf};

/// Device memory the allocator may reserve, and how it is known.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Capacity {
    pub bytes: u64,
    pub source: String,
}

impl Capacity {
    /// Reserved plus the device's free memory at the first recorded OOM.
    pub fn from_oom(replay: &DeviceReplay, trace: &DeviceTrace) -> Option<Capacity> {
        (0..trace.events.len()).find_map(|i| {
            let e = &trace.events[i];
            let free = trace.extra(e).and_then(|x| x.device_free).filter(|_| e.action() == Action::Oom)?;
            let reserved = replay.series.reserved.get(i)? as u64;
            Some(Capacity {
                bytes: reserved + free,
                source: format!(
                    "reserved {} + device free {} at the OOM of event {i}",
                    exact_bytes(reserved as i64),
                    exact_bytes(free as i64)
                ),
            })
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SimPeak {
    pub bytes: u64,
    /// Event after which the peak is first reached (None: before the first event).
    pub event: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Difference {
    pub event: u32,
    pub reason: String,
}

/// The first request the device could not serve.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct OomAt {
    pub event: u32,
    /// Rounded request.
    pub bytes: u64,
    /// Simulated reserved bytes when it failed.
    pub reserved: u64,
    /// The recording ran out of memory at this event too.
    pub recorded: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Simulation {
    pub device: i64,
    pub settings: settings::SimSettings,
    /// Simulated under the settings of the recording (the self-check).
    pub as_recorded: bool,
    pub reproduces_recording: Option<bool>,
    pub first_difference: Option<Difference>,
    pub reserved_peak: SimPeak,
    pub allocated_peak: SimPeak,
    pub recorded_reserved_peak: SimPeak,
    /// cudaMalloc calls, or page mappings with expandable segments.
    pub segment_allocs: u64,
    /// cudaFree calls, or page unmappings with expandable segments.
    pub segment_frees: u64,
    /// The small pool's share of the reserved peak (the rest is the large pool).
    pub small_pool_at_reserved_peak: u64,
    pub free_at_reserved_peak: u64,
    pub largest_free_at_reserved_peak: u64,
    /// First event that would fail: an event index, "unknown capacity", or null (none).
    pub oom: serde_json::Value,
    pub oom_detail: Option<OomAt>,
    /// Recorded OOMs the simulated allocator would have served.
    pub recorded_ooms_avoided: Vec<u32>,
    pub capacity: Option<Capacity>,
    /// Events where the recording released cached memory on its own (empty_cache), applied in
    /// the simulation at the same point.
    pub cache_releases: Vec<u32>,
    pub notes: Vec<String>,
    /// The recorded and simulated reserved lines for a chart, when asked for
    /// ([`SimulationInputs::run_with_lines`]).
    #[serde(skip)]
    pub lines: Vec<LinePoint>,
}

/// A maximal run of recorded releases that the program asked for (empty_cache), not the
/// allocator's OOM path: start event → the event the releases precede.
fn release_points(
    replay: &DeviceReplay,
    trace: &DeviceTrace,
    capacity: Option<u64>,
    private: &private::PrivateRanges,
) -> FastMap<u32, u32> {
    let events = &trace.events;
    let mut out = FastMap::default();
    let mut i = 0;
    while i < events.len() {
        if !matches!(events[i].action(), Action::SegmentFree | Action::SegmentUnmap) || private.contains(events[i].addr) {
            i += 1;
            continue;
        }
        let start = i;
        while i < events.len() && events[i].action().is_segment() {
            i += 1;
        }
        let trigger = i;
        let grows = (start..trigger).map(|k| &events[k]).find(|e| matches!(e.action(), Action::SegmentAlloc | Action::SegmentMap));
        let before = if start == 0 { replay.series.start.reserved } else { replay.series.reserved.at(start - 1) } as u64;
        let oom_path =
            events.get(trigger).is_some_and(|e| e.action() == Action::Oom) || capacity.zip(grows).is_some_and(|(c, g)| before + g.size > c);
        if !oom_path {
            out.insert(start as u32, trigger as u32);
        }
    }
    out
}

/// The allocator settings a device's recording ran under.
pub fn recorded_settings(l: &Loaded, device: i64) -> Result<Settings> {
    let d = l.device(device).ok_or_else(|| Error::no_device(device))?;
    Settings::recorded(&d.rules).with_recorded_extras(l.snapshot.allocator_settings.as_ref())
}

/// Reserved plus device free at the device's first recorded OOM, if any.
pub fn recorded_capacity(l: &Loaded, device: i64) -> Option<Capacity> {
    let d = l.device(device)?;
    l.snapshot.trace(device).and_then(|t| Capacity::from_oom(d, t))
}

/// Simulate one device of a replayed snapshot under the recorded settings changed by `conf`
/// ("" = as recorded: the self-check), with `device_memory` bytes or the recorded capacity.
pub fn simulate_loaded(l: &Loaded, device: i64, conf: &str, device_memory: Option<u64>) -> Result<Simulation> {
    SimulationInputs::of(l, device, device_memory)?.run(conf)
}

/// Simulate one device under each of `confs` (as [`simulate_loaded`]), in that order, preparing
/// what the runs share once.
pub fn simulate_confs(l: &Loaded, device: i64, confs: &[&str], device_memory: Option<u64>) -> Result<Vec<Simulation>> {
    let inputs = SimulationInputs::of(l, device, device_memory)?;
    confs.iter().map(|c| inputs.run(c)).collect()
}

impl SimulationInputs<'_> {
    /// Simulate under the recorded settings changed by `conf` ("" = as recorded: the self-check).
    pub fn run(&self, conf: &str) -> Result<Simulation> {
        self.run_with_lines(conf, None)
    }

    /// [`SimulationInputs::run`], with the recorded and simulated reserved lines over `columns`
    /// runs of events when `columns` is given.
    pub fn run_with_lines(&self, conf: &str, columns: Option<u32>) -> Result<Simulation> {
        let conf = conf.trim();
        let settings = self.recorded.clone().apply_conf(conf)?;
        let mut sim = simulate(self, &settings, conf.is_empty(), columns);
        sim.settings.conf = if conf.is_empty() { format!("as recorded: {}", settings.conf_string()) } else { conf.to_string() };
        Ok(sim)
    }
}

/// Simulate one device. `as_recorded`: these are the recording's own settings, so compare.
/// `columns`: gather the reserved lines over that many runs of events.
pub fn simulate(inputs: &SimulationInputs, settings: &Settings, as_recorded: bool, columns: Option<u32>) -> Simulation {
    let (replay, trace, private, releases) = (inputs.replay, inputs.trace(), &inputs.private, &inputs.releases);
    let capacity = inputs.capacity.clone();
    let events = &trace.events;
    let mut a = Allocator::new(settings.clone(), capacity.as_ref().map(|c| c.bytes), inputs.addresses.clone());
    a.keep_emitted = as_recorded;
    let (mut block_of, mut kept) = seed::seed(&mut a, replay, private);
    let mut lines = columns.map(|c| whatif::ReservedLines::new(replay, events.len(), c));
    let mut watch = as_recorded.then(|| (check::SegmentWatch::new(), check::CounterWatch::default()));
    // After each event: the chart's lines and the self-check see the totals and the segment
    // events the allocator made for it.
    let mut observe = |a: &mut Allocator, kept: &private::AsRecorded, i: usize| {
        let (reserved, allocated) = (a.reserved + kept.reserved, a.allocated + kept.allocated);
        if let Some(lines) = &mut lines {
            lines.after(i, reserved as i64);
        }
        if let Some((segments, counters)) = &mut watch {
            for s in a.emitted.drain(..) {
                segments.emitted(s, trace, private);
            }
            counters.after(replay, trace, i, reserved as i64, allocated as i64);
        }
        (reserved, allocated)
    };
    let mut peak = SimPeak { bytes: a.reserved + kept.reserved, event: None };
    let mut alloc_peak = SimPeak { bytes: a.allocated + kept.allocated, event: None };
    let (mut free_at_peak, mut largest_at_peak, mut small_at_peak) =
        ((a.reserved + kept.reserved).saturating_sub(a.active + kept.active), a.largest_free(), a.reserved_small);
    let mut oom: Option<OomAt> = None;
    let mut avoided = Vec::new();
    let mut cache_releases = Vec::new();

    for i in 0..events.len() {
        let e = &events[i];
        let l = replay.event_lifetime[i];
        a.trigger = i as u32;
        if !private.is_empty() && private.contains(e.addr) && e.action() != Action::Oom {
            follow_recorded(&mut kept, e.action(), e.size, l, replay);
            observe(&mut a, &kept, i);
            continue;
        }
        match e.action() {
            Action::Alloc if l != NONE && !replay.lifetimes[l as usize].orphan => {
                let s = a.settings.rules.round_size(e.size);
                let b = match a.malloc(s, trace.stream(e)) {
                    Some(b) => b,
                    None => {
                        oom.get_or_insert(OomAt { event: i as u32, bytes: s, reserved: a.reserved, recorded: false });
                        // Go on as if the device were larger, so the rest of the run is still told.
                        // A request larger than an expandable segment's whole reservation fits
                        // nowhere even then: the run goes on without it (its OOM is recorded).
                        let cap = a.capacity.take();
                        let b = a.malloc(s, trace.stream(e));
                        a.capacity = cap;
                        b.unwrap_or(pool::NIL)
                    }
                };
                block_of[l as usize] = b;
            }
            Action::FreeRequested if l != NONE => {
                if let Some(&b) = block_of.get(l as usize).filter(|&&b| b != pool::NIL) {
                    a.free_requested(b);
                }
            }
            Action::FreeCompleted | Action::Free if l != NONE => {
                if let Some(b) = block_of.get_mut(l as usize).map(|b| std::mem::replace(b, pool::NIL)).filter(|&b| b != pool::NIL) {
                    a.free_block(b);
                }
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                if let Some(&trigger) = releases.get(&(i as u32)) {
                    a.trigger = trigger;
                    a.release_cached_blocks();
                    cache_releases.push(i as u32);
                }
            }
            Action::Oom => match a.malloc(e.size, trace.stream(e)) {
                Some(b) => {
                    avoided.push(i as u32);
                    a.free_block(b);
                }
                None => {
                    oom.get_or_insert(OomAt { event: i as u32, bytes: e.size, reserved: a.reserved, recorded: true });
                }
            },
            _ => {}
        }
        let (total_reserved, total_allocated) = observe(&mut a, &kept, i);
        if total_reserved > peak.bytes {
            peak = SimPeak { bytes: total_reserved, event: Some(i as u32) };
            free_at_peak = total_reserved.saturating_sub(a.active + kept.active);
            largest_at_peak = a.largest_free();
            small_at_peak = a.reserved_small;
        }
        if total_allocated > alloc_peak.bytes {
            alloc_peak = SimPeak { bytes: total_allocated, event: Some(i as u32) };
        }
    }

    let recorded_peak = inputs.recorded_peak.clone();
    // The simulation reserves memory at the request that needs it; the recording shows the
    // segment event just before that request. The same peak is told at the recording's event.
    let cause = |i: u32| (i as usize..events.len()).find(|&j| !events[j].action().is_segment()).unwrap_or(i as usize) as u32;
    if peak.bytes == recorded_peak.bytes && recorded_peak.event.map(cause) == peak.event {
        peak.event = recorded_peak.event;
    }
    let (reproduces, first_difference) = match watch {
        Some((segments, counters)) => check::self_check(trace, private, segments, counters),
        None => (None, None),
    };
    let mut notes = Vec::new();
    if !replay.consistency.ok {
        notes.push("the replay of this trace is not consistent: the simulation follows the events it could place".to_string());
    }
    if !as_recorded && !replay.start_ranges.is_empty() {
        notes.push(format!(
            "the window starts with {} already reserved in {} segments and {} blocks allocated before it, kept as recorded under every setting: a setting changes only what is reserved after that",
            bytes(replay.start_ranges.total() as i64),
            count(replay.start_ranges.len() as i64),
            count(replay.before_window.len() as i64)
        ));
    }
    if !private.is_empty() {
        let n = private.len();
        notes.push(format!(
            "{} private-pool segment{} (CUDA graphs, MemPool) kept as recorded under every setting; the segment counts are the default pools'",
            count(n as i64),
            if n == 1 { "" } else { "s" }
        ));
    }
    if settings.garbage_collection_threshold > 0.0 && capacity.is_none() {
        notes.push("garbage_collection_threshold acts against the device capacity (PyTorch applies it under a memory fraction): not simulated without a device memory".into());
    }
    let oom_value = match (&oom, &capacity) {
        (Some(o), _) => serde_json::Value::from(o.event),
        (None, None) => "unknown capacity".into(),
        (None, Some(_)) => serde_json::Value::Null,
    };
    Simulation {
        device: replay.device,
        settings: settings.describe(),
        as_recorded,
        reproduces_recording: reproduces,
        first_difference,
        reserved_peak: peak,
        allocated_peak: alloc_peak,
        recorded_reserved_peak: recorded_peak,
        segment_allocs: a.segment_allocs,
        segment_frees: a.segment_frees,
        small_pool_at_reserved_peak: small_at_peak,
        free_at_reserved_peak: free_at_peak,
        largest_free_at_reserved_peak: largest_at_peak,
        oom: oom_value,
        oom_detail: oom,
        recorded_ooms_avoided: avoided,
        capacity,
        cache_releases,
        notes,
        lines: lines.map(whatif::ReservedLines::finish).unwrap_or_default(),
    }
}

/// A recorded event in a private pool: the counters follow the recording.
fn follow_recorded(kept: &mut private::AsRecorded, action: Action, size: u64, l: u32, replay: &DeviceReplay) {
    let block = (l != NONE).then(|| &replay.lifetimes[l as usize]).filter(|lt| !lt.orphan).map(|lt| lt.size);
    match action {
        Action::SegmentAlloc | Action::SegmentMap => kept.reserved += size,
        Action::SegmentFree | Action::SegmentUnmap => kept.reserved = kept.reserved.saturating_sub(size),
        Action::Alloc => {
            if let Some(b) = block {
                kept.allocated += b;
                kept.active += b;
            }
        }
        Action::FreeRequested => kept.allocated = kept.allocated.saturating_sub(block.unwrap_or(0)),
        Action::FreeCompleted => kept.active = kept.active.saturating_sub(block.unwrap_or(0)),
        Action::Free => {
            kept.allocated = kept.allocated.saturating_sub(block.unwrap_or(0));
            kept.active = kept.active.saturating_sub(block.unwrap_or(0));
        }
        _ => {}
    }
}
