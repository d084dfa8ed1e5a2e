//! Where new segments land. Best fit breaks ties by address, so a simulation that should
//! reproduce the recording must put segments where CUDA put them: the recorded cudaMalloc
//! addresses are reused, size by size in recorded order, whenever they are free in the
//! simulation; expandable reservations start where the recording's mappings start. Anything
//! else gets a synthetic address far above the recorded ones.

use crate::fasthash::FastMap;
use std::collections::{BTreeMap, VecDeque};

const SYNTHETIC_SEGMENTS: u64 = 0x6000_0000_0000;
const SYNTHETIC_REGIONS: u64 = 0x7000_0000_0000;
/// Span of one expandable reservation (PyTorch reserves 1.125 × device memory; the simulator
/// limits memory by the capacity, not by address space).
const REGION_SPAN: u64 = 1 << 40;

#[derive(Debug, Default, Clone)]
pub(crate) struct AddressSource {
    /// Recorded cudaMalloc addresses not used yet, per segment size, in recorded order.
    recorded: FastMap<u64, VecDeque<u64>>,
    /// Live cudaMalloc segments of the simulation: start → end.
    live: BTreeMap<u64, u64>,
    next_synthetic: u64,
    /// Recorded start of the expandable reservation of each (stream, small pool).
    region_bases: FastMap<(u64, bool), u64>,
    next_region: u64,
}

impl AddressSource {
    pub fn new(recorded_segments: impl IntoIterator<Item = (u64, u64)>, region_bases: FastMap<(u64, bool), u64>) -> AddressSource {
        let mut recorded: FastMap<u64, VecDeque<u64>> = FastMap::default();
        for (addr, size) in recorded_segments {
            recorded.entry(size).or_default().push_back(addr);
        }
        AddressSource { recorded, live: BTreeMap::new(), next_synthetic: SYNTHETIC_SEGMENTS, region_bases, next_region: SYNTHETIC_REGIONS }
    }

    fn overlaps(&self, addr: u64, size: u64) -> bool {
        self.live.range(..addr + size).next_back().is_some_and(|(_, &end)| end > addr)
    }

    pub fn occupy(&mut self, addr: u64, size: u64) {
        self.live.insert(addr, addr + size);
    }

    pub fn release(&mut self, addr: u64) {
        self.live.remove(&addr);
    }

    /// Address for a new cudaMalloc segment of `size` bytes.
    pub fn segment(&mut self, size: u64) -> u64 {
        let pick = self.recorded.get(&size).and_then(|q| q.iter().position(|&a| !self.overlaps(a, size)));
        let addr = match pick {
            Some(i) => self.recorded.get_mut(&size).and_then(|q| q.remove(i)).expect("picked from the queue"),
            None => {
                let a = self.next_synthetic;
                self.next_synthetic += size.next_multiple_of(2 << 20);
                a
            }
        };
        self.occupy(addr, size);
        addr
    }

    /// Base of a new expandable reservation for a stream and pool.
    pub fn region(&mut self, stream: u64, small: bool) -> u64 {
        if let Some(base) = self.region_bases.remove(&(stream, small)) {
            return base;
        }
        let base = self.next_region;
        self.next_region += REGION_SPAN;
        base
    }

    pub fn region_size(&self) -> u64 {
        REGION_SPAN
    }
}
