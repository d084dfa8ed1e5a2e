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
const PEAK_RANGE: &str =
    "device_id = {DEV} AND (:start_id IS NULL OR trace_index >= :start_id) AND (:end_id IS NULL OR trace_index <= :end_id) ORDER BY trace_index";

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
            sql: "WITH device_overview AS (SELECT d.device_index, SUM(s.total_size) AS reserved_bytes, SUM(s.allocated_size) AS allocated_bytes, SUM(s.active_size) AS active_bytes, ROUND((SUM(s.total_size) - SUM(s.allocated_size)) * 100.0 / NULLIF(SUM(s.total_size), 0), 2) AS frag_pct, COUNT(s.id) AS segment_count, SUM(s.is_expandable) AS expandable_segments FROM segments s JOIN devices d ON s.device_id = d.id GROUP BY d.device_index) SELECT * FROM device_overview",
        },
        Template {
            name: "block_state_dist",
            category: "overview",
            description: "Dump-time blocks per device and state: count, bytes, average size.",
            params: vec![],
            columns: cols(&[("device_index", None), ("state", None), ("block_count", N), ("total_size", B), ("avg_size", B)]),
            kind: Kind::Sql,
            sql: "WITH block_state_dist AS (SELECT d.device_index, b.state, COUNT(b.id) AS block_count, SUM(b.size) AS total_size, AVG(b.size) AS avg_size FROM blocks b JOIN segments s ON b.segment_id = s.id JOIN devices d ON s.device_id = d.id GROUP BY d.device_index, b.state) SELECT * FROM block_state_dist",
        },
        Template {
            name: "expansion_timeline",
            category: "overview",
            description: "Every segment_alloc/map/free/unmap event: when reserved memory grew or shrank, and from where.",
            params: vec![],
            columns: cols(&[("device_index", None), ("trace_index", E), ("action", None), ("size", B), ("addr", A), ("frames_json", None)]),
            kind: Kind::Sql,
            sql: "WITH expansion_timeline AS (SELECT d.device_index, t.trace_index, t.action, t.size, t.addr, cs.frames_json FROM traces t JOIN devices d ON t.device_id = d.id LEFT JOIN call_stacks cs ON t.stack_id = cs.id WHERE t.action IN ('segment_alloc', 'segment_map', 'segment_free', 'segment_unmap') ORDER BY d.device_index, t.trace_index) SELECT * FROM expansion_timeline",
        },
        Template {
            name: "top_allocations",
            category: "overview",
            description: "The 20 largest allocated blocks at dump time with their stacks.",
            params: vec![],
            columns: cols(&[("device_index", None), ("size", B), ("requested_size", B), ("state", None), ("frames_json", None)]),
            kind: Kind::Sql,
            sql: "WITH top_allocations AS (SELECT d.device_index, b.size, b.requested_size, b.state, cs.frames_json FROM blocks b JOIN segments s ON b.segment_id = s.id JOIN devices d ON s.device_id = d.id LEFT JOIN call_stacks cs ON b.stack_id = cs.id WHERE b.state = 'active_allocated' ORDER BY b.size DESC LIMIT 20) SELECT * FROM top_allocations",
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
            sql: "SELECT trace_index AS id, allocated, active, reserved, requested FROM traces WHERE device_id = {DEV}
                  AND (:min_id IS NULL OR trace_index >= :min_id) AND (:max_id IS NULL OR trace_index <= :max_id)
                  AND (:min_allocated IS NULL OR allocated >= :min_allocated) AND (:min_active IS NULL OR active >= :min_active)
                  AND (:min_reserved IS NULL OR reserved >= :min_reserved)
                  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset",
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
            sql: "SELECT id, address, size, requested_size AS requestedSize, COALESCE(state_at_dump, 'freed') AS state, alloc_event AS allocEventId, free_completed_event AS freeEventId
                  FROM lifetimes WHERE device_id = {DEV} AND orphan = 0
                  AND (:id IS NULL OR id = :id) AND (:address IS NULL OR address = :address) AND (:size IS NULL OR size = :size)
                  AND (:requestedSize IS NULL OR requested_size = :requestedSize) AND (:allocEventId IS NULL OR alloc_event = :allocEventId)
                  AND (:freeEventId IS NULL OR free_completed_event = :freeEventId) AND (:min_size IS NULL OR size >= :min_size) AND (:max_size IS NULL OR size <= :max_size)
                  AND (:min_allocEventId IS NULL OR alloc_event >= :min_allocEventId) AND (:max_allocEventId IS NULL OR alloc_event <= :max_allocEventId)
                  AND (:min_freeEventId IS NULL OR free_completed_event >= :min_freeEventId) AND (:max_freeEventId IS NULL OR free_completed_event <= :max_freeEventId)
                  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset",
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
            columns: cols(&[("id", E), ("action", None), ("address", A), ("size", B), ("stream", None), ("allocated", B), ("active", B), ("reserved", B), ("callstack", None), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: "SELECT t.trace_index AS id, t.action, t.addr AS address, t.size, t.stream, t.allocated, t.active, t.reserved, COALESCE(cs.text, '[no stack recorded]') AS callstack, t.stack_id
                  FROM traces t LEFT JOIN call_stacks cs ON cs.id = t.stack_id WHERE t.device_id = {DEV}
                  AND (:id IS NULL OR t.trace_index = :id) AND (:action IS NULL OR t.action = :action) AND (:address IS NULL OR t.addr = :address)
                  AND (:size IS NULL OR t.size = :size) AND (:stream IS NULL OR t.stream = :stream)
                  AND (:min_id IS NULL OR t.trace_index >= :min_id) AND (:max_id IS NULL OR t.trace_index <= :max_id)
                  AND (:min_allocated IS NULL OR t.allocated >= :min_allocated) AND (:min_active IS NULL OR t.active >= :min_active)
                  AND (:min_reserved IS NULL OR t.reserved >= :min_reserved)
                  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset",
        },
        Template {
            name: "event_frames",
            category: "basic",
            description: "The ordered frames of one event's stack (position 0 = innermost, the allocation site).",
            params: vec![event_id(), choice("frame_order", "original", &["original", "root_first"], "original = innermost first")],
            columns: cols(&[("event_id", E), ("stack_id", None), ("position", None), ("frame_id", None), ("filename", None), ("line", None), ("name", None)]),
            kind: Kind::Sql,
            sql: "SELECT t.trace_index AS event_id, t.stack_id, sf.position, sf.frame_id, f.filename, f.line, f.name
                  FROM traces t JOIN stack_frames sf ON sf.stack_id = t.stack_id JOIN frames f ON f.id = sf.frame_id
                  WHERE t.device_id = {DEV} AND t.trace_index = :event_id
                  ORDER BY CASE WHEN :frame_order = 'root_first' THEN -sf.position ELSE sf.position END",
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
            sql: "SELECT peak_allocated, peak_allocated_event, peak_active, peak_active_event, peak_reserved, peak_reserved_event,
                    peak_requested, peak_requested_event FROM devices WHERE id = {DEV} AND :start_id IS NULL AND :end_id IS NULL
                  UNION ALL
                  SELECT * FROM (WITH pa AS (SELECT MAX(allocated) AS v, trace_index AS i FROM (SELECT allocated, trace_index FROM traces WHERE {PEAK_RANGE})),
                  pc AS (SELECT MAX(active) AS v, trace_index AS i FROM (SELECT active, trace_index FROM traces WHERE {PEAK_RANGE})),
                  pr AS (SELECT MAX(reserved) AS v, trace_index AS i FROM (SELECT reserved, trace_index FROM traces WHERE {PEAK_RANGE})),
                  pq AS (SELECT MAX(requested) AS v, trace_index AS i FROM (SELECT requested, trace_index FROM traces WHERE {PEAK_RANGE}))
                  SELECT pa.v, pa.i, pc.v, pc.i, pr.v, pr.i, pq.v, pq.i FROM pa, pc, pr, pq
                  WHERE :start_id IS NOT NULL OR :end_id IS NOT NULL)",
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
            sql: "WITH w AS (SELECT trace_index AS i, allocated AS al, active AS ac, reserved AS re FROM traces WHERE device_id = {DEV}
                    AND (:start_id IS NULL OR trace_index >= :start_id) AND (:end_id IS NULL OR trace_index <= :end_id)),
                  a AS (SELECT * FROM w ORDER BY al DESC, i LIMIT 1), c AS (SELECT * FROM w ORDER BY ac DESC, i LIMIT 1), r AS (SELECT * FROM w ORDER BY re DESC, i LIMIT 1)
                  SELECT a.i, a.al, a.ac, a.re, a.re - a.ac, a.re - a.al, c.i, c.ac, c.al, c.re, c.re - c.ac, c.re - c.al,
                         r.i, r.re, r.al, r.ac, r.re - r.ac, r.re - r.al,
                         (a.i = c.i AND c.i = r.i), (a.i = c.i), (c.i = r.i), (a.i = r.i) FROM a, c, r",
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
            sql: "SELECT l.id, l.address, l.size, l.requested_size AS requestedSize,
                    CASE WHEN l.free_requested_event IS NOT NULL AND l.free_requested_event <= :event_id THEN 'active_pending_free'
                         WHEN l.alloc_event IS NULL AND l.free_requested_event IS NULL AND l.free_completed_event IS NOT NULL THEN 'active_pending_free'
                         ELSE 'active_allocated' END AS state,
                    l.alloc_event AS allocEventId, l.free_completed_event AS freeEventId,
                    CASE WHEN l.alloc_event IS NOT NULL THEN 'dynamic_live_at_event' WHEN l.free_completed_event IS NULL THEN 'static' ELSE 'preexisting_live_at_event' END AS category
                  FROM {LIVE_LIFETIMES} l WHERE l.size >= :min_size AND (:include_static OR l.alloc_event IS NOT NULL)
                  ORDER BY {order_by} {order_dir}, l.id ASC LIMIT :limit OFFSET :offset",
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
            columns: cols(&[("callstack", None), ("alloc_count", N), ("total_size", B), ("avg_size", B), ("max_size", B), ("total_requested", B), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: "SELECT COALESCE(cs.text, '[no stack recorded]') AS callstack, COUNT(*) AS alloc_count, SUM(l.size) AS total_size, AVG(l.size) AS avg_size,
                    MAX(l.size) AS max_size, SUM(l.requested_size) AS total_requested, t.stack_id
                  FROM traces t JOIN lifetimes l ON l.id = t.lifetime_id LEFT JOIN call_stacks cs ON cs.id = t.stack_id
                  WHERE t.device_id = {DEV} AND t.action = 'alloc'
                  GROUP BY t.stack_id HAVING COUNT(*) >= :min_count AND SUM(l.size) >= :min_size
                  ORDER BY total_size DESC, callstack ASC LIMIT :limit",
        },
        // ---- business ------------------------------------------------------------------------
        Template {
            name: "leak_detection",
            category: "business",
            description: "Leak candidates: blocks allocated inside the window and still live at the dump (state tells pending frees apart), largest first.",
            params: vec![p("min_size", Int, json!(0), "minimum block size"), limit(), stack_bytes()],
            columns: cols(&[("id", None), ("address", A), ("size", B), ("allocEventId", E), ("state", None), ("callstack", None), ("stack_id", None)]),
            kind: Kind::Sql,
            sql: "SELECT l.id, l.address, l.size, l.alloc_event AS allocEventId, l.state_at_dump AS state, COALESCE(cs.text, '[no stack recorded]') AS callstack, l.stack_id
                  FROM lifetimes l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
                  WHERE l.device_id = {DEV} AND l.orphan = 0 AND l.alloc_event IS NOT NULL AND l.state_at_dump IS NOT NULL AND l.size >= :min_size
                  ORDER BY l.size DESC, l.id DESC LIMIT :limit",
        },
        Template {
            name: "preexisting_live",
            category: "business",
            description: "Blocks allocated before the window, freed after the event, and live at it (static blocks, live throughout, are not counted).",
            params: vec![event_id()],
            columns: cols(&[("block_count", N), ("size_bytes", B)]),
            kind: Kind::Sql,
            sql: "SELECT COUNT(*) AS block_count, COALESCE(SUM(l.size), 0) AS size_bytes FROM lifetimes l
                  WHERE l.device_id = {DEV} AND l.orphan = 0 AND l.alloc_event IS NULL AND l.free_completed_event > :event_id",
        },
        Template {
            name: "freed_block_lifetime",
            category: "business",
            description: "Blocks allocated and freed inside the window, bucketed by how many events they lived.",
            params: vec![],
            columns: cols(&[("lifetime_events", None), ("block_count", N), ("size_bytes", B)]),
            kind: Kind::Sql,
            sql: "WITH b AS (SELECT size, free_completed_event - alloc_event AS n FROM lifetimes
                    WHERE device_id = {DEV} AND orphan = 0 AND alloc_event IS NOT NULL AND free_completed_event IS NOT NULL),
                  k AS (SELECT CASE WHEN n < 1000 THEN 0 WHEN n < 5000 THEN 1 WHEN n < 20000 THEN 2 WHEN n < 100000 THEN 3 ELSE 4 END AS bucket, size FROM b)
                  SELECT CASE bucket WHEN 0 THEN '<1k' WHEN 1 THEN '1k-5k' WHEN 2 THEN '5k-20k' WHEN 3 THEN '20k-100k' ELSE '>=100k' END AS lifetime_events,
                    COUNT(*) AS block_count, SUM(size) AS size_bytes FROM k GROUP BY bucket ORDER BY bucket",
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
            sql: "WITH live AS (SELECT l.size, l.requested_size, l.stack_id,
                      CASE WHEN l.alloc_event IS NOT NULL THEN 'dynamic_live_at_event' WHEN l.free_completed_event IS NULL THEN 'static' ELSE 'preexisting_live_at_event' END AS category
                    FROM {LIVE_LIFETIMES} l WHERE l.size >= :min_size AND (:include_static OR l.alloc_event IS NOT NULL)),
                  g AS (SELECT stack_id, category, COUNT(*) AS n, SUM(size) AS bytes, SUM(requested_size) AS req FROM live GROUP BY stack_id, category),
                  ranked AS (SELECT *, ROW_NUMBER() OVER (ORDER BY bytes DESC, n DESC, stack_id, category) AS rk FROM g),
                  total AS (SELECT SUM(bytes) AS t FROM g),
                  rows AS (SELECT stack_id, category, n, bytes, req, rk FROM ranked WHERE :top_n < 0 OR rk <= :top_n
                           UNION ALL SELECT NULL, 'other', SUM(n), SUM(bytes), SUM(req), 1e18 FROM ranked WHERE :top_n >= 0 AND rk > :top_n HAVING COUNT(*) > 0)
                  SELECT CASE WHEN r.category = 'other' THEN '[other stacks]' WHEN cs.text IS NOT NULL THEN cs.text
                              WHEN r.category = 'dynamic_live_at_event' THEN '[no stack recorded]' ELSE '[allocated before the window, no stack]' END AS callstack,
                    r.category, r.n AS block_count, r.bytes AS size_bytes, ROUND(r.bytes / 1073741824.0, 6) AS size_gib, r.req AS requested_bytes,
                    ROUND(r.req / 1073741824.0, 6) AS requested_gib, ROUND(r.bytes * 100.0 / NULLIF(total.t, 0), 4) AS percent_of_active_blocks, r.stack_id
                  FROM rows r LEFT JOIN call_stacks cs ON cs.id = r.stack_id, total ORDER BY r.rk",
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
            sql: "WITH live AS (SELECT l.*, t.phase AS alloc_phase, t.compile_context AS ctx, t.user_metadata AS meta
                              FROM {LIVE_LIFETIMES} l LEFT JOIN traces t ON t.device_id = l.device_id AND t.trace_index = l.alloc_event),
                  g AS (SELECT CASE :group_by WHEN 'category' THEN category WHEN 'rule' THEN category_rule
                                 WHEN 'phase' THEN COALESCE(alloc_phase, '[before the window]') WHEN 'stream' THEN CAST(stream AS TEXT)
                                 WHEN 'compile_context' THEN COALESCE(ctx, '[none]') ELSE COALESCE(meta, '[none]') END AS group_value,
                               COUNT(*) AS blocks, SUM(size) AS bytes FROM live GROUP BY 1)
                  SELECT group_value, blocks, bytes, ROUND(100.0 * bytes / MAX(1, (SELECT SUM(bytes) FROM g)), 2) AS percent_of_live
                  FROM g ORDER BY bytes DESC, group_value",
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
