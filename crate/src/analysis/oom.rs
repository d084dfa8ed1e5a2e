//! Out-of-memory events: for each `oom`, the request, what the driver still had free, the
//! allocator state at that moment, who held the memory, the events just before, and a verdict on
//! the cause with suggestions.

use super::basis::{counters_at, dev_id, live_groups, Group};
use super::leak::leak;
use super::state::allocator_state;
use crate::error::Result;
use crate::replay::Counters;
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecentEvent {
    pub index: i64,
    pub action: String,
    pub size: i64,
    pub allocated: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OomCase {
    pub event: i64,
    /// Bytes the failed request needed (the rounded size PyTorch records).
    pub requested: i64,
    /// Bytes the driver reported free on the device.
    pub device_free: Option<i64>,
    pub counters: Counters,
    /// Free bytes inside reserved segments, and the largest contiguous piece.
    pub free_in_reserved: i64,
    pub largest_free_block: i64,
    pub top_stacks: Vec<Group>,
    pub events_before: Vec<RecentEvent>,
    /// fragmentation | one_huge_request | growth | exhaustion
    pub verdict: String,
    pub explanation: String,
    pub suggestions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OomAnalysis {
    pub device: i64,
    pub ooms: Vec<OomCase>,
}

pub fn oom(conn: &Connection, device: i64) -> Result<OomAnalysis> {
    let dev = dev_id(conn, device)?;
    let ooms: Vec<(i64, i64, Option<i64>)> = conn
        .prepare("SELECT trace_index, size, device_free FROM traces WHERE device_id = ?1 AND action = 'oom' ORDER BY trace_index")?
        .query_map([dev], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<std::result::Result<_, _>>()?;
    let growth = if ooms.is_empty() { None } else { Some(leak(conn, device, 5, None)?) };
    let mut cases = Vec::new();
    for (e, req, device_free) in ooms {
        let counters = counters_at(conn, device, Some(e))?;
        let st = allocator_state(conn, device, Some(e))?;
        let (top_stacks, _, _) = live_groups(conn, device, Some(e), "stack", 5)?;
        let events_before = conn
            .prepare("SELECT trace_index, action, size, allocated FROM traces WHERE device_id = ?1 AND trace_index BETWEEN ?2 - 10 AND ?2 - 1 ORDER BY trace_index")?
            .query_map(params![dev, e], |r| Ok(RecentEvent { index: r.get(0)?, action: r.get(1)?, size: r.get(2)?, allocated: r.get(3)? }))?
            .collect::<std::result::Result<_, _>>()?;
        let capacity = counters.reserved + device_free.unwrap_or(0);
        let g = growth.as_ref();
        let (verdict, explanation, suggestions): (&str, String, Vec<&str>) = if st.free >= req && st.largest_free < req {
            (
                "fragmentation",
                format!(
                    "{} B were free inside reserved segments, enough for the {} B request, but the largest free block was {} B: the free memory is split into pieces.",
                    st.free, req, st.largest_free
                ),
                vec![
                    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so free pages can be remapped into one range",
                    "or cap splitting of large blocks with max_split_size_mb",
                    "allocate long-lived tensors (weights, optimizer state) before the training loop",
                ],
            )
        } else if capacity > 0 && req * 2 > capacity {
            (
                "one_huge_request",
                format!(
                    "The single request of {req} B is more than half of everything the device could offer ({capacity} B reserved + free)."
                ),
                vec![
                    "split the operation into chunks (smaller batch or sequence length for that step)",
                    "check the shape that produced this allocation",
                ],
            )
        } else if g.is_some_and(|g| g.floor_rises_steadily && g.floor_growth > 0) {
            let g = g.unwrap();
            (
                "growth",
                format!(
                    "The allocated floor rose by {} B across the window and never dropped: memory accumulates until it runs out.",
                    g.floor_growth
                ),
                vec![
                    "look at the leak analysis: blocks allocated in the window and still alive at the end",
                    "release references (e.g. losses kept for logging with .item())",
                ],
            )
        } else {
            (
                "exhaustion",
                format!(
                    "{} B were allocated when {req} B more were requested; the device had {} B free: the working set does not fit.",
                    counters.allocated,
                    device_free.unwrap_or(0)
                ),
                vec![
                    "reduce the batch size or sequence length",
                    "use activation checkpointing or mixed precision",
                    "shard parameters/optimizer state (FSDP, ZeRO)",
                ],
            )
        };
        cases.push(OomCase {
            event: e,
            requested: req,
            device_free,
            counters,
            free_in_reserved: st.free,
            largest_free_block: st.largest_free,
            top_stacks,
            events_before,
            verdict: verdict.into(),
            explanation,
            suggestions: suggestions.into_iter().map(String::from).collect(),
        });
    }
    Ok(OomAnalysis { device, ooms: cases })
}
