//! Golden tests: every fixture written by scripts/gen_fixtures.py gives the figures its
//! generator computed independently (fixtures/expected.json).

use crate::common;
use serde_json::Value;

#[test]
fn every_fixture_matches_its_expected_figures() {
    let dir = common::fixtures();
    let expected: Value = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (name, want) in expected.as_object().unwrap() {
        let got = common::overview_json(&std::fs::read(dir.join(name)).unwrap());
        assert_eq!(got["format"], want["format"], "{name}: format");
        let want_devs = want["devices"].as_array().unwrap();
        let got_devs = got["devices"].as_array().unwrap();
        assert_eq!(got_devs.len(), want_devs.len(), "{name}: device count");
        for (g, w) in got_devs.iter().zip(want_devs) {
            let dev = &w["device"];
            assert_eq!(&g["device"], dev, "{name}: device");
            assert_eq!(g["events"], w["events"], "{name} d{dev}: events");
            assert_eq!(g["consistency"]["ok"], want["consistent"], "{name} d{dev}: consistency {}", g["consistency"]);
            for key in ["at_last_event", "at_window_start"] {
                if let Some(wv) = w.get(key) {
                    assert_eq!(&g[key], wv, "{name} d{dev}: {key}");
                }
            }
            if let Some(peaks) = w.get("peaks").filter(|p| !p.is_null()) {
                for counter in ["allocated", "active", "reserved", "requested"] {
                    assert_eq!(g["peaks"][counter], peaks[counter], "{name} d{dev}: {counter} peak");
                }
            }
        }
        if let Some(codes) = want.get("warnings") {
            let got_codes: Vec<&Value> = got["warnings"].as_array().unwrap().iter().map(|w| &w["code"]).collect();
            for c in codes.as_array().unwrap() {
                assert!(got_codes.contains(&c), "{name}: warning {c} expected, got {got_codes:?}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} fixtures checked");
}

#[test]
fn encodings_and_protocols_decode_to_the_same_snapshot() {
    let dir = common::fixtures();
    let devices = |name: &str| {
        let mut d = common::overview_json(&std::fs::read(dir.join(name)).unwrap())["devices"].clone();
        // The type-tagged file has no allocator_settings, so its rules are described differently.
        d[0].as_object_mut().unwrap().remove("allocator_rules");
        d
    };
    let base = devices("cuda_training.pickle");
    for other in [
        "cuda_training_p2.pickle",
        "cuda_training_p5.pickle",
        "cuda_training.pickle.gz",
        "cuda_training.json",
        "torchscript_typetags.pickle",
    ] {
        assert_eq!(devices(other), base, "{other}");
    }
}

#[test]
fn ring_buffer_cut_reconstructs_blocks_from_before_the_window() {
    let bytes = std::fs::read(common::fixtures().join("ring_buffer_cut.pickle")).unwrap();
    let loaded = snapscope::Loaded::from_bytes(&bytes).unwrap();
    let d = &loaded.devices[0];
    let before: Vec<_> = d.lifetimes.iter().filter(|l| l.before_window()).collect();
    // The weights (live at dump) and the blocks of iteration 2 that were freed in the window.
    assert!(before.iter().any(|l| l.free_completed_event().is_some()), "a block allocated before the window is freed inside it");
    assert!(before.iter().any(|l| l.state_at_dump.is_some()), "a block allocated before the window is still live");
    // Small-pool blocks are exact; the large block pending at the window start may have been
    // handed a whole free block up to 1 MiB larger, and says so.
    for l in &before {
        assert!(l.size_exact || l.size_uncertainty() > 0, "{l:?}");
        if l.size <= 1 << 20 {
            assert!(l.size_exact, "{l:?}");
        }
    }
    assert_eq!(d.consistency.ambiguous_bytes, before.iter().map(|l| l.size_uncertainty()).sum::<u64>());
}

#[test]
fn stacks_are_interned_once() {
    let bytes = std::fs::read(common::fixtures().join("cuda_training.pickle")).unwrap();
    let snap = snapscope::reader::read_snapshot(&bytes).unwrap();
    let mut stacks = snap.interner.stacks.clone();
    stacks.sort();
    stacks.dedup();
    assert_eq!(stacks.len(), snap.interner.stacks.len());
    assert!(snap.interner.frames.len() <= 12, "frames are shared: {}", snap.interner.frames.len());
}

/// The reader decodes a pickle as its chunks arrive and recycles what folded trace entries used:
/// whatever the chunk boundaries, the snapshot must come out the same as from the whole file.
#[test]
fn chunked_reading_equals_whole_reading() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(common::fixtures()).unwrap().map(|e| e.unwrap().path()).collect();
    files.extend(std::fs::read_dir(common::fixtures().join("bad")).unwrap().map(|e| e.unwrap().path()));
    if let Some(corpus) = common::corpus() {
        let reference: Value = serde_json::from_slice(&std::fs::read(corpus.join("reference.json")).unwrap()).unwrap();
        files.extend(reference.as_object().unwrap().keys().map(|rel| corpus.join(rel)));
    }
    let mut compared = 0;
    for path in files.iter().filter(|p| p.is_file() && p.extension().is_some_and(|x| x != "json" || !p.ends_with("expected.json"))) {
        let bytes = std::fs::read(path).unwrap();
        let whole = summary(snapscope::reader::read_snapshot(&bytes));
        for chunk in [1usize, 7, 4096] {
            if chunk == 1 && bytes.len() > 200_000 {
                continue;
            }
            let mut reader = snapscope::reader::ChunkReader::default();
            let mut pushed = Ok(());
            for piece in bytes.chunks(chunk) {
                pushed = reader.push(piece);
                if pushed.is_err() {
                    break;
                }
            }
            let chunked = summary(pushed.and_then(|_| reader.finish()));
            assert_eq!(chunked, whole, "{}: read in chunks of {chunk} bytes", path.display());
        }
        compared += 1;
    }
    assert!(compared >= 30 + if common::corpus().is_some() { 35 } else { 0 }, "only {compared} files compared");
}

/// Everything the reader decided, as comparable text: events (all fields), stacks, segments,
/// warnings, or the error.
fn summary(r: snapscope::Result<snapscope::model::Snapshot>) -> String {
    match r {
        Err(e) => format!("error {}: {}", e.code, e.message),
        Ok(s) => {
            let mut out = format!("{} {:?} segments {:?}\n", s.encoding, s.format, s.segments);
            for (d, t) in s.traces.iter().enumerate() {
                for e in t.events.iter() {
                    let stack = e.stack().map(|id| {
                        s.interner.stacks[id as usize].iter().map(|&f| s.interner.frames[f as usize].label()).collect::<Vec<_>>()
                    });
                    out += &format!("{d} {:?} {:?} {:?}\n", e, stack, t.extra(e));
                }
            }
            out + &format!("{:?}", s.warnings)
        }
    }
}
