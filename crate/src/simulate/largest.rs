//! The largest free block of the simulated allocator, asked at each new reserved peak.
//!
//! A second ordered index of every free size answers it in O(log n) but costs a B-tree insert and
//! remove on every free-set change, a large part of a simulation's time. Most programs use a few
//! streams, so instead the largest size is kept with how many free blocks have it, and re-read
//! from the free sets (a step per stream) only when the last of them leaves. A pool of many
//! streams, where that walk at every peak would be quadratic, switches to the index for good.

use std::collections::{BTreeMap, BTreeSet};

/// The free sets' key: (stream, size, address, block id).
pub(crate) type FreeKey = (u64, u64, u64, u32);

/// Streams a walk may step over before the sizes are indexed instead.
const WALK_STREAMS: usize = 64;

pub(crate) enum LargestFree {
    /// The largest size, how many free blocks have it, and whether it must be re-read.
    Bound { size: u64, count: u64, stale: bool },
    /// Every free size with its count.
    Sizes(BTreeMap<u64, u64>),
}

impl LargestFree {
    pub fn new() -> LargestFree {
        LargestFree::Bound { size: 0, count: 0, stale: false }
    }

    /// A block of `size` entered a free set.
    pub fn insert(&mut self, size: u64) {
        match self {
            LargestFree::Bound { size: s, count, stale } => {
                if *stale {
                    return;
                }
                if size > *s {
                    (*s, *count) = (size, 1);
                } else if size == *s {
                    *count += 1;
                }
            }
            LargestFree::Sizes(sizes) => *sizes.entry(size).or_insert(0) += 1,
        }
    }

    /// A block of `size` left a free set.
    pub fn remove(&mut self, size: u64) {
        match self {
            LargestFree::Bound { size: s, count, stale } => {
                if !*stale && size == *s {
                    *count -= 1;
                    *stale = *count == 0;
                }
            }
            LargestFree::Sizes(sizes) => {
                if let Some(n) = sizes.get_mut(&size) {
                    *n -= 1;
                    if *n == 0 {
                        sizes.remove(&size);
                    }
                }
            }
        }
    }

    /// The largest size in `free` (0 when there is none).
    pub fn get(&mut self, free: &[BTreeSet<FreeKey>]) -> u64 {
        if let LargestFree::Bound { stale: true, .. } = self {
            *self = match walk(free) {
                Some((size, count)) => LargestFree::Bound { size, count, stale: false },
                None => LargestFree::Sizes(index(free)),
            };
        }
        match self {
            LargestFree::Bound { size, .. } => *size,
            LargestFree::Sizes(sizes) => sizes.last_key_value().map_or(0, |(&s, _)| s),
        }
    }
}

/// The largest size and its count from each stream's last key, or None past [`WALK_STREAMS`].
fn walk(free: &[BTreeSet<FreeKey>]) -> Option<(u64, u64)> {
    let (mut largest, mut count, mut streams) = (0, 0, 0);
    for set in free {
        let mut last = set.last();
        while let Some(&(stream, size, _, _)) = last {
            streams += 1;
            if streams > WALK_STREAMS {
                return None;
            }
            if size >= largest {
                let here = set.range((stream, size, 0, 0)..=(stream, size, u64::MAX, u32::MAX)).count() as u64;
                (largest, count) = if size > largest { (size, here) } else { (size, count + here) };
            }
            last = set.range(..(stream, 0, 0, 0)).next_back();
        }
    }
    Some((largest, count))
}

fn index(free: &[BTreeSet<FreeKey>]) -> BTreeMap<u64, u64> {
    let mut sizes = BTreeMap::new();
    for k in free.iter().flatten() {
        *sizes.entry(k.1).or_insert(0) += 1;
    }
    sizes
}
