//! Every SnapshotDB table, declared once: its columns (name, SQL type, unit, one-line doc). The
//! DDL, the INSERT statements, the virtual tables' declarations and the column lists in
//! docs/schema.md are all derived from these (a test fails when the doc drifts). The two large
//! tables also carry each column's cell, computed in one place for the materialized rows of a
//! .db file and for the virtual table of an open session (`cells.rs`).

use super::cells::{int, origin_name, stack_source_name, CellFn, CellValue as V, Items, Row};
use crate::model::Event;
use crate::replay::Lifetime;
use crate::Loaded;
use std::borrow::Cow;

/// One column of a table. `C` is how its cell is computed: `()` for the small tables, whose rows
/// the loader writes in column order, or a [`CellFn`] for `traces` and `lifetimes`.
pub struct Column<C: 'static = ()> {
    pub name: &'static str,
    /// SQL type and column constraints, as in CREATE TABLE.
    pub ty: &'static str,
    /// "bytes", "event index", "µs", or "" for none.
    pub unit: &'static str,
    pub doc: &'static str,
    pub cell: C,
}

pub struct Table<C: 'static = ()> {
    pub name: &'static str,
    /// What one row is, for docs/schema.md.
    pub row: &'static str,
    pub columns: &'static [Column<C>],
    /// A table constraint after the columns (a composite key), or "".
    pub key: &'static str,
    pub without_rowid: bool,
    /// The first column is an id SQLite assigns: INSERTs leave it out.
    pub auto_id: bool,
}

const fn col(name: &'static str, ty: &'static str, unit: &'static str, doc: &'static str) -> Column {
    Column { name, ty, unit, doc, cell: () }
}

/// A table of plain columns with a rowid, whose first column SQLite assigns when `auto_id`.
const fn table(name: &'static str, row: &'static str, columns: &'static [Column], auto_id: bool) -> Table {
    Table { name, row, columns, key: "", without_rowid: false, auto_id }
}

// Columns several small tables share.
const DEVICE_ID: Column = col("device_id", "INTEGER NOT NULL REFERENCES devices(id)", "", "the device row");
const ROW_ID: Column = col("id", "INTEGER PRIMARY KEY", "", "row id");
const STREAM: Column = col("stream", "INTEGER NOT NULL", "", "stream");
const SEGMENT_TYPE: Column = col("segment_type", "TEXT NOT NULL", "", "`small` / `large` pool");

fn row_id<'a, T>(r: &Row<'a, T>) -> V<'a> {
    V::Int(r.id)
}

fn row_device<'a, T>(r: &Row<'a, T>) -> V<'a> {
    V::Int(r.dev as i64)
}

/// The `id` column of a large table.
const fn id_column<T: 'static>(doc: &'static str) -> Column<CellFn<T>> {
    Column { name: "id", ty: "INTEGER PRIMARY KEY", unit: "", doc, cell: row_id::<T> }
}

/// The `device_id` column of a large table.
const fn device_column<T: 'static>() -> Column<CellFn<T>> {
    Column { name: "device_id", ty: "INTEGER NOT NULL REFERENCES devices(id)", unit: "", doc: "the device row", cell: row_device::<T> }
}

impl<C> Table<C> {
    pub fn ddl(&self) -> String {
        let mut parts: Vec<String> = self.columns.iter().map(|c| format!("{} {}", c.name, c.ty)).collect();
        if !self.key.is_empty() {
            parts.push(self.key.to_string());
        }
        let options = if self.without_rowid { " WITHOUT ROWID" } else { "" };
        format!("CREATE TABLE {} ({}){options};\n", self.name, parts.join(", "))
    }

    /// The columns an INSERT sets, in declaration order.
    pub fn inserted(&self) -> &[Column<C>] {
        &self.columns[usize::from(self.auto_id)..]
    }

    pub fn insert_sql(&self) -> String {
        let cols = self.inserted();
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        let slots: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
        format!("INSERT INTO {} ({}) VALUES ({})", self.name, names.join(", "), slots.join(", "))
    }

