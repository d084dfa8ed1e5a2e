//! The `snapscope` binary: atomic import that never touches the input, JSON envelopes on
//! success and failure, read-only SQL, DB and snapshot inputs giving the same overview.

use crate::common;
use common::cli_in;
use serde_json::Value;

/// A test's own scratch folder to run the CLI in (`common::cli_in`): an import remembers its
/// database there (`.snapscope/focus.json`), never in the checkout.
fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("cli-{name}"))
}

#[test]
fn import_then_overview_of_the_db_equals_overview_of_the_snapshot() {
    let dir = scratch("import");
    let snap = common::fixtures().join("multi_device_oom.pickle");
    let before = std::fs::read(&snap).unwrap();
    let db = dir.join("multi.db");
    let (rc, out, err) = cli_in(&dir, &["import", snap.to_str().unwrap(), "-o", db.to_str().unwrap(), "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(std::fs::read(&snap).unwrap(), before, "the input is untouched");
    let leftovers: Vec<_> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files are left behind");

    let (_, from_snap, _) = cli_in(&dir, &["overview", snap.to_str().unwrap(), "--json"]);
    let (_, from_db, _) = cli_in(&dir, &["overview", db.to_str().unwrap(), "--json"]);
    let a: Value = serde_json::from_str(&from_snap).unwrap();
    let b: Value = serde_json::from_str(&from_db).unwrap();
    assert_eq!(a, b);
    assert_eq!(a["devices"].as_array().unwrap().len(), 2);

    let (rc, out, _) = cli_in(&dir, &["sql", db.to_str().unwrap(), "SELECT COUNT(*) AS n FROM traces WHERE action = 'oom'", "--json"]);
    assert_eq!(rc, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["n"], 1, "rows are objects keyed by column name by default");
    let (rc, out, _) =
        cli_in(&dir, &["sql", db.to_str().unwrap(), "SELECT COUNT(*) AS n, 'x' AS s FROM traces", "--json", "--rows", "arrays"]);
    assert_eq!(rc, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0][1], "x", "--rows arrays keeps the compact form");
}

#[test]
fn query_rows_are_objects_in_column_order_unless_asked_for_arrays() {
    let dir = scratch("query");
    let snap = common::fixtures().join("cuda_training.pickle");
    let args = ["query", snap.to_str().unwrap(), "-t", "allocation", "--params", r#"{"limit": 2}"#, "--json"];
    let (rc, out, _) = cli_in(&dir, &args);
    assert_eq!(rc, 0);
    let names: Vec<String> = {
        let v: Value = serde_json::from_str(&out).unwrap();
        v["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect()
    };
    // Keys in column order, as written (serde_json's Value would sort them).
    let first_row = &out[out.find("\"rows\"").unwrap()..];
    let mut at = 0;
    for n in &names {
        let k = first_row[at..].find(&format!("\"{n}\"")).unwrap_or_else(|| panic!("column {n} missing or out of order"));
        at += k;
    }
    let (_, out, _) = cli_in(&dir, &[&args[..], &["--rows", "arrays"]].concat());
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0].as_array().unwrap().len(), names.len());
    assert_eq!(v["ok"], true);
    // --json anywhere on the line.
    let (rc, out, _) = cli_in(&dir, &["--json", "overview", snap.to_str().unwrap()]);
    assert_eq!(rc, 0);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["schema_version"], 1);
}

#[test]
fn sql_is_read_only() {
    let dir = scratch("sql");
    let snap = common::fixtures().join("cuda_training.pickle");
    let (rc, out, err) = cli_in(&dir, &["sql", snap.to_str().unwrap(), "DELETE FROM traces", "--json"]);
    assert_eq!(rc, 1);
    assert!(out.is_empty());
    let e: Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(e["ok"], false);
    assert_eq!(e["error"]["code"], "QUERY_NOT_READONLY");
}

