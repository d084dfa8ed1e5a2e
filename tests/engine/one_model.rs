//! The analyses read the replay; a SnapshotDB input answers the same questions from its rows.
//! Both roads must give the same answer, on every fixture and corpus file: a drift between the
//! replay's definition of liveness, labels or categories and the SQL one fails here.

use crate::common;
use snapscope::engine::{At, Engine};
use std::path::{Path, PathBuf};

/// The file exported as a SnapshotDB and opened as a `.db` input is.
fn as_db(engine: &mut Engine, dir: &Path, name: &str) -> Engine {
    let path = dir.join(format!("{name}.db"));
    std::fs::write(&path, engine.export_db().unwrap()).unwrap();
    Engine::from_db(snapscope::store::open_file(&path).unwrap()).unwrap()
}

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

#[test]
fn answers_from_the_replay_equal_those_of_its_snapshotdb() {
    let dir = std::env::temp_dir().join(format!("snapscope-one-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (files, fixtures) = files();
    let (mut compared, mut refused) = (0, 0);
    for (n, f) in files.iter().enumerate() {
        let Ok(loaded) = snapscope::Loaded::from_bytes(&std::fs::read(f).unwrap()) else {
            refused += 1; // a fixture made to be refused
            continue;
        };
        let mut replay = Engine::from_loaded(loaded, Vec::new());
        let db = as_db(&mut replay, &dir, &n.to_string());
        for device in replay.devices().unwrap() {
            let events = replay.overview().unwrap().devices.iter().find(|d| d.device == device).unwrap().events;
            for at in ats(events) {
                let json = |e: &Engine| {
                    [
                        ("peak", serde_json::to_string(&e.peak(device, at).unwrap()).unwrap()),
                        ("categories", serde_json::to_string(&e.categories(device, at).unwrap()).unwrap()),
                        ("tree", serde_json::to_string(&e.tree(device, at).unwrap()).unwrap()),
                        ("state", serde_json::to_string(&e.state(device, at).unwrap()).unwrap()),
                    ]
                };
                for ((what, a), (_, b)) in json(&replay).into_iter().zip(json(&db)) {
                    assert!(a == b, "{}: device {device} at {at:?}: {what} differs\nreplay {a}\n.db    {b}", f.display());
                    compared += 1;
                }
            }
            let whole = |e: &Engine| {
                [
                    ("fragment", serde_json::to_string(&e.fragment(device).unwrap()).unwrap()),
                    ("leak", serde_json::to_string(&e.leak(device).unwrap()).unwrap()),
                    ("oom", serde_json::to_string(&e.oom(device).unwrap()).unwrap()),
                ]
            };
            for ((what, a), (_, b)) in whole(&replay).into_iter().zip(whole(&db)) {
                assert!(a == b, "{}: device {device}: {what} differs\nreplay {a}\n.db    {b}", f.display());
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("one_model: {} files ({fixtures} fixtures), {compared} questions compared, {refused} refused", files.len());
    assert!(compared > 400 && refused < files.len() / 4, "{compared} questions, {refused} of {} files refused", files.len());
}
