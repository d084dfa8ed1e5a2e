//! Peak analysis: the peak event of each counter, the gaps at it, and who holds the memory there,
//! grouped by allocation stack and by top frame. Groups sum exactly to the active counter at the
//! event (blocks allocated before the window without a stack form their own labelled group).

use super::tree::{BEFORE_WINDOW_NO_STACK, NO_STACK};
use crate::error::Result;
use crate::replay::{Counters, Peak};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Group {
    /// Outermost-first stack text, or a synthetic label.
    pub label: String,
    /// The frame that names the allocation site (innermost Python frame, else non-plumbing).
    pub site: Option<String>,
    pub stack_id: Option<i64>,
    /// dynamic | before_window
    pub origin: String,
    pub blocks: i64,
    pub bytes: i64,
    pub requested_bytes: i64,
    pub share: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeakAnalysis {
    pub device: i64,
    pub peaks: PeakSet,
    /// The event analysed (the allocated peak unless asked otherwise); None = window start.
    pub event: Option<i64>,
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeakSet {
    pub allocated: Peak,
    pub active: Peak,
    pub reserved: Peak,
    pub requested: Peak,
}

pub(crate) fn dev_id(conn: &Connection, device: i64) -> Result<i64> {
    conn.query_row("SELECT id FROM devices WHERE device_index = ?1", [device], |r| r.get(0))
        .optional()?
        .ok_or_else(|| crate::session::no_device(device))
}

/// Counters right after `event` (None = before the first event).
pub fn counters_at(conn: &Connection, device: i64, event: Option<i64>) -> Result<Counters> {
    let dev = dev_id(conn, device)?;
    let row = match event {
        Some(e) => conn.query_row(
            "SELECT allocated, active, reserved, requested FROM traces WHERE device_id = ?1 AND trace_index = ?2",
            params![dev, e],
            |r| Ok(Counters { allocated: r.get(0)?, active: r.get(1)?, reserved: r.get(2)?, requested: r.get(3)? }),
        )?,
        None => conn.query_row(
            "SELECT start_allocated, start_active, start_reserved, start_requested FROM devices WHERE id = ?1",
            [dev],
            |r| {
                Ok(Counters {
                    allocated: r.get::<_, Option<i64>>(0)?.unwrap_or(0),
                    active: r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    reserved: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    requested: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                })
            },
        )?,
    };
    Ok(row)
}

/// Peak of one counter: earliest event reaching the maximum, None when the start is the maximum.
pub fn peak_of(conn: &Connection, device: i64, counter: &str) -> Result<Peak> {
    let dev = dev_id(conn, device)?;
    let start = counters_at(conn, device, None)?;
    let col = match counter {
        "allocated" | "active" | "reserved" | "requested" => counter,
        _ => "allocated",
    };
    // Stored at load: the maximum over the events and the first event reaching it.
    let best: Option<(i64, i64)> = conn
        .query_row(&format!("SELECT peak_{col}, peak_{col}_event FROM devices WHERE id = ?1"), [dev], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .optional()?
        .and_then(|(b, e)| Some((b?, e?)));
    let s = match col {
        "allocated" => start.allocated,
        "active" => start.active,
        "reserved" => start.reserved,
        _ => start.requested,
    };
    Ok(match best {
        Some((b, e)) if b > s => Peak { bytes: b, event: Some(e as u32) },
        _ => Peak { bytes: s, event: None },
    })
}

pub fn peak_set(conn: &Connection, device: i64) -> Result<PeakSet> {
    Ok(PeakSet {
        allocated: peak_of(conn, device, "allocated")?,
        active: peak_of(conn, device, "active")?,
        reserved: peak_of(conn, device, "reserved")?,
        requested: peak_of(conn, device, "requested")?,
    })
}

/// Live memory after `event` grouped by stack (`by = "stack"`) or by top frame (`"frame"`).
pub fn live_groups(conn: &Connection, device: i64, event: Option<i64>, by: &str, limit: usize) -> Result<(Vec<Group>, i64, i64)> {
    let dev = dev_id(conn, device)?;
    let key = if by == "frame" { "cs.top_frame_id" } else { "l.stack_id" };
    let sql = format!(
        "SELECT {key} AS k, (l.alloc_event IS NULL) AS before, COUNT(*), SUM(l.size), SUM(l.requested_size),
                CASE WHEN {key} IS NULL THEN NULL WHEN ?3 = 'frame' THEN (SELECT f.filename || ':' || f.line || ' ' || f.name FROM frames f WHERE f.id = cs.top_frame_id) ELSE cs.text END,
                cs.site
         FROM {live} l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
         GROUP BY k, CASE WHEN {key} IS NULL THEN (l.alloc_event IS NULL) ELSE 0 END
         ORDER BY SUM(l.size) DESC, k",
        live = super::live_lifetimes_sql("?1", "?2")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![dev, event.unwrap_or(-1), by], |r| {
        Ok((
            r.get::<_, Option<i64>>(0)?,
            r.get::<_, bool>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    let mut all = Vec::new();
    for row in rows {
        let (k, before, n, bytes, req, text, site) = row?;
        let label = text.unwrap_or_else(|| if before { BEFORE_WINDOW_NO_STACK.to_string() } else { NO_STACK.to_string() });
        all.push(Group {
            label,
            site: if by == "frame" { None } else { site },
            stack_id: k,
            origin: if before && k.is_none() { "before_window".into() } else { "dynamic".into() },
            blocks: n,
            bytes,
            requested_bytes: req,
            share: 0.0,
        });
    }
    let total_bytes: i64 = all.iter().map(|g| g.bytes).sum();
    let total_blocks: i64 = all.iter().map(|g| g.blocks).sum();
    if all.len() > limit {
        let rest = all.split_off(limit);
        all.push(Group {
            label: format!("[{} other groups]", rest.len()),
            site: None,
            stack_id: None,
            origin: "other".into(),
            blocks: rest.iter().map(|g| g.blocks).sum(),
            bytes: rest.iter().map(|g| g.bytes).sum(),
            requested_bytes: rest.iter().map(|g| g.requested_bytes).sum(),
            share: 0.0,
        });
    }
    for g in &mut all {
        g.share = g.bytes as f64 / total_bytes.max(1) as f64;
    }
    Ok((all, total_bytes, total_blocks))
}

pub fn peak(conn: &Connection, device: i64, event: Option<Option<i64>>, top: usize) -> Result<PeakAnalysis> {
    let peaks = peak_set(conn, device)?;
    let event = event.unwrap_or(peaks.allocated.event.map(|e| e as i64));
    let c = counters_at(conn, device, event)?;
    let (by_stack, live_bytes, live_blocks) = live_groups(conn, device, event, "stack", top)?;
    let (by_top_frame, _, _) = live_groups(conn, device, event, "frame", top)?;
    Ok(PeakAnalysis {
        device,
        peaks,
        event,
        counters_at_event: c,
        reserved_minus_active: c.reserved - c.active,
        reserved_minus_allocated: c.reserved - c.allocated,
        live_blocks,
        live_bytes,
        coverage: if c.active > 0 { live_bytes as f64 / c.active as f64 } else { 1.0 },
        by_stack,
        by_top_frame,
    })
}
