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
    let dir = std::env::temp_dir().join(format!("snapscope-one-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("one_model: {} files ({fixtures} fixtures), {compared} answers compared, {refused} refused", files.len());
    assert!(compared > 1000 && refused < files.len() / 4, "{compared} answers, {refused} of {} files refused", files.len());
}

/// A damaged row is refused with its table and row named (never a panic, never a wrong answer),
/// on the first question that reads the model; the overview, stored whole, still answers.
#[test]
fn a_damaged_snapshotdb_row_is_named() {
    let dir = std::env::temp_dir().join(format!("snapscope-one-model-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    std::fs::remove_dir_all(&dir).ok();
}
