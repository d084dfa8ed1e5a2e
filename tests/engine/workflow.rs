//! Import cache, focus, metadata, slice and skills, through the CLI in a scratch folder.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("wf-{name}"))
}

fn run(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_snapscope")).current_dir(dir).args(args).arg("--json").output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn import_cache_focus_and_metadata() {
    let dir = scratch("cache");
    let snap = common::fixtures().join("multi_device_oom.pickle");
    let s = snap.to_str().unwrap();
    let first = run(&dir, &["import", s, "-o", "m.db"]);
    assert_eq!(first["reused"], false);
    assert_eq!(first["cache_miss_reason"], "database_missing");
    let t0 = Instant::now();
    let second = run(&dir, &["import", s, "-o", "m.db"]);
    assert!(t0.elapsed().as_millis() < 1000);
    assert_eq!(second["reused"], true);
    assert_eq!(run(&dir, &["import", s, "-o", "m.db", "--force"])["reused"], false);
    let only1 = run(&dir, &["import", s, "-o", "d1.db", "--device", "1", "--no-focus"]);
    assert_eq!(only1["metadata"]["devices"], 1);
    assert_eq!(only1["metadata"]["device_selection"], "1");

    // The focus is m.db (the --no-focus import left it alone); commands may omit the file.
    let ov = run(&dir, &["overview"]);
    assert_eq!(ov["focus_source"], "project");
    assert_eq!(ov["devices"].as_array().unwrap().len(), 2);
    let meta = run(&dir, &["metadata"]);
    let sha = String::from_utf8(Command::new("sha256sum").arg(&snap).output().unwrap().stdout).unwrap();
    assert_eq!(meta["source_sha256"], sha.split_whitespace().next().unwrap());
    assert_eq!(meta["source_name"], "multi_device_oom.pickle");
    assert_eq!(meta["engine_version"], snapscope::VERSION);
    run(&dir, &["focus", "d1.db"]);
    assert_eq!(run(&dir, &["overview"])["devices"].as_array().unwrap().len(), 1);
    assert_eq!(run(&dir, &["query", "-t", "memory_peak"])["focus_source"], "project");
}

#[test]
fn a_slice_replays_to_the_same_counters_and_python_loads_it() {
    let dir = scratch("slice");
    let (snap, a, b) = match common::corpus() {
        Some(c) => (c.join("npu/snapshot_expandable.pkl"), 3000, 7500),
        None => (common::fixtures().join("cuda_training.pickle"), 5, 20),
    };
    let s = snap.to_str().unwrap();
    run(&dir, &["slice", s, "--events", &format!("{a}..{b}"), "-o", "slice.pickle"]);
    let original =
        run(&dir, &["query", s, "-t", "allocation", "--rows", "arrays", "--params", &format!("{{\"min_id\": {a}, \"max_id\": {b}}}")]);
    let sliced = run(&dir, &["query", "slice.pickle", "-t", "allocation", "--rows", "arrays"]);
    let ov = run(&dir, &["overview", "slice.pickle"]);
    let tol = ov["devices"][0]["consistency"]["ambiguous_bytes"].as_i64().unwrap();
    let (ro, rs) = (original["rows"].as_array().unwrap(), sliced["rows"].as_array().unwrap());
    assert_eq!(ro.len(), rs.len());
    for (x, y) in ro.iter().zip(rs) {
        for c in 1..=4 {
            assert!((x[c].as_i64().unwrap() - y[c].as_i64().unwrap()).abs() <= tol, "event {}: {x} vs {y}", x[0]);
        }
    }
    let py = Command::new("python3")
        .current_dir(&dir)
        .args(["-c", "import pickle; d = pickle.load(open('slice.pickle', 'rb')); print(len(d['device_traces'][0]))"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&py.stdout).trim(), (b - a + 1).to_string());
}

#[test]
fn skills_install_and_list() {
    let dir = scratch("skills");
    let installed = run(&dir, &["skill", "install", "--host", "claude"]);
    assert_eq!(installed["installed"].as_array().unwrap().len(), 5);
    assert!(dir.join(".claude/skills/snapscope-leak/SKILL.md").exists());
    let list = run(&dir, &["skill", "list"]);
    let first = &list["skills"][0];
    assert!(first["description"].as_str().unwrap().len() > 20);
    assert_eq!(first["locations"][0]["status"], "installed");
}

/// `import` writes the large tables' pages itself (store/pages/): every fixture and corpus file
/// gives a database SQLite finds intact (`PRAGMA integrity_check` reads every page and every
/// index entry against its row) holding as many rows as the pickle's own SnapshotDB.
#[test]
fn imported_databases_are_intact_and_whole() {
    let dir = scratch("pages");
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::fixtures())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pickle" || x == "pkl"))
        .collect();
    files.extend(common::corpus().map(|c| common::corpus_files(&c)).unwrap_or_default());
    let counts = "SELECT (SELECT count(*) FROM traces) AS traces, (SELECT count(*) FROM lifetimes) AS lifetimes";
    for f in &files {
        let s = f.to_str().unwrap();
        run(&dir, &["import", s, "-o", "x.db", "--force", "--no-focus"]);
        let conn = rusqlite::Connection::open(dir.join("x.db")).unwrap();
        let check: Vec<String> =
            conn.prepare("PRAGMA integrity_check").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(check, ["ok"], "{s}");
        assert_eq!(run(&dir, &["sql", "x.db", counts])["rows"], run(&dir, &["sql", s, counts])["rows"], "{s}");
    }
    assert!(files.len() >= 20, "{} files", files.len());
}
