//! One counter after every event in about 4 bytes per event instead of 8: counters change by
//! block sizes, so within a run of `BLOCK` events every value lies within ±2 GiB of the run's
//! first value almost always, and within ±2³¹ steps of 512 B (±1 TiB) when every change is a
//! whole number of blocks. A run where neither holds (a 2 GiB segment, say, and requested
//! bytes) is kept whole.

/// Events per run; also the granularity of the series' precomputed extremes.
pub const BLOCK: usize = 256;

/// `base` of a run kept whole in `wide`.
const WIDE: i64 = i64::MIN;

/// The largest step (2^16 B) offsets count in: big enough for block sizes, small enough that
/// an offset that fits an i32 is a difference that fits an i64.
const MAX_SHIFT: u32 = 16;

#[derive(Debug, Clone, Default)]
pub struct Column {
    /// First value of each run of `BLOCK` events, or `WIDE`.
    base: Vec<i64>,
    /// Each event's value minus its run's base, in steps of 2^`shift` of the run (not read in
    /// runs kept whole).
    offset: Vec<i32>,
    /// Per run: the offsets' step as a power of two (0 for runs filled one value at a time).
    shift: Vec<u8>,
    /// Where each run kept whole starts in `whole` (`NOT_WIDE` for the others): a list, not a
    /// map, because a trace of big blocks can have most of its runs wide.
    wide_at: Vec<u32>,
    /// The values of the runs kept whole, `BLOCK` slots each.
    whole: Vec<i64>,
}

const NOT_WIDE: u32 = u32::MAX;

impl Column {
    pub fn with_capacity(n: usize) -> Column {
        let runs = n.div_ceil(BLOCK);
        Column {
            base: Vec::with_capacity(runs),
            offset: Vec::with_capacity(n),
            shift: Vec::with_capacity(runs),
            wide_at: Vec::with_capacity(runs),
            whole: Vec::new(),
        }
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
            self.shift.push(0);
            self.wide_at.push(NOT_WIDE);
        }
        let base = *self.base.last().expect("a run was started");
        // i128: the difference of two i64 cannot overflow there.
        match i32::try_from(v as i128 - base as i128) {
            Ok(d) if base != WIDE && self.shift.last() == Some(&0) => self.offset.push(d),
            _ => self.push_wide(v),
        }
    }

    /// Append a whole run (`values.len() <= BLOCK`, the column at a run's start): one range
    /// check for the run and a tight copy, where `push` decides at every value.
    pub fn push_run(&mut self, values: &[i64]) {
        debug_assert!(self.len().is_multiple_of(BLOCK) && values.len() <= BLOCK);
        let Some(&base) = values.first() else {
            return;
        };
        let (lo, hi) = values.iter().fold((base, base), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        // The largest power of two every difference is a multiple of (up to MAX_SHIFT).
        let common = values.iter().fold(0u64, |acc, &v| acc | v.wrapping_sub(base) as u64);
        let shift = common.trailing_zeros().min(MAX_SHIFT);
        let fits = |v: i64| i32::try_from((v as i128 - base as i128) >> shift).is_ok();
        if base != WIDE && fits(lo) && fits(hi) {
            self.base.push(base);
            self.shift.push(shift as u8);
            self.wide_at.push(NOT_WIDE);
            // Every difference fits an i32 in steps of 2^shift ≤ 2^16 (checked above), so it
            // fits an i64 and the wrapping one is exact.
            self.offset.extend(values.iter().map(|&v| (v.wrapping_sub(base) >> shift) as i32));
        } else {
            self.base.push(WIDE);
            self.shift.push(0);
            self.wide_at.push(self.whole.len() as u32);
            self.whole.extend_from_slice(values);
            self.whole.resize(self.whole.len() + BLOCK - values.len(), 0);
            self.offset.resize(self.offset.len() + values.len(), 0);
        }
    }

    /// Keep the current run whole (its values so far, then `v`).
    fn push_wide(&mut self, v: i64) {
        let i = self.offset.len();
        let run = i / BLOCK;
        if self.wide_at[run] == NOT_WIDE {
            let base = self.base[run];
            let start = self.whole.len();
            self.wide_at[run] = start as u32;
            let shift = self.shift[run];
            self.whole.extend(self.offset[run * BLOCK..].iter().map(|&d| base + ((d as i64) << shift)));
            self.whole.resize(start + BLOCK, 0);
            self.base[run] = WIDE;
        }
        self.whole[self.wide_at[run] as usize + i % BLOCK] = v;
        self.offset.push(0);
    }

    /// The values of a run kept whole.
    fn whole_run(&self, run: usize) -> &[i64] {
        let start = self.wide_at[run] as usize;
        &self.whole[start..start + BLOCK]
    }

    /// The value after event `i` (panics beyond the end, like slice indexing).
    #[inline]
    pub fn at(&self, i: usize) -> i64 {
        let run = i / BLOCK;
        match self.base[run] {
            WIDE => self.whole_run(run)[i % BLOCK],
            base => base + ((self.offset[i] as i64) << self.shift[run]),
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
            let (narrow, whole): (&[i32], &[i64]) =
                if base == WIDE { (&[], &self.whole_run(run)[lo - run * BLOCK..hi - run * BLOCK]) } else { (&self.offset[lo..hi], &[]) };
            let shift = self.shift[run];
            narrow.iter().map(move |&d| base + ((d as i64) << shift)).chain(whole.iter().copied())
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
        // Filled a run at a time, the same values and the same runs kept whole.
        let mut by_run = Column::default();
        values.chunks(BLOCK).for_each(|run| by_run.push_run(run));
        assert_eq!(by_run.iter().collect::<Vec<_>>(), values);
        assert_eq!((&by_run.base, &by_run.wide_at), (&c.base, &c.wide_at));
        assert_eq!(c.get(1000), None);
        // Only the runs holding the jumps are kept whole.
        let wide: Vec<usize> = (0..c.base.len()).filter(|&r| c.wide_at[r] != NOT_WIDE).collect();
        assert_eq!(wide, [1, 2], "runs 1 and 2 are wide, runs 0 and 3 narrow");
    }

    /// A run a time: values 40 MiB blocks apart span 10 GiB in a run yet stay narrow (steps of
    /// 512 B), so do big negative steps; bytes that are no whole number of blocks go wide; a run
    /// begun by `push_run` and continued by `push` keeps every value.
    #[test]
    fn runs_of_whole_blocks_stay_narrow() {
        let blocks: Vec<i64> = (0..BLOCK as i64).map(|i| (7 << 40) + (if i % 2 == 0 { i } else { -i }) * (40 << 20)).collect();
        let bytes: Vec<i64> = (0..BLOCK as i64).map(|i| i * 3_000_000_007).collect();
        let mut c = Column::default();
        c.push_run(&blocks);
        c.push_run(&bytes);
        c.push_run(&blocks[..10]);
        for &v in &bytes[..5] {
            c.push(v);
        }
        let expected: Vec<i64> = blocks.iter().chain(&bytes).chain(&blocks[..10]).chain(&bytes[..5]).copied().collect();
        assert_eq!(c.iter().collect::<Vec<_>>(), expected);
        assert!((0..expected.len()).all(|i| c.at(i) == expected[i]));
        assert_eq!((c.wide_at[0], c.shift[0] as u32), (NOT_WIDE, MAX_SHIFT), "40 MiB steps, counted in the largest step");
        assert_ne!(c.wide_at[1], NOT_WIDE, "odd bytes, gigabytes apart");
        assert_ne!(c.wide_at[2], NOT_WIDE, "continued one value at a time");
    }
}