    /// `insert_sql` for `rows` rows in one statement, their values one row after another.
    pub fn insert_sql_rows(&self, rows: usize) -> String {
        let cols = self.inserted();
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        let row = |r: usize| format!("({})", (1..=cols.len()).map(|i| format!("?{}", r * cols.len() + i)).collect::<Vec<_>>().join(", "));
        format!("INSERT INTO {} ({}) VALUES {}", self.name, names.join(", "), (0..rows).map(row).collect::<Vec<_>>().join(", "))
    }

    /// Copy every row from the table `source` (a virtual table of the same columns), the auto id
    /// left out: SQLite assigns the next one without checking the given one against the rows.
    pub fn copy_sql(&self, source: &str) -> String {
        let names: Vec<&str> = self.inserted().iter().map(|c| c.name).collect();
        format!("INSERT INTO main.{} ({1}) SELECT {1} FROM {source}", self.name, names.join(", "))
    }

    /// `CREATE TABLE x(...)` as a virtual table declares itself: names and types only.
    pub fn vtab_declaration(&self) -> std::ffi::CString {
        let cols: Vec<String> =
            self.columns.iter().map(|c| format!("{} {}", c.name, c.ty.split_whitespace().next().unwrap_or(""))).collect();
        std::ffi::CString::new(format!("CREATE TABLE x({})", cols.join(", "))).expect("no NUL in a declaration")
    }

    /// Position of a column, for code that must name one (checked when the schema test runs).
    pub const fn position(&self, name: &str) -> usize {
        let mut i = 0;
        while i < self.columns.len() {
            if const_eq(self.columns[i].name, name) {
                return i;
            }
            i += 1;
        }
        panic!("no such column")
    }

    /// The table's section of docs/schema.md.
    pub fn markdown(&self) -> String {
        let mut s = format!("### `{}`\n\nOne row per {}.\n\n| column | type | unit | meaning |\n|---|---|---|---|\n", self.name, self.row);
        for c in self.columns {
            s += &format!("| `{}` | {} | {} | {} |\n", c.name, c.ty, c.unit, c.doc);
        }
        s
    }
}

impl<T: Items> Table<CellFn<T>> {
    /// Every row of this table for device position `dev`, as the values its INSERT takes
    /// (the auto id left out).
    pub fn device_rows<'a>(
        &'a self,
        l: &'a Loaded,
        dev: usize,
        first_id: i64,
        lifetime_base: i64,
    ) -> impl Iterator<Item = Vec<V<'a>>> + 'a {
        let columns = self.inserted();
        (0..T::count(&l.devices[dev])).map(move |index| {
            let row = Row { loaded: l, dev, index, id: first_id + index as i64, lifetime_base, item: T::item(l, dev, index) };
            columns.iter().map(|c| (c.cell)(&row)).collect()
        })
    }
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub const METADATA: Table = Table {
    name: "metadata",
    row: "key (`schema_version`, `engine_version`, `format`, `encoding`, `source_name`, `source_bytes`, `source_sha256`, `allocator_settings` (JSON), `overview_json`, and the import's `source_mtime_ns`, `device_selection`, `imported_at`)",
    columns: &[col("key", "TEXT PRIMARY KEY", "", "metadata key"), col("value", "TEXT", "", "its value as text")],
    key: "",
    without_rowid: false,
    auto_id: false,
};

