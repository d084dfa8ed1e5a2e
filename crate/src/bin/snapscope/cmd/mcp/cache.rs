//! Opened snapshots kept between calls: keyed by canonical path, checked against the file's size
//! and modification time on every use, bounded by a count and by the files' bytes (least
//! recently used dropped). A kept engine is lent to one command at a time.

use crate::rules::{open_engine, Opened};
use snapscope::{Error, Result};
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// What a kept file was when it was opened, and what the answers cite.
#[derive(Clone, Debug)]
pub struct FileInfo {
    pub path: PathBuf,
    pub size: u64,
    pub mtime: Option<SystemTime>,
    pub sha256: String,
}

struct Entry {
    info: FileInfo,
    engine: Arc<tokio::sync::Mutex<snapscope::engine::Engine>>,
    used: u64,
}

struct Cache {
    max_files: usize,
    max_bytes: u64,
    clock: u64,
    entries: Vec<Entry>,
    opens: u64,
}

static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();

thread_local! {
    /// Paths this thread holds an engine of (a comparison of a file with itself opens a second).
    static HELD: RefCell<HashSet<PathBuf>> = RefCell::new(HashSet::new());
}

pub fn init(max_files: usize, max_bytes: u64) {
    let _ = CACHE.set(Mutex::new(Cache { max_files, max_bytes, clock: 0, entries: Vec::new(), opens: 0 }));
}

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.get().expect("cache::init first").lock().unwrap_or_else(|p| p.into_inner())
}

fn stat(path: &Path) -> Result<(u64, Option<SystemTime>)> {
    let m = std::fs::metadata(path).map_err(|e| Error::io(&path.display().to_string(), e))?;
    Ok((m.len(), m.modified().ok()))
}

/// The kept engine of `path` (opened now if it is not kept, or the file changed) and what the
/// file is.
pub fn get(path: &Path) -> Result<(FileInfo, Arc<tokio::sync::Mutex<snapscope::engine::Engine>>)> {
    let path = path.canonicalize().map_err(|e| Error::io(&path.display().to_string(), e))?;
    let (size, mtime) = stat(&path)?;
    {
        let mut c = cache();
        c.clock += 1;
        let now = c.clock;
        if let Some(e) = c.entries.iter_mut().find(|e| e.info.path == path) {
            if e.info.size == size && e.info.mtime == mtime {
                e.used = now;
                return Ok((e.info.clone(), e.engine.clone()));
            }
        }
        c.entries.retain(|e| e.info.path != path);
    }
    // Opened without the cache's lock: other files stay answerable meanwhile.
    let (engine, sha256) = open_with_hash(&path)?;
    let info = FileInfo { path: path.clone(), size, mtime, sha256 };
    let engine = Arc::new(tokio::sync::Mutex::new(engine));
    let mut c = cache();
    c.clock += 1;
    c.opens += 1;
    let used = c.clock;
    c.entries.retain(|e| e.info.path != path);
    c.entries.push(Entry { info: info.clone(), engine: engine.clone(), used });
    evict(&mut c);
    Ok((info, engine))
}

/// Drop the least recently used entries beyond the bounds (the newest always stays).
fn evict(c: &mut Cache) {
    loop {
        let bytes: u64 = c.entries.iter().map(|e| e.info.size).sum();
        if c.entries.len() <= 1 || (c.entries.len() <= c.max_files && bytes <= c.max_bytes) {
            return;
        }
        let oldest = c.entries.iter().enumerate().min_by_key(|(_, e)| e.used).map(|(i, _)| i).expect("not empty");
        c.entries.remove(oldest);
    }
}

/// A snapshot's engine and the SHA-256 of its bytes (computed while it is read); a SnapshotDB's
/// hash is of the database file.
fn open_with_hash(path: &Path) -> Result<(snapscope::engine::Engine, String)> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| Error::io(&path.display().to_string(), e))?;
    if snapscope::store::is_sqlite(&head[..n]) {
        let bytes = std::fs::read(path).map_err(|e| Error::io(&path.display().to_string(), e))?;
        return Ok((open_engine(path, false)?, snapscope::engine::sha256_hex(&bytes)));
    }
    let engine = open_engine(path, true)?;
    let sha = engine.source_sha256().unwrap_or_default();
    Ok((engine, sha))
}

/// The kept files, most recently used first.
pub fn list() -> Vec<FileInfo> {
    let c = cache();
    let mut v: Vec<(u64, FileInfo)> = c.entries.iter().map(|e| (e.used, e.info.clone())).collect();
    v.sort_by_key(|(u, _)| std::cmp::Reverse(*u));
    v.into_iter().map(|(_, i)| i).collect()
}

/// How many times a file was read and replayed (the cache's misses).
pub fn opens() -> u64 {
    cache().opens
}

/// The opener the commands use under the server (`rules::open`): the kept engine, lent to
/// this command until it ends.
pub fn open(path: &Path) -> Option<Result<Opened>> {
    let canon = path.canonicalize().ok()?;
    if HELD.with(|h| h.borrow().contains(&canon)) {
        return Some(open_engine(path, false).map(|e| Opened::Own(Box::new(e))));
    }
    Some(get(&canon).map(|(_, engine)| {
        HELD.with(|h| h.borrow_mut().insert(canon));
        Opened::Kept(engine.blocking_lock_owned())
    }))
}

/// Forget what this thread holds (after a command ends and its engines are released).
pub fn release_held() {
    HELD.with(|h| h.borrow_mut().clear());
}
