//! One counter after every event in about 4 bytes per event instead of 8: counters change by
//! block sizes, so within a run of `BLOCK` events every value lies within ±2 GiB of the run's
//! first value almost always. A run where one does not (a 2 GiB segment, say) is kept whole.

use crate::fasthash::FastMap;

/// Events per run; also the granularity of the series' precomputed extremes.
pub const BLOCK: usize = 256;

/// `base` of a run kept whole in `wide`.
const WIDE: i64 = i64::MIN;

#[derive(Debug, Clone, Default)]
pub struct Column {
    /// First value of each run of `BLOCK` events, or `WIDE`.
    base: Vec<i64>,
    /// Each event's value minus its run's base (0 in runs kept whole).
    offset: Vec<i32>,
    /// Runs whose values do not fit an `i32` offset, by run index.
    wide: FastMap<u32, Vec<i64>>,
}

impl Column {
    pub fn with_capacity(n: usize) -> Column {
        Column { base: Vec::with_capacity(n.div_ceil(BLOCK)), offset: Vec::with_capacity(n), wide: FastMap::default() }
    }

    pub fn len(&self) -> usize {
        self.offset.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offset.is_empty()
    }

    #[inline]
    pub fn push(&mut self, v: i64) {
        let i = self.offset.len();
        if i.is_multiple_of(BLOCK) {
            self.base.push(v);
        }
        let base = *self.base.last().expect("a run was started");
        // i128: the difference of two i64 cannot overflow there.
        match i32::try_from(v as i128 - base as i128) {
            Ok(d) if base != WIDE => self.offset.push(d),
            _ => self.push_wide(v),
        }
    }

    /// Keep the current run whole (its values so far, then `v`).
    #[cold]
    fn push_wide(&mut self, v: i64) {
        let run = self.offset.len() / BLOCK;
        let base = self.base[run];
        let earlier = &self.offset[run * BLOCK..];
        let whole = self.wide.entry(run as u32).or_insert_with(|| earlier.iter().map(|&d| base + d as i64).collect());
        whole.push(v);
        self.base[run] = WIDE;
        self.offset.push(0);
    }

    /// The value after event `i` (panics beyond the end, like slice indexing).
    #[inline]
    pub fn at(&self, i: usize) -> i64 {
        let run = i / BLOCK;
        match self.base[run] {
            WIDE => self.wide[&(run as u32)][i % BLOCK],
            base => base + self.offset[i] as i64,
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        (i < self.len()).then(|| self.at(i))
    }

    /// Values of events `r` in order (a run at a time, so that min/max loops stay tight).
    pub fn range(&self, r: std::ops::Range<usize>) -> impl Iterator<Item = i64> + '_ {
        let runs = r.start / BLOCK..r.end.div_ceil(BLOCK);
        runs.flat_map(move |run| {
            let (lo, hi) = (r.start.max(run * BLOCK), r.end.min((run + 1) * BLOCK));
            let base = self.base[run];
            let (narrow, whole): (&[i32], &[i64]) = if base == WIDE {
                (&[], &self.wide[&(run as u32)][lo - run * BLOCK..hi - run * BLOCK])
            } else {
                (&self.offset[lo..hi], &[])
            };
            narrow.iter().map(move |&d| base + d as i64).chain(whole.iter().copied())
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.range(0..self.len())
    }
}

impl FromIterator<i64> for Column {
    fn from_iter<I: IntoIterator<Item = i64>>(values: I) -> Self {
        let mut c = Column::default();
        for v in values {
            c.push(v);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values that stay close, jump by more than 2 GiB mid-run and at a run's start, and the
    /// extremes of i64, all read back exactly.
    #[test]
    fn values_read_back_exactly_across_narrow_and_wide_runs() {
        let mut values: Vec<i64> = (0..1000).map(|i| 1 << 33 | (i * 512)).collect();
        values[300] = 5 << 40; // mid-run jump
        values[512] = -(3 << 40); // at a run's start
        values[513] = i64::MIN;
        values[700] = i64::MAX;
        values[701] = i64::MIN;
        let c: Column = values.iter().copied().collect();
        assert_eq!(c.len(), values.len());
        assert_eq!(c.iter().collect::<Vec<_>>(), values);
        for r in [0..1, 250..260, 299..301, 500..530, 511..769, 768..1000, 5..5] {
            assert_eq!(c.range(r.clone()).collect::<Vec<_>>(), values[r.clone()], "{r:?}");
            assert!(r.clone().all(|i| c.at(i) == values[i]));
        }
        assert_eq!(c.get(999), Some(values[999]));
        assert_eq!(c.get(1000), None);
        // Only the runs holding the jumps are kept whole.
        assert_eq!(c.wide.len(), 2, "runs 1 and 2 are wide, runs 0 and 3 narrow");
        assert!(c.wide.contains_key(&1) && c.wide.contains_key(&2));
    }
}