pub const DEVICES: Table = table(
    "devices",
    "device with segments or trace events",
    &[
        col("id", "INTEGER PRIMARY KEY", "", "row id; `device_id` columns reference it"),
        col("device_index", "INTEGER NOT NULL UNIQUE", "", "the CUDA/NPU ordinal"),
        col("events", "INTEGER NOT NULL", "", "trace events of the device"),
        col("allocator_rules", "TEXT", "", "which rounding/splitting rules the replay used, and where they came from"),
        col("consistent", "INTEGER NOT NULL", "", "1 when the replay reproduces the dump exactly"),
        col("ambiguous_bytes", "INTEGER NOT NULL", "bytes", "bound on bytes the counters may be low by"),
        col("start_allocated", "INTEGER", "bytes", "allocated before the first event"),
        col("start_active", "INTEGER", "bytes", "active before the first event"),
        col("start_reserved", "INTEGER", "bytes", "reserved before the first event"),
        col("start_requested", "INTEGER", "bytes", "requested before the first event"),
        col("peak_allocated", "INTEGER", "bytes", "largest allocated right after an event (NULL without events; `memory_peak` reads it)"),
        col("peak_allocated_event", "INTEGER", "event index", "first event holding `peak_allocated`"),
        col("peak_active", "INTEGER", "bytes", "largest active right after an event"),
        col("peak_active_event", "INTEGER", "event index", "first event holding `peak_active`"),
        col("peak_reserved", "INTEGER", "bytes", "largest reserved right after an event"),
        col("peak_reserved_event", "INTEGER", "event index", "first event holding `peak_reserved`"),
        col("peak_requested", "INTEGER", "bytes", "largest requested right after an event"),
        col("peak_requested_event", "INTEGER", "event index", "first event holding `peak_requested`"),
    ],
    false,
);

pub const FRAMES: Table = table(
    "frames",
    "distinct frame",
    &[
        col("id", "INTEGER PRIMARY KEY", "", "frame id"),
        col("filename", "TEXT NOT NULL", "", "source file (or C++ binary/`??`)"),
        col("line", "INTEGER NOT NULL", "", "line number (0 when unknown)"),
        col("name", "TEXT NOT NULL", "", "function name"),
        col(
            "kind",
            "TEXT NOT NULL",
            "",
            "`user` / `generated` / `library` / `autograd` / `native` / `interpreter` / `allocator` / `runtime` (docs/frames.md)",
        ),
        col(
            "display",
            "TEXT NOT NULL",
            "",
            "`name (short/path.py:line)`: the path relative to site-packages/ or to the user's common folder",
        ),
        col("fx_node_op", "TEXT", "", "the FX node's op, for frames of generated code (`augment_with_fx_traces`)"),
        col("fx_node_name", "TEXT", "", "the FX node's name"),
        col("fx_node_target", "TEXT", "", "the FX node's target"),
        col("fx_original_trace", "TEXT", "", "the user code the FX node came from"),
    ],
    false,
);

pub const CALL_STACKS: Table = table(
    "call_stacks",
    "distinct stack",
    &[
        col("id", "INTEGER PRIMARY KEY", "", "stack id; `stack_id` columns reference it"),
        col("depth", "INTEGER NOT NULL", "", "number of frames"),
        col("top_frame_id", "INTEGER", "", "innermost frame (the allocation site's frame)"),
        col("frames_json", "TEXT NOT NULL", "", "innermost first: `[{\"filename\",\"line\",\"name\"}, ...]`"),
        col("text", "TEXT NOT NULL", "", "outermost first, one `filename:line name` per line (pt-snap-cli's callstack text)"),
        col("site", "TEXT NOT NULL", "", "`filename:line name` of the frame that names the stack (`label_frame_id`)"),
        col(
            "label_frame_id",
            "INTEGER",
            "",
            "the frame that names the stack: the innermost user frame, else generated code, library Python, an autograd node, native code; inside a user line that runs the program's loop from a library (docs/frames.md), the best frame inside it",
        ),
        col("label", "TEXT NOT NULL", "", "that frame as shown (`frames.display`)"),
        col("caller", "TEXT", "", "the next Python frame outwards, as shown: tells apart stacks that end in the same line"),
    ],
    false,
);

pub const STACK_FRAMES: Table = Table {
    name: "stack_frames",
    row: "frame of a stack",
    columns: &[
        col("stack_id", "INTEGER NOT NULL", "", "the stack"),
        col("position", "INTEGER NOT NULL", "", "0 = innermost (allocation site)"),
        col("frame_id", "INTEGER NOT NULL", "", "the frame"),
    ],
    key: "PRIMARY KEY (stack_id, position)",
    without_rowid: true,
    auto_id: false,
};

