//! A SnapshotDB read back into the one model: the `model::Snapshot` its tables were written
//! from (frames, stacks, dump segments and blocks, trace events with their extras, annotations,
//! warnings, the allocator settings), so a `.db` input is replayed and analyzed by the same code
//! as the snapshot it came from. Plain SELECTs over tables only (`open_file` refused views and
//! triggers); every row is checked, and a damaged one is an error naming its table and row.

use crate::codes::{ErrorCode, WarningCode};
use crate::error::{Error, Result};
use crate::model::{
    shown_cut, Action, Annotation, Block, BlockState, DeviceTrace, Event, EventExtra, Format, Frame, FxNode, LongText, Pool, Segment,
    Snapshot, Warning, WholeNames,
};
use crate::store::cells::SharedText;
use crate::store::long_texts;
use crate::Loaded;
use rusqlite::types::{FromSql, ValueRef};
use rusqlite::Connection;
use scan::Scan;
use std::collections::HashMap;
use std::sync::Arc;

mod scan;

/// Device ordinals a trace may have: the trace list is indexed by ordinal, so a damaged
/// `device_index` must not size it.
const MAX_TRACE_DEVICE: i64 = 1 << 20;

/// The snapshot of `conn`, replayed.
pub fn loaded(conn: &Connection) -> Result<Loaded> {
    // Pages are read through SQLite's cache, not mapped: the same time (farm-bench, 99 MiB
    // generated .db, --mode peak: cpu 0.99x), and a mapped file's pages count in the process's
    // memory (peak 165 MiB against 77).
    Ok(Loaded::from_snapshot(snapshot(conn)?))
}

/// A row that does not fit the schema: which table, which row, what.
fn damaged(table: &str, row: i64, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::DatabaseSchemaInvalid,
        format!("the SnapshotDB's {table} row {row}: {what}"),
        "re-import the snapshot with `snapscope import SNAPSHOT -o FILE.db`",
    )
}

/// A SQLite failure while reading `table`.
fn unreadable(table: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::OperationInterrupted => Error::from(e),
        _ => Error::new(
            ErrorCode::DatabaseSchemaInvalid,
            format!("the SnapshotDB's {table} table cannot be read: {e}"),
            "re-import the snapshot with `snapscope import SNAPSHOT -o FILE.db`",
        ),
    }
}

/// Rows one after another, each column's value where the source holds it: a prepared SELECT
/// ([`Scan`]) or, for `traces`, the table's pages read from the file (`pages::read`).
trait Source {
    /// Move to the next row (false after the last); `table` names the table in an error.
    fn advance(&mut self, table: &str) -> Result<bool>;
    fn value(&self, i: usize) -> ValueRef<'_>;
}

impl Source for Scan<'_> {
    fn advance(&mut self, table: &str) -> Result<bool> {
        self.step().map_err(unreadable(table))
    }

    fn value(&self, i: usize) -> ValueRef<'_> {
        Scan::value(self, i)
    }
}

/// A table's rows read from its pages, under the time limit every statement over an input
/// database runs under (`store::guard_statements`): the reading is one statement's work.
#[cfg(not(target_arch = "wasm32"))]
struct PageRows {
    scan: super::pages::read::TableScan,
    rows: u64,
    deadline_ms: f64,
}

