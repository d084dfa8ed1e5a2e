//! The engine on files (native only): open a snapshot or a SnapshotDB by path, import with a
//! cache, write exports and slices atomically.

use super::{At, Engine};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::export::{ptsnap, slice};
use crate::store::{self, Records};
use crate::Loaded;
use sha2::{Digest, Sha256};
use std::path::Path;

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(&path.display().to_string(), e))
}

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
    hex(&Sha256::digest(bytes))
}

fn source_meta(path: &Path) -> Vec<(&'static str, String)> {
    vec![("source_name", path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())]
}

fn is_db(path: &Path) -> Result<bool> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| Error::io(&path.display().to_string(), e))?;
    Ok(store::is_sqlite(&head[..n]))
}

/// Read a snapshot the way the page does: in chunks, decoded as they arrive, so the file's bytes
/// are never held whole (peak memory is the decoded snapshot and its replay, not the file on
/// top of them). With `hash`, the SHA-256 of the bytes too: of a regular file on a thread of its
/// own that reads the file again (from the page cache) beside the decoding, so the hash costs no
/// wall time on a second core; of a pipe, on the way.
pub fn stream_snapshot(path: &Path, hash: bool) -> Result<(Loaded, Option<String>)> {
    let apart = hash && std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let hashing = apart.then(|| scope.spawn(|| file_sha256(path, &stop)));
        let read = decode_file(path, hash && !apart);
        // A failed read need not wait for the hash.
        stop.store(read.is_err(), std::sync::atomic::Ordering::Relaxed);
        let (snapshot, inline) = read?;
        let sha = match hashing {
            Some(h) => Some(h.join().expect("the hashing thread does not panic")?),
            None => inline,
        };
        Ok((Loaded::from_snapshot(snapshot), sha))
    })
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of the file at `path`; stops early (an error nobody reads) once `stop` is set.
fn file_sha256(path: &Path, stop: &std::sync::atomic::AtomicBool) -> Result<String> {
    let shown = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(&shown, e))?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 256 << 10];
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::io(&shown, std::io::Error::other("hash not needed")));
        }
        let n = std::io::Read::read(&mut file, &mut chunk).map_err(|e| Error::io(&shown, e))?;
        if n == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&chunk[..n]);
    }
}

/// The snapshot decoded from the file at `path` in chunks, and with `hash` their SHA-256.
fn decode_file(path: &Path, hash: bool) -> Result<(crate::model::Snapshot, Option<String>)> {
    let shown = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(&shown, e))?;
    let mut reader = crate::reader::ChunkReader::default();
    if let Ok(meta) = file.metadata() {
        reader.declare_size(meta.len())?;
    }
    let mut hasher = hash.then(Sha256::new);
    // Small reads: the kernel's copy and the reader's stay in the CPU caches, where a large
    // buffer would evict what decoding keeps there (measured: 8 MiB reads cost 8% more).
    let mut chunk = vec![0u8; 64 << 10];
    let mut first = true;
    loop {
        let n = std::io::Read::read(&mut file, &mut chunk).map_err(|e| Error::io(&shown, e))?;
        if n == 0 {
            break;
        }
        if first && store::is_sqlite(&chunk[..n]) {
            return Err(Error::new(
                ErrorCode::SnapshotInvalid,
                format!("{shown} is a SnapshotDB, not a snapshot"),
                "pass the snapshot pickle this database was imported from",
            ));
        }
        first = false;
        if let Some(h) = hasher.as_mut() {
            h.update(&chunk[..n]);
        }
        reader.push(&chunk[..n])?;
    }
    Ok((reader.finish()?, hasher.map(|h| hex(&h.finalize()))))
}

/// Write a file atomically: a new temporary file beside it (never an existing file or a
/// symlink planted there), renamed over the target when complete, keeping the target's mode;
/// removed on failure and on a signal (`outfile`).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    crate::outfile::write_atomic(path, data)
}

