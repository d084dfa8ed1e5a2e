//! The SnapshotDB: the replayed snapshot as SQLite tables (declared in `tables.rs`, documented in
//! docs/schema.md). Loading runs in one transaction with prepared statements; indexes are built
//! after the rows are in.

use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::Loaded;
use rusqlite::Connection;
#[cfg(not(target_arch = "wasm32"))]
use rusqlite::OpenFlags;
use std::sync::Arc;

pub mod build;
pub mod cells;
pub mod long_texts;
#[cfg(not(target_arch = "wasm32"))]
mod pages;
pub mod read_back;
pub mod simulations;
mod stack_texts;
pub mod tables;
pub mod vtab;

pub const SCHEMA_VERSION: i64 = 2;

/// Indexes of the large tables, when they are rows (virtual tables narrow their own scans).
const LARGE_TABLE_INDEXES_SQL: &str = include_str!("../../sql/store/large_table_indexes.sql");
const INDEXES_SQL: &str = include_str!("../../sql/store/indexes.sql");
/// An open session's `traces` and `lifetimes`: the replay's virtual tables in place of the rows.
const VIRTUAL_LARGE_TABLES_SQL: &str = include_str!("../../sql/store/virtual_large_tables.sql");
/// A file's `traces` and `lifetimes`: copied as rows from the replay's virtual tables.
const COPY_LARGE_TABLES_SQL: &str = include_str!("../../sql/store/copy_large_tables.sql");
/// The first index of the large tables, created before their rows go in.
const TRACES_INDEX_SQL: &str = include_str!("../../sql/store/traces_index.sql");

/// The page size of a SnapshotDB holding every table as rows (a .db file, an export).
const FILE_PAGE_SIZE_SQL: &str = "PRAGMA page_size = 16384";

/// Rows of `stack_frames` per INSERT statement while loading.
const STACK_FRAME_BATCH: usize = 256;

/// Is this an SQLite database file rather than a snapshot?
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// How the large tables (`traces`, `lifetimes`) are stored: as rows (files, exports), or as
/// virtual tables over the snapshot in memory (open sessions: no copy of millions of rows).
#[derive(Clone, Copy, PartialEq)]
enum Storage {
    /// Every table as rows: the large tables copied from the replay's virtual tables in one
    /// `INSERT … SELECT` each (no row bound through the API).
    Rows,
    /// Every table as rows in a file, but the large tables and their indexes left empty: their
    /// pages are written once SQLite has closed the file (`pages::write`).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Pages,
    Virtual,
}

/// What the loader records besides the replay: metadata rows (source name, hash, ...) and the
/// overview JSON the engine computed (stored so a .db answers `overview` without the replay).
pub struct Records<'m> {
    pub meta: &'m [(&'m str, String)],
    pub overview_json: &'m str,
}

impl Records<'static> {
    /// No metadata and an empty overview (tests and checks below the engine).
    pub const NONE: Records<'static> = Records { meta: &[], overview_json: "{}" };
}

/// A new in-memory SnapshotDB over `loaded`, its `traces` and `lifetimes` virtual tables.
pub fn to_memory(loaded: &Arc<Loaded>, records: &Records) -> Result<Connection> {
    fill(begin_memory(loaded, records)?)
}

/// [`to_memory`] in slices: advance the build until done, then finish it.
pub fn begin_memory(loaded: &Arc<Loaded>, records: &Records) -> Result<build::StoreBuild> {
    let conn = Connection::open_in_memory()?;
    // Written once, in one transaction, never rolled back: no journal to keep.
    conn.execute_batch("PRAGMA journal_mode=OFF;")?;
    build::StoreBuild::new(conn, records, loaded, Storage::Virtual)
}

/// Every slice of `b` in one loop (the native builds: the same steps as the page's slices).
fn fill(mut b: build::StoreBuild) -> Result<Connection> {
    while !b.advance(f64::INFINITY)? {}
    b.finish()
}

