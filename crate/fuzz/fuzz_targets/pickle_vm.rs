//! The pickle VM on arbitrary bytes: errors are fine, panics, hangs and blow-ups are not.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((arena, root, _, _)) = snapscope::reader::pickle::parse(data) {
        let _ = arena.to_json(root, 0);
    }
});