#[test]
fn bad_inputs_give_json_errors_not_panics() {
    let dir = scratch("bad");
    let junk = dir.join("junk.pickle");
    std::fs::write(&junk, b"\x80\x04\x95 this is not a pickle").unwrap();
    let empty = dir.join("empty.pickle");
    std::fs::write(&empty, b"").unwrap();
    for (path, code) in [
        (junk.to_str().unwrap(), "PICKLE_INVALID"),
        (empty.to_str().unwrap(), "SNAPSHOT_INVALID"),
        ("/nonexistent/snap.pickle", "IO_ERROR"),
    ] {
        let (rc, out, err) = cli_in(&dir, &["overview", path, "--json"]);
        assert_eq!(rc, 1, "{path}");
        assert!(out.is_empty(), "{path}: stdout stays empty");
        assert!(!err.contains("panicked"), "{path}: {err}");
        let e: Value = serde_json::from_str(err.trim()).unwrap_or_else(|_| panic!("{path}: {err}"));
        assert_eq!(e["error"]["code"], code, "{path}");
        assert!(!e["error"]["hint"].as_str().unwrap().is_empty());
    }
}

#[test]
fn text_overview_is_readable() {
    let dir = scratch("text");
    let (rc, out, _) = cli_in(&dir, &["overview", common::fixtures().join("npu_expandable.pkl").to_str().unwrap()]);
    assert_eq!(rc, 0);
    assert!(out.contains("peak allocated"), "{out}");
    assert!(out.contains("consistent"), "{out}");
}