pub const SEGMENTS: Table = table(
    "segments",
    "dump-time segment",
    &[
        col("id", "INTEGER PRIMARY KEY", "", "segment id"),
        DEVICE_ID,
        col("address", "INTEGER NOT NULL", "", "first address (values ≥ 2^63 read as negative)"),
        col("total_size", "INTEGER NOT NULL", "bytes", "segment size"),
        col("allocated_size", "INTEGER NOT NULL", "bytes", "in allocated blocks"),
        col("active_size", "INTEGER NOT NULL", "bytes", "in allocated and pending-free blocks"),
        col("requested_size", "INTEGER NOT NULL", "bytes", "requested by the program in its active blocks"),
        col("stream", "INTEGER NOT NULL", "", "stream the segment belongs to"),
        SEGMENT_TYPE,
        col("pool_id_0", "INTEGER", "", "private pool id, first part (CUDA graphs)"),
        col("pool_id_1", "INTEGER", "", "private pool id, second part"),
        col("is_expandable", "INTEGER NOT NULL", "", "1 for an expandable segment"),
        col("stack_id", "INTEGER", "", "stack of the segment's allocation, when recorded"),
    ],
    false,
);

pub const BLOCKS: Table = table(
    "blocks",
    "dump-time block",
    &[
        col("id", "INTEGER PRIMARY KEY", "", "block id"),
        col("segment_id", "INTEGER NOT NULL REFERENCES segments(id)", "", "its segment"),
        col("address", "INTEGER NOT NULL", "", "first address"),
        col("size", "INTEGER NOT NULL", "bytes", "block size"),
        col("requested_size", "INTEGER NOT NULL", "bytes", "bytes the program asked for"),
        col("state", "TEXT NOT NULL", "", "`active_allocated` / `active_pending_free` / `inactive`"),
        col("stack_id", "INTEGER", "", "stack of the allocation, when recorded"),
        col("lifetime_id", "INTEGER", "", "the block's lifetime (NULL for inactive blocks)"),
    ],
    true,
);