#[cfg(not(target_arch = "wasm32"))]
impl PageRows {
    fn new(scan: super::pages::read::TableScan) -> PageRows {
        PageRows { scan, rows: 0, deadline_ms: crate::clock::now_ms() + crate::budget::DB_STATEMENT_MS.limit() as f64 }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Source for PageRows {
    fn advance(&mut self, table: &str) -> Result<bool> {
        self.rows += 1;
        // The clock read every 4,096 rows (about a millisecond of reading).
        if self.rows.is_multiple_of(4096) && crate::clock::now_ms() > self.deadline_ms {
            let b = &crate::budget::DB_STATEMENT_MS;
            return Err(b.exceeded(b.limit(), format!("reading the input database's {table} table took longer and was stopped")));
        }
        self.scan.step().map_err(|e| bad(format!("the {table} table's pages: {}", e.0)))
    }

    fn value(&self, i: usize) -> ValueRef<'_> {
        self.scan.value(i)
    }
}

/// Every row of `sql` through `each` (the row and its id, column 0).
fn rows(conn: &Connection, table: &str, sql: &str, each: impl FnMut(&Scan, i64) -> Result<()>) -> Result<()> {
    let r = Scan::new(conn, sql).map_err(unreadable(table))?;
    rows_of(table, r, each)
}

/// Every row of `r` through `each` (the row and its id, column 0).
fn rows_of<S: Source>(table: &str, mut r: S, mut each: impl FnMut(&S, i64) -> Result<()>) -> Result<()> {
    while r.advance(table)? {
        let id: i64 = get(&r, 0).map_err(|e| damaged(table, -1, format!("its id, {}", e.message)))?;
        each(&r, id).map_err(|e| match e.code {
            ErrorCode::DatabaseSchemaInvalid if !e.message.contains(" row ") => damaged(table, id, e.message),
            _ => e,
        })?;
    }
    Ok(())
}

/// Column `i` of a row, a type mismatch named.
fn get<T: FromSql>(r: &impl Source, i: usize) -> Result<T> {
    let v = r.value(i);
    T::column_result(v).map_err(|e| mismatch(i, v, e))
}

/// Column `i` as text borrowed from the row (no copy).
fn text_at(r: &impl Source, i: usize) -> Result<&str> {
    let v = r.value(i);
    v.as_str().map_err(|e| mismatch(i, v, e))
}

/// Column `i` as text or NULL, borrowed from the row.
fn opt_text_at(r: &impl Source, i: usize) -> Result<Option<&str>> {
    let v = r.value(i);
    v.as_str_or_null().map_err(|e| mismatch(i, v, e))
}

#[cold]
fn mismatch(i: usize, v: ValueRef, e: rusqlite::types::FromSqlError) -> Error {
    bad(format!("column {i}: {e} ({} value)", v.data_type()))
}

fn bad(what: impl Into<String>) -> Error {
    Error::new(ErrorCode::DatabaseSchemaInvalid, what, "")
}

fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    conn.query_row("SELECT value FROM metadata WHERE key = ?1", [key], |r| r.get(0)).map(Some).or_else(|e| match e {
        rusqlite::Error::QueryReturnedNoRows => Ok(None),
        e => Err(unreadable("metadata")(e)),
    })
}

/// A stack or frame id that must name an existing row.
fn id_in(v: Option<i64>, len: usize, what: &str) -> Result<Option<u32>> {
    match v {
        None => Ok(None),
        Some(x) if x >= 0 && (x as u64) < len as u64 => Ok(Some(x as u32)),
        Some(x) => Err(bad(format!("{what} {x} names no row"))),
    }
}

/// How the `traces` rows are read: from the table's pages, through SQLite, or the pages and,
/// where they cannot be read here, SQLite (what every command does; tests compare the two).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TraceReading {
    Pages,
    Sqlite,
    PagesElseSqlite,
}

pub fn snapshot(conn: &Connection) -> Result<Snapshot> {
    snapshot_reading(conn, TraceReading::PagesElseSqlite)
}

pub fn snapshot_reading(conn: &Connection, traces: TraceReading) -> Result<Snapshot> {
    let mut s = Snapshot {
        format: match meta(conn, "format")?.as_deref() {
            None | Some("") => None,
            Some("dict") => Some(Format::Dict),
            Some("list") => Some(Format::List),
            Some(f) => return Err(damaged("metadata", 0, format!("format {f:?} is neither dict nor list"))),
        },
        encoding: meta(conn, "encoding")?.unwrap_or_default(),
        source_bytes: meta(conn, "source_bytes")?.and_then(|v| v.parse().ok()).unwrap_or(0),
        allocator_settings: match meta(conn, "allocator_settings")? {
            Some(t) => Some(serde_json::from_str(&t).map_err(|e| damaged("metadata", 0, format!("allocator_settings is not JSON: {e}")))?),
            None => None,
        },
        ..Snapshot::default()
    };
    let long = long_texts::read(conn)?;
    read_frames(conn, &mut s, &long)?;
    read_stacks(conn, &mut s)?;
    let devices = read_devices(conn)?;
    read_segments(conn, &mut s, &devices)?;
    read_events(conn, &mut s, &devices, &long, traces)?;
    read_annotations(conn, &mut s, &long)?;
    read_warnings(conn, &mut s)?;
    from_overview(conn, &mut s)?;
    Ok(s)
}

