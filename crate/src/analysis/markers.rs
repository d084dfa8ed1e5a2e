//! What the Timeline marks besides the counters: OOM and snapshot events, and the program's
//! annotations summarised into time buckets (both from the replay, so the Timeline never waits
//! for the SnapshotDB the page's worker builds meanwhile); and one stack's text for a hover (SQL).
//! The page asks the engine for these: no view writes SQL.

use crate::error::Result;
use crate::fasthash::{FastMap, FastSet};
use crate::model::Action;
use crate::semantics::RangeGroup;
use crate::store::cells::shared_cut;
use crate::Loaded;
use rusqlite::{named_params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// At most this many OOM and snapshot markers (a pathological trace of snapshots only).
const MAX_EVENT_MARKERS: usize = 5000;

/// A trace event the Timeline marks (`action` is `oom` or `snapshot`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TraceMarker {
    pub index: i64,
    pub action: String,
}

/// The first annotation of a time bucket, at the first event at or after its time, and how many
/// annotations the bucket holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct AnnotationMarker {
    pub index: i64,
    pub name: Option<String>,
    pub stage: Option<String>,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TimelineMarkers {
    pub device: i64,
    pub events: Vec<TraceMarker>,
    /// At most `buckets` (the page asks for 1,000): a snapshot may carry 10^6 annotations.
    pub annotations: Vec<AnnotationMarker>,
}

/// A stack as a hover shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StackText {
    /// The frame that names the stack.
    pub label: String,
    pub caller: Option<String>,
    /// Every frame, one per line.
    pub text: String,
}

/// The Timeline's markers of `device` (none for a device the replay does not have): its OOM and
/// snapshot events in order, and the annotations outside the framework's ranges in at most
/// `buckets` equal time buckets, each the bucket's earliest annotation (the first of equal
/// times), placed at the first event at or after its time, with the bucket's count.
pub fn timeline_markers(l: &Loaded, device: i64, buckets: u32) -> TimelineMarkers {
    let buckets = buckets.max(1);
    let mut out = TimelineMarkers { device, events: Vec::new(), annotations: Vec::new() };
    let (Some(d), Some(trace)) = (l.device(device), l.snapshot.trace(device)) else { return out };
    let events = || (0..d.events).filter_map(|i| trace.events.get(i).map(|e| (i, e)));
    out.events = events()
        .filter_map(|(i, e)| match e.action() {
            a @ (Action::Oom | Action::Snapshot) => Some(TraceMarker { index: i as i64, action: a.name().to_string() }),
            _ => None,
        })
        .take(MAX_EVENT_MARKERS)
        .collect();

    // Framework-internal ranges (of any device) are in the phase bands, not marked.
    let framework: FastSet<&str> =
        l.phases().iter().flat_map(|p| &p.ranges).filter(|r| r.group == RangeGroup::Framework).map(|r| r.name.as_str()).collect();
    let marked: Vec<(i64, &crate::model::Annotation)> = l
        .snapshot
        .annotations
        .iter()
        .filter(|a| a.device.is_none_or(|x| x == device) && !framework.contains(a.name.as_str()))
        .filter_map(|a| Some((a.time_us?, a)))
        .collect();
    let (Some(lo), Some(hi)) = (marked.iter().map(|m| m.0).min(), marked.iter().map(|m| m.0).max()) else { return out };
    // Real numbers, so that the extremes of i64 times cannot overflow.
    let span = (hi as f64 - lo as f64).max(1.0);
    let bucket = |t: i64| ((t as f64 - lo as f64) * f64::from(buckets) / span) as i64;
    // Per bucket, in the order first met: its earliest annotation and how many it holds.
    let mut groups: Vec<(i64, &crate::model::Annotation, i64)> = Vec::new();
    let mut at: FastMap<i64, usize> = FastMap::default();
    for &(t, a) in &marked {
        match at.get(&bucket(t)) {
            Some(&g) => {
                let x = &mut groups[g];
                if t < x.0 {
                    (x.0, x.1) = (t, a);
                }
                x.2 += 1;
            }
            None => {
                at.insert(bucket(t), groups.len());
                groups.push((t, a, 1));
            }
        }
    }
    // The first event at or after each bucket's time: one pass over the events with the
    // buckets in time order (the running maximum of the times first reaches t there).
    let mut by_time: Vec<usize> = (0..groups.len()).collect();
    by_time.sort_by_key(|&g| groups[g].0);
    let mut first_at: Vec<Option<i64>> = vec![None; groups.len()];
    let mut times = events().filter_map(|(i, e)| Some((i, e.time_us()?)));
    let mut latest: Option<(usize, i64)> = None;
    'buckets: for g in by_time {
        let t = groups[g].0;
        while latest.is_none_or(|(_, max)| max < t) {
            match times.next() {
                Some((i, time)) => {
                    if latest.is_none_or(|(_, max)| time > max) {
                        latest = Some((i, time));
                    }
                }
                None => break 'buckets,
            }
        }
        first_at[g] = latest.map(|(i, _)| i as i64);
    }
    // In event order (buckets at one event: in time order); at most `buckets + 1` of them, the
    // latest time making a bucket of its own.
    let mut placed: Vec<(i64, usize)> = first_at.iter().enumerate().filter_map(|(g, i)| Some(((*i)?, g))).collect();
    placed.sort_by_key(|&(i, g)| (i, groups[g].0));
    out.annotations = placed
        .into_iter()
        .map(|(index, g)| {
            let (_, a, count) = groups[g];
            let name = shared_cut(&a.name).unwrap_or_else(|| a.name.clone());
            AnnotationMarker { index, name: Some(name), stage: Some(a.stage.clone()), count }
        })
        .collect();
    out
}

pub fn stack_text(conn: &Connection, id: i64) -> Result<Option<StackText>> {
    Ok(conn
        .prepare_cached(include_str!("../../sql/views/stack_text.sql"))?
        .query_row(named_params! {":id": id}, |r| Ok(StackText { label: r.get(0)?, caller: r.get(1)?, text: r.get(2)? }))
        .optional()?)
}