pub const TRACES: Table<CellFn<Event>> = Table {
    name: "traces",
    row: "trace event, with the device counters right after it",
    columns: &[
        id_column("row id (from 1, across devices)"),
        device_column(),
        Column { name: "trace_index", ty: "INTEGER NOT NULL", unit: "event index", doc: "position in `device_traces[d]`, 0-based", cell: |r| V::Int(r.index as i64) },
        Column {
            name: "action",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "`alloc`, `free_requested`, `free_completed`, `segment_alloc`, `segment_free`, `segment_map`, `segment_unmap`, `snapshot`, `oom`, `annotate`, `workspace_snapshot`, or an unknown action's own name",
            cell: |r| V::Text(Cow::Borrowed(r.action())),
        },
        Column { name: "addr", ty: "INTEGER NOT NULL", unit: "", doc: "block or segment address", cell: |r| int(r.item.addr) },
        Column { name: "size", ty: "INTEGER NOT NULL", unit: "bytes", doc: "requested bytes for alloc/free, segment bytes for segment events", cell: |r| int(r.item.size) },
        Column { name: "stream", ty: "INTEGER NOT NULL", unit: "", doc: "stream", cell: |r| int(r.stream()) },
        Column { name: "time_us", ty: "INTEGER", unit: "µs", doc: "wall-clock time (PyTorch ≥ 2.2)", cell: |r| V::of(r.item.time_us()) },
        Column { name: "stack_id", ty: "INTEGER", unit: "", doc: "the event's stack", cell: |r| V::of(r.item.stack().map(i64::from)) },
        Column { name: "lifetime_id", ty: "INTEGER", unit: "", doc: "the block lifetime the event belongs to", cell: |r| V::of(r.lifetime_id()) },
        Column { name: "allocated", ty: "INTEGER NOT NULL", unit: "bytes", doc: "allocated right after the event", cell: |r| V::Int(r.replay().series.allocated.at(r.index)) },
        Column { name: "active", ty: "INTEGER NOT NULL", unit: "bytes", doc: "active (allocated + pending free) right after the event", cell: |r| V::Int(r.replay().series.active.at(r.index)) },
        Column { name: "reserved", ty: "INTEGER NOT NULL", unit: "bytes", doc: "reserved right after the event", cell: |r| V::Int(r.replay().series.reserved.at(r.index)) },
        Column { name: "requested", ty: "INTEGER NOT NULL", unit: "bytes", doc: "requested right after the event", cell: |r| V::Int(r.replay().series.requested.at(r.index)) },
        Column { name: "device_free", ty: "INTEGER", unit: "bytes", doc: "free device memory reported with an `oom`", cell: |r| V::of(r.extra().and_then(|x| x.device_free).map(|v| v as i64)) },
        Column { name: "compile_context", ty: "TEXT", unit: "", doc: "the compiled region the event ran in", cell: |r| V::shared_text_of(r.extra().and_then(|x| x.compile_context.as_deref())) },
        Column { name: "user_metadata", ty: "TEXT", unit: "", doc: "what the program attached to the event", cell: |r| V::shared_text_of(r.extra().and_then(|x| x.user_metadata.as_deref())) },
        Column {
            name: "phase",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "`forward` / `backward` / `optimizer` / `data` / `unknown`, from the stacks and annotations (docs/categories.md)",
            cell: |r| V::Text(Cow::Borrowed(r.loaded.phases()[r.dev].phase(r.index as u32).name())),
        },
        Column {
            name: "extra_json",
            ty: "TEXT",
            unit: "",
            doc: "rare fields as JSON (forward frames, pool id, unknown keys)",
            cell: |r| r.extra_json().map_or(V::Null, |j| V::Text(Cow::Owned(j))),
        },
    ],
    key: "",
    without_rowid: false,
    auto_id: true,
};

pub const LIFETIMES: Table<CellFn<Lifetime>> = Table {
    name: "lifetimes",
    row: "block from its allocation (or the window start) to its release (or the dump)",
    columns: &[
        id_column("lifetime id (from 0, across devices)"),
        device_column(),
        Column { name: "address", ty: "INTEGER NOT NULL", unit: "", doc: "block address", cell: |r| int(r.item.addr) },
        Column {
            name: "size",
            ty: "INTEGER NOT NULL",
            unit: "bytes",
            doc: "block bytes (a lower bound when `size_exact` = 0, by at most `size_uncertainty`)",
            cell: |r| int(r.item.size),
        },
        Column {
            name: "requested_size",
            ty: "INTEGER NOT NULL",
            unit: "bytes",
            doc: "bytes the program asked for",
            cell: |r| int(r.item.requested),
        },
        Column { name: "stream", ty: "INTEGER NOT NULL", unit: "", doc: "stream", cell: |r| int(r.item.stream) },
        Column {
            name: "alloc_event",
            ty: "INTEGER",
            unit: "event index",
            doc: "allocation (NULL = before the window)",
            cell: |r| V::of(r.item.alloc_event().map(i64::from)),
        },
        Column {
            name: "free_requested_event",
            ty: "INTEGER",
            unit: "event index",
            doc: "the program's free",
            cell: |r| V::of(r.item.free_requested_event().map(i64::from)),
        },
        Column {
            name: "free_completed_event",
            ty: "INTEGER",
            unit: "event index",
            doc: "the block's return to the allocator (NULL = alive at the dump)",
            cell: |r| V::of(r.item.free_completed_event().map(i64::from)),
        },
        Column {
            name: "origin",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "`in_window` / `before_window`",
            cell: |r| V::Text(Cow::Borrowed(origin_name(r.item))),
        },
        Column {
            name: "state_at_dump",
            ty: "TEXT",
            unit: "",
            doc: "block state at the dump; NULL when freed in the window",
            cell: |r| V::text_of(r.item.state_at_dump.map(|s| s.name())),
        },
        Column {
            name: "stack_id",
            ty: "INTEGER",
            unit: "",
            doc: "the stack that names the block",
            cell: |r| V::of(r.item.stack().map(i64::from)),
        },
        Column {
            name: "stack_source",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "where `stack_id` came from: `alloc` / `dump_block` / `free` / `none`",
            cell: |r| V::Text(Cow::Borrowed(stack_source_name(r.item.stack_source))),
        },
        Column {
            name: "size_exact",
            ty: "INTEGER NOT NULL",
            unit: "",
            doc: "1 when `size` is the exact block size",
            cell: |r| V::Int(r.item.size_exact as i64),
        },
        Column {
            name: "size_uncertainty",
            ty: "INTEGER NOT NULL",
            unit: "bytes",
            doc: "how much larger the block may be",
            cell: |r| int(r.item.size_uncertainty()),
        },
        Column {
            name: "category",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "what the block is: `parameter`, `gradient`, `optimizer state`, `activation`, … (docs/categories.md)",
            cell: |r| V::Text(Cow::Borrowed(r.loaded.semantics().of_lifetime(r.dev, r.index).0)),
        },
        Column {
            name: "category_rule",
            ty: "TEXT NOT NULL",
            unit: "",
            doc: "the rule that decided `category` (`category_rules.name`; `no-rule` when none matched)",
            cell: |r| V::Text(Cow::Borrowed(r.loaded.semantics().of_lifetime(r.dev, r.index).1)),
        },
        Column {
            name: "orphan",
            ty: "INTEGER NOT NULL",
            unit: "",
            doc: "1 = the trace contradicts it; left out of the counters",
            cell: |r| V::Int(r.item.orphan as i64),
        },
    ],
    key: "",
    without_rowid: false,
    auto_id: false,
};

