//! Hostile, broken and damaged inputs (fixtures/bad, written by scripts/gen_bad_fixtures.py):
//! each is refused with its code or analysed partially with warnings that name the events; no
//! input panics; truncation at every offset and random corruption give errors, never crashes.

use crate::common;
use serde_json::Value;
use std::time::{Duration, Instant};

fn bad_dir() -> std::path::PathBuf {
    common::fixtures().join("bad")
}

#[test]
fn every_bad_input_gets_its_outcome() {
    let expected: Value = serde_json::from_slice(&std::fs::read(bad_dir().join("expected.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (name, want) in expected.as_object().unwrap() {
        let bytes = std::fs::read(bad_dir().join(name)).unwrap();
        let got = snapscope::Loaded::from_bytes(&bytes);
        if want.get("loads").is_some() {
            let t0 = Instant::now();
            got.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(t0.elapsed() < Duration::from_secs(5), "{name}: loads quickly");
        } else if let Some(code) = want.get("error") {
            let e = got.err().unwrap_or_else(|| panic!("{name}: expected {code}, it loaded"));
            assert_eq!(e.code, code.as_str().unwrap(), "{name}: {e}");
            assert!(!e.hint.is_empty(), "{name}: every error says what to do");
            if e.code.name().starts_with("PICKLE") {
                assert!(e.message.starts_with("byte "), "{name}: pickle errors name the byte offset: {}", e.message);
            }
        } else {
            let l = got.unwrap_or_else(|e| panic!("{name}: a damaged snapshot must still load: {e}"));
            let dev = want["device"].as_i64().unwrap();
            let d = l.device(dev).unwrap();
            assert!(!d.consistency.ok, "{name}: damage is reported");
            let mut named: Vec<u32> = d.consistency.issues.iter().filter_map(|i| i.event).collect();
            named.extend(l.snapshot.warnings.iter().filter_map(|w| w.event.map(|e| e as u32)));
            if let Some(events) = want["damaged"].as_array() {
                for e in events {
                    let e = e.as_u64().unwrap() as u32;
                    // A duplicated event may be reported at its twin, right before it.
                    assert!(named.iter().any(|&n| n + 1 >= e && n <= e + 1), "{name}: event {e} is named in {named:?}");
                }
            }
            // The trustworthy numbers stay exact: the state after the last event is the dump.
            let dump = l.snapshot.dump_totals(dev);
            let last = d.series.last().unwrap();
            assert_eq!((last.allocated, last.reserved), (dump.allocated as i64, dump.reserved as i64), "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn truncation_at_every_offset_is_an_error_with_an_offset() {
    let bytes = std::fs::read(common::fixtures().join("multi_device_oom.pickle")).unwrap();
    for cut in 0..bytes.len() - 1 {
        match snapscope::Loaded::from_bytes(&bytes[..cut]) {
            Err(e) => assert!(e.code == "PICKLE_INVALID" || e.code == "SNAPSHOT_INVALID", "cut {cut}: {e}"),
            Ok(_) => panic!("cut at {cut} of {} loaded", bytes.len()),
        }
    }
}

#[test]
fn random_corruption_never_panics() {
    let base = std::fs::read(common::fixtures().join("cuda_training.pickle")).unwrap();
    let mut state = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let t0 = Instant::now();
    for k in 0..3000 {
        let mut b = base.clone();
        for _ in 0..(1 + next() % 4) {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        // Errors are fine; panics and hangs are not. Every 20th also goes through the store and
        // the analyses.
        match snapscope::Loaded::from_bytes(&b) {
            Ok(l) if k % 20 == 0 => {
                let e = snapscope::engine::Engine::from_loaded(l, Vec::new());
                let _ = e.analyze(0, snapscope::engine::At::Peak(snapscope::analysis::basis::Counter::Allocated));
            }
            _ => {}
        }
    }
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_one_megabyte_random_file_fails_fast_in_the_cli() {
    let dir = common::Scratch::new("random");
    let path = dir.join("random.bin");
    let mut x = 12345u64;
    let data: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect();
    std::fs::write(&path, &data).unwrap();
    let t0 = Instant::now();
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_snapscope")).args(["overview", path.to_str().unwrap(), "--json"]).output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1));
    // Peak memory of the largest child this test process waited for (the CLI just run).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    assert!(usage.ru_maxrss < 1 << 20, "peak RSS {} KiB must stay under 1 GiB", usage.ru_maxrss);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}
