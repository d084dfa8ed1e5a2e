//! What every analysis stands on: the labels of synthetic groups, the `Group` row and how rows
//! that read alike are told apart; and, for a SnapshotDB input (no replay in memory), the same
//! questions `live.rs` and `holders.rs` answer from the replay, as SQL: the device row, the
//! counters after an event, the peak of a counter, live memory grouped by stack. A low module of
//! its own, so analyses import it rather than each other (and nothing here imports an analysis
//! or the engine).

use crate::error::{Error, Result};
use crate::replay::{Counters, Peak};
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// Label of live memory allocated before the window whose block carried no stack.
pub const BEFORE_WINDOW_NO_STACK: &str = "[allocated before the window, no stack]";
/// Label of live memory allocated before the window whose only known stack is its free's.
pub const BEFORE_WINDOW: &str = "[allocated before the window]";
/// Label of live memory with no stack at all.
pub const NO_STACK: &str = "[no stack recorded]";
/// Label of live memory allocated in the window without a stack (autograd's threads record no
/// Python frames) whose only known stack is its free's.
pub const NO_ALLOC_STACK: &str = "[allocation stack not recorded]";

/// The group label of memory known only by where it was freed: allocated before the window, or
/// inside it without a stack.
pub fn freed_only_label(before_window: bool) -> &'static str {
    if before_window {
        BEFORE_WINDOW
    } else {
        NO_ALLOC_STACK
    }
}

/// One of the four device counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Allocated,
    Active,
    Reserved,
    Requested,
}

impl Counter {
    pub const ALL: [Counter; 4] = [Counter::Allocated, Counter::Active, Counter::Reserved, Counter::Requested];