pub const START_RANGES: Table = table(
    "start_ranges",
    "reserved range right before the first event (with the trace's segment events, gives the exact ranges at any event)",
    &[
        DEVICE_ID,
        col("address", "INTEGER NOT NULL", "", "first address"),
        col("size", "INTEGER NOT NULL", "bytes", "range size"),
        STREAM,
        SEGMENT_TYPE,
        col("is_expandable", "INTEGER NOT NULL", "", "1 for an expandable segment's mapping"),
    ],
    false,
);

pub const SEGMENT_LIVES: Table = table(
    "segment_lives",
    "reserved range over the window (cudaMalloc segment or expandable mapping)",
    &[
        ROW_ID,
        DEVICE_ID,
        col("address", "INTEGER NOT NULL", "", "first address"),
        col("size", "INTEGER NOT NULL", "bytes", "range size"),
        STREAM,
        SEGMENT_TYPE,
        col("is_expandable", "INTEGER NOT NULL", "", "1 for an expandable segment's mapping"),
        col("alloc_event", "INTEGER", "event index", "segment_alloc / segment_map (NULL = before the window)"),
        col("free_event", "INTEGER", "event index", "segment_free / segment_unmap (NULL = not released)"),
        col("at_dump", "INTEGER NOT NULL", "", "1 when the range exists at the dump"),
    ],
    true,
);

pub const ANNOTATIONS: Table = table(
    "annotations",
    "`external_annotations` entry",
    &[
        ROW_ID,
        col("device_index", "INTEGER", "", "the device ordinal it was recorded on"),
        col("time_us", "INTEGER", "µs", "time of the entry"),
        col("name", "TEXT NOT NULL", "", "range name"),
        col("stage", "TEXT NOT NULL", "", "`START` / `END`"),
    ],
    true,
);