/// A new in-memory SnapshotDB holding every table as rows (what an exported .db contains).
pub fn to_memory_materialized(loaded: &Arc<Loaded>, records: &Records) -> Result<Connection> {
    fill(build::StoreBuild::new(Connection::open_in_memory()?, records, loaded, Storage::Rows)?)
}

/// Write the SnapshotDB to `path` atomically: a temporary file beside it, renamed when complete.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_file(loaded: &Arc<Loaded>, records: &Records, path: &std::path::Path) -> Result<()> {
    // Created exclusively (SQLite takes the empty file as a new database), removed on failure
    // and on a signal, renamed over `path` with its mode kept.
    let (tmp, file) = crate::outfile::TempOut::create(path)?;
    drop(file);
    // Opened without SQLITE_OPEN_CREATE: if a signal on another thread has just removed the
    // temporary file, the open fails instead of creating it again behind the handler's back.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(tmp.path(), flags).map_err(|e| Error::write(&path.display().to_string(), e))?;
    conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")?;
    let conn = build::StoreBuild::new(conn, records, loaded, Storage::Pages).and_then(fill).map_err(|e| e.writing(path))?;
    let plan = pages::Plan::read(&conn)?;
    conn.close().map_err(|(_, e)| Error::write(&path.display().to_string(), e))?;
    pages::write(tmp.path(), loaded, &plan).map_err(|e| e.writing(path))?;
    tmp.commit()
}

/// Open an exported SnapshotDB read-only and check that it is one.
#[cfg(not(target_arch = "wasm32"))]
pub fn open_file(path: &std::path::Path) -> Result<Connection> {
    let mut conn = open_read_only(path)?;
    // An input database is data, never code: no view, trigger or virtual table (a `metadata` view
    // over an endless recursive query hung every command, issue 29.7), no function the schema
    // names unless SQLite calls it harmless; and every statement over it, these checks first,
    // runs under the db_statement_ms budget.
    guard_statements(&mut conn)?;
    let checked = conn
        .execute_batch("PRAGMA trusted_schema = OFF")
        .map_err(Error::from)
        .and_then(|_| refuse_code(&conn))
        .and_then(|_| check_schema(&conn));
    checked.map_err(|e| match e.code {
        ErrorCode::QueryFailed => Error::new(
            ErrorCode::DatabaseSchemaInvalid,
            format!("{}: {}", path.display(), e.message),
            "open a SnapshotDB written by `snapscope import`",
        ),
        _ => e,
    })?;
    Ok(conn)
}

/// Open an input database read-only without writing beside it: a WAL-mode file opened as usual
/// creates `-shm` and `-wal` files next to it (issue 29.17), so it is opened `immutable`; one
/// with a `-wal` file beside it (changes not yet in the file) is refused rather than misread.
#[cfg(not(target_arch = "wasm32"))]
fn open_read_only(path: &std::path::Path) -> Result<Connection> {
    let shown = path.display().to_string();
    let mut head = [0u8; 20];
    let wal_mode = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|_| head.starts_with(b"SQLite format 3\0") && (head[18] == 2 || head[19] == 2));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if !wal_mode {
        return Connection::open_with_flags(path, flags).map_err(|e| Error::io(&shown, e));
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Err(Error::new(
            ErrorCode::DatabaseSchemaInvalid,
            format!("{shown} is in WAL mode with changes still in its -wal file"),
            "checkpoint it first (sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)'), or re-import the snapshot",
        ));
    }
    let abs = std::fs::canonicalize(path).map_err(|e| Error::io(&shown, e))?;
    let mut uri = String::from("file:");
    for b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(*b as char),
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    Connection::open_with_flags(&uri, flags | OpenFlags::SQLITE_OPEN_URI).map_err(|e| Error::io(&shown, e))
}

