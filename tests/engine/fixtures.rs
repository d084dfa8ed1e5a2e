//! Golden tests: every fixture written by scripts/gen_fixtures.py gives the figures its
//! generator computed independently (fixtures/expected.json).

mod common;
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
    assert!(before.iter().any(|l| l.free_completed_event.is_some()), "a block allocated before the window is freed inside it");
    assert!(before.iter().any(|l| l.state_at_dump.is_some()), "a block allocated before the window is still live");
    // Small-pool blocks are exact; the large block pending at the window start may have been
    // handed a whole free block up to 1 MiB larger, and says so.
    for l in &before {
        assert!(l.size_exact || l.size_uncertainty > 0, "{l:?}");
        if l.size <= 1 << 20 {
            assert!(l.size_exact, "{l:?}");
        }
    }
    assert_eq!(d.consistency.ambiguous_bytes, before.iter().map(|l| l.size_uncertainty).sum::<u64>());
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
