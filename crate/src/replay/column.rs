//! One counter after every event in about 4 bytes per event instead of 8: counters change by
//! block sizes, so within a run of `BLOCK` events every value lies within ±2 GiB of the run's
//! first value almost always, and within ±2³¹ steps of 512 B (±1 TiB) when every change is a
//! whole number of blocks. A run where neither holds (a 2 GiB segment, say, and requested
//! bytes) is kept whole.

/// Events per run; also the granularity of the series' precomputed extremes.
pub const BLOCK: usize = 256;

/// The largest step (2^16 B) offsets count in: big enough for block sizes, small enough that
/// an offset that fits an i32 is a difference that fits an i64.
const MAX_SHIFT: u32 = 16;

/// `shift` of a run whose values all equal its base: nothing else is kept for it (a counter
/// that does not move for `BLOCK` events, as reserved bytes mostly do).
const CONSTANT: u8 = u8::MAX;
/// `shift` of a run kept whole in `whole`.
const WIDE: u8 = u8::MAX - 1;

/// Where a run's values start in `offset` or `whole`, kept in 4 bytes: a column of 2^32 values
/// would take 32 GiB of events before it.
fn start_index(start: usize) -> u32 {
    u32::try_from(start).expect("a column holds fewer than 2^32 values")
}

#[derive(Debug, Clone, Default)]
pub struct Column {
    len: usize,
    /// First value of each run of `BLOCK` events.
    base: Vec<i64>,
    /// Per run: the offsets' step as a power of two (0 for runs filled one value at a time),
    /// or `CONSTANT`, or `WIDE`.
    shift: Vec<u8>,
    /// Per run: where its values start in `offset`, or in `whole` for a run kept whole.
    start: Vec<u32>,
    /// The narrow runs' values minus their run's base, in steps of 2^`shift` of the run.
    offset: Vec<i32>,
    /// The values of the runs kept whole, `BLOCK` slots each.
    whole: Vec<i64>,
}

impl Column {
    /// A column for `n` values (the offsets' room is taken as the runs need it, then given back
    /// by [`Column::shrink_to_fit`]).
    pub fn with_capacity(n: usize) -> Column {
        let runs = n.div_ceil(BLOCK);
        Column {
            len: 0,
            base: Vec::with_capacity(runs),
            shift: Vec::with_capacity(runs),
            start: Vec::with_capacity(runs),
            offset: Vec::with_capacity(n),
            whole: Vec::new(),
        }
    }

