//! The text renderers: whatever names, sizes and shapes a file holds, the report, the labels of
//! the frame filter and the formatted figures render without a panic (and finish: libFuzzer's
//! timeout catches a renderer that multiplies a shared value).
#![no_main]
use libfuzzer_sys::fuzz_target;
use snapscope::analysis::basis::Counter;
use snapscope::engine::{At, Engine};

fuzz_target!(|data: &[u8]| {
    let Ok(loaded) = snapscope::Loaded::from_bytes(data) else { return };
    let root = snapscope::frames::user_root(loaded.snapshot.interner.frames.iter());
    for f in &loaded.snapshot.interner.frames {
        let _ = snapscope::frames::display(f, &root);
    }
    let devices: Vec<(i64, usize)> = loaded.devices.iter().map(|d| (d.device, d.events)).collect();
    let e = Engine::from_loaded(loaded, Vec::new());
    let _ = e.report("fuzz");
    for (d, events) in devices {
        let _ = e.tree(d, At::Peak(Counter::Allocated));
        if events > 0 {
            let _ = e.event(d, events as i64 - 1);
        }
        if let Ok(a) = e.analyze(d, At::Peak(Counter::Allocated)) {
            let _ = snapscope::format::bytes(a.overview.peaks.allocated.bytes);
        }
    }
});
