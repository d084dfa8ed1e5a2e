//! Read, replay, store and analyse: whatever a file says, the whole pipeline stays total.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = snapscope::Loaded::from_bytes(data) {
        let devices: Vec<i64> = loaded.devices.iter().map(|d| d.device).collect();
        if let Ok(s) = snapscope::session::Session::from_loaded(loaded, &[]) {
            for d in devices {
                let _ = s.analyze(d, None);
            }
        }
    }
});
