//! Format detection and the snapshot decoder (pickle, gzip, JSON) on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = snapscope::reader::read_snapshot(data);
});
