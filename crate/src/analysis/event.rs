//! One event in full: what it did, the counters right after it, its stack, and the block
//! lifetime it belongs to.

use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct EventDetail {
    pub device: i64,
    pub index: i64,
    pub action: String,
    pub addr: i64,
    pub size: i64,
    pub stream: i64,
    pub time_us: Option<i64>,
    pub allocated: i64,
    pub active: i64,
    pub reserved: i64,
    pub requested: i64,
    pub device_free: Option<i64>,
    pub compile_context: Option<String>,
    pub user_metadata: Option<String>,
    /// The forward-pass traceback PyTorch records for a backward allocation (`forward_frames`).
    pub forward_frames: Option<String>,
    /// `forward` / `backward` / `optimizer` / `data` / `unknown` (docs/categories.md).
    pub phase: String,
    /// The frame that names the event's stack, as shown (None without a stack).
    pub label: Option<String>,
    /// Innermost-first frames, each with its kind (docs/frames.md): a page shows the Python
    /// ones first and folds the rest behind "all frames".
    pub frames: Vec<EventFrame>,
    pub lifetime: Option<EventLifetime>,
}

/// The block an event belongs to, a row of the `lifetimes` table (fields in name order, as the
/// answer has always listed them).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct EventLifetime {
    pub address: i64,
    pub alloc_event: Option<i64>,
    pub category: Option<String>,
    pub category_rule: Option<String>,
    pub free_completed_event: Option<i64>,
    pub free_requested_event: Option<i64>,
    pub id: i64,
    pub origin: String,
    pub requested_size: i64,
    pub size: i64,
    /// 1 when the size is exact, 0 when it is a lower bound.
    pub size_exact: i64,
    pub size_uncertainty: i64,
    pub stack_source: Option<String>,
    pub state_at_dump: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct EventFrame {
    pub filename: String,
    pub line: i64,
    pub name: String,
    /// user | generated | library | autograd | native | interpreter | allocator | runtime
    pub kind: String,
    /// `name (short/path.py:line)`
    pub display: String,
    /// The FX node of a frame of generated code (`augment_with_fx_traces`): op, name, target,
    /// original trace; None for other frames.
    pub fx: Option<FxFrame>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FxFrame {
    pub op: Option<String>,
    pub name: Option<String>,
    pub target: Option<String>,
    pub original_trace: Option<String>,
}

pub fn event_detail(conn: &Connection, device: i64, index: i64) -> Result<EventDetail> {
    let row = conn
        .query_row(include_str!("../../sql/analysis/event_detail.sql"), params![device, index], |r| {
            Ok((
                EventDetail {
                    device,
                    index,
                    action: r.get(0)?,
                    addr: r.get(1)?,
                    size: r.get(2)?,
                    stream: r.get(3)?,
                    time_us: r.get(4)?,
                    allocated: r.get(5)?,
                    active: r.get(6)?,
                    reserved: r.get(7)?,
                    requested: r.get(8)?,
                    device_free: r.get(9)?,
                    compile_context: r.get(10)?,
                    user_metadata: r.get(11)?,
                    label: r.get(12)?,
                    forward_frames: r.get(15)?,
                    phase: r.get(16)?,
                    frames: Vec::new(),
                    lifetime: None,
                },
                r.get::<_, Option<i64>>(13)?,
                r.get::<_, Option<i64>>(14)?,
            ))
        })
        .optional()?;
    let (mut d, lifetime, stack) = row.ok_or_else(|| {
        Error::new(
            ErrorCode::EventNotFound,
            format!("device {device} has no event {index}"),
            "event indices run from 0 to events-1 (see `overview`)",
        )
    })?;
    if let Some(stack) = stack {
        d.frames = frames_of(conn, stack, 0, i64::MAX)?;
    }
    if let Some(l) = lifetime {
        d.lifetime = conn
            .query_row(include_str!("../../sql/analysis/event_lifetime.sql"), [l], |r| {
                Ok(EventLifetime {
                    address: r.get(0)?,
                    alloc_event: r.get(1)?,
                    category: r.get(2)?,
                    category_rule: r.get(3)?,
                    free_completed_event: r.get(4)?,
                    free_requested_event: r.get(5)?,
                    id: r.get(6)?,
                    origin: r.get(7)?,
                    requested_size: r.get(8)?,
                    size: r.get(9)?,
                    size_exact: r.get(10)?,
                    size_uncertainty: r.get(11)?,
                    stack_source: r.get(12)?,
                    state_at_dump: r.get(13)?,
                })
            })
            .optional()?;
    }
    Ok(d)
}

/// Frames `offset..offset + limit` of a stack, innermost (position 0) first.
fn frames_of(conn: &Connection, stack: i64, offset: i64, limit: i64) -> Result<Vec<EventFrame>> {
    Ok(conn
        .prepare_cached(include_str!("../../sql/analysis/stack_frames_page.sql"))?
        .query_map(params![stack, offset, limit], |r| {
            let fx = FxFrame { op: r.get(5)?, name: r.get(6)?, target: r.get(7)?, original_trace: r.get(8)? };
            let any = fx.op.is_some() || fx.name.is_some() || fx.target.is_some() || fx.original_trace.is_some();
            Ok(EventFrame {
                filename: r.get(0)?,
                line: r.get(1)?,
                name: r.get(2)?,
                kind: r.get(3)?,
                display: r.get(4)?,
                fx: any.then_some(fx),
            })
        })?
        .collect::<std::result::Result<_, _>>()?)
}

/// A page of one stack's frames (the stack_id other answers carry).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StackPage {
    pub stack_id: i64,
    /// The stack's label (the frame that names it), as shown.
    pub label: Option<String>,
    /// Frames in the whole stack.
    pub total: i64,
    /// Position of the first frame listed.
    pub offset: i64,
    /// Innermost-first frames from `offset`.
    pub frames: Vec<EventFrame>,
}

pub fn stack_page(conn: &Connection, stack: i64, offset: i64, limit: i64) -> Result<StackPage> {
    let head = conn
        .query_row(
            "SELECT cs.label, (SELECT COUNT(*) FROM stack_frames sf WHERE sf.stack_id = cs.id) FROM call_stacks cs WHERE cs.id = ?1",
            [stack],
            |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?;
    let (label, total) = head.ok_or_else(|| {
        Error::new(
            ErrorCode::StackNotFound,
            format!("no stack {stack}"),
            "take a stack_id from another answer (holders, event, query rows)",
        )
    })?;
    Ok(StackPage { stack_id: stack, label, total, offset, frames: frames_of(conn, stack, offset.max(0), limit.max(0))? })
}
