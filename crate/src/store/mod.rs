//! The SnapshotDB: the replayed snapshot as SQLite tables (schema in `schema.sql`, documented in
//! docs/schema.md). Loading runs in one transaction with prepared statements; indexes are built
//! after the rows are in.

use crate::error::{Error, Result};
use crate::model::{Frame, Pool};
use crate::replay::StackSource;
use crate::Loaded;
#[cfg(not(target_arch = "wasm32"))]
use rusqlite::OpenFlags;
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::sync::Arc;

pub mod vtab;

pub const SCHEMA_SQL: &str = include_str!("schema.sql");
pub const SCHEMA_VERSION: i64 = 1;

/// Indexes of the large tables, when they are rows (virtual tables narrow their own scans).
const LARGE_TABLE_INDEXES_SQL: &str = "
CREATE INDEX traces_by_event ON traces(device_id, trace_index);
CREATE INDEX traces_by_action ON traces(device_id, action);
CREATE INDEX lifetimes_by_alloc ON lifetimes(device_id, alloc_event);
CREATE INDEX lifetimes_by_free ON lifetimes(device_id, free_completed_event);
";
const INDEXES_SQL: &str = "
CREATE INDEX blocks_by_segment ON blocks(segment_id);
CREATE INDEX segments_by_device ON segments(device_id);
";

/// Is this an SQLite database file rather than a snapshot?
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// How the large tables (`traces`, `lifetimes`) are stored: as rows (files, exports), or as
/// virtual tables over the snapshot in memory (open sessions: no copy of millions of rows).
enum Storage<'l> {
    Rows,
    Virtual(&'l Arc<Loaded>),
}

/// A new in-memory SnapshotDB over `loaded`, its `traces` and `lifetimes` virtual tables.
pub fn to_memory(loaded: &Arc<Loaded>, meta: &[(&str, String)]) -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    fill(&mut conn, loaded, meta, Storage::Virtual(loaded))?;
    Ok(conn)
}

/// A new in-memory SnapshotDB holding every table as rows (what an exported .db contains).
pub fn to_memory_materialized(loaded: &Loaded, meta: &[(&str, String)]) -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    fill(&mut conn, loaded, meta, Storage::Rows)?;
    Ok(conn)
}

