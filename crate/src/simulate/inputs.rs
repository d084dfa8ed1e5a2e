//! What every simulation of one device needs whatever the settings: the recorded cudaMalloc
//! addresses, the private pools, the recorded cache releases, the capacity and the recorded
//! reserved peak. Each is a pass over the whole trace; the what-if pair and the tune set
//! simulate the same device under several settings, so they prepare these once and borrow them
//! for every run instead of each run recomputing them.

use super::addresses::AddressSource;
use super::private::PrivateRanges;
use super::{recorded_capacity, recorded_settings, release_points, seed, Capacity, Settings, SimPeak};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::{DeviceTrace, Snapshot};
use crate::replay::DeviceReplay;
use crate::Loaded;

/// One device's inputs, for any number of simulations under any settings.
pub struct SimulationInputs<'a> {
    pub(super) replay: &'a DeviceReplay,
    /// The device's trace (None: no trace, simulated as an empty one).
    trace: Option<&'a DeviceTrace>,
    empty: DeviceTrace,
    /// The settings the recording ran under (what a conf changes).
    pub(super) recorded: Settings,
    pub(super) capacity: Option<Capacity>,
    /// Where new segments land; each run takes a copy, since it uses them up.
    pub(super) addresses: AddressSource,
    pub(super) private: PrivateRanges,
    /// Start event of each recorded empty_cache release → the event the releases precede.
    pub(super) releases: FastMap<u32, u32>,
    pub(super) recorded_peak: SimPeak,
}

impl<'a> SimulationInputs<'a> {
    /// The inputs of one device of a replayed snapshot, with `device_memory` bytes or the
    /// recorded capacity.
    pub fn of(l: &'a Loaded, device: i64, device_memory: Option<u64>) -> Result<SimulationInputs<'a>> {
        let d = l.device(device).ok_or_else(|| Error::no_device(device))?;
        if l.snapshot.host_device == Some(device) {
            return Err(Error::new(
                ErrorCode::NotSimulated,
                format!("entry {device} is pinned host memory, which the device caching allocator does not manage"),
                "simulate one of the GPU/NPU devices",
            ));
        }
        let recorded = recorded_settings(l, device)?;
        let capacity = match device_memory {
            Some(b) => Some(Capacity { bytes: b, source: "given".into() }),
            None => recorded_capacity(l, device),
        };
        Ok(SimulationInputs::new(&l.snapshot, d, recorded, capacity))
    }

    pub fn new(snap: &'a Snapshot, replay: &'a DeviceReplay, recorded: Settings, capacity: Option<Capacity>) -> SimulationInputs<'a> {
        let empty = DeviceTrace::default();
        let trace = snap.trace(replay.device);
        let t = trace.unwrap_or(&empty);
        let addresses = seed::recorded_addresses(replay, t);
        let private = PrivateRanges::of(snap, replay.device, t);
        let releases = release_points(replay, t, capacity.as_ref().map(|c| c.bytes), &private);
        let recorded_peak = {
            let p = crate::replay::first_max(std::iter::once(replay.series.start.reserved).chain(replay.series.reserved.iter()));
            p.map(|(b, i)| SimPeak { bytes: b as u64, event: i.checked_sub(1).map(|x| x as u32) })
                .unwrap_or(SimPeak { bytes: 0, event: None })
        };
        SimulationInputs { replay, trace, empty, recorded, capacity, addresses, private, releases, recorded_peak }
    }

    pub(super) fn trace(&self) -> &DeviceTrace {
        self.trace.unwrap_or(&self.empty)
    }
}
