//! Peak analysis: the peak event of each counter, the gaps at it, and who holds the memory there,
//! grouped by allocation stack and by top frame. Groups sum exactly to the active counter at the
//! event (blocks allocated before the window without a stack form their own labelled group).

use super::basis::{counters_at, live_groups, peak_set, Group, PeakSet};
use crate::error::Result;
use crate::replay::Counters;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PeakAnalysis {
    pub device: i64,
    pub peaks: PeakSet,
    /// The event analysed (the allocated peak unless asked otherwise); None = window start.
    pub event: Option<i64>,
    /// The device has no trace events: the state analysed is the dump's.
    pub at_dump: bool,
    pub counters_at_event: Counters,
    /// reserved − active and reserved − allocated at the event: cached, not handed out.
    pub reserved_minus_active: i64,
    pub reserved_minus_allocated: i64,
    pub live_blocks: i64,
    pub live_bytes: i64,
    /// live_bytes / active counter (1.0 when the replay is consistent).
    pub coverage: f64,
    pub by_stack: Vec<Group>,
    pub by_top_frame: Vec<Group>,
    /// The same live memory by category (docs/categories.md).
    pub by_category: Vec<super::categories::CategoryTotal>,
}

/// Who holds the memory right after `event` (None = the window start).
pub fn peak(conn: &Connection, device: i64, event: Option<i64>, top: usize) -> Result<PeakAnalysis> {
    let peaks = peak_set(conn, device)?;
    let events: i64 = conn.query_row("SELECT events FROM devices WHERE device_index = ?1", [device], |r| r.get(0))?;
    let c = counters_at(conn, device, event)?;
    let (by_stack, live_bytes, live_blocks) = live_groups(conn, device, event, "stack", top)?;
    let (by_top_frame, _, _) = live_groups(conn, device, event, "frame", top)?;
    Ok(PeakAnalysis {
        device,
        peaks,
        event,
        at_dump: events == 0,
        counters_at_event: c,
        reserved_minus_active: c.reserved - c.active,
        reserved_minus_allocated: c.reserved - c.allocated,
        live_blocks,
        live_bytes,
        coverage: if c.active > 0 { live_bytes as f64 / c.active as f64 } else { 1.0 },
        by_stack,
        by_top_frame,
        by_category: super::categories::totals(conn, device, event)?,
    })
}