/// A cell's text as the model holds it: shown (cut, when `long_texts` holds it whole) and whole.
fn text(long: &long_texts::Read, table: &str, row: i64, column: &str, cell: String) -> (String, Option<LongText>) {
    match long.get(table, row, column) {
        Some(whole) => match shown_cut(whole.text()) {
            Some(shown) => (shown, Some(whole.clone())),
            None => (whole.text().to_string(), None),
        },
        None => (cell, None),
    }
}

fn read_frames(conn: &Connection, s: &mut Snapshot, long: &long_texts::Read) -> Result<()> {
    let sql = include_str!("../../sql/read_back/frames.sql");
    rows(conn, "frames", sql, |r, id| {
        let fx = FxNode { op: get(r, 4)?, name: get(r, 5)?, target: get(r, 6)?, original_trace: get(r, 7)? };
        let has_fx = fx.op.is_some() || fx.name.is_some() || fx.target.is_some() || fx.original_trace.is_some();
        let (filename, whole_filename) = text(long, "frames", id, "filename", get(r, 1)?);
        let (name, whole_name) = text(long, "frames", id, "name", get(r, 3)?);
        let whole = WholeNames { filename: whole_filename, name: whole_name };
        let f = Frame::from_shown(filename, get(r, 2)?, name, has_fx.then(|| Box::new(fx)), whole);
        let at = s.interner.frames.len() as i64;
        if s.interner.frame(f) as i64 != id || id != at {
            return Err(bad(format!("frame ids must run 0, 1, 2, … without repeating a frame (expected {at})")));
        }
        Ok(())
    })
}

fn read_stacks(conn: &Connection, s: &mut Snapshot) -> Result<()> {
    let mut count = 0i64;
    rows(conn, "call_stacks", "SELECT id FROM call_stacks ORDER BY id", |_, id| {
        if id != count {
            return Err(bad(format!("stack ids must run 0, 1, 2, … (expected {count})")));
        }
        count += 1;
        Ok(())
    })?;
    // Rows come stack by stack (the primary key's order): each stack's frames are a run of
    // one list, `ends[stack]` where its run ends, so no list per stack is built.
    let mut ends: Vec<usize> = vec![0; count as usize];
    let mut all: Vec<u32> = Vec::new();
    let (mut last, mut start): (Option<usize>, usize) = (None, 0);
    let frames = s.interner.frames.len();
    let sql = "SELECT stack_id, position, frame_id FROM stack_frames ORDER BY stack_id, position";
    rows(conn, "stack_frames", sql, |r, stack| {
        let st = id_in(Some(stack), ends.len(), "stack")?.expect("given") as usize;
        if last != Some(st) {
            // A stack after the previous one: those between have no frames.
            let from = last.map_or(0, |l| l + 1);
            if st < from {
                return Err(bad("stack_frames rows must come in stack order"));
            }
            ends[from..st].fill(all.len());
            (last, start) = (Some(st), all.len());
        }
        let position: i64 = get(r, 1)?;
        if position != (all.len() - start) as i64 {
            return Err(bad(format!("position {position}: a stack's positions run 0, 1, 2, …")));
        }
        all.push(id_in(Some(get(r, 2)?), frames, "frame")?.expect("given"));
        ends[st] = all.len();
        Ok(())
    })?;
    let from = last.map_or(0, |l| l + 1);
    ends[from..].fill(all.len());
    start = 0;
    for (i, &end) in ends.iter().enumerate() {
        if s.interner.stack(&all[start..end]) as usize != i {
            return Err(damaged("call_stacks", i as i64, "repeats an earlier stack's frames"));
        }
        start = end;
    }
    Ok(())
}