    /// Give back the room constant and wide runs did not use.
    pub fn shrink_to_fit(&mut self) {
        self.offset.shrink_to_fit();
        self.whole.shrink_to_fit();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Begin run `len / BLOCK` at `base`, of the kind `shift`, its values at `start`.
    fn begin_run(&mut self, base: i64, shift: u8, start: usize) {
        self.base.push(base);
        self.shift.push(shift);
        self.start.push(start_index(start));
    }

    #[inline]
    pub fn push(&mut self, v: i64) {
        let i = self.len;
        if i.is_multiple_of(BLOCK) {
            self.begin_run(v, CONSTANT, self.offset.len());
        }
        let run = i / BLOCK;
        let base = self.base[run];
        match self.shift[run] {
            CONSTANT if v == base => {}
            CONSTANT => {
                // Narrow from here: the run's values so far were its base.
                self.shift[run] = 0;
                self.offset.resize(self.offset.len() + i % BLOCK, 0);
                self.push_narrow(v);
            }
            0 => self.push_narrow(v),
            WIDE => self.whole[self.start[run] as usize + i % BLOCK] = v,
            _ => self.widen_and_push(v),
        }
        self.len += 1;
    }

    /// Append `v` to the last run, narrow in steps of 1 so far.
    #[inline]
    fn push_narrow(&mut self, v: i64) {
        let base = *self.base.last().expect("a run was started");
        // i128: the difference of two i64 cannot overflow there.
        match i32::try_from(v as i128 - base as i128) {
            Ok(d) => self.offset.push(d),
            Err(_) => self.widen_and_push(v),
        }
    }

    /// Append a whole run (`values.len() <= BLOCK`, the column at a run's start): one range
    /// check for the run and a tight copy, where `push` decides at every value.
    pub fn push_run(&mut self, values: &[i64]) {
        debug_assert!(self.len.is_multiple_of(BLOCK) && values.len() <= BLOCK);
        let Some(&base) = values.first() else {
            return;
        };
        let (lo, hi) = values.iter().fold((base, base), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        // The largest power of two every difference is a multiple of (up to MAX_SHIFT).
        let common = values.iter().fold(0u64, |acc, &v| acc | v.wrapping_sub(base) as u64);
        let shift = common.trailing_zeros().min(MAX_SHIFT);
        let fits = |v: i64| i32::try_from((v as i128 - base as i128) >> shift).is_ok();
        if lo == hi {
            self.begin_run(base, CONSTANT, self.offset.len());
        } else if fits(lo) && fits(hi) {
            self.begin_run(base, shift as u8, self.offset.len());
            // Every difference fits an i32 in steps of 2^shift ≤ 2^16 (checked above), so it
            // fits an i64 and the wrapping one is exact.
            self.offset.extend(values.iter().map(|&v| (v.wrapping_sub(base) >> shift) as i32));
        } else {
            self.begin_run(base, WIDE, self.whole.len());
            self.whole.extend_from_slice(values);
            self.whole.resize(self.whole.len() + BLOCK - values.len(), 0);
        }
        self.len += values.len();
    }

    /// Keep the last run whole (its values so far, then `v`); `len` not yet counting `v`.
    fn widen_and_push(&mut self, v: i64) {
        let i = self.len;
        let run = i / BLOCK;
        let so_far: Vec<i64> = self.range(run * BLOCK..i).collect();
        // The last run's offsets are the last ones kept.
        if self.shift[run] != CONSTANT {
            self.offset.truncate(self.start[run] as usize);
        }
        let start = self.whole.len();
        self.whole.extend_from_slice(&so_far);
        self.whole.resize(start + BLOCK, 0);
        self.whole[start + i % BLOCK] = v;
        self.shift[run] = WIDE;
        self.start[run] = start_index(start);
    }

    /// The value after event `i` (panics beyond the end, like slice indexing).
    #[inline]
    pub fn at(&self, i: usize) -> i64 {
        assert!(i < self.len, "index {i} beyond a column of {}", self.len);
        let run = i / BLOCK;
        let at = self.start[run] as usize + i % BLOCK;
        match self.shift[run] {
            CONSTANT => self.base[run],
            WIDE => self.whole[at],
            shift => self.base[run] + ((self.offset[at] as i64) << shift),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        (i < self.len).then(|| self.at(i))
    }

    /// Values of events `r` in order (a run at a time, so that min/max loops stay tight).
    pub fn range(&self, r: std::ops::Range<usize>) -> impl Iterator<Item = i64> + '_ {
        let runs = r.start / BLOCK..r.end.div_ceil(BLOCK);
        runs.flat_map(move |run| {
            let (lo, hi) = (r.start.max(run * BLOCK), r.end.min((run + 1) * BLOCK));
            let (base, shift) = (self.base[run], self.shift[run]);
            let (from, to) = (self.start[run] as usize + lo - run * BLOCK, self.start[run] as usize + hi - run * BLOCK);
            let (narrow, whole, same): (&[i32], &[i64], usize) = match shift {
                CONSTANT => (&[], &[], hi - lo),
                WIDE => (&[], &self.whole[from..to], 0),
                _ => (&self.offset[from..to], &[], 0),
            };
            narrow.iter().map(move |&d| base + ((d as i64) << shift)).chain(whole.iter().copied()).chain(std::iter::repeat_n(base, same))
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
        let wide = |c: &Column| -> Vec<usize> { (0..c.base.len()).filter(|&r| c.shift[r] == WIDE).collect() };
        assert_eq!(wide(&by_run), wide(&c));
        assert_eq!(c.get(1000), None);
        // Only the runs holding the jumps are kept whole.
        assert_eq!(wide(&c), [1, 2], "runs 1 and 2 are wide, runs 0 and 3 narrow");
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
        assert_eq!(c.shift[0] as u32, MAX_SHIFT, "40 MiB steps, counted in the largest step");
        assert_eq!(c.shift[1], WIDE, "odd bytes, gigabytes apart");
        assert_eq!(c.shift[2], WIDE, "continued one value at a time");
    }

    /// Runs whose values do not move keep no offsets, filled either way; a run that moves after
    /// a constant start, or leaves the i32 range after it, reads back every value.
    #[test]
    fn constant_runs_keep_nothing_but_their_base() {
        let flat = 8i64 << 30;
        let mut values: Vec<i64> = vec![flat; 3 * BLOCK + 10];
        values[BLOCK + 100] = flat + 512; // run 1 moves mid-run
        values[2 * BLOCK + 200] = flat + (5 << 40) + 1; // run 2 goes wide after a constant start
        let c: Column = values.iter().copied().collect();
        let mut by_run = Column::with_capacity(values.len());
        values.chunks(BLOCK).for_each(|run| by_run.push_run(run));
        by_run.shrink_to_fit();
        for col in [&c, &by_run] {
            assert_eq!(col.iter().collect::<Vec<_>>(), values);
            assert!((0..values.len()).all(|i| col.at(i) == values[i]));
            assert_eq!(col.range(BLOCK + 90..2 * BLOCK + 210).collect::<Vec<_>>(), values[BLOCK + 90..2 * BLOCK + 210]);
            assert_eq!([col.shift[0], col.shift[2], col.shift[3]], [CONSTANT, WIDE, CONSTANT]);
            assert_eq!(col.offset.len(), BLOCK, "only run 1 keeps offsets");
        }
        assert_eq!(by_run.offset.capacity(), BLOCK, "the room for the others given back");
    }
}