/// Write the SnapshotDB to `path` atomically: a temporary file beside it, renamed when complete.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_file(loaded: &Loaded, meta: &[(&str, String)], path: &std::path::Path) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut conn = Connection::open(&tmp)?;
        conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")?;
        fill(&mut conn, loaded, meta, Storage::Rows)?;
        conn.close().map_err(|(_, e)| Error::from(e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(&path.display().to_string(), e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Open an exported SnapshotDB read-only and check that it is one.
#[cfg(not(target_arch = "wasm32"))]
pub fn open_file(path: &std::path::Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| Error::io(&path.display().to_string(), e))?;
    check_schema(&conn)?;
    Ok(conn)
}

pub fn check_schema(conn: &Connection) -> Result<()> {
    let v: Option<String> = conn.query_row("SELECT value FROM metadata WHERE key = 'schema_version'", [], |r| r.get(0)).map_err(|_| {
        Error::new(
            "DATABASE_SCHEMA_INVALID",
            "the database is not a snapscope SnapshotDB (no metadata table)",
            "create one with `snapscope import SNAPSHOT -o FILE.db`",
        )
    })?;
    if v.as_deref() != Some(&SCHEMA_VERSION.to_string()) {
        return Err(Error::new(
            "DATABASE_SCHEMA_INVALID",
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

pub fn metadata(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT value FROM metadata WHERE key = ?1", [key], |r| r.get(0)).ok())
}

fn pool_name(p: Pool) -> &'static str {
    match p {
        Pool::Small => "small",
        Pool::Large => "large",
    }
}

fn stack_source_name(s: StackSource) -> &'static str {
    match s {
        StackSource::Alloc => "alloc",
        StackSource::DumpBlock => "dump_block",
        StackSource::Free => "free",
        StackSource::None => "none",
    }
}

fn frame_json(f: &Frame) -> serde_json::Value {
    serde_json::json!({"filename": f.filename, "line": f.line, "name": f.name})
}

/// The `extra_json` column: rare fields without a column of their own, as JSON.
/// Whether an event's extras have anything for `extra_json`.
fn has_extra_json(x: Option<&crate::model::EventExtra>) -> bool {
    x.is_some_and(|x| {
        x.forward_frames.is_some() || x.internal_metadata.is_some() || x.pool_id.is_some() || x.category.is_some() || !x.other.is_empty()
    })
}

fn extra_json(x: Option<&crate::model::EventExtra>) -> Option<String> {
    x.filter(|&x| has_extra_json(Some(x))).map(|x| serde_json::to_string(x).unwrap_or_default())
}

fn origin_name(x: &crate::replay::Lifetime) -> &'static str {
    if x.before_window() {
        "before_window"
    } else {
        "in_window"
    }
}

fn fill(conn: &mut Connection, l: &Loaded, meta: &[(&str, String)], storage: Storage) -> Result<()> {
    let s = &l.snapshot;
    let virtual_tables = matches!(storage, Storage::Virtual(_));
    if let Storage::Virtual(shared) = storage {
        vtab::register(conn, shared)?;
    }
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA_SQL)?;
    if virtual_tables {
        tx.execute_batch(
            "DROP TABLE traces; CREATE VIRTUAL TABLE traces USING snapscope_traces;
             DROP TABLE lifetimes; CREATE VIRTUAL TABLE lifetimes USING snapscope_lifetimes;",
        )?;
    }
    {
        let mut m = tx.prepare("INSERT OR REPLACE INTO metadata (key, value) VALUES (?1, ?2)")?;
        m.execute(params!["schema_version", SCHEMA_VERSION.to_string()])?;
        m.execute(params!["engine_version", crate::VERSION])?;
        m.execute(params!["format", s.format.map(|f| format!("{f:?}").to_lowercase())])?;
        m.execute(params!["encoding", s.encoding])?;
        m.execute(params!["source_bytes", s.source_bytes.to_string()])?;
        if let Some(a) = &s.allocator_settings {
            m.execute(params!["allocator_settings", a.to_string()])?;
        }
        let ov = crate::analysis::overview::overview(l);
        m.execute(params!["overview_json", serde_json::to_string(&ov).unwrap_or_default()])?;
        for (k, v) in meta {
            m.execute(params![k, v])?;
        }

        let mut f = tx.prepare("INSERT INTO frames (id, filename, line, name) VALUES (?1, ?2, ?3, ?4)")?;
        for (i, fr) in s.interner.frames.iter().enumerate() {
            f.execute(params![i as i64, fr.filename, fr.line, fr.name])?;
        }
        let mut cs =
            tx.prepare("INSERT INTO call_stacks (id, depth, top_frame_id, frames_json, text, site) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        let mut sf = tx.prepare("INSERT INTO stack_frames (stack_id, position, frame_id) VALUES (?1, ?2, ?3)")?;
        for (i, st) in s.interner.stacks.iter().enumerate() {
            let json = serde_json::Value::Array(st.iter().map(|&fid| frame_json(&s.interner.frames[fid as usize])).collect());
            let text: Vec<String> = st
                .iter()
                .rev()
                .map(|&fid| {
                    let f = &s.interner.frames[fid as usize];
                    format!("{}:{} {}", f.filename, f.line, f.name)
                })
                .collect();
            let site = s.interner.site(st).map(|f| f.label()).unwrap_or_default();
            cs.execute(params![i as i64, st.len() as i64, st.first().map(|&x| x as i64), json.to_string(), text.join("\n"), site])?;
            for (pos, &fid) in st.iter().enumerate() {
                sf.execute(params![i as i64, pos as i64, fid as i64])?;
            }
        }

        let mut dev = tx.prepare(
            "INSERT INTO devices (id, device_index, events, allocator_rules, consistent, ambiguous_bytes, start_allocated, start_active, start_reserved, start_requested,
               peak_allocated, peak_allocated_event, peak_active, peak_active_event, peak_reserved, peak_reserved_event, peak_requested, peak_requested_event)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?;
        let mut seg = tx.prepare(
            "INSERT INTO segments (id, device_id, address, total_size, allocated_size, active_size, requested_size, stream, segment_type, pool_id_0, pool_id_1, is_expandable, stack_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?;
        let mut blk = tx.prepare(
            "INSERT INTO blocks (segment_id, address, size, requested_size, state, stack_id, lifetime_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        // Virtual tables take no rows (and refuse to prepare an INSERT).
        let mut tr = if virtual_tables {
            None
        } else {
            Some(tx.prepare(
            "INSERT INTO traces (device_id, trace_index, action, addr, size, stream, time_us, stack_id, lifetime_id, allocated, active, reserved, requested, device_free, compile_context, user_metadata, extra_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        )?)
        };
        let mut lt = if virtual_tables {
            None
        } else {
            Some(tx.prepare(
                "INSERT INTO lifetimes (id, device_id, address, size, requested_size, stream, alloc_event, free_requested_event, free_completed_event, origin, state_at_dump, stack_id, stack_source, size_exact, size_uncertainty, orphan)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?)
        };
        let mut sl = tx.prepare(
            "INSERT INTO segment_lives (device_id, address, size, stream, segment_type, is_expandable, alloc_event, free_event, at_dump) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        let mut iss = tx.prepare("INSERT INTO issues (device_id, event, code, message) VALUES (?1, ?2, ?3, ?4)")?;
        let mut sr = tx.prepare(
            "INSERT INTO start_ranges (device_id, address, size, stream, segment_type, is_expandable) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;

        let mut seg_id: i64 = 0;
        let mut lifetime_base: i64 = 0;
        for (dev_id, d) in l.devices.iter().enumerate() {
            let dev_id = dev_id as i64;
            let st = d.series.start;
            // Each counter's peak over the events, as MAX() over the rows finds it.
            let peaks = [&d.series.allocated, &d.series.active, &d.series.reserved, &d.series.requested]
                .map(|v| crate::replay::first_max(v.iter()).map_or((None, None), |(b, i)| (Some(b), Some(i as i64))));
            dev.execute(params![
                dev_id,
                d.device,
                d.events as i64,
                d.rules.source,
                d.consistency.ok,
                d.consistency.ambiguous_bytes as i64,
                st.allocated,
                st.active,
                st.reserved,
                st.requested,
                peaks[0].0,
                peaks[0].1,
                peaks[1].0,
                peaks[1].1,
                peaks[2].0,
                peaks[2].1,
                peaks[3].0,
                peaks[3].1
            ])?;
            let live_lifetime: HashMap<u64, i64> = d
                .lifetimes
                .iter()
                .enumerate()
                .filter(|(_, x)| x.state_at_dump.is_some() && !x.orphan)
                .map(|(i, x)| (x.addr, lifetime_base + i as i64))
                .collect();
            for sg in s.segments.iter().filter(|x| x.device == d.device) {
                seg.execute(params![
                    seg_id,
                    dev_id,
                    sg.address as i64,
                    sg.total_size as i64,
                    sg.allocated_size as i64,
                    sg.active_size as i64,
                    sg.requested_size as i64,
                    sg.stream as i64,
                    pool_name(sg.pool),
                    sg.pool_id.map(|p| p.0),
                    sg.pool_id.map(|p| p.1),
                    sg.is_expandable,
                    sg.stack.map(|x| x as i64)
                ])?;
                for b in &sg.blocks {
                    let life = (b.state != crate::model::BlockState::Inactive).then(|| live_lifetime.get(&b.address).copied()).flatten();
                    blk.execute(params![
                        seg_id,
                        b.address as i64,
                        b.size as i64,
                        b.requested_size as i64,
                        b.state.name(),
                        b.stack.map(|x| x as i64),
                        life
                    ])?;
                }
                seg_id += 1;
            }
            if let (Some(trace), Some(tr)) = (s.trace(d.device), tr.as_mut()) {
                for (i, e) in trace.events.iter().enumerate() {
                    let c = d.series.at(i);
                    let x = trace.extra(e);
                    let action = x.and_then(|x| x.action_name.as_deref()).unwrap_or(e.action().name());
                    let l = d.event_lifetime[i];
                    let extra_json = extra_json(x);
                    tr.execute(params![
                        dev_id,
                        i as i64,
                        action,
                        e.addr as i64,
                        e.size as i64,
                        e.stream as i64,
                        e.time_us(),
                        e.stack().map(|x| x as i64),
                        (l != crate::replay::NONE).then(|| lifetime_base + l as i64),
                        c.allocated,
                        c.active,
                        c.reserved,
                        c.requested,
                        x.and_then(|x| x.device_free).map(|v| v as i64),
                        x.and_then(|x| x.compile_context.as_deref()),
                        x.and_then(|x| x.user_metadata.as_deref()),
                        extra_json
                    ])?;
                }
            }
            if let Some(lt) = lt.as_mut() {
                for (i, x) in d.lifetimes.iter().enumerate() {
                    lt.execute(params![
                        lifetime_base + i as i64,
                        dev_id,
                        x.addr as i64,
                        x.size as i64,
                        x.requested as i64,
                        x.stream as i64,
                        x.alloc_event(),
                        x.free_requested_event(),
                        x.free_completed_event(),
                        origin_name(x),
                        x.state_at_dump.map(|s| s.name()),
                        x.stack().map(|s| s as i64),
                        stack_source_name(x.stack_source),
                        x.size_exact,
                        x.size_uncertainty as i64,
                        x.orphan
                    ])?;
                }
            }
            lifetime_base += d.lifetimes.len() as i64;
            for x in &d.segments {
                sl.execute(params![
                    dev_id,
                    x.addr as i64,
                    x.size as i64,
                    x.stream as i64,
                    pool_name(x.pool),
                    x.expandable,
                    x.alloc_event,
                    x.free_event,
                    x.at_dump
                ])?;
            }
            for r in d.start_ranges.iter() {
                sr.execute(params![dev_id, r.start as i64, r.size as i64, r.stream as i64, pool_name(r.pool), r.expandable])?;
            }
            for x in &d.consistency.issues {
                iss.execute(params![dev_id, x.event, x.code, x.message])?;
            }
        }
        let mut an = tx.prepare("INSERT INTO annotations (device_index, time_us, name, stage) VALUES (?1, ?2, ?3, ?4)")?;
        for a in &s.annotations {
            an.execute(params![a.device, a.time_us, a.name, a.stage])?;
        }
        let mut w = tx.prepare("INSERT INTO warnings (device_index, event, code, message) VALUES (?1, ?2, ?3, ?4)")?;
        for x in &s.warnings {
            w.execute(params![x.device, x.event.map(|e| e as i64), x.code, x.message])?;
        }
    }
    tx.execute_batch(INDEXES_SQL)?;
    if !virtual_tables {
        tx.execute_batch(LARGE_TABLE_INDEXES_SQL)?;
    }
    tx.commit()?;
    Ok(())
}
