//! What a command was pointed at: a snapshot to read and replay, or an exported SnapshotDB.

use rusqlite::Connection;
use snapscope::{store, Error, Loaded, Result};
use std::path::{Path, PathBuf};

pub enum Input {
    Snapshot { loaded: Box<Loaded>, path: PathBuf },
    Db { conn: Connection },
}

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(&path.display().to_string(), e))
}

pub fn load_snapshot(path: &Path) -> Result<Loaded> {
    let bytes = read_file(path)?;
    if store::is_sqlite(&bytes) {
        return Err(Error::new(
            "SNAPSHOT_INVALID",
            format!("{} is a SnapshotDB, not a snapshot", path.display()),
            "pass the snapshot pickle this database was imported from",
        ));
    }
    Loaded::from_bytes(&bytes)
}

pub fn open(path: &Path) -> Result<Input> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| Error::io(&path.display().to_string(), e))?;
    if store::is_sqlite(&head[..n]) {
        return Ok(Input::Db { conn: store::open_file(path)? });
    }
    Ok(Input::Snapshot { loaded: Box::new(load_snapshot(path)?), path: path.to_path_buf() })
}

impl Input {
    /// The SnapshotDB: the file itself, or the snapshot imported into memory.
    pub fn into_db(self) -> Result<Connection> {
        match self {
            Input::Db { conn } => Ok(conn),
            Input::Snapshot { loaded, path } => store::to_memory(&std::sync::Arc::new(*loaded), &source_meta(&path)),
        }
    }
}

pub fn source_meta(path: &Path) -> Vec<(&'static str, String)> {
    vec![("source_name", path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())]
}

/// A session over a snapshot (replayed into memory) or a SnapshotDB.
pub fn session(path: &Path) -> Result<snapscope::session::Session> {
    match open(path)? {
        Input::Db { conn } => snapscope::session::Session::from_db(conn),
        Input::Snapshot { loaded, path } => snapscope::session::Session::from_loaded(*loaded, &source_meta(&path)),
    }
}

/// Write a file atomically: a temporary file beside it, renamed when complete.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, data).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(&path.display().to_string(), e)
    })
}