#[test]
fn analyze_query_and_report() {
    let dir = scratch("analyze");
    let snap = common::fixtures().join("multi_device_oom.pickle");
    let s = snap.to_str().unwrap();
    let (rc, out, err) = cli_in(&dir, &["analyze", s, "--mode", "oom", "--device", "1", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"][0]["oom"]["ooms"][0]["verdict"], "one_huge_request");
    let (rc, out, _) = cli_in(&dir, &["analyze", s, "--json"]);
    assert_eq!(rc, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"].as_array().unwrap().len(), 2);
    assert!(v["devices"][1]["findings"].as_array().unwrap().iter().any(|f| f["category"] == "oom"));
    let (rc, out, _) = cli_in(
        &dir,
        &["analyze", s, "--mode", "compare", "--ref", common::fixtures().join("cuda_training.pickle").to_str().unwrap(), "--json"],
    );
    assert_eq!(rc, 0);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["comparison"]["devices"].is_array());
    let (rc, out, _) = cli_in(&dir, &["query", s, "-t", "leak_detection", "--device", "1", "--json"]);
    assert_eq!(rc, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["template"], "leak_detection");
    assert_eq!(v["columns"][2]["unit"], "bytes");
    let (rc, _, err) = cli_in(&dir, &["query", s, "-t", "leak_detection", "--params", "{\"x\": 1}", "--json"]);
    assert_eq!(rc, 1);
    assert_eq!(serde_json::from_str::<Value>(err.trim()).unwrap()["error"]["code"], "INVALID_PARAMETER");
    let report = dir.join("report.html");
    let (rc, _, err) = cli_in(&dir, &["report", s, "-o", report.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    assert!(std::fs::read_to_string(&report).unwrap().contains("Device 1"));
    let (rc, out, _) = cli_in(&dir, &["capabilities", "--json"]);
    assert_eq!(rc, 0);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["templates"].as_array().unwrap().len() >= 17);
}

/// Control characters from a snapshot's names never reach the terminal as they are.
#[test]
fn text_output_escapes_control_characters() {
    let dir = scratch("escapes");
    let snap = common::fixtures().join("bad/escape_frames.pickle");
    let s = snap.to_str().unwrap();
    for args in [
        vec!["analyze", s],
        vec!["analyze", s, "--mode", "tree"],
        vec!["query", s, "-t", "event", "--params", r#"{"limit": 5}"#],
        vec!["sql", s, "SELECT name, filename FROM frames"],
    ] {
        let (rc, out, err) = cli_in(&dir, &args);
        assert_eq!(rc, 0, "{args:?}: {err}");
        assert!(out.contains("HYPERLINK"), "{args:?}: the hostile frame is shown");
        let raw: Vec<char> = out.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect();
        assert!(raw.is_empty(), "{args:?}: raw control characters {raw:?}");
        assert!(out.contains("\\u{1b}"), "{args:?}: shown escaped");
    }
}

/// `sql` on a snapshot cannot attach (and so create or modify) another database file.
#[test]
fn sql_cannot_attach_files() {
    let dir = common::Scratch::new("attach");
    let target = dir.join("x.db");
    let snap = common::fixtures().join("cuda_training.pickle");
    let (rc, _, err) = cli_in(&dir, &["sql", snap.to_str().unwrap(), &format!("ATTACH DATABASE '{}' AS x", target.display()), "--json"]);
    assert_eq!(rc, 1);
    assert!(err.contains("QUERY_NOT_READONLY"), "{err}");
    assert!(!target.exists(), "ATTACH created no file");
}

/// Every command that writes a file replaces a symlink planted at its path (the one exclusive
/// atomic writer); none writes through it or leaves a temporary file behind.
#[test]
fn outputs_do_not_follow_symlinks() {
    let dir = common::Scratch::new("symlink");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let snap = common::fixtures().join("cuda_training.pickle");
    let s = snap.to_str().unwrap();
    let o = |name: &str| out.join(name).to_str().unwrap().to_string();
    // `ranks --summary-out` names its file after a hash of the snapshot's full path.
    let full = snap.canonicalize().unwrap();
    let summary = format!("cuda_training.pickle.{}.summary.json", &snapscope::engine::sha256_hex(full.to_string_lossy().as_bytes())[..12]);
    let cases: Vec<(String, Vec<String>)> = vec![
        ("r.html".into(), vec!["report".into(), s.into(), "-o".into(), o("r.html")]),
        ("s.pickle".into(), vec!["slice".into(), s.into(), "--events".into(), "2..9".into(), "-o".into(), o("s.pickle")]),
        ("i.db".into(), vec!["import".into(), s.into(), "--no-focus".into(), "-o".into(), o("i.db")]),
        ("e.db".into(), vec!["export".into(), s.into(), "-o".into(), o("e.db")]),
        (summary.clone(), vec!["ranks".into(), s.into(), "--summary-out".into(), out.to_str().unwrap().into()]),
    ];
    for (name, args) in &cases {
        let path = out.join(name);
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let a: Vec<&str> = args.iter().map(String::as_str).chain(["--json"]).collect();
        let (rc, _, err) = cli_in(&dir, &a);
        assert_eq!(rc, 0, "{name}: {err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "{name}: the symlink's target is untouched");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(!meta.file_type().is_symlink() && meta.len() > 0, "{name}: a regular file with the output now");
    }
    // The CLI's own files: the focus file (written by `import` and `focus`) and a skill.
    let work = dir.join("work");
    std::fs::create_dir_all(work.join(".snapscope")).unwrap();
    std::fs::create_dir_all(work.join(".claude/skills/snapscope-peak")).unwrap();
    let own = [work.join(".snapscope/focus.json"), work.join(".claude/skills/snapscope-peak/SKILL.md")];
    for p in &own {
        std::os::unix::fs::symlink(&victim, p).unwrap();
    }
    for args in
        [vec!["import", s, "-o", "w.db", "--json"], vec!["focus", "w.db", "--json"], vec!["skill", "install", "--host", "claude", "--json"]]
    {
        let (rc, _, err) = common::cli_in(&work, &args);
        assert_eq!(rc, 0, "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "{args:?}: the symlink's target is untouched");
    }
    for p in &own {
        assert!(!std::fs::symlink_metadata(p).unwrap().file_type().is_symlink(), "{}: a regular file now", p.display());
    }
    assert!(std::fs::read_to_string(&own[0]).unwrap().contains("w.db"));
    for d in [out.clone(), work.clone(), work.join(".snapscope"), work.join(".claude/skills/snapscope-peak")] {
        let leftovers =
            std::fs::read_dir(&d).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp-")).count();
        assert_eq!(leftovers, 0, "{}: no temporary file left", d.display());
    }
}

#[test]
fn simulate_answers_the_json_contract_and_refuses_bad_settings() {
    let dir = scratch("simulate");
    let snap = common::fixtures().join("sim_oom_avoided.pickle");
    let s = snap.to_str().unwrap();
    let (rc, out, err) = cli_in(&dir, &["simulate", s, "--alloc-conf", "expandable_segments:True", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let d = &v["devices"][0];
    for key in [
        "device",
        "settings",
        "reproduces_recording",
        "first_difference",
        "segment_allocs",
        "segment_frees",
        "largest_free_at_reserved_peak",
        "oom",
    ] {
        assert!(d.get(key).is_some(), "{key} missing in {d}");
    }
    assert!(d["reserved_peak"]["bytes"].is_u64() && d["allocated_peak"]["event"].is_u64());
    assert_eq!(d["settings"]["expandable_segments"], true);
    assert_eq!(d["reproduces_recording"], Value::Null, "only the recorded settings are checked");
    assert_eq!(d["oom"], Value::Null, "expandable segments serve the recorded OOM's request");

    let (rc, out, _) = cli_in(&dir, &["simulate", s, "--json"]);
    assert_eq!(rc, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"][0]["reproduces_recording"], true);
    assert_eq!(v["devices"][0]["oom"], 8, "the recorded OOM, reproduced");

    let (rc, _, err) = cli_in(&dir, &["simulate", s, "--alloc-conf", "expandable_segment:True", "--json"]);
    assert_eq!(rc, 1);
    let e: Value = serde_json::from_str(&err).unwrap();
    assert_eq!(e["error"]["code"], "ALLOC_CONF_INVALID");
    assert!(e["error"]["hint"].as_str().unwrap().contains("expandable_segments"));
    let (rc, _, err) = cli_in(&dir, &["simulate", s, "--device-memory", "lots", "--json"]);
    assert_eq!(rc, 1, "{err}");

    let (rc, out, err) = cli_in(&dir, &["analyze", s, "--mode", "tune", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"][0]["tune"]["try_first"], "expandable_segments:True");
    assert_eq!(v["devices"][0]["tune"]["reproduces_recording"], true);

    let db = dir.join("sim.db");
    let (rc, _, err) = cli_in(&dir, &["import", s, "-o", db.to_str().unwrap(), "--no-focus"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, _, err) = cli_in(&dir, &["simulate", s, "--alloc-conf", "max_split_size_mb:64", "--save", db.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    let (_, out, _) = cli_in(&dir, &["sql", db.to_str().unwrap(), "SELECT conf, as_recorded FROM simulated_runs", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"][0]["conf"], "max_split_size_mb:64");
}

/// A mode of one analysis computes it alone (`--mode peak` runs no simulation) and answers
/// exactly that part of `--mode all`, on the fixtures and on a SnapshotDB of one.
#[test]
fn each_single_mode_answers_its_part_of_all() {
    let dir = scratch("modes");
    let mut files: Vec<std::path::PathBuf> = ["multi_device_oom.pickle", "semantics_training.pickle", "program_one_step.pickle"]
        .iter()
        .map(|f| common::fixtures().join(f))
        .collect();
    let db = dir.join("modes.db");
    let (rc, _, err) = cli_in(&dir, &["import", files[0].to_str().unwrap(), "-o", db.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    files.push(db);
    for f in &files {
        let (_, all, _) = cli_in(&dir, &["analyze", f.to_str().unwrap(), "--mode", "all", "--json"]);
        let all: Value = serde_json::from_str(&all).unwrap();
        let is_db = f.extension().is_some_and(|e| e == "db");
        for mode in ["peak", "fragment", "leak", "oom", "categories", "steps", "streams"] {
            // A SnapshotDB has no replay: its `all` carries no steps or streams.
            if is_db && (mode == "steps" || mode == "streams") {
                continue;
            }
            let (rc, one, err) = cli_in(&dir, &["analyze", f.to_str().unwrap(), "--mode", mode, "--json"]);
            assert_eq!(rc, 0, "{err}");
            let one: Value = serde_json::from_str(&one).unwrap();
            assert_eq!(one["mode"], mode);
            let devices = all["devices"].as_array().unwrap();
            assert_eq!(one["devices"].as_array().unwrap().len(), devices.len());
            for (a, b) in devices.iter().zip(one["devices"].as_array().unwrap()) {
                assert_eq!(a[mode], b[mode], "{} --mode {mode}, device {}", f.display(), a["device"]);
            }
        }
    }
}

/// A file beyond the largest input read (64 GiB natively) is refused from its size, before any of
/// it is read; sparse, so the test writes nothing to the disk.
#[test]
fn a_file_beyond_the_input_limit_is_refused_at_once() {
    let dir = scratch("too-large");
    let big = dir.join("too_large.pickle");
    std::fs::File::create(&big).unwrap().set_len((64 << 30) + 1).unwrap();
    for cmd in ["overview", "import"] {
        let t0 = std::time::Instant::now();
        let (rc, out, err) = cli_in(&dir, &[cmd, big.to_str().unwrap(), "--json"]);
        assert_ne!(rc, 0, "{cmd}: {out}");
        assert!(err.contains("INPUT_TOO_LARGE"), "{cmd}: {err}");
        assert!(err.contains("is 64.00 GiB (68,719,476,737 B), more than the 64.00 GiB (68,719,476,736 B)"), "{cmd}: {err}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(5), "{cmd}: refused after {:?}", t0.elapsed());
    }
}