/// `devices.id` → the device ordinal.
fn read_devices(conn: &Connection) -> Result<HashMap<i64, i64>> {
    let mut out = HashMap::new();
    rows(conn, "devices", "SELECT id, device_index FROM devices ORDER BY id", |r, id| {
        out.insert(id, get(r, 1)?);
        Ok(())
    })?;
    Ok(out)
}

fn device_of(devices: &HashMap<i64, i64>, id: i64) -> Result<i64> {
    devices.get(&id).copied().ok_or_else(|| bad(format!("device_id {id} names no devices row")))
}

fn pool(name: &str) -> Result<Pool> {
    Pool::from_name(name).ok_or_else(|| bad(format!("segment_type {name:?} is neither small nor large")))
}

fn read_segments(conn: &Connection, s: &mut Snapshot, devices: &HashMap<i64, i64>) -> Result<()> {
    let stacks = s.interner.stacks.len();
    let mut by_id: HashMap<i64, usize> = HashMap::new();
    rows(conn, "segments", include_str!("../../sql/read_back/segments.sql"), |r, id| {
        let pool_id = match (get::<Option<i64>>(r, 9)?, get::<Option<i64>>(r, 10)?) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        };
        by_id.insert(id, s.segments.len());
        s.segments.push(Segment {
            device: device_of(devices, get(r, 1)?)?,
            address: get::<i64>(r, 2)? as u64,
            total_size: get::<i64>(r, 3)? as u64,
            allocated_size: get::<i64>(r, 4)? as u64,
            active_size: get::<i64>(r, 5)? as u64,
            requested_size: get::<i64>(r, 6)? as u64,
            stream: get::<i64>(r, 7)? as u64,
            pool: pool(&get::<String>(r, 8)?)?,
            pool_id,
            is_expandable: get(r, 11)?,
            stack: id_in(get(r, 12)?, stacks, "stack_id")?,
            blocks: Vec::new(),
        });
        Ok(())
    })?;
    let sql = "SELECT id, segment_id, address, size, requested_size, state, stack_id FROM blocks ORDER BY segment_id, id";
    rows(conn, "blocks", sql, |r, _| {
        let seg: i64 = get(r, 1)?;
        let at = *by_id.get(&seg).ok_or_else(|| bad(format!("segment_id {seg} names no segments row")))?;
        let state: String = get(r, 5)?;
        s.segments[at].blocks.push(Block {
            address: get::<i64>(r, 2)? as u64,
            size: get::<i64>(r, 3)? as u64,
            requested_size: get::<i64>(r, 4)? as u64,
            state: BlockState::parse(&state).ok_or_else(|| bad(format!("state {state:?} is no block state")))?,
            stack: id_in(get(r, 6)?, stacks, "stack_id")?,
        });
        Ok(())
    })
}

/// The `traces` columns read back, in this order (`read_events_from` reads them by position).
const TRACE_COLUMNS: [&str; 13] = [
    "id",
    "device_id",
    "trace_index",
    "action",
    "addr",
    "size",
    "stream",
    "time_us",
    "stack_id",
    "device_free",
    "compile_context",
    "user_metadata",
    "extra_json",
];

/// Every trace event, device by device in trace order (ids run across devices in that order):
/// from the table's pages when they can be read here (natively, a file SQLite could read the
/// same way), else, or if the pages turn out damaged on the way, through SQLite, whose error
/// names what is wrong.
fn read_events(conn: &Connection, s: &mut Snapshot, devices: &HashMap<i64, i64>, long: &long_texts::Read, how: TraceReading) -> Result<()> {
    // The page reader reads files: the page has no `.db` input.
    #[cfg(target_arch = "wasm32")]
    let _ = how;
    #[cfg(not(target_arch = "wasm32"))]
    if how != TraceReading::Sqlite {
        let read = super::pages::read::TableScan::open(conn, "traces", &TRACE_COLUMNS)
            .map_err(|e| bad(format!("the traces table's pages: {}", e.0)))
            .and_then(|pages| read_events_from(PageRows::new(pages), s, devices, long));
        match (read, how) {
            (Ok(()), _) => return Ok(()),
            (Err(e), TraceReading::Pages) => return Err(e),
            (Err(e), _) if e.code == ErrorCode::BudgetExceeded => return Err(e),
            _ => s.traces.clear(),
        }
    }
    let sql = format!("SELECT {} FROM traces ORDER BY id", TRACE_COLUMNS.join(", "));
    let scan = Scan::new(conn, &sql).map_err(unreadable("traces"))?;
    read_events_from(scan, s, devices, long)
}

