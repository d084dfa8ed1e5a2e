//! Helpers shared by the engine test suites.
#![allow(dead_code)]

/// A snapshot file opened as the page and the CLI open it (replayed in memory).
pub fn open(path: &std::path::Path) -> snapscope::engine::Engine {
    snapscope::engine::Engine::from_loaded(snapscope::Loaded::from_bytes(&std::fs::read(path).unwrap()).unwrap(), Vec::new())
}

/// The `snapscope` binary run in `dir` with `args`: exit code, stdout, stderr.
pub fn cli_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapscope")).args(args).current_dir(dir).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

use std::path::{Path, PathBuf};

/// A fresh scratch folder `snapscope-NAME-PID` in the system's temporary folder, removed when the
/// guard drops unless the test is failing (kept then, to look at). Keep it alive until the test's
/// last use of the folder: a child process or a later assertion may still read it.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("snapscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// The real corpus, or None (said on stderr, with the test that skips: none passes silently).
#[track_caller]
pub fn corpus() -> Option<PathBuf> {
    let p = repo().join("..").join("shared").join("snapshots");
    if p.join("reference.json").exists() {
        return Some(p);
    }
    eprintln!("skipped ({}): no corpus at {}", std::panic::Location::caller(), p.display());
    None
}

/// Every snapshot file of the real corpus (cuda/ and npu/, searched to the bottom), sorted.
pub fn corpus_files(root: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("cuda"), root.join("npu")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pickle" || x == "pkl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn overview_json(bytes: &[u8]) -> serde_json::Value {
    let loaded = snapscope::Loaded::from_bytes(bytes).expect("snapshot loads");
    serde_json::to_value(snapscope::analysis::overview::overview(&loaded)).unwrap()
}