/// Put every statement of `conn` under the db_statement_ms budget: each statement's start (SQLite's
/// statement trace) sets a deadline the progress handler checks. `query::sql::run` installs its own
/// limit for the user's SQL and calls this again when it is done.
#[cfg(not(target_arch = "wasm32"))]
pub fn guard_statements(conn: &mut Connection) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let limit = crate::budget::DB_STATEMENT_MS.limit() as f64;
    let deadline = std::sync::Arc::new(AtomicU64::new((crate::clock::now_ms() + limit) as u64));
    let armed = deadline.clone();
    conn.trace_v2(
        rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT,
        Some(move |_: rusqlite::trace::TraceEvent<'_>| armed.store((crate::clock::now_ms() + limit) as u64, Ordering::Relaxed)),
    )
    .map_err(Error::sql)?;
    conn.progress_handler(10_000, Some(move || crate::clock::now_ms() > deadline.load(Ordering::Relaxed) as f64)).map_err(Error::sql)
}

/// Refuse a database that would run code of its own when read: views, triggers, virtual tables.
#[cfg(not(target_arch = "wasm32"))]
fn refuse_code(conn: &Connection) -> Result<()> {
    let found: Vec<(String, String)> = conn
        .prepare("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL%') LIMIT 5")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    // Names SQLite hands to callbacks as text (the authorizer's table and column names) must be
    // UTF-8: rusqlite panics on any other (found by fuzzing the snapshot_db target).
    let mut stmt = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        for i in 0..4 {
            let bytes = match r.get_ref(i)? {
                rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => t,
                _ => continue,
            };
            if std::str::from_utf8(bytes).is_err() {
                return Err(Error::new(
                    ErrorCode::DatabaseSchemaInvalid,
                    "the database's schema holds names that are not UTF-8 text; refused unread",
                    "open a SnapshotDB written by `snapscope import`, or the snapshot itself",
                ));
            }
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = found.iter().map(|(t, n)| format!("{t} {n:?}")).collect();
    Err(Error::new(
        ErrorCode::DatabaseSchemaInvalid,
        format!("the database holds {} (a SnapshotDB has only tables and indexes); refused unread", names.join(", ")),
        "open a SnapshotDB written by `snapscope import`, or the snapshot itself",
    ))
}

pub fn check_schema(conn: &Connection) -> Result<()> {
    let v: Option<String> = conn.query_row("SELECT value FROM metadata WHERE key = 'schema_version'", [], |r| r.get(0)).map_err(|_| {
        Error::new(
            ErrorCode::DatabaseSchemaInvalid,
            "the database is not a snapscope SnapshotDB (no metadata table)",
            "create one with `snapscope import SNAPSHOT -o FILE.db`",
        )
    })?;
    if v.as_deref() != Some(&SCHEMA_VERSION.to_string()) {
        return Err(Error::new(
            ErrorCode::DatabaseSchemaInvalid,
            format!("SnapshotDB schema_version {} is not the supported {SCHEMA_VERSION}", v.unwrap_or_default()),
            "re-import the snapshot with this version of snapscope",
        ));
    }
    Ok(())
}

/// Every metadata row (an export carries them over).
pub fn all_metadata(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut st = conn.prepare("SELECT key, value FROM metadata WHERE value IS NOT NULL")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The metadata rows (but the overview and allocator settings) as one JSON object, with the
/// number of devices and events.
pub fn metadata_summary(conn: &Connection) -> Result<serde_json::Value> {
    let mut m = serde_json::Map::new();
    let mut stmt = conn.prepare("SELECT key, value FROM metadata WHERE key NOT IN ('overview_json', 'allocator_settings') ORDER BY key")?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))? {
        let (k, v) = row?;
        m.insert(k, v.map(serde_json::Value::String).unwrap_or(serde_json::Value::Null));
    }
    let (devices, events): (i64, i64) =
        conn.query_row("SELECT COUNT(*), COALESCE(SUM(events), 0) FROM devices", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    m.insert("devices".into(), devices.into());
    m.insert("events".into(), events.into());
    Ok(serde_json::Value::Object(m))
}

pub fn metadata(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT value FROM metadata WHERE key = ?1", [key], |r| r.get(0)).ok())
}

/// A name or file name as a stack's text and JSON repeat it (the `frames` table keeps each
/// whole, once): a snapshot sharing one huge name across every frame must not multiply it.
fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    crate::frames::cut(s, crate::frames::ANSWER_NAME_CHARS)
}
