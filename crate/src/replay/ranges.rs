//! Reserved address ranges of one device: cudaMalloc segments and, with expandable segments,
//! contiguous mapped ranges that merge when pages are mapped next to each other and split when
//! pages in the middle are unmapped.

use crate::model::{Action, Pool};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub size: u64,
    pub stream: u64,
    pub pool: Pool,
    pub expandable: bool,
}

impl Range {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.size)
    }
}

#[derive(Debug, Clone, Default)]
pub struct RangeSet {
    map: BTreeMap<u64, Range>,
}

impl RangeSet {
    pub fn iter(&self) -> impl Iterator<Item = &Range> {
        self.map.values()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn total(&self) -> u64 {
        self.map.values().map(|r| r.size).sum()
    }

    /// Whether a range starts at `addr`.
    pub fn starts_at(&self, addr: u64) -> bool {
        self.map.contains_key(&addr)
    }

    pub fn containing(&self, addr: u64) -> Option<Range> {
        self.map.range(..=addr).next_back().map(|(_, r)| *r).filter(|r| addr < r.end())
    }

    fn overlaps(&self, start: u64, size: u64) -> bool {
        let end = start.saturating_add(size);
        self.map.range(..end).next_back().is_some_and(|(_, r)| r.end() > start)
    }

    /// Add a range as its own entry (dump segments are separate objects even when they touch).
    pub fn insert_separate(&mut self, r: Range) -> Result<(), String> {
        if r.size == 0 || self.overlaps(r.start, r.size) {
            return Err(format!("range 0x{:x}+{} is empty or overlaps reserved memory", r.start, r.size));
        }
        self.map.insert(r.start, r);
        Ok(())
    }

    /// Add a range; expandable ranges merge with touching expandable ranges of the same stream.
    pub fn insert(&mut self, r: Range) -> Result<(), String> {
        if r.size == 0 {
            return Err(format!("range at 0x{:x} has size 0", r.start));
        }
        if self.overlaps(r.start, r.size) {
            return Err(format!("range 0x{:x}+{} overlaps reserved memory", r.start, r.size));
        }
        let mut merged = r;
        if r.expandable {
            if let Some(left) = self.map.range(..r.start).next_back().map(|(_, l)| *l) {
                if left.expandable && left.stream == r.stream && left.end() == r.start {
                    self.map.remove(&left.start);
                    merged.start = left.start;
                    merged.size += left.size;
                    merged.pool = left.pool;
                }
            }
            if let Some(right) = self.map.get(&r.end()).copied() {
                if right.expandable && right.stream == r.stream {
                    self.map.remove(&right.start);
                    merged.size += right.size;
                }
            }
        }
        self.map.insert(merged.start, merged);
        Ok(())
    }

    /// Remove a whole segment that must exist exactly.
    pub fn remove_exact(&mut self, start: u64, size: u64) -> Result<Range, String> {
        match self.map.get(&start) {
            Some(r) if r.size == size => Ok(self.map.remove(&start).unwrap()),
            Some(r) => Err(format!("segment at 0x{start:x} has {} bytes, the event says {size}", r.size)),
            None => Err(format!("no segment starts at 0x{start:x}")),
        }
    }

    /// Apply one segment event going forward: segment_alloc adds a segment, segment_map adds a
    /// mapping (merged with touching mappings), segment_free removes a segment, segment_unmap cuts
    /// a mapping out. Other actions do nothing.
    pub fn apply(&mut self, action: Action, addr: u64, size: u64, stream: u64) -> Result<(), String> {
        let pool = if size == 2 << 20 { Pool::Small } else { Pool::Large };
        match action {
            Action::SegmentAlloc => self.insert_separate(Range { start: addr, size, stream, pool, expandable: false }),
            Action::SegmentMap => self.insert(Range { start: addr, size, stream, pool, expandable: true }),
            Action::SegmentFree => self.remove_exact(addr, size).map(|_| ()),
            Action::SegmentUnmap => self.cut(addr, size).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Cut `[start, start+size)` out of the range that contains it (unmapping pages).
    pub fn cut(&mut self, start: u64, size: u64) -> Result<Range, String> {
        let r = self.containing(start).ok_or_else(|| format!("0x{start:x} is not in reserved memory"))?;
        let end = start.saturating_add(size);
        if end > r.end() {
            return Err(format!("0x{start:x}+{size} runs past its range's end 0x{:x}", r.end()));
        }
        self.map.remove(&r.start);
        if start > r.start {
            self.map.insert(r.start, Range { size: start - r.start, ..r });
        }
        if end < r.end() {
            self.map.insert(end, Range { start: end, size: r.end() - end, ..r });
        }
        Ok(Range { start, size, ..r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(start: u64, size: u64) -> Range {
        Range { start, size, stream: 0, pool: Pool::Large, expandable: true }
    }

    #[test]
    fn expandable_ranges_merge_and_split() {
        let mut s = RangeSet::default();
        s.insert(exp(0, 100)).unwrap();
        s.insert(exp(100, 50)).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s.containing(120).unwrap().size, 150);
        s.cut(40, 20).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.containing(45).is_none());
        assert_eq!(s.total(), 130);
        assert!(s.insert(exp(10, 5)).is_err());
    }
}
