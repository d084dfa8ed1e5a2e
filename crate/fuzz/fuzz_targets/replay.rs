//! Read, replay, store and analyse: whatever a file says, the whole pipeline stays total.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = snapscope::Loaded::from_bytes(data) {
        let devices: Vec<i64> = loaded.devices.iter().map(|d| d.device).collect();
        let e = snapscope::engine::Engine::from_loaded(loaded, Vec::new());
        for d in devices {
            let _ = e.analyze(d, snapscope::engine::At::Peak(snapscope::analysis::basis::Counter::Allocated));
        }
    }
});