fn read_events_from<S: Source>(src: S, s: &mut Snapshot, devices: &HashMap<i64, i64>, long: &long_texts::Read) -> Result<()> {
    let stacks = s.interner.stacks.len();
    // Shared texts once per distinct text, as the reader keeps them.
    let mut texts: HashMap<String, Arc<str>> = HashMap::new();
    let mut shared = |t: Option<&str>| {
        t.map(|t| match texts.get(t) {
            Some(a) => a.clone(),
            None => texts.entry(t.to_string()).or_insert_with_key(|k| Arc::from(k.as_str())).clone(),
        })
    };
    let mut current: Option<(i64, usize)> = None;
    // Rows come device by device: the last `devices.id` and its ordinal, looked up once a run.
    let mut last_device: Option<(i64, i64)> = None;
    rows_of("traces", src, |r, id| {
        let device_id: i64 = get(r, 1)?;
        let device = match last_device {
            Some((last, d)) if last == device_id => d,
            _ => device_of(devices, device_id)?,
        };
        last_device = Some((device_id, device));
        if !(0..MAX_TRACE_DEVICE).contains(&device) {
            return Err(bad(format!("device {device}: trace events need an ordinal from 0 to {MAX_TRACE_DEVICE}")));
        }
        let slot = device as usize;
        if s.traces.len() <= slot {
            s.traces.resize_with(slot + 1, DeviceTrace::default);
        }
        let expected = match current {
            Some((d, n)) if d == device => n,
            _ if !s.traces[slot].events.is_empty() => return Err(bad(format!("device {device}'s events are not in one run of ids"))),
            _ => 0,
        };
        let index: i64 = get(r, 2)?;
        if index != expected as i64 {
            return Err(bad(format!("trace_index {index}: device {device}'s events run 0, 1, 2, … (expected {expected})")));
        }
        current = Some((device, expected + 1));
        let action_text = text_at(r, 3)?;
        let action = Action::parse(action_text);
        let mut e = Event::new(action, get::<i64>(r, 4)? as u64, get::<i64>(r, 5)? as u64);
        let stream = get::<i64>(r, 6)? as u64;
        e.set_time_us(get(r, 7)?);
        e.set_stack(id_in(get(r, 8)?, stacks, "stack_id")?);
        let device_free: Option<i64> = get(r, 9)?;
        let (compile_context, user_metadata, extra_json) = (opt_text_at(r, 10)?, opt_text_at(r, 11)?, opt_text_at(r, 12)?);
        let unknown_name = action == Action::Unknown && action_text != Action::Unknown.name();
        let trace = &mut s.traces[slot];
        // Most events have no extras: nothing to build for them.
        if unknown_name || device_free.is_some() || compile_context.is_some() || user_metadata.is_some() || extra_json.is_some() {
            let mut x = match extra_json {
                Some(j) => extra_of(j)?,
                None => EventExtra::default(),
            };
            if unknown_name {
                x.action_name.get_or_insert_with(|| action_text.to_string());
            }
            x.device_free = x.device_free.or(device_free.map(|v| v as u64));
            x.compile_context = shared(compile_context);
            x.user_metadata = shared(user_metadata);
            x.internal_metadata = shared(x.internal_metadata.as_deref());
            // A cell shown cut: its whole text, kept once in `long_texts`.
            for t in SharedText::ALL {
                if let Some(whole) = long.get("traces", id, t.column()) {
                    *t.of_mut(&mut x) = Some(whole.text().clone());
                }
            }
            if has_any(&x) {
                e.set_extra(trace.extras.len() as u32);
                trace.extras.push(x);
            }
        }
        trace.push(e, stream);
        Ok(())
    })?;
    for t in &mut s.traces {
        t.events.shrink_to_fit();
    }
    Ok(())
}