/// One path policy for every command that writes a file or reads a folder:
///
/// * an output is never one of the command's inputs ([`refuse_input_as_output`]), whatever path
///   names it (the same path, a symlink to it, a hard link);
/// * a folder is read without following links out of it, and each directory or file once
///   ([`folder_files`]);
/// * folders the CLI creates for its own files (`.snapscope`, `.claude/skills/...`) are made
///   without following a link planted in their place ([`dirs_within`]);
/// * files are written through [`write_atomic`].
pub fn refuse_input_as_output(out: &Path, inputs: &[&Path]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let Some(out_id) = id(out) else { return Ok(()) };
    match inputs.iter().find(|i| id(i) == Some(out_id)) {
        Some(input) => Err(Error::new(
            ErrorCode::InvalidParameter,
            format!("the output path {} is the input {}", out.display(), input.display()),
            "choose another -o path; snapscope never writes to its input",
        )),
        None => Ok(()),
    }
}

/// The files under `root` (to the bottom) that `keep` accepts, each once. A link (to a folder or
/// a file) is followed only when it resolves inside `root`, and a folder reached twice (a link to
/// `.`, two links to each other) is read once: reading a folder never leaves it.
pub fn folder_files(root: &Path, keep: &dyn Fn(&Path) -> bool) -> Result<Vec<std::path::PathBuf>> {
    let shown = |p: &Path| p.display().to_string();
    let top = root.canonicalize().map_err(|e| Error::io(&shown(root), e))?;
    let mut seen_dirs = std::collections::HashSet::from([top.clone()]);
    let mut seen_files = std::collections::HashSet::new();
    let mut folders = vec![root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = folders.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&shown(&dir), e))?;
        for path in entries.flatten().map(|e| e.path()) {
            let Ok(real) = path.canonicalize() else { continue };
            if !real.starts_with(&top) {
                continue;
            }
            if real.is_dir() {
                if seen_dirs.insert(real) {
                    folders.push(path);
                }
            } else if real.is_file() && keep(&path) && seen_files.insert(real) {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// Create `base/rel` folder by folder, refusing a component of `rel` that is a symlink (or not a
/// folder): a planted `.snapscope` or `.claude` link must not send the CLI's files elsewhere.
pub fn dirs_within(base: &Path, rel: &Path) -> Result<std::path::PathBuf> {
    let mut at = base.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => {
                return Err(Error::new(
                    ErrorCode::IoError,
                    format!("{} is a symlink or a file, not a folder; snapscope does not write through it", at.display()),
                    "remove it (or make it a real folder) and run the command again",
                ))
            }
            Err(_) => std::fs::create_dir(&at).map_err(|e| Error::io(&at.display().to_string(), e))?,
        }
    }
    Ok(at)
}

/// How `import_file` went.
pub struct ImportOutcome {
    pub reused: bool,
    /// Why the database was (re)built: forced, database_missing, metadata_mismatch.
    pub reason: &'static str,
}

