//! What the Timeline marks besides the counters: OOM and snapshot events, and the program's
//! annotations summarised into time buckets; and one stack's text for a hover. The page asks the
//! engine for these: no view writes SQL.

use crate::error::Result;
use rusqlite::{named_params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

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

pub fn timeline_markers(conn: &Connection, device: i64, buckets: u32) -> Result<TimelineMarkers> {
    let events = conn
        .prepare_cached(include_str!("../../sql/views/trace_markers.sql"))?
        .query_map(named_params! {":device": device}, |r| Ok(TraceMarker { index: r.get(0)?, action: r.get(1)? }))?
        .collect::<rusqlite::Result<_>>()?;
    let annotations = conn
        .prepare_cached(include_str!("../../sql/views/annotation_markers.sql"))?
        .query_map(named_params! {":device": device, ":buckets": buckets.max(1)}, |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .filter_map(|row| match row {
            Ok((Some(index), name, stage, count)) => Some(Ok(AnnotationMarker { index, name, stage, count })),
            Ok((None, ..)) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<rusqlite::Result<_>>()?;
    Ok(TimelineMarkers { device, events, annotations })
}

pub fn stack_text(conn: &Connection, id: i64) -> Result<Option<StackText>> {
    Ok(conn
        .prepare_cached(include_str!("../../sql/views/stack_text.sql"))?
        .query_row(named_params! {":id": id}, |r| Ok(StackText { label: r.get(0)?, caller: r.get(1)?, text: r.get(2)? }))
        .optional()?)
}