pub const PHASES: Table = table(
    "phases",
    "phase run or named range of a device",
    &[
        ROW_ID,
        DEVICE_ID,
        col(
            "kind",
            "TEXT NOT NULL",
            "",
            "`run` (a run of events in one phase, from the stacks) / `range` (an annotation pair or a compiled region)",
        ),
        col("name", "TEXT NOT NULL", "", "the phase (`forward`, `backward`, …) or the range's name"),
        col("grp", "TEXT NOT NULL", "", "`phase` for runs; `step` / `optimizer` / `data` / `framework` / `compiled` / `user` for ranges"),
        col("start_event", "INTEGER", "event index", "first event inside (NULL = none)"),
        col("end_event", "INTEGER", "event index", "last event inside (NULL = none)"),
        col("start_us", "INTEGER", "µs", "start time of a range"),
        col("end_us", "INTEGER", "µs", "end time of a range (NULL = open)"),
    ],
    true,
);

pub const CATEGORY_RULES: Table = table(
    "category_rules",
    "category rule, in the order they are tried",
    &[
        col("position", "INTEGER PRIMARY KEY", "", "0 = tried first"),
        col("name", "TEXT NOT NULL", "", "rule name (`lifetimes.category_rule`)"),
        col("category", "TEXT NOT NULL", "", "the category it gives"),
        col("file", "TEXT", "", "regular expression on a frame's file"),
        col("function", "TEXT", "", "regular expression on the same frame's function"),
        col("frames", "TEXT NOT NULL", "", "`stack` / `forward` / `any`: which frames the patterns are tried on"),
        col("phase", "TEXT", "", "the allocating event's phase it requires"),
        col("lifetime", "TEXT NOT NULL", "", "`any` / `within_phase` / `outlives_phase` / `into_backward` / `before_window`"),
        col("why", "TEXT NOT NULL", "", "the reasoning"),
        col("origin", "TEXT NOT NULL", "", "`default` / `user`"),
    ],
    false,
);

pub const ISSUES: Table = table(
    "issues",
    "replay inconsistency",
    &[
        ROW_ID,
        col("device_id", "INTEGER NOT NULL", "", "the device row"),
        col("event", "INTEGER", "event index", "where it was found (NULL = at the dump)"),
        col("code", "TEXT NOT NULL", "", "stable code"),
        col("message", "TEXT NOT NULL", "", "what did not fit"),
    ],
    true,
);

pub const WARNINGS: Table = table(
    "warnings",
    "reader warning",
    &[
        ROW_ID,
        col("device_index", "INTEGER", "", "the device ordinal, when it concerns one"),
        col("event", "INTEGER", "event index", "the event, when it concerns one"),
        col("code", "TEXT NOT NULL", "", "stable code"),
        col("message", "TEXT NOT NULL", "", "what was odd and what the reader did"),
    ],
    true,
);

/// Texts the `frames`, `annotations`, `phases` and `traces` columns show cut (a frame's name over
/// 4,096 bytes; a text many rows repeat over 1,000 characters: `cells::shared_cut`), each distinct
/// text whole and once however many rows name it.
/// Added beside the schema_version 2 tables (none of theirs changed): a .db without them reads as
/// one whose texts are all whole.
pub const LONG_TEXTS: Table = table(
    "long_texts",
    "distinct text shown cut somewhere, whole",
    &[col("id", "INTEGER PRIMARY KEY", "", "text id"), col("text", "TEXT NOT NULL", "", "the whole text")],
    false,
);

pub const LONG_TEXT_USES: Table = Table {
    name: "long_text_uses",
    row: "cell shown cut, and its whole text",
    columns: &[
        col("table_name", "TEXT NOT NULL", "", "`frames` / `annotations` / `phases` / `traces`"),
        col("row_id", "INTEGER NOT NULL", "", "the row's `id`"),
        col(
            "column_name",
            "TEXT NOT NULL",
            "",
            "`filename` / `name` / `compile_context` / `user_metadata`: the column that shows it cut (`…`); `extra_json.internal_metadata` for that field of `extra_json`",
        ),
        col("text_id", "INTEGER NOT NULL", "", "its whole text (`long_texts.id`)"),
    ],
    key: "PRIMARY KEY (table_name, row_id, column_name)",
    without_rowid: true,
    auto_id: false,
};