fn has_any(x: &EventExtra) -> bool {
    x.action_name.is_some()
        || x.compile_context.is_some()
        || x.user_metadata.is_some()
        || x.device_free.is_some()
        || super::cells::has_extra_json(x)
}

/// `traces.extra_json`: the event's extras as `EventExtra` serializes them.
fn extra_of(json: &str) -> Result<EventExtra> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(format!("extra_json is not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| bad("extra_json is not an object"))?;
    let text = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let pool_id = match obj.get("pool_id") {
        Some(p) => Some(serde_json::from_value::<(i64, i64)>(p.clone()).map_err(|e| bad(format!("extra_json pool_id: {e}")))?),
        None => None,
    };
    let other = match obj.get("other") {
        Some(o) => {
            serde_json::from_value::<Vec<(String, serde_json::Value)>>(o.clone()).map_err(|e| bad(format!("extra_json other: {e}")))?
        }
        None => Vec::new(),
    };
    Ok(EventExtra {
        action_name: text("action_name"),
        compile_context: None,
        user_metadata: None,
        forward_frames: text("forward_frames"),
        internal_metadata: text("internal_metadata").map(Arc::from),
        pool_id,
        category: text("category"),
        device_free: obj.get("device_free").and_then(|v| v.as_u64()),
        other,
    })
}

fn read_annotations(conn: &Connection, s: &mut Snapshot, long: &long_texts::Read) -> Result<()> {
    let sql = "SELECT id, device_index, time_us, name, stage FROM annotations ORDER BY id";
    rows(conn, "annotations", sql, |r, id| {
        let (name, whole_name) = text(long, "annotations", id, "name", get(r, 3)?);
        s.annotations.push(Annotation { device: get(r, 1)?, time_us: get(r, 2)?, name, stage: get(r, 4)?, whole_name });
        Ok(())
    })
}

fn read_warnings(conn: &Connection, s: &mut Snapshot) -> Result<()> {
    let sql = "SELECT id, device_index, event, code, message FROM warnings ORDER BY id";
    rows(conn, "warnings", sql, |r, _| {
        let code: String = get(r, 3)?;
        let event: Option<i64> = get(r, 2)?;
        s.warnings.push(Warning {
            code: WarningCode::from_name(&code).ok_or_else(|| bad(format!("code {code:?} is no warning code")))?,
            message: get(r, 4)?,
            device: get(r, 1)?,
            event: event.map(|e| usize::try_from(e).map_err(|_| bad(format!("event {e} is negative")))).transpose()?,
        });
        Ok(())
    })
}

/// What only the stored overview records: the pinned-host entry and the ring buffer's size
/// and wrap (no table has them). Read as plain JSON: the store does not depend on analyses.
fn from_overview(conn: &Connection, s: &mut Snapshot) -> Result<()> {
    let Some(text) = meta(conn, "overview_json")? else { return Ok(()) };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| damaged("metadata", 0, format!("overview_json is not JSON: {e}")))?;
    let devices = v.get("devices").and_then(|d| d.as_array()).map(Vec::as_slice).unwrap_or_default();
    s.host_device =
        devices.iter().find(|d| d.get("pinned_host") == Some(&serde_json::Value::Bool(true))).and_then(|d| d.get("device")?.as_i64());
    let window = |d: &serde_json::Value, k: &str| d.get("window").and_then(|w| w.get(k)).cloned();
    s.trace_max_entries = devices.iter().find_map(|d| window(d, "max_entries")?.as_u64());
    // The overview states a wrap per device: the file's own flag, or (without one) whether the
    // trace holds `max_entries` events. Keep the flag only where the second would differ.
    let events = |d: &serde_json::Value| d.get("events").and_then(|e| e.as_u64()).unwrap_or(0);
    let derived = |d: &serde_json::Value| s.trace_max_entries.map(|m| events(d) >= m && m > 0);
    let stated: Vec<(Option<bool>, Option<bool>)> =
        devices.iter().map(|d| (window(d, "overflowed").and_then(|o| o.as_bool()), derived(d))).collect();
    if stated.iter().any(|(o, d)| o != d) {
        s.trace_overflowed = stated.iter().find_map(|(o, _)| *o);
    }
    Ok(())
}
