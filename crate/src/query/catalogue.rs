//! The template catalogue: the one definition of every template's SQL, typed parameters and
//! output columns with units. The CLI (`query`, `capabilities`) and the page (its forms) read it.
//!
//! pt-snap-cli's 13 templates keep their names, parameters and output columns, over snapscope's
//! schema and with its weaknesses fixed: NULL instead of -1 sentinels, one label for empty stacks,
//! validated event ids, sizes in allocator block bytes, alloc events only where "alloc" is meant.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    Int,
    Bool,
    String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Param {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// JSON default; null = absent (the filter is off).
    pub default: serde_json::Value,
    pub required: bool,
    pub choices: Option<&'static [&'static str]>,
    pub description: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Column {
    pub name: &'static str,
    /// bytes | event | address | percent | GiB | count | null
    pub unit: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Sql,
    /// Computed by `analysis::tree` (the frame tree is recursive).
    FrameTree,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Template {
    pub name: &'static str,
    pub category: &'static str,
    pub description: &'static str,
    pub params: Vec<Param>,
    pub columns: Vec<Column>,
    pub kind: Kind,
    /// The SQL, with `:name` parameters; `{order_by}`/`{order_dir}` are replaced by a validated choice.
    #[serde(skip)]
    pub sql: &'static str,
}

fn p(name: &'static str, ty: ParamType, default: serde_json::Value, description: &'static str) -> Param {
    Param { name, ty, default, required: false, choices: None, description }
}
fn req(name: &'static str, ty: ParamType, description: &'static str) -> Param {
    Param { name, ty, default: serde_json::Value::Null, required: true, choices: None, description }
}
fn choice(name: &'static str, default: &'static str, choices: &'static [&'static str], description: &'static str) -> Param {
    Param { name, ty: ParamType::String, default: default.into(), required: false, choices: Some(choices), description }
}
fn cols(spec: &[(&'static str, Option<&'static str>)]) -> Vec<Column> {
    spec.iter().map(|&(name, unit)| Column { name, unit }).collect()
}

const B: Option<&str> = Some("bytes");
const E: Option<&str> = Some("event");
const A: Option<&str> = Some("address");
const N: Option<&str> = Some("count");
const PCT: Option<&str> = Some("percent");
const GIB: Option<&str> = Some("GiB");

use serde_json::json;
use ParamType::{Bool, Int, String as Str};

const DIR: &[&str] = &["ASC", "DESC"];

/// The device's row id; every device-scoped template starts from it.
const DEV: &str = "(SELECT id FROM devices WHERE device_index = :device)";

/// One device's events in the :start_id..=:end_id range, in event order.
const PEAK_RANGE: &str = include_str!("../../sql/templates/_peak_range.sql");

