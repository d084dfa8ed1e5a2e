//! Leaks: blocks allocated inside the window and still allocated at the dump (told apart from
//! pending frees and from memory allocated before the window), long-lived blocks, and whether the
//! allocated floor grows across the window — all attributed to stacks.

use super::basis::dev_id;
use super::basis::NO_STACK;
use crate::error::Result;
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StackBytes {
    /// The frame that names the stack, as shown (see `basis::Group`).
    pub label: String,
    /// The calling Python frame.
    pub detail: Option<String>,
    pub site: Option<String>,
    /// The whole stack, outermost first.
    pub stack: Option<String>,
    pub stack_id: Option<i64>,
    pub blocks: i64,
    pub bytes: i64,
    /// First and last allocating events of these blocks.
    pub first_event: Option<i64>,
    pub last_event: Option<i64>,
}

super::basis::labelled!(StackBytes);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LeakAnalysis {
    pub device: i64,
    pub events: i64,
    /// Allocated in the window, still allocated at the dump.
    pub candidates: i64,
    pub candidate_bytes: i64,
    pub candidates_by_stack: Vec<StackBytes>,
    /// The candidates by category: what kind of memory is kept.
    pub candidates_by_category: Vec<super::categories::CategoryTotal>,
    /// Freed by the program but not yet returned (record_stream, other streams) at the dump.
    pub pending_free_blocks: i64,
    pub pending_free_bytes: i64,
    /// Allocated before the window and still live at the dump (weights, caches).
    pub before_window_blocks: i64,
    pub before_window_bytes: i64,
    /// Of those, the bytes without a stack (the dump gave none): what recording earlier would name.
    pub before_window_stackless_bytes: i64,
    /// In-window blocks that lived at least half the window (freed or not).
    pub long_lived_blocks: i64,
    pub long_lived_bytes: i64,
    /// Minimum allocated bytes in each tenth of the window.
    pub floor: Vec<i64>,
    /// Last floor − first floor.
    pub floor_growth: i64,
    /// The floor never drops and ends higher than it starts.
    pub floor_rises_steadily: bool,
}

/// The minimum allocated bytes in each tenth of the window, from the replay's block extremes
/// (what `leak` otherwise reads from every row of `traces`).
pub fn tenth_floors(series: &crate::replay::Series) -> Vec<i64> {
    let n = series.len();
    if n < 10 {
        return vec![];
    }
    // The tenths of `GROUP BY (trace_index * 10) / n`: event i is in tenth (i * 10) / n.
    (0..10)
        .map(|g| (g * n).div_ceil(10)..((g + 1) * n).div_ceil(10))
        .filter(|r| !r.is_empty())
        .map(|r| series.extremes(r).allocated_min)
        .collect()
}

/// `floor`: the tenths' minima when the caller has them (see `tenth_floors`), else read here.
pub fn leak(conn: &Connection, device: i64, top: usize, floor: Option<Vec<i64>>) -> Result<LeakAnalysis> {
    let dev = dev_id(conn, device)?;
    let events: i64 = conn.query_row("SELECT events FROM devices WHERE id = ?1", [dev], |r| r.get(0))?;
    let one = |sql: &str| -> Result<(i64, i64)> {
        Ok(conn.query_row(sql, params![dev, events], |r| Ok((r.get(0)?, r.get::<_, Option<i64>>(1)?.unwrap_or(0))))?)
    };
    let (candidates, candidate_bytes) = one(include_str!("../../sql/analysis/leak_candidates.sql"))?;
    let (pending_free_blocks, pending_free_bytes) = one(include_str!("../../sql/analysis/leak_pending_free.sql"))?;
    let (before_window_blocks, before_window_bytes) = one(include_str!("../../sql/analysis/leak_before_window.sql"))?;
    let (_, before_window_stackless_bytes) = one(include_str!("../../sql/analysis/leak_before_window_stackless.sql"))?;
    // Alive for at least half the window: never freed, or freed that long after.
    let (long_lived_blocks, long_lived_bytes) = one(include_str!("../../sql/analysis/leak_long_lived.sql"))?;
    let mut stmt = conn.prepare(include_str!("../../sql/analysis/leak_candidates_by_stack.sql"))?;
    let candidates_by_stack = stmt
        .query_map(params![dev, NO_STACK, top as i64], |r| {
            Ok(StackBytes {
                stack_id: r.get(0)?,
                label: r.get(1)?,
                detail: r.get(7)?,
                site: r.get(6)?,
                stack: r.get(8)?,
                blocks: r.get(2)?,
                bytes: r.get(3)?,
                first_event: r.get(4)?,
                last_event: r.get(5)?,
            })
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut candidates_by_stack = candidates_by_stack;
    let candidates_by_category = conn
        .prepare(include_str!("../../sql/analysis/leak_candidates_by_category.sql"))?
        .query_map([dev], |r| Ok(super::categories::CategoryTotal { category: r.get(0)?, blocks: r.get(1)?, bytes: r.get(2)? }))?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    super::basis::disambiguate(&mut candidates_by_stack);
    let floor: Vec<i64> = if let Some(f) = floor {
        f
    } else if events >= 10 {
        conn.prepare(include_str!("../../sql/analysis/leak_tenth_floors.sql"))?
            .query_map(params![dev, events], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?
    } else {
        vec![]
    };
    let floor_growth = match (floor.first(), floor.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0,
    };
    let floor_rises_steadily = floor.len() >= 3 && floor.windows(2).all(|w| w[1] >= w[0]) && floor_growth > 0;
    Ok(LeakAnalysis {
        device,
        events,
        candidates,
        candidate_bytes,
        candidates_by_stack,
        candidates_by_category,
        pending_free_blocks,
        pending_free_bytes,
        before_window_blocks,
        before_window_bytes,
        before_window_stackless_bytes,
        long_lived_blocks,
        long_lived_bytes,
        floor,
        floor_growth,
        floor_rises_steadily,
    })
}
