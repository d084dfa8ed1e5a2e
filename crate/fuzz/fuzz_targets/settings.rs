//! Allocator settings strings (`--alloc-conf`, a recording's PYTORCH_CUDA_ALLOC_CONF): whatever
//! the text, the one settings parser answers or refuses, and the simulator runs on what it
//! accepts without a panic (a size that wrapped to 0 once divided by zero in pool.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

thread_local! {
    static LOADED: snapscope::Loaded =
        snapscope::Loaded::from_bytes(include_bytes!("../../../fixtures/sim_rounding.pickle")).expect("the fixture loads");
}

fuzz_target!(|data: &[u8]| {
    let Ok(conf) = std::str::from_utf8(data) else { return };
    if let Ok(pairs) = snapscope::alloc_conf::pairs(conf) {
        for (k, v) in pairs {
            let _ = snapscope::alloc_conf::parse(&k, &v);
        }
    }
    LOADED.with(|loaded| {
        if let Ok(sim) = snapscope::simulate::simulate_loaded(loaded, 0, conf, None) {
            std::hint::black_box(sim);
        }
    });
});