    pub fn name(self) -> &'static str {
        match self {
            Counter::Allocated => "allocated",
            Counter::Active => "active",
            Counter::Reserved => "reserved",
            Counter::Requested => "requested",
        }
    }

    pub fn of(self, c: &Counters) -> i64 {
        match self {
            Counter::Allocated => c.allocated,
            Counter::Active => c.active,
            Counter::Reserved => c.reserved,
            Counter::Requested => c.requested,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Group {
    /// What people read: the frame that names the stack (`frames::display`), or a synthetic
    /// label (`[no stack recorded]`, `[allocated before the window]`, `[N other groups]`).
    pub label: String,
    /// A second line: the calling Python frame, or for memory from before the window known only
    /// by its free, `freed at <frame>`.
    pub detail: Option<String>,
    /// `filename:line name` of the naming frame, full path (hover).
    pub site: Option<String>,
    /// The whole stack, outermost first, one frame a line (behind "all frames").
    pub stack: Option<String>,
    pub stack_id: Option<i64>,
    /// dynamic (allocated in the window, or a dump block's own stack) | before_window (allocated
    /// before the window, no allocation stack known) | other (the rest, summed)
    pub origin: String,
    pub blocks: i64,
    pub bytes: i64,
    pub requested_bytes: i64,
    pub share: f64,
    /// A Peak row by site that merges several stacks: those stacks (absent on every other row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<super::peak_rows::Merged>,
}

/// SQL for the lifetimes of device row `dev` live right after event `event` (allocated or
/// pending free; `event` -1 = the window start), as a subquery (crate/sql/analysis/live_lifetimes.sql).
/// `dev` and `event` are parameter names or subqueries, never values.
pub fn live_lifetimes_sql(dev: &str, event: &str) -> String {
    let text = include_str!("../../sql/analysis/live_lifetimes.sql");
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with("--")).collect();
    body.join("\n").replace("{dev}", dev).replace("{event}", event)
}

/// An analysis statement of crate/sql/analysis with `{LIVE}` the lifetimes live right after
/// event `event` on device row `dev` (see [`live_lifetimes_sql`]).
pub(crate) fn with_live(text: &str, dev: &str, event: &str) -> String {
    text.replace("{LIVE}", &live_lifetimes_sql(dev, event))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PeakSet {
    pub allocated: Peak,
    pub active: Peak,
    pub reserved: Peak,
    pub requested: Peak,
}

pub(crate) fn dev_id(conn: &Connection, device: i64) -> Result<i64> {
    conn.query_row("SELECT id FROM devices WHERE device_index = ?1", [device], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::no_device(device))
}

/// Live memory after `event` grouped by stack (`by = "stack"`) or by top frame (`"frame"`).
/// A row named by a stack: its label, second line and whole stack.
pub trait Labelled {
    fn label(&self) -> &str;
    fn detail(&self) -> Option<&str>;
    fn stack(&self) -> Option<&str>;
    fn set_detail(&mut self, detail: String);
}

/// `Labelled` for a row type with `label`, `detail` and `stack` fields.
macro_rules! labelled {
    ($t:ty) => {
        impl $crate::analysis::basis::Labelled for $t {
            fn label(&self) -> &str {
                &self.label
            }
            fn detail(&self) -> Option<&str> {
                self.detail.as_deref()
            }
            fn stack(&self) -> Option<&str> {
                self.stack.as_deref()
            }
            fn set_detail(&mut self, detail: String) {
                self.detail = Some(detail);
            }
        }
    };
}
pub(crate) use labelled;

labelled!(Group);

/// Rows that would read the same (label and detail) get, after their detail, the Python frame
/// where their stacks part (the innermost one that differs), so no two rows look alike. Stacks
/// that differ only in native frames are told apart by number (`native path 1 of 2`), not by a
/// C++ symbol: the whole stack is one click away.
pub fn disambiguate<T: Labelled>(rows: &mut [T]) {
    use std::collections::HashMap;
    let mut seen: HashMap<(String, Option<String>), Vec<usize>> = HashMap::new();
    for (i, g) in rows.iter().enumerate() {
        seen.entry((g.label().to_string(), g.detail().map(str::to_string))).or_default().push(i);
    }
    for same in seen.into_values().filter(|v| v.len() > 1) {
        // Each stack's Python frames, innermost first: native frames between them do not count.
        let stacks: Vec<Vec<String>> = same
            .iter()
            .map(|&i| rows[i].stack().unwrap_or("").lines().rev().filter(|l| is_python_line(l)).map(str::to_string).collect())
            .collect();
        // The first Python frame (innermost first) no other stack of the set has at that place.
        let parts: Vec<Option<usize>> = (0..same.len())
            .map(|k| {
                let st = &stacks[k];
                (0..st.len()).find(|&d| stacks.iter().enumerate().all(|(j, o)| j == k || o.get(d) != st.get(d)))
            })
            .collect();
        let natives = parts.iter().filter(|p| p.is_none()).count();
        let mut native = 0;
        for (k, &i) in same.iter().enumerate() {
            let via = match parts[k] {
                Some(d) => format!("via {}", short_frame_text(&stacks[k][d])),
                None => {
                    native += 1;
                    format!("native path {native} of {natives}")
                }
            };
            let detail = match rows[i].detail() {
                Some(x) => format!("{x} · {via}"),
                None => via,
            };
            rows[i].set_detail(detail);
        }
    }
}

/// A stack text line (`filename:line name`) of a Python frame.
fn is_python_line(line: &str) -> bool {
    line.split_once(' ').is_some_and(|(at, _)| at.rsplit_once(':').is_some_and(|(file, _)| file.ends_with(".py") || file.starts_with('<')))
}

/// `filename:line name` (a stack text line) as `name (file.py:line)`, or the name alone when
/// the frame has no file (`??:0`, `:0`).
fn short_frame_text(line: &str) -> String {
    match line.split_once(' ') {
        Some((at, name)) => {
            let at = crate::frames::posix_path(at);
            let file = at.rsplit('/').next().unwrap_or(&at);
            let name = crate::frames::short_name(name);
            if file.starts_with(':') || file.starts_with("??") || file.ends_with(":0") {
                name
            } else {
                format!("{name} ({file})")
            }
        }
        None => line.to_string(),
    }
}

/// Groups (largest first) told apart, the first `limit` kept and the rest summed into one
/// `[N other groups]` row, each with its share of the total; with the total bytes and blocks.
/// Both roads (the replay's `holders` and a SnapshotDB's rows) end here.
pub fn top_groups(mut all: Vec<Group>, limit: usize) -> (Vec<Group>, i64, i64) {
    disambiguate(&mut all);
    let total_bytes: i64 = all.iter().map(|g| g.bytes).sum();
    let total_blocks: i64 = all.iter().map(|g| g.blocks).sum();
    if all.len() > limit {
        let rest = all.split_off(limit);
        all.push(Group {
            label: format!("[{} other groups]", rest.len()),
            detail: None,
            stack: None,
            site: None,
            stack_id: None,
            origin: "other".into(),
            blocks: rest.iter().map(|g| g.blocks).sum(),
            bytes: rest.iter().map(|g| g.bytes).sum(),
            requested_bytes: rest.iter().map(|g| g.requested_bytes).sum(),
            share: 0.0,
            merged: None,
        });
    }
    for g in &mut all {
        g.share = g.bytes as f64 / total_bytes.max(1) as f64;
    }
    (all, total_bytes, total_blocks)
}
