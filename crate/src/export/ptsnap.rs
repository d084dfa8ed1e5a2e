//! Export to pt-snap-cli's standalone SnapshotDB layout (import format 3), so `pt-snap overview /
//! query / report` and MindStudio Insight read snapscope's imports. That layout's conventions are
//! kept on purpose: integer action codes, -1 for "none", synthetic negative ids for what existed
//! before the trace window, per-device tables `trace_entry_<d>` and `block_<d>`.

use crate::error::Result;
use rusqlite::{params, Connection};

const SCHEMA: &str = "
CREATE TABLE out.callstack (id INTEGER PRIMARY KEY, callstack TEXT);
CREATE TABLE out.frame (id INTEGER PRIMARY KEY, filename TEXT NOT NULL, line INTEGER NOT NULL, name TEXT NOT NULL);
CREATE TABLE out.callstack_frame (callstackId INTEGER NOT NULL, position INTEGER NOT NULL, frameId INTEGER NOT NULL);
CREATE TABLE out.callstack_frame_manifest (callstackId INTEGER PRIMARY KEY, frameCount INTEGER NOT NULL);
CREATE TABLE out.dictionary (`table` TEXT, `column` TEXT, `key` TEXT, `value` TEXT);
CREATE TABLE out.pt_snap_metadata (id INTEGER PRIMARY KEY CHECK (id = 1), metadata_schema_version INTEGER NOT NULL,
  import_format_version INTEGER NOT NULL, source_sha256 TEXT NOT NULL, source_size INTEGER NOT NULL,
  source_name TEXT NOT NULL, requested_device INTEGER, importer_name TEXT NOT NULL,
  importer_version TEXT NOT NULL, completed_at TEXT NOT NULL);
";

/// pt-snap's action codes; other actions are stored as their text.
const ACTION_CODE: &str = "CASE t.action WHEN 'segment_map' THEN 0 WHEN 'segment_unmap' THEN 1 WHEN 'segment_alloc' THEN 2 WHEN 'segment_free' THEN 3
  WHEN 'alloc' THEN 4 WHEN 'free_requested' THEN 5 WHEN 'free_completed' THEN 6 WHEN 'workspace_snapshot' THEN 7 WHEN 'oom' THEN 8 ELSE t.action END";

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
    conn.execute_batch(&format!(
        "BEGIN;
         INSERT INTO out.callstack SELECT id, text FROM call_stacks;
         INSERT INTO out.callstack VALUES ({empty}, '');
         INSERT INTO out.frame SELECT id, filename, line, name FROM frames;
         INSERT INTO out.callstack_frame SELECT stack_id, position, frame_id FROM stack_frames;
         INSERT INTO out.callstack_frame_manifest SELECT id, depth FROM call_stacks;
         INSERT INTO out.callstack_frame_manifest VALUES ({empty}, 0);
         INSERT INTO out.dictionary VALUES ('trace_entry','action','0','segment_map'), ('trace_entry','action','1','segment_unmap'),
           ('trace_entry','action','2','segment_alloc'), ('trace_entry','action','3','segment_free'), ('trace_entry','action','4','alloc'),
           ('trace_entry','action','5','free_requested'), ('trace_entry','action','6','free_completed'), ('trace_entry','action','7','workspace_snapshot'),
           ('trace_entry','action','8','oom'), ('block','state','1','active_allocated'), ('block','state','0','active_pending_free'), ('block','state','-1','inactive');
         COMMIT;"
    ))?;
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
        conn.execute_batch(&format!(
            "CREATE TABLE out.trace_entry_{index} (id INTEGER PRIMARY KEY, action INTEGER, address INTEGER, size INTEGER, stream INTEGER,
               allocated INTEGER, active INTEGER, reserved INTEGER, callstackId INTEGER);
             CREATE TABLE out.block_{index} (id INTEGER PRIMARY KEY, address INTEGER, size INTEGER, requestedSize INTEGER,
               state INTEGER DEFAULT 99, allocEventId INTEGER, freeEventId INTEGER);
             BEGIN;
             INSERT INTO out.trace_entry_{index} SELECT t.trace_index, {ACTION_CODE}, t.addr, t.size, t.stream, t.allocated, t.active, t.reserved,
               COALESCE(t.stack_id, {empty}) FROM traces t WHERE t.device_id = {dev};
             INSERT INTO out.block_{index} SELECT l.alloc_event, l.address, l.size, l.requested_size, 1, l.alloc_event, COALESCE(l.free_completed_event, -1)
               FROM lifetimes l WHERE l.device_id = {dev} AND l.orphan = 0 AND l.alloc_event IS NOT NULL;
             COMMIT;"
        ))?;
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
            .prepare(
                "SELECT address, size, requested_size, free_requested_event IS NOT NULL OR (free_completed_event IS NULL AND state_at_dump = 'active_allocated'),
                        free_completed_event FROM lifetimes WHERE device_id = ?1 AND orphan = 0 AND alloc_event IS NULL ORDER BY address",
            )?
            .query_map([dev], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<std::result::Result<_, _>>()?;
        for (addr, sz, req, allocated, free) in before {
            conn.execute(
                &format!("INSERT INTO out.block_{index} VALUES (?1, ?2, ?3, ?4, ?5, -1, ?6)"),
                params![next_negative, addr, sz, req, if allocated { 1 } else { 0 }, free.unwrap_or(-1)],
            )?;
            next_negative -= 1;
        }
        conn.execute_batch(&format!(
            "CREATE INDEX out.trace_entry_{index}_allocated ON trace_entry_{index}(allocated);
             CREATE INDEX out.trace_entry_{index}_active ON trace_entry_{index}(active);
             CREATE INDEX out.trace_entry_{index}_reserved ON trace_entry_{index}(reserved);
             CREATE INDEX out.block_{index}_alloc ON block_{index}(allocEventId);
             CREATE INDEX out.block_{index}_free ON block_{index}(freeEventId);
             CREATE INDEX out.block_{index}_size ON block_{index}(size);"
        ))?;
    }
    conn.execute_batch("CREATE UNIQUE INDEX out.callstack_frame_pos ON callstack_frame(callstackId, position);")?;
    conn.execute_batch("DETACH DATABASE out")?;
    Ok(())
}
