//! The pickle VM on arbitrary bytes: errors are fine, panics, hangs and blow-ups are not.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut arena = snapscope::reader::arena::Arena::default();
    if let Ok((root, _)) = snapscope::reader::pickle::parse(data, &mut arena) {
        let _ = arena.to_json(root, 0);
    }
});