/// Import `snapshot` into the SnapshotDB file `out`, reusing an existing one made by this engine
/// version from the same file (same size and mtime, or failing that the same SHA-256) for the
/// same device selection.
pub fn import_file(snapshot: &Path, out: &Path, device: Option<i64>, force: bool, imported_at: &str) -> Result<ImportOutcome> {
    refuse_input_as_output(out, &[snapshot])?;
    let size = std::fs::metadata(snapshot).map_err(|e| Error::io(&snapshot.display().to_string(), e))?.len();
    let selection = device.map(|d| d.to_string()).unwrap_or_else(|| "all".into());
    let mtime = std::fs::metadata(snapshot)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    let mut reason = if force { "forced" } else { "database_missing" };
    if !force && out.exists() {
        reason = "metadata_mismatch";
        if let Ok(conn) = store::open_file(out) {
            let m = |k: &str| store::metadata(&conn, k).ok().flatten().unwrap_or_default();
            let same_build =
                m("engine_version") == crate::VERSION && m("device_selection") == selection && m("source_bytes") == size.to_string();
            // Same size and mtime: unchanged without reading it; otherwise compare the hash.
            if same_build && (m("source_mtime_ns") == mtime.to_string() || m("source_sha256") == sha256_hex(&read_file(snapshot)?)) {
                return Ok(ImportOutcome { reused: true, reason });
            }
        }
    }
    if is_db(snapshot)? {
        return Err(Error::new(
            ErrorCode::SnapshotInvalid,
            format!("{} is already a SnapshotDB", snapshot.display()),
            "import the snapshot it came from",
        ));
    }
    let (mut loaded, sha) = stream_snapshot(snapshot, true)?;
    if let Some(d) = device {
        if loaded.device(d).is_none() {
            return Err(Error::no_device(d));
        }
        loaded.devices.retain(|x| x.device == d);
    }
    let mut meta = source_meta(snapshot);
    meta.extend([
        ("source_sha256", sha.unwrap_or_default()),
        ("source_mtime_ns", mtime.to_string()),
        ("device_selection", selection),
        ("imported_at", imported_at.to_string()),
    ]);
    let overview_json = serde_json::to_string(&crate::analysis::overview::overview(&loaded)).expect("serializable");
    store::write_file(&std::sync::Arc::new(loaded), &Records { meta: &meta, overview_json: &overview_json }, out)?;
    Ok(ImportOutcome { reused: false, reason })
}

impl Engine {
    /// A snapshot (read and replayed) or a SnapshotDB file (opened read-only), by its content.
    pub fn open(path: &Path) -> Result<Engine> {
        Engine::open_as(path, false)
    }

    /// `open`, with the snapshot's SHA-256 in the metadata (exports record it).
    pub fn open_hashed(path: &Path) -> Result<Engine> {
        Engine::open_as(path, true)
    }

    fn open_as(path: &Path, hashed: bool) -> Result<Engine> {
        if is_db(path)? {
            return Engine::from_db(store::open_file(path)?);
        }
        let (loaded, sha) = stream_snapshot(path, hashed)?;
        let mut meta = source_meta(path);
        if let Some(sha) = sha {
            meta.push(("source_sha256", sha));
        }
        Ok(Engine::from_loaded(loaded, meta))
    }

    /// Write pt-snap-cli's SnapshotDB layout to `out`.
    pub fn export_ptsnap(&self, out: &Path, completed_at: &str) -> Result<()> {
        let conn = self.conn()?;
        if let Some(db) = conn.path().filter(|p| !p.is_empty()) {
            refuse_input_as_output(out, &[Path::new(db)])?;
        }
        match conn.path().filter(|p| self.db_input && !p.is_empty()) {
            // A .db file is open read-only: export through a writable in-memory connection.
            Some(db) => ptsnap::export_from_file(Path::new(db), out, completed_at),
            None => ptsnap::export(conn, out, completed_at),
        }
    }

    /// The event range `a..=b` of `device` as a snapshot pickle written to `out`; returns the
    /// number of events written.
    pub fn write_slice(&self, device: i64, a: i64, b: i64, out: &Path) -> Result<usize> {
        let loaded = self.model()?;
        slice::check_range(&loaded.snapshot, device, a, b)?;
        let state = self.state(device, At::Event(b))?;
        let lifetime_base: usize = loaded.devices.iter().take_while(|d| d.device != device).map(|d| d.lifetimes.len()).sum();
        write_atomic(out, &slice::pickle(loaded, device, a, b, &state, lifetime_base as i64)?)?;
        Ok((b - a + 1) as usize)
    }

    /// Events of `device` in the trace (0 when it has none).
    pub fn trace_events(&self, device: i64) -> usize {
        self.model().ok().and_then(|l| l.snapshot.trace(device)).map_or(0, |t| t.events.len())
    }

    /// The first and last events of `device` whose time_us lies in [t0, t1].
    pub fn time_range(&self, device: i64, t0: i64, t1: i64) -> Result<(i64, i64)> {
        slice::time_range(&self.model()?.snapshot, device, t0, t1)
    }
}
