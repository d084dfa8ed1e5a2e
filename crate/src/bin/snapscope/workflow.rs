//! Import cache, project focus and metadata: the conveniences of pt-snap-cli's workflow.

use crate::output::json;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use snapscope::{store, Error, Loaded, Result};
use std::path::{Path, PathBuf};

pub const FOCUS_FILE: &str = ".snapscope/focus.json";

/// Seconds since the epoch as an ISO 8601 UTC timestamp (no clock crate needed for this).
pub fn now_iso() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn mtime_ns(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Import with a cache: an existing DB made by this engine version from the same file (same
/// size and mtime, or failing that the same SHA-256) for the same device selection is reused.
pub fn import(snapshot: &Path, out: &Path, device: Option<i64>, force: bool, no_focus: bool, as_json: bool) -> Result<()> {
    let size = std::fs::metadata(snapshot).map_err(|e| Error::io(&snapshot.display().to_string(), e))?.len();
    let selection = device.map(|d| d.to_string()).unwrap_or_else(|| "all".into());
    let mtime = mtime_ns(snapshot);
    let mut reason = if force { "forced" } else { "database_missing" };
    let mut reused = false;
    if !force && out.exists() {
        reason = "metadata_mismatch";
        if let Ok(conn) = store::open_file(out) {
            let m = |k: &str| store::metadata(&conn, k).ok().flatten().unwrap_or_default();
            let same_build =
                m("engine_version") == snapscope::VERSION && m("device_selection") == selection && m("source_bytes") == size.to_string();
            // Same size and mtime: unchanged without reading it; otherwise compare the hash.
            reused = same_build
                && (m("source_mtime_ns") == mtime.to_string() || m("source_sha256") == sha256_hex(&crate::input::read_file(snapshot)?));
        }
    }
    if !reused {
        let bytes = crate::input::read_file(snapshot)?;
        if store::is_sqlite(&bytes) {
            return Err(Error::new(
                "SNAPSHOT_INVALID",
                format!("{} is already a SnapshotDB", snapshot.display()),
                "import the snapshot it came from",
            ));
        }
        let mut loaded = Loaded::from_bytes(&bytes)?;
        if let Some(d) = device {
            if loaded.device(d).is_none() {
                return Err(snapscope::session::no_device(d));
            }
            loaded.devices.retain(|x| x.device == d);
        }
        let mut meta = crate::input::source_meta(snapshot);
        meta.extend([
            ("source_sha256", sha256_hex(&bytes)),
            ("source_mtime_ns", mtime.to_string()),
            ("device_selection", selection.clone()),
            ("imported_at", now_iso()),
        ]);
        store::write_file(&loaded, &meta, out)?;
    }
    let focus = if no_focus { None } else { Some(write_focus(out, device)?) };
    let conn = store::open_file(out)?;
    let metadata = metadata_object(&conn)?;
    if as_json {
        json(
            &json!({"ok": true, "schema_version": 1, "db_path": out, "reused": reused, "cache_miss_reason": if reused { Value::Null } else { reason.into() },
            "metadata": metadata, "focus_state": if focus.is_some() { "updated" } else { "unchanged" }}),
        );
    } else if reused {
        println!("{} is up to date (reused; --force rebuilds)", out.display());
    } else {
        println!("wrote {} ({} device(s), {} events)", out.display(), metadata["devices"], metadata["events"]);
    }
    Ok(())
}

pub fn metadata_object(conn: &rusqlite::Connection) -> Result<Value> {
    let mut m = serde_json::Map::new();
    let mut stmt = conn.prepare("SELECT key, value FROM metadata WHERE key NOT IN ('overview_json', 'allocator_settings') ORDER BY key")?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))? {
        let (k, v) = row?;
        m.insert(k, v.map(Value::String).unwrap_or(Value::Null));
    }
    let (devices, events): (i64, i64) =
        conn.query_row("SELECT COUNT(*), COALESCE(SUM(events), 0) FROM devices", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    m.insert("devices".into(), devices.into());
    m.insert("events".into(), events.into());
    Ok(Value::Object(m))
}

pub fn write_focus(db: &Path, device: Option<i64>) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(db).map_err(|e| Error::io(&db.display().to_string(), e))?;
    let path = PathBuf::from(FOCUS_FILE);
    std::fs::create_dir_all(".snapscope").map_err(|e| Error::io(".snapscope", e))?;
    let body = serde_json::to_vec_pretty(&json!({"db_path": abs, "device_id": device})).expect("json");
    crate::input::write_atomic(&path, &body)?;
    Ok(path)
}

/// The focused database and device of this project folder, if any.
pub fn read_focus() -> Result<Option<(PathBuf, Option<i64>)>> {
    let Ok(text) = std::fs::read_to_string(FOCUS_FILE) else { return Ok(None) };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::new("FOCUS_FILE_INVALID", format!("{FOCUS_FILE}: {e}"), "run `snapscope focus DB` again"))?;
    let db = v["db_path"]
        .as_str()
        .ok_or_else(|| Error::new("FOCUS_FILE_INVALID", format!("{FOCUS_FILE} has no db_path"), "run `snapscope focus DB` again"))?;
    Ok(Some((PathBuf::from(db), v["device_id"].as_i64())))
}

/// The input a command works on: the argument, or the project focus. Returns (path, device, from_focus).
pub fn resolve(input: Option<PathBuf>, device: Option<i64>) -> Result<(PathBuf, Option<i64>, bool)> {
    match input {
        Some(p) => Ok((p, device, false)),
        None => match read_focus()? {
            Some((db, d)) => Ok((db, device.or(d), true)),
            None => Err(Error::new(
                "FOCUS_NOT_CONFIGURED",
                "no SNAPSHOT or DB given and this folder has no focus",
                "pass a file, or `snapscope import SNAPSHOT` / `snapscope focus DB` first",
            )),
        },
    }
}