/// The small tables in DDL order (the large ones follow them).
pub const SMALL: [&Table; 16] = [
    &METADATA,
    &DEVICES,
    &FRAMES,
    &CALL_STACKS,
    &STACK_FRAMES,
    &SEGMENTS,
    &BLOCKS,
    &START_RANGES,
    &SEGMENT_LIVES,
    &ANNOTATIONS,
    &PHASES,
    &CATEGORY_RULES,
    &ISSUES,
    &WARNINGS,
    &LONG_TEXTS,
    &LONG_TEXT_USES,
];

/// The whole schema's DDL.
pub fn schema_sql() -> String {
    let mut s = String::from("-- snapscope SnapshotDB, declared in crate/src/store/tables.rs; documented in docs/schema.md.\n");
    for t in SMALL {
        s += &t.ddl();
    }
    s += &TRACES.ddl();
    s += &LIFETIMES.ddl();
    s
}

/// The column lists of docs/schema.md, every table in the order above.
pub fn schema_markdown() -> String {
    let mut parts: Vec<String> = SMALL.iter().map(|t| t.markdown()).collect();
    parts.push(TRACES.markdown());
    parts.push(LIFETIMES.markdown());
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "<!-- tables: generated, do not edit by hand -->\n";
    const END: &str = "<!-- /tables -->";

    /// docs/schema.md lists exactly the declared columns (UPDATE_SCHEMA_DOC=1 rewrites it).
    #[test]
    fn schema_doc_matches_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let (a, b) = (doc.find(BEGIN).expect("begin marker") + BEGIN.len(), doc.find(END).expect("end marker"));
        let want = schema_markdown();
        // The title names the schema version the code writes (one declaration: SCHEMA_VERSION).
        let title = format!("# SnapshotDB schema (schema_version {})\n", crate::store::SCHEMA_VERSION);
        if std::env::var_os("UPDATE_SCHEMA_DOC").is_some() {
            let body = doc.split_once('\n').map_or("", |x| x.1);
            let doc = format!("{title}{body}");
            let (a, b) = (doc.find(BEGIN).expect("begin marker") + BEGIN.len(), doc.find(END).expect("end marker"));
            std::fs::write(&path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
        } else {
            assert_eq!(&doc[a..b], want, "docs/schema.md is stale: UPDATE_SCHEMA_DOC=1 cargo test -p snapscope schema_doc");
            assert!(
                doc.starts_with(&title),
                "docs/schema.md's title must be {title:?}: UPDATE_SCHEMA_DOC=1 cargo test -p snapscope schema_doc"
            );
        }
    }

    #[test]
    fn declarations_make_a_schema_sqlite_accepts() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(&schema_sql()).unwrap();
        for t in SMALL {
            let n: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM pragma_table_info('{}')", t.name), [], |r| r.get(0)).unwrap();
            assert_eq!(n as usize, t.columns.len(), "{}", t.name);
            conn.prepare(&t.insert_sql()).unwrap();
        }
        assert_eq!(TRACES.position("action"), 3);
        assert!(TRACES
            .vtab_declaration()
            .to_str()
            .unwrap()
            .starts_with("CREATE TABLE x(id INTEGER, device_id INTEGER, trace_index INTEGER"));
    }
}

/// A table as the page's schema panel and docs/schema.md describe it.
#[derive(serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TableDoc {
    pub name: &'static str,
    pub row: &'static str,
    pub columns: Vec<ColumnDoc>,
}

#[derive(serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ColumnDoc {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// Every table of the SnapshotDB, in the order docs/schema.md lists them.
pub fn docs() -> Vec<TableDoc> {
    fn doc<C>(t: &Table<C>) -> TableDoc {
        let columns = t.columns.iter().map(|c| ColumnDoc { name: c.name, ty: c.ty, unit: c.unit, doc: c.doc }).collect();
        TableDoc { name: t.name, row: t.row, columns }
    }
    let mut all: Vec<TableDoc> = SMALL.iter().map(|t| doc(t)).collect();
    all.push(doc(&TRACES));
    all.push(doc(&LIFETIMES));
    all
}
