//! SnapshotDB inputs: whatever a `.db` file holds (views, triggers, odd schemas, damaged pages),
//! opening it, its overview, analyses and a query answer or refuse, never hang or panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("snapscope-fuzz-{}.db", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(mut e) = snapscope::engine::Engine::open(&path) {
        if let Ok(ov) = e.overview() {
            for d in ov.devices.iter().map(|d| d.device).collect::<Vec<_>>() {
                let _ = e.analyze(d, snapscope::engine::At::Peak(snapscope::analysis::basis::Counter::Allocated));
            }
        }
        let limits = snapscope::query::sql::Limits { max_rows: 100, timeout_ms: 2_000 };
        let _ = e.sql("SELECT * FROM traces", limits);
    }
    let _ = std::fs::remove_file(&path);
});
