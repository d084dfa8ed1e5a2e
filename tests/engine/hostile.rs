//! Hostile but valid snapshots, made at test time: the CLI stays within 10 s and 10 MB of output.

use std::process::Command;
use std::time::{Duration, Instant};

/// A 1 MB snapshot whose 2,048 dump blocks share 30 frames with one 1,000,000-character name
/// (the pickle memo shares it; every naive copy multiplies it).
const AMPLIFY: &str = r#"
import pickle, sys
name = "x" * 1_000_000
frames = [{"filename": "/a/model.py", "line": i, "name": name} for i in range(30)]
other = [dict(frames[0], line=500)] + frames[1:]
addr = 0x7f0000000000
blocks = [{"address": addr + i * 1024, "size": 1024, "requested_size": 1000, "state": "active_allocated",
           "frames": frames if i % 2 == 0 else other} for i in range(2048)]
seg = {"device": 0, "address": addr, "total_size": 2 << 20, "allocated_size": 2 << 20, "active_size": 2 << 20,
       "requested_size": 2048 * 1000, "stream": 0, "segment_type": "small", "blocks": blocks, "frames": []}
open(sys.argv[1], "wb").write(pickle.dumps({"segments": [seg], "device_traces": [[]]}, protocol=4))
"#;

#[test]
fn a_shared_huge_name_is_not_multiplied() {
    let dir = std::env::temp_dir().join(format!("snapscope-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("amplify.pickle");
    let made = Command::new("python3").args(["-c", AMPLIFY, snap.to_str().unwrap()]).status().unwrap();
    assert!(made.success());
    assert!(std::fs::metadata(&snap).unwrap().len() < 2 << 20);
    let s = snap.to_str().unwrap();
    let (report, db) = (dir.join("r.html"), dir.join("a.db"));
    for args in [
        vec!["analyze", s, "--json"],
        vec!["analyze", s],
        vec!["report", s, "-o", report.to_str().unwrap()],
        vec!["import", s, "-o", db.to_str().unwrap(), "--no-focus"],
        vec!["query", s, "-t", "top_allocations", "--json"],
    ] {
        let t0 = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_snapscope")).args(&args).current_dir(&dir).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(t0.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", t0.elapsed());
        assert!(out.stdout.len() < 10 << 20, "{args:?} printed {} bytes", out.stdout.len());
    }
    assert!(std::fs::metadata(&report).unwrap().len() < 10 << 20);
    // The frames table holds each name once (31 distinct frames); stacks do not repeat it.
    assert!(std::fs::metadata(&db).unwrap().len() < 64 << 20);
}

/// Integers beyond any byte count are damage the analysis names, never wrapped into small ones.
#[test]
fn out_of_range_integers_are_named_not_wrapped() {
    let dir = std::env::temp_dir().join(format!("snapscope-ints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("ints.pickle");
    let script = r#"
import pickle, sys
seg = lambda i, size: {"device": 0, "address": (i + 1) << 40, "total_size": size, "allocated_size": 0, "active_size": 0,
                       "requested_size": 0, "stream": 0, "segment_type": "large", "blocks": [], "frames": []}
segs = [seg(i, 2**63 - 1) for i in range(9)] + [seg(20, 2 << 20)]
events = [{"action": "alloc", "addr": 21 << 40, "size": 2**64 + 5, "stream": 0, "time_us": 2**70}]
open(sys.argv[1], "wb").write(pickle.dumps({"segments": segs, "device_traces": [events]}, protocol=4))
"#;
    assert!(Command::new("python3").args(["-c", script, snap.to_str().unwrap()]).status().unwrap().success());
    let out = Command::new(env!("CARGO_BIN_EXE_snapscope")).args(["overview", snap.to_str().unwrap(), "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = v["warnings"].as_array().unwrap();
    let said = |code: &str, text: &str| warnings.iter().any(|w| w["code"] == code && w["message"].as_str().unwrap_or("").contains(text));
    assert!(said("EVENT_INVALID", "18446744073709551621"), "the size 2^64+5 is named: {warnings:?}");
    assert_eq!(warnings.iter().filter(|w| w["code"] == "SEGMENT_INVALID").count(), 9, "{warnings:?}");
    let d = &v["devices"][0];
    assert_eq!(d["at_dump"]["reserved"], 2 << 20, "only the valid segment counts");
}
