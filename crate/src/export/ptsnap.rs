//! Export to pt-snap-cli's standalone SnapshotDB layout (import format 3), so `pt-snap overview /
//! query / report` and MindStudio Insight read snapscope's imports. That layout's conventions are
//! kept on purpose: integer action codes, -1 for "none", synthetic negative ids for what existed
//! before the trace window, per-device tables `trace_entry_<d>` and `block_<d>`.

use crate::error::Result;
use rusqlite::{params, Connection};

// The layout's SQL (crate/sql/export/): {index}, {dev} and {empty} are filled in per device.
const SCHEMA: &str = include_str!("../../sql/export/ptsnap_schema.sql");
const SHARED: &str = include_str!("../../sql/export/ptsnap_shared.sql");
const DEVICE: &str = include_str!("../../sql/export/ptsnap_device.sql");
const DEVICE_INDEXES: &str = include_str!("../../sql/export/ptsnap_device_indexes.sql");
const BEFORE_WINDOW: &str = include_str!("../../sql/export/ptsnap_before_window.sql");

/// `sql` with each `{name}` of `values` replaced by its integer.
fn fill(sql: &str, values: &[(&str, i64)]) -> String {
    values.iter().fold(sql.to_string(), |s, (k, v)| s.replace(&format!("{{{k}}}"), &v.to_string()))
}

/// Write `conn`'s SnapshotDB to `path` in pt-snap-cli's layout (atomically).
pub fn export(conn: &Connection, path: &std::path::Path, completed_at: &str) -> Result<()> {
    // Created exclusively, removed on failure and on a signal (`outfile`).
    let (tmp, file) = crate::outfile::TempOut::create(path)?;
    drop(file);
    let written = write(conn, tmp.path(), completed_at).map_err(|e| e.writing(path));
    let _ = conn.execute_batch("DETACH DATABASE out");
    written?;
    tmp.commit()
}

/// `export` of a SnapshotDB file, read through a writable in-memory connection (the file stays
/// read-only; unqualified table names resolve to the attached file).
pub fn export_from_file(db: &std::path::Path, path: &std::path::Path, completed_at: &str) -> Result<()> {
    let c = Connection::open_in_memory()?;
    c.execute("ATTACH DATABASE ?1 AS src", [format!("file:{}?mode=ro", db.display())])
        .or_else(|_| c.execute("ATTACH DATABASE ?1 AS src", [db.display().to_string()]))?;
    export(&c, path, completed_at)
}

fn write(conn: &Connection, tmp: &std::path::Path, completed_at: &str) -> Result<()> {
    conn.execute("ATTACH DATABASE ?1 AS out", [tmp.to_string_lossy()])?;
    conn.execute_batch("PRAGMA out.journal_mode=OFF; PRAGMA out.synchronous=OFF;")?;
    conn.execute_batch(SCHEMA)?;
    // The empty stack gets its own callstack row ('' with 0 frames), as pt-snap writes it.
    let empty: i64 = conn.query_row("SELECT COALESCE(MAX(id), -1) + 1 FROM call_stacks", [], |r| r.get(0))?;
    conn.execute_batch(&fill(SHARED, &[("empty", empty)]))?;
    let name: String = crate::store::metadata(conn, "source_name")?.unwrap_or_else(|| "snapshot".into());
    let size: i64 = crate::store::metadata(conn, "source_bytes")?.and_then(|s| s.parse().ok()).unwrap_or(0);
    let sha: String = crate::store::metadata(conn, "source_sha256")?.unwrap_or_default();
    conn.execute(
        "INSERT INTO out.pt_snap_metadata VALUES (1, 1, 3, ?1, ?2, ?3, NULL, 'snapscope', ?4, ?5)",
        params![sha, size, name, crate::VERSION, completed_at],
    )?;
    // Synthetic ids (segments and blocks that existed before the window) count down from -1
    // across devices, as pt-snap numbers them.
    let mut next_negative: i64 = -1;
    let devices: Vec<(i64, i64)> = conn
        .prepare("SELECT id, device_index FROM devices ORDER BY device_index")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    for (dev, index) in devices {
        let slots = [("index", index), ("dev", dev), ("empty", empty)];
        conn.execute_batch(&fill(DEVICE, &slots))?;
        let start: (i64, i64, i64) = conn.query_row(
            "SELECT COALESCE(start_allocated,0), COALESCE(start_active,0), COALESCE(start_reserved,0) FROM devices WHERE id = ?1",
            [dev],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let ranges: Vec<(i64, i64, i64, bool)> = conn
            .prepare("SELECT address, size, stream, is_expandable FROM start_ranges WHERE device_id = ?1 ORDER BY address")?
            .query_map([dev], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<std::result::Result<_, _>>()?;
        for (addr, sz, stream, expandable) in ranges {
            conn.execute(
                &format!("INSERT INTO out.trace_entry_{index} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
                params![next_negative, if expandable { 0 } else { 2 }, addr, sz, stream, start.0, start.1, start.2, empty],
            )?;
            next_negative -= 1;
        }
        let before: Vec<(i64, i64, i64, bool, Option<i64>)> = conn
            .prepare(BEFORE_WINDOW.trim())?
            .query_map([dev], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<std::result::Result<_, _>>()?;
        for (addr, sz, req, allocated, free) in before {
            conn.execute(
                &format!("INSERT INTO out.block_{index} VALUES (?1, ?2, ?3, ?4, ?5, -1, ?6)"),
                params![next_negative, addr, sz, req, if allocated { 1 } else { 0 }, free.unwrap_or(-1)],
            )?;
            next_negative -= 1;
        }
        conn.execute_batch(&fill(DEVICE_INDEXES, &[("index", index)]))?;
    }
    conn.execute_batch("CREATE UNIQUE INDEX out.callstack_frame_pos ON callstack_frame(callstackId, position);")?;
    conn.execute_batch("DETACH DATABASE out")?;
    Ok(())
}
