//! The project focus: a database (and device) remembered for this folder, so later commands
//! may omit the file (pt-snap-cli's workflow).

use serde_json::{json, Value};
use snapscope::codes::ErrorCode;
use snapscope::engine::{dirs_within, write_atomic};
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};

pub const FOCUS_FILE: &str = ".snapscope/focus.json";

pub fn write_focus(db: &Path, device: Option<i64>) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(db).map_err(|e| Error::io(&db.display().to_string(), e))?;
    let path = PathBuf::from(FOCUS_FILE);
    // A `.snapscope` planted as a link must not carry the focus file out of this folder.
    dirs_within(Path::new("."), Path::new(".snapscope"))?;
    let body = serde_json::to_vec_pretty(&json!({"db_path": abs, "device_id": device})).expect("json");
    write_atomic(&path, &body)?;
    Ok(path)
}

/// The focused database and device of this project folder, if any.
pub fn read_focus() -> Result<Option<(PathBuf, Option<i64>)>> {
    if std::fs::symlink_metadata(".snapscope").is_ok_and(|m| !m.file_type().is_dir()) {
        return Err(Error::new(
            ErrorCode::FocusFileInvalid,
            ".snapscope is a symlink or a file, not this folder's own focus folder",
            "remove it and run `snapscope focus DB` again, or pass the file",
        ));
    }
    let Ok(text) = std::fs::read_to_string(FOCUS_FILE) else { return Ok(None) };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorCode::FocusFileInvalid, format!("{FOCUS_FILE}: {e}"), "run `snapscope focus DB` again"))?;
    let db = v["db_path"]
        .as_str()
        .ok_or_else(|| Error::new(ErrorCode::FocusFileInvalid, format!("{FOCUS_FILE} has no db_path"), "run `snapscope focus DB` again"))?;
    Ok(Some((PathBuf::from(db), v["device_id"].as_i64())))
}

/// The input a command works on: the argument, or the project focus.
pub struct Target {
    pub path: PathBuf,
    pub device: Option<i64>,
    pub from_focus: bool,
}

pub fn resolve(input: Option<PathBuf>, device: Option<i64>) -> Result<Target> {
    match input {
        Some(path) => Ok(Target { path, device, from_focus: false }),
        None => match read_focus()? {
            Some((path, d)) => Ok(Target { path, device: device.or(d), from_focus: true }),
            None => Err(Error::new(
                ErrorCode::FocusNotConfigured,
                "no SNAPSHOT or DB given and this folder has no focus",
                "pass a file, or `snapscope import SNAPSHOT` / `snapscope focus DB` first",
            )),
        },
    }
}
