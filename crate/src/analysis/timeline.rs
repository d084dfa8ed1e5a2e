//! Counter series for drawing: a window of events reduced to at most `buckets` columns, each
//! with the min and max of every counter, so a chart of millions of events loses no peak.

use crate::replay::Series;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Timeline {
    pub device: i64,
    pub from: u32,
    pub to: u32,
    /// First event of each bucket.
    pub index: Vec<u32>,
    pub allocated_min: Vec<i64>,
    pub allocated_max: Vec<i64>,
    pub active_max: Vec<i64>,
    pub reserved_max: Vec<i64>,
    pub requested_max: Vec<i64>,
    /// time_us of each bucket's first event (when the trace has timestamps).
    pub time_us: Vec<Option<i64>>,
}

impl Timeline {
    fn empty(device: i64, from: u32, to: u32) -> Timeline {
        Timeline {
            device,
            from,
            to,
            index: vec![],
            allocated_min: vec![],
            allocated_max: vec![],
            active_max: vec![],
            reserved_max: vec![],
            requested_max: vec![],
            time_us: vec![],
        }
    }
}

/// Events `from..=to` (clamped) in at most `buckets` buckets; `time_of(i)` is event i's time_us.
pub fn downsample(device: i64, s: &Series, time_of: impl Fn(usize) -> Option<i64>, from: u32, to: u32, buckets: u32) -> Timeline {
    let mut t = Timeline::empty(device, from, to);
    if s.is_empty() {
        return t;
    }
    let to = to.min(s.len() as u32 - 1);
    let from = from.min(to);
    let n = (to - from + 1) as u64;
    let buckets = buckets.clamp(1, 20_000) as u64;
    let per = n.div_ceil(buckets).max(1);
    let mut i = from as u64;
    while i <= to as u64 {
        let end = (i + per).min(to as u64 + 1) as usize;
        let x = s.extremes(i as usize..end);
        t.index.push(i as u32);
        t.allocated_min.push(x.allocated_min);
        t.allocated_max.push(x.allocated_max);
        t.active_max.push(x.active_max);
        t.reserved_max.push(x.reserved_max);
        t.requested_max.push(x.requested_max);
        t.time_us.push(time_of(i as usize));
        i += per;
    }
    t.from = from;
    t.to = to;
    t
}

/// The same buckets from the SnapshotDB (for inputs that are only a database, and the report).
pub fn from_db(conn: &rusqlite::Connection, device: i64, buckets: i64) -> crate::Result<Timeline> {
    let dev = super::basis::dev_id(conn, device)?;
    let events: i64 = conn.query_row("SELECT events FROM devices WHERE id = ?1", [dev], |r| r.get(0))?;
    let mut t = Timeline::empty(device, 0, events.max(1) as u32 - 1);
    let mut stmt = conn.prepare(include_str!("../../sql/analysis/timeline_buckets.sql"))?;
    let rows = stmt.query_map(rusqlite::params![dev, buckets.max(1), events], |r| {
        Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
    })?;
    for row in rows {
        let (i, amin, amax, act, res, req) = row?;
        t.index.push(i as u32);
        t.allocated_min.push(amin);
        t.allocated_max.push(amax);
        t.active_max.push(act);
        t.reserved_max.push(res);
        t.requested_max.push(req);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets built from block extremes equal buckets scanned event by event, for windows
    /// and bucket counts that cut blocks anywhere.
    #[test]
    fn block_extremes_equal_a_full_scan() {
        let n = 5000;
        let mut x: u64 = 7;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 40) as i64
        };
        let mut s = Series { allocated: (0..n).map(|_| next()).collect(), ..Default::default() };
        s.active = (0..n).map(|_| next()).collect();
        s.reserved = (0..n).map(|_| next()).collect();
        s.requested = (0..n).map(|_| next()).collect();
        let plain = s.clone();
        s.summarize();
        for (from, to, buckets) in
            [(0, 4999, 1), (0, 4999, 7), (3, 4321, 13), (255, 256, 1), (256, 1023, 3), (100, 4999, 1200), (4000, 4999, 2)]
        {
            let fast = downsample(0, &s, |_| None, from, to, buckets);
            let slow = downsample(0, &plain, |_| None, from, to, buckets);
            assert_eq!(
                (fast.allocated_min, fast.allocated_max, fast.active_max, fast.reserved_max, fast.requested_max),
                (slow.allocated_min, slow.allocated_max, slow.active_max, slow.reserved_max, slow.requested_max),
                "{from}..={to} in {buckets}"
            );
        }
    }
}
