//! One model: a SnapshotDB input is read back into the snapshot it was written from and answered
//! by the same code. Every mode's answer (and the overview and allocator state) from the `.db`
//! must equal the snapshot's byte for byte, on every fixture and corpus file: a column the import
//! drops or the read-back misreads fails here.

use crate::common;
use snapscope::engine::{At, Engine, Mode};
use std::path::PathBuf;

/// The events a question is asked at: the window start, the first, the middle and the last
/// event, and the allocated and reserved peaks.
fn ats(events: usize) -> Vec<At> {
    use snapscope::analysis::basis::Counter;
    let mut v = vec![At::WindowStart, At::Peak(Counter::Allocated), At::Peak(Counter::Reserved)];
    if events > 0 {
        v.extend([At::Event(0), At::Event(events as i64 / 2), At::Dump]);
    }
    v
}

fn files() -> (Vec<PathBuf>, usize) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::fixtures())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pickle"))
        .collect();
    files.sort();
    let fixtures = files.len();
    match common::corpus() {
        Some(root) => files.extend(common::corpus_files(&root)),
        None => eprintln!("one_model: the corpus is not beside the checkout: {fixtures} fixtures only, corpus files skipped"),
    }
    (files, fixtures)
}

/// An answer or its error, as text to compare.
fn text<T: serde::Serialize>(r: snapscope::Result<T>) -> String {
    match r {
        Ok(v) => serde_json::to_string(&v).unwrap(),
        Err(e) => format!("error {:?}: {}", e.code, e.message),
    }
}

fn answer(e: &Engine, mode: Mode, device: i64, at: At) -> String {
    text(e.answer(mode, device, at).map(|a| a.device_json(mode, device)))
}

/// The modes that take an event, and those that answer for the whole trace.
const AT_MODES: [Mode; 5] = [Mode::Overview, Mode::Peak, Mode::Tree, Mode::Categories, Mode::All];
const WHOLE_MODES: [Mode; 6] = [Mode::Fragment, Mode::Leak, Mode::Oom, Mode::Steps, Mode::Streams, Mode::Tune];

#[test]
fn every_answer_from_a_snapshotdb_equals_the_snapshots() {
    assert_eq!(AT_MODES.len() + WHOLE_MODES.len() + 1, Mode::ALL.len(), "a new mode: add it here (compare takes two files)");
    let dir = common::Scratch::new("one-model");
    let (files, fixtures) = files();
    let (mut compared, mut refused) = (0, 0);
    for (n, f) in files.iter().enumerate() {
        let Ok(pickle) = Engine::open(f) else {
            refused += 1; // a fixture made to be refused
            continue;
        };
        let path = dir.join(format!("{n}.db"));
        snapscope::engine::import_file(f, &path, None, true, "now").unwrap();
        let db = Engine::open(&path).unwrap();
        let same = |what: &str, a: String, b: String| {
            assert!(a == b, "{}: {what} differs\nsnapshot {a}\n.db      {b}", f.display());
        };
        // The events read from the traces table's own pages (no fallback) are those SQLite reads.
        let conn = snapscope::store::open_file(&path).unwrap();
        let read = |how| format!("{:?}", snapscope::store::read_back::snapshot_reading(&conn, how).unwrap());
        use snapscope::store::read_back::TraceReading;
        same("the snapshot read back", read(TraceReading::Sqlite), read(TraceReading::Pages));
        same("overview", text(pickle.overview()), text(db.overview()));
        for device in pickle.devices().unwrap() {
            let events = pickle.overview().unwrap().devices.iter().find(|d| d.device == device).unwrap().events;
            for at in ats(events) {
                for mode in AT_MODES {
                    same(&format!("device {device} at {at:?}: {mode:?}"), answer(&pickle, mode, device, at), answer(&db, mode, device, at));
                    compared += 1;
                }
                same(&format!("device {device} at {at:?}: state"), text(pickle.state(device, at)), text(db.state(device, at)));
            }
            for mode in WHOLE_MODES {
                let at = At::Peak(snapscope::analysis::basis::Counter::Allocated);
                same(&format!("device {device}: {mode:?}"), answer(&pickle, mode, device, at), answer(&db, mode, device, at));
                compared += 1;
            }
        }
        std::fs::remove_file(&path).ok();
    }
    eprintln!("one_model: {} files ({fixtures} fixtures), {compared} answers compared, {refused} refused", files.len());
    assert!(compared > 1000 && refused < files.len() / 4, "{compared} answers, {refused} of {} files refused", files.len());
}