pub fn catalogue() -> Vec<Template> {
    let limit = || p("limit", Int, json!(-1), "maximum rows (-1 = all)");
    let offset = || p("offset", Int, json!(0), "rows to skip");
    let event_id = || req("event_id", Int, "event index (0-based position in the device's trace)");
    let stack_bytes = || p("stack_bytes", Int, json!(-1), "cut callstack text to at most this many UTF-8 bytes (-1 = whole)");
    let range =
        || vec![p("start_id", Int, json!(null), "first event of the range"), p("end_id", Int, json!(null), "last event of the range")];
    vec![
        // ---- overview (the SnapshotDB's four reference queries, verbatim) --------------------
        Template {
            name: "device_overview",
            category: "overview",
            description: "Per device at dump time: reserved/allocated/active bytes, share of reserved memory not allocated, segment counts.",
            params: vec![],
            columns: cols(&[("device_index", None), ("reserved_bytes", B), ("allocated_bytes", B), ("active_bytes", B), ("frag_pct", PCT), ("segment_count", N), ("expandable_segments", N)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/device_overview.sql"),
        },
        Template {
            name: "block_state_dist",
            category: "overview",
            description: "Dump-time blocks per device and state: count, bytes, average size.",
            params: vec![],
            columns: cols(&[("device_index", None), ("state", None), ("block_count", N), ("total_size", B), ("avg_size", B)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/block_state_dist.sql"),
        },
        Template {
            name: "expansion_timeline",
            category: "overview",
            description: "Every segment_alloc/map/free/unmap event: when reserved memory grew or shrank, and from where.",
            params: vec![],
            columns: cols(&[("device_index", None), ("trace_index", E), ("action", None), ("size", B), ("addr", A), ("frames_json", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/expansion_timeline.sql"),
        },
        Template {
            name: "top_allocations",
            category: "overview",
            description: "The 20 largest allocated blocks at dump time with their stacks.",
            params: vec![],
            columns: cols(&[("device_index", None), ("size", B), ("requested_size", B), ("state", None), ("frames_json", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/top_allocations.sql"),
        },
        // ---- basic ---------------------------------------------------------------------------
        Template {
            name: "allocation",
            category: "basic",
            description: "Counter timeline: allocated/active/reserved bytes right after each event.",
            params: vec![
                p("min_id", Int, json!(null), "first event"),
                p("max_id", Int, json!(null), "last event"),
                p("min_allocated", Int, json!(null), "only events with at least this many allocated bytes"),
                p("min_active", Int, json!(null), "only events with at least this many active bytes"),
                p("min_reserved", Int, json!(null), "only events with at least this many reserved bytes"),
                choice("order_by", "id", &["id", "allocated", "active", "reserved"], "sort column"),
                choice("order_dir", "ASC", DIR, "sort direction"),
                limit(),
                offset(),
            ],
            columns: cols(&[("id", E), ("allocated", B), ("active", B), ("reserved", B), ("requested", B)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/allocation.sql"),
        },
        Template {
            name: "block",
            category: "basic",
            description: "Block lifetimes (allocation to free, or to the dump) with filters. freeEventId NULL = live at the dump; allocEventId NULL = allocated before the window.",
            params: vec![
                p("id", Int, json!(null), "lifetime id"),
                p("address", Int, json!(null), "block address"),
                p("size", Int, json!(null), "exact block size"),
                p("requestedSize", Int, json!(null), "exact requested size"),
                p("allocEventId", Int, json!(null), "allocating event"),
                p("freeEventId", Int, json!(null), "free_completed event"),
                p("min_size", Int, json!(null), "minimum block size"),
                p("max_size", Int, json!(null), "maximum block size"),
                p("min_allocEventId", Int, json!(null), "allocated at or after this event"),
                p("max_allocEventId", Int, json!(null), "allocated at or before this event"),
                p("min_freeEventId", Int, json!(null), "freed at or after this event"),
                p("max_freeEventId", Int, json!(null), "freed at or before this event"),
                choice("order_by", "size", &["id", "address", "size", "requestedSize", "state", "allocEventId", "freeEventId"], "sort column"),
                choice("order_dir", "DESC", DIR, "sort direction"),
                limit(),
                offset(),
            ],
            columns: cols(&[("id", None), ("address", A), ("size", B), ("requestedSize", B), ("state", None), ("allocEventId", E), ("freeEventId", E)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/block.sql"),
        },
        Template {
            name: "event",
            category: "basic",
            description: "Trace events with filters, the counters after each, and the stack text.",
            params: vec![
                p("id", Int, json!(null), "event index"),
                p("action", Str, json!(null), "action name (alloc, free_requested, segment_map, oom, …)"),
                p("address", Int, json!(null), "address"),
                p("size", Int, json!(null), "size"),
                p("stream", Int, json!(null), "stream"),
                p("min_id", Int, json!(null), "first event"),
                p("max_id", Int, json!(null), "last event"),
                p("min_allocated", Int, json!(null), "minimum allocated after the event"),
                p("min_active", Int, json!(null), "minimum active after the event"),
                p("min_reserved", Int, json!(null), "minimum reserved after the event"),
                choice("order_by", "id", &["id", "action", "address", "size", "stream", "allocated", "active", "reserved", "callstack"], "sort column"),
                choice("order_dir", "ASC", DIR, "sort direction"),
                limit(),
                offset(),
                stack_bytes(),
            ],
            columns: cols(&[("id", E), ("action", None), ("address", A), ("size", B), ("stream", None), ("allocated", B), ("active", B), ("reserved", B), ("label", None), ("callstack", None), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/event.sql"),
        },
        Template {
            name: "event_frames",
            category: "basic",
            description: "The ordered frames of one event's stack (position 0 = innermost, the allocation site).",
            params: vec![event_id(), choice("frame_order", "original", &["original", "root_first"], "original = innermost first")],
            columns: cols(&[("event_id", E), ("stack_id", None), ("position", None), ("frame_id", None), ("filename", None), ("line", None), ("name", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/event_frames.sql"),
        },
        // ---- statistical -----------------------------------------------------------------------
        Template {
            name: "memory_peak",
            category: "statistical",
            description: "Peak allocated, active, reserved (and requested) bytes in an event range; ties go to the earliest event.",
            params: range(),
            columns: cols(&[
                ("peak_allocated", B),
                ("peak_allocated_event_id", E),
                ("peak_active", B),
                ("peak_active_event_id", E),
                ("peak_reserved", B),
                ("peak_reserved_event_id", E),
                ("peak_requested", B),
                ("peak_requested_event_id", E),
            ]),
            kind: Kind::Sql,
            // Without a range, the peaks stored with the device (computed at load). With one, a
            // MAX() scan per counter: SQLite takes the bare trace_index from the first row
            // holding the maximum, and the scan runs in event order, so ties go to the earliest.
            // Each scan reads the table itself (a shared CTE would be copied into a temporary
            // table of every event first).
            sql: include_str!("../../sql/templates/memory_peak.sql"),
        },
        Template {
            name: "allocator_gap",
            category: "statistical",
            description: "At the peak of each counter, the other counters and the gaps reserved−active and reserved−allocated (memory cached but not handed out).",
            params: range(),
            columns: cols(&[
                ("peak_allocated_event_id", E),
                ("peak_allocated", B),
                ("active_at_allocated_peak", B),
                ("reserved_at_allocated_peak", B),
                ("reserved_active_gap_at_allocated_peak", B),
                ("reserved_allocated_gap_at_allocated_peak", B),
                ("peak_active_event_id", E),
                ("peak_active", B),
                ("allocated_at_active_peak", B),
                ("reserved_at_active_peak", B),
                ("reserved_active_gap_at_active_peak", B),
                ("reserved_allocated_gap_at_active_peak", B),
                ("peak_reserved_event_id", E),
                ("peak_reserved", B),
                ("allocated_at_reserved_peak", B),
                ("active_at_reserved_peak", B),
                ("reserved_active_gap_at_reserved_peak", B),
                ("reserved_allocated_gap_at_reserved_peak", B),
                ("all_peaks_same_event", None),
                ("allocated_active_same_event", None),
                ("active_reserved_same_event", None),
                ("allocated_reserved_same_event", None),
            ]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/allocator_gap.sql"),
        },
        Template {
            name: "active_blocks_at_event",
            category: "statistical",
            description: "Blocks live right after an event (allocated or pending free), with their category: static (live throughout), preexisting_live_at_event (allocated before the window, freed later), dynamic_live_at_event.",
            params: vec![
                event_id(),
                p("include_static", Bool, json!(true), "include blocks allocated before the window"),
                p("min_size", Int, json!(0), "minimum block size"),
                choice("order_by", "size", &["size", "requestedSize", "allocEventId", "freeEventId", "id"], "sort column"),
                choice("order_dir", "DESC", DIR, "sort direction"),
                limit(),
                offset(),
            ],
            columns: cols(&[("id", None), ("address", A), ("size", B), ("requestedSize", B), ("state", None), ("allocEventId", E), ("freeEventId", E), ("category", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/active_blocks_at_event.sql"),
        },
        Template {
            name: "callstack_analysis",
            category: "statistical",
            description: "Allocation sites: alloc events grouped by stack, with count and block bytes.",
            params: vec![
                p("min_count", Int, json!(5), "minimum allocations per stack"),
                p("min_size", Int, json!(0), "minimum total bytes per stack"),
                limit(),
                stack_bytes(),
            ],
            columns: cols(&[("label", None), ("callstack", None), ("alloc_count", N), ("total_size", B), ("avg_size", B), ("max_size", B), ("total_requested", B), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/callstack_analysis.sql"),
        },
        // ---- business ------------------------------------------------------------------------
        Template {
            name: "leak_detection",
            category: "business",
            description: "Leak candidates: blocks allocated inside the window and still live at the dump (state tells pending frees apart), largest first.",
            params: vec![p("min_size", Int, json!(0), "minimum block size"), limit(), stack_bytes()],
            columns: cols(&[("id", None), ("address", A), ("size", B), ("allocEventId", E), ("state", None), ("label", None), ("callstack", None), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/leak_detection.sql"),
        },
        Template {
            name: "preexisting_live",
            category: "business",
            description: "Blocks allocated before the window, freed after the event, and live at it (static blocks, live throughout, are not counted).",
            params: vec![event_id()],
            columns: cols(&[("block_count", N), ("size_bytes", B)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/preexisting_live.sql"),
        },
        Template {
            name: "freed_block_lifetime",
            category: "business",
            description: "Blocks allocated and freed inside the window, bucketed by how many events they lived.",
            params: vec![],
            columns: cols(&[("lifetime_events", None), ("block_count", N), ("size_bytes", B)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/freed_block_lifetime.sql"),
        },
        Template {
            name: "active_memory_callstack_at_event",
            category: "business",
            description: "Live memory right after an event grouped by allocation stack. Blocks from before the window are attributed to their dump-time stack when one was recorded. The rows sum exactly to the active counter; groups beyond top_n are summed in one '[other stacks]' row.",
            params: vec![
                event_id(),
                p("include_static", Bool, json!(true), "include blocks allocated before the window"),
                p("min_size", Int, json!(0), "minimum block size"),
                p("top_n", Int, json!(20), "stack groups listed (-1 = all)"),
                stack_bytes(),
            ],
            columns: cols(&[
                ("label", None),
                ("callstack", None),
                ("category", None),
                ("block_count", N),
                ("size_bytes", B),
                ("size_gib", GIB),
                ("requested_bytes", B),
                ("requested_gib", GIB),
                ("percent_of_active_blocks", PCT),
                ("stack_id", None),
            ]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/active_memory_callstack_at_event.sql"),
        },
        Template {
            name: "categories",
            category: "business",
            description: "The live memory right after an event grouped by category (docs/categories.md), the rule that decided it, or a field of the allocating event: phase, stream, compile_context, user_metadata.",
            params: vec![
                event_id(),
                choice("group_by", "category", &["category", "rule", "phase", "stream", "compile_context", "user_metadata"], "what to group by"),
            ],
            columns: cols(&[("group_value", None), ("blocks", N), ("bytes", B), ("percent_of_live", PCT)]),
            kind: Kind::Sql,
            sql: include_str!("../../sql/templates/categories.sql"),
        },
        Template {
            name: "active_memory_frame_tree_at_event",
            category: "business",
            description: "The memory tree right after an event: live bytes per frame path from the outermost frame in; size = self + Σ children at every node.",
            params: vec![event_id(), p("include_static", Bool, json!(true), "include blocks allocated before the window"), p("min_size", Int, json!(0), "minimum block size")],
            columns: cols(&[
                ("node_id", None),
                ("parent_id", None),
                ("depth", None),
                ("label", None),
                ("filename", None),
                ("line", None),
                ("name", None),
                ("block_count", N),
                ("size_bytes", B),
                ("requested_bytes", B),
                ("self_block_count", N),
                ("self_bytes", B),
                ("percent_of_total", PCT),
            ]),
            kind: Kind::FrameTree,
            sql: "",
        },
    ]
}

/// The SQL of a template with its device scope and validated identifiers filled in.
pub fn render_sql(t: &Template, order_by: Option<&str>, order_dir: Option<&str>) -> String {
    t.sql
        .replace("{PEAK_RANGE}", PEAK_RANGE)
        .replace("{LIVE_LIFETIMES}", &crate::analysis::basis::live_lifetimes_sql(DEV, ":event_id"))
        .replace("{DEV}", DEV)
        .replace("{order_by}", order_by.unwrap_or("1"))
        .replace("{order_dir}", order_dir.unwrap_or("ASC"))
}