/// A damaged row is refused with its table and row named (never a panic, never a wrong answer),
/// on the first question that reads the model; the overview, stored whole, still answers.
#[test]
fn a_damaged_snapshotdb_row_is_named() {
    let dir = common::Scratch::new("one-model-damaged");
    let clean = dir.join("clean.db");
    snapscope::engine::import_file(&common::fixtures().join("cuda_training.pickle"), &clean, None, true, "now").unwrap();
    let damages = [
        ("UPDATE traces SET stack_id = 99999999 WHERE id = 5", "traces row 5", "stack_id 99999999"),
        ("UPDATE traces SET trace_index = 7 WHERE id = 3", "traces row 3", "trace_index 7"),
        ("UPDATE segments SET segment_type = 'huge' WHERE id = 0", "segments row 0", "segment_type \"huge\""),
        ("UPDATE blocks SET state = 'gone' WHERE id = 1", "blocks row 1", "state \"gone\""),
        ("UPDATE stack_frames SET frame_id = -1 WHERE stack_id = 0 AND position = 0", "stack_frames row 0", "frame -1"),
        ("UPDATE frames SET id = 1000000 WHERE id = 0", "frames row 1", "frame ids must run"),
        ("UPDATE traces SET extra_json = '{' WHERE id = 2", "traces row 2", "extra_json is not JSON"),
        ("UPDATE traces SET addr = 'x' WHERE id = 4", "traces row 4", "column 4"),
    ];
    for (n, (sql, table_row, what)) in damages.iter().enumerate() {
        let path = dir.join(format!("{n}.db"));
        std::fs::copy(&clean, &path).unwrap();
        rusqlite::Connection::open(&path).unwrap().execute_batch(sql).unwrap();
        let e = Engine::open(&path).unwrap();
        assert!(e.overview().is_ok(), "{sql}: the stored overview answers");
        let err = e.peak(0, At::Dump).err().unwrap_or_else(|| panic!("{sql}: read back without complaint"));
        assert_eq!(err.code, snapscope::codes::ErrorCode::DatabaseSchemaInvalid, "{sql}: {}", err.message);
        assert!(err.message.contains(table_row) && err.message.contains(what), "{sql}: {}", err.message);
        assert!(err.hint.contains("snapscope import"), "{sql}: {}", err.hint);
    }
}

/// Names longer than shown (4,096 bytes) come back whole from a SnapshotDB: a 1.2 MB function
/// name of two-byte characters (its cut falls inside one), a 5,000-byte file name, a 10,000-byte
/// and a 2,000-character annotation name (the annotations table shows both cut), each held once.
#[test]
fn long_names_come_back_whole_from_a_snapshotdb() {
    let dir = common::Scratch::new("one-model-long");
    let (pickle, db) = (dir.join("long.pickle"), dir.join("long.db"));
    let script = r#"
import pickle, sys
A = 0x7f0000000000
big, path = "é" * 600_000, "/a/" + "f" * 5000 + ".py"
frames = [{"filename": path, "line": 3, "name": big}, {"filename": "/a/m.py", "line": 4, "name": "forward"},
          {"filename": "/a/m.py", "line": 5, "name": big}]
events = [{"action": "alloc", "addr": A + i * 512, "size": 512, "stream": 0, "time_us": i, "frames": frames[i % 2:]} for i in range(8)]
ann = [{"name": n, "stage": s, "device": 0, "time_us": t} for n, (s, t) in
       [("n" * 10_000, ("START", 1)), ("n" * 10_000, ("END", 3)), ("m" * 2000, ("START", 2)), ("m" * 2000, ("END", 5))]]
open(sys.argv[1], "wb").write(pickle.dumps({"segments": [], "device_traces": [events], "external_annotations": ann}, protocol=4))
"#;
    assert!(std::process::Command::new("python3").args(["-c", script, pickle.to_str().unwrap()]).status().unwrap().success());
    let from_pickle = snapscope::reader::read_snapshot(&std::fs::read(&pickle).unwrap()).unwrap();
    snapscope::engine::import_file(&pickle, &db, None, true, "now").unwrap();
    let conn = snapscope::store::open_file(&db).unwrap();
    let from_db = snapscope::store::read_back::snapshot(&conn).unwrap();
    let (a, b) = (&from_pickle.interner.frames, &from_db.interner.frames);
    assert_eq!(a.len(), 3, "three distinct frames");
    assert_eq!(a, b, "the frames, their whole names with them");
    let big = "é".repeat(600_000);
    let f = a.iter().find(|f| f.line == 3).unwrap();
    assert_eq!(f.whole_name(), big);
    assert_eq!(f.whole_filename(), format!("/a/{}.py", "f".repeat(5000)));
    assert!(f.name.ends_with('…') && f.name.len() <= 4096 + '…'.len_utf8() && big.starts_with(f.name.trim_end_matches('…')));
    let one = |frames: &[snapscope::model::Frame], line| frames.iter().find(|f| f.line == line).unwrap().whole_name().as_ptr();
    assert_eq!(one(a, 3), one(a, 5), "two frames naming one text share it");
    assert_eq!(one(b, 3), one(b, 5), "and share it after read-back too");
    let names = |s: &snapscope::model::Snapshot| {
        s.annotations.iter().map(|x| x.whole_name.as_ref().map_or(x.name.clone(), |w| w.text().to_string())).collect::<Vec<_>>()
    };
    assert_eq!(names(&from_pickle), names(&from_db));
    assert_eq!(names(&from_db)[0].len(), 10_000);
    assert_eq!(names(&from_db)[2], "m".repeat(2000));
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT count(*) FROM long_texts"), 4, "the name, the file name, two annotation names: each once");
    // Every answer reads the same from either.
    let (p, d) = (Engine::open(&pickle).unwrap(), Engine::open(&db).unwrap());
    for mode in [Mode::Overview, Mode::Peak, Mode::Tree, Mode::Steps, Mode::All] {
        let at = At::Peak(snapscope::analysis::basis::Counter::Allocated);
        assert_eq!(answer(&p, mode, 0, at), answer(&d, mode, 0, at), "{mode:?}");
    }
}
