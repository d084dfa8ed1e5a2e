//! The allocator simulator: the rule fixtures (scripts/gen_fixtures.py `simulator_fixtures`,
//! answers worked out by hand there), the self-check on every real snapshot, and the real
//! counterfactual pair of the corpus (the same NPU program recorded without and with
//! expandable segments).

use crate::common;
use serde_json::Value;
use snapscope::simulate::Simulation;
use std::path::Path;

use common::open;

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(common::fixtures().join("expected.json")).unwrap()).unwrap()
}

#[test]
fn every_rule_fixture_gives_the_worked_out_answer() {
    let all = expected();
    let mut checked = 0;
    for (name, want) in all.as_object().unwrap().iter().filter(|(_, v)| v.get("simulate").is_some()) {
        let e = open(&common::fixtures().join(name));
        let memory = want["device_memory"].as_u64();
        for (conf, figures) in want["simulate"].as_object().unwrap() {
            let sim = serde_json::to_value(e.simulate(0, Some(conf), memory).unwrap()).unwrap();
            for (key, value) in figures.as_object().unwrap() {
                let got = if key.ends_with("_peak") { &sim[key]["bytes"] } else { &sim[key] };
                assert_eq!(got, value, "{name} with {conf:?}: {key}");
                checked += 1;
            }
            if conf.is_empty() {
                assert_eq!(sim["reproduces_recording"], true, "{name}: {}", sim["first_difference"]);
            }
        }
    }
    assert!(checked >= 30, "only {checked} figures checked");
}

#[test]
fn the_oom_path_reproduces_the_recorded_release_and_retry() {
    let e = open(&common::fixtures().join("sim_oom_retry.pickle"));
    let sim = e.simulate(0, None, None).unwrap();
    let cap = sim.capacity.as_ref().expect("capacity from the recorded OOM");
    assert_eq!(cap.bytes, 100 << 20);
    assert!(cap.source.contains("device free"), "{}", cap.source);
    // The release before the 80 MiB segment is the allocator's own retry, not an empty_cache.
    assert!(sim.cache_releases.is_empty());
    assert_eq!(sim.oom_detail.as_ref().map(|o| o.recorded), Some(true));
}

#[test]
fn invalid_settings_are_refused_with_the_accepted_keys() {
    let e = open(&common::fixtures().join("sim_oversize.pickle"));
    let err = e.simulate(0, Some("expandable:True"), None).unwrap_err();
    assert_eq!(err.code, "ALLOC_CONF_INVALID");
    assert!(err.hint.contains("expandable_segments") && err.hint.contains("roundup_power2_divisions"), "{}", err.hint);
    let err = e.simulate(0, Some("max_split_size_mb:abc"), None).unwrap_err();
    assert!(err.message.contains("max_split_size_mb:abc"), "{}", err.message);
}

#[test]
fn tune_ranks_the_standard_set_and_names_what_to_try() {
    let e = open(&common::fixtures().join("sim_oom_avoided.pickle"));
    let t = e.tune(0, None).unwrap();
    assert_eq!(t.rows.len(), e.tune_candidates(0, None).unwrap().len());
    // The recorded settings run out of memory; expandable segments do not: try that first.
    assert_eq!(t.try_first.as_deref(), Some("expandable_segments:True"), "{}", t.verdict);
    assert!(t.verdict.contains("run out of memory"), "{}", t.verdict);
    let failing = t.rows.iter().position(|r| r.oom.is_u64()).unwrap();
    assert!(t.rows[..failing].iter().all(|r| !r.oom.is_u64()), "settings that fail rank last");
}

/// An OOM the simulation serves under expandable segments: the finding claims only the request
/// (the trace after an OOM is the program's recovery). Where all the free memory, joined, would
/// have left less than the request and a tenth of the device, the working set is at the device's
/// limit: the verdict is exhaustion and the advice is what holds the memory, not the setting.
#[test]
fn an_oom_served_when_simulated_claims_only_its_request() {
    for (name, at_limit) in
        [("sim_oom_avoided.pickle", false), ("program_oom_retry_smaller_batch.pickle", false), ("oom_at_the_limit.pickle", true)]
    {
        let e = open(&common::fixtures().join(name));
        let a = e.analyze(0, snapscope::engine::At::Dump).unwrap();
        let f = a.findings.iter().find(|f| f.category == "oom").expect("an oom finding");
        assert!(f.evidence.contains("this request would have been served (simulated)"), "{name}: {}", f.evidence);
        assert!(!f.evidence.contains("would not have happened"), "{name}: {}", f.evidence);
        assert_eq!(f.title.ends_with("(exhaustion)"), at_limit, "{name}: {}", f.title);
        assert_eq!(f.evidence.contains("the working set is at the device's limit"), at_limit, "{name}: {}", f.evidence);
        assert_eq!(f.suggestion.starts_with("set PYTORCH_CUDA_ALLOC_CONF"), !at_limit, "{name}: {}", f.suggestion);
    }
}

#[test]
fn every_real_snapshot_with_segment_events_is_reproduced() {
    let Some(root) = common::corpus() else {
        return;
    };
    let (mut reproduced, mut with_segment_events, mut nothing_to_check) = (0, 0, 0);
    for path in common::corpus_files(&root) {
        let e = open(&path);
        for d in e.devices().unwrap() {
            let sim = e.simulate(d, None, None).unwrap();
            let events = e.overview().unwrap().devices.iter().find(|x| x.device == d).unwrap().events;
            match sim.reproduces_recording {
                Some(true) => reproduced += 1,
                None => nothing_to_check += 1,
                Some(false) => panic!("{} device {d}: {:?}", path.display(), sim.first_difference),
            }
            // Only a trace without events has nothing to check; one without segment events is
            // reproduced when the simulation makes none either and matches every counter.
            assert_eq!(sim.reproduces_recording.is_none(), events == 0, "{} device {d}", path.display());
            with_segment_events += usize::from(sim.segment_allocs + sim.segment_frees > 0);
            assert_eq!(sim.reserved_peak.bytes, sim.recorded_reserved_peak.bytes, "{}", path.display());
        }
    }
    assert_eq!(with_segment_events, 18, "device traces whose simulation makes segment events");
    assert!(reproduced > 18 && nothing_to_check >= 10, "{reproduced} reproduced, {nothing_to_check} without events");
}

#[test]
fn a_damaged_trace_is_reported_where_it_first_differs() {
    let Some(root) = common::corpus() else { return };
    let e = open(&root.join("synthetic/synthetic_mosaic_output.pickle"));
    let sim = e.simulate(0, None, None).unwrap();
    assert_eq!(sim.reproduces_recording, Some(false));
    let d = sim.first_difference.unwrap();
    assert!(d.reason.contains("the recording does not"), "{}", d.reason);
    assert!(sim.notes.iter().any(|n| n.contains("not consistent")), "{:?}", sim.notes);
}

/// A request larger than an expandable segment's whole reservation (2^48 bytes, as a damaged or
/// hostile file can hold) fits nowhere, even on the larger device the simulation goes on with
/// after an OOM: the what-if names the OOM and goes on, where it once panicked.
#[test]
fn a_request_larger_than_any_reservation_is_an_oom_not_a_crash() {
    let (base, huge) = (0x7f00_0000_0000_u64, 1u64 << 48);
    let event =
        |action: &str, addr: u64, size: u64| serde_json::json!({"action": action, "addr": addr, "size": size, "stream": 0, "frames": []});
    let events = vec![
        event("segment_alloc", base, 2 << 20),
        event("alloc", base, 1 << 20),
        event("alloc", base + (4 << 20), huge),
        event("free_requested", base, 1 << 20),
        event("free_completed", base, 1 << 20),
    ];
    let block = serde_json::json!({"address": base, "size": 2 << 20, "requested_size": 0, "state": "inactive", "frames": []});
    let segment = serde_json::json!({"device": 0, "address": base, "total_size": 2 << 20, "allocated_size": 0, "active_size": 0,
        "requested_size": 0, "stream": 0, "segment_type": "large", "is_expandable": false, "frames": [], "blocks": [block]});
    let snap = serde_json::json!({"segments": [segment], "device_traces": [events]});
    let e = snapscope::engine::Engine::from_loaded(snapscope::Loaded::from_bytes(&serde_json::to_vec(&snap).unwrap()).unwrap(), Vec::new());
    let s = e.simulate(0, Some("expandable_segments:True"), Some(64 << 30)).unwrap();
    assert!(!s.oom.is_null(), "the request does not fit: {:?}", s.notes);
}

fn sim(root: &Path, file: &str, conf: &str) -> Simulation {
    open(&root.join("npu").join(file)).simulate(0, Some(conf), None).unwrap()
}

#[test]
fn the_npu_program_without_expandable_segments_lands_on_the_expandable_recording() {
    let Some(root) = common::corpus() else { return };
    let s = sim(&root, "snapshot_with_empty_cache.pkl", "expandable_segments:True");
    assert_eq!(s.recorded_reserved_peak.bytes, 662_700_032);
    assert_eq!(s.reserved_peak.bytes, 643_825_664, "the expandable recording's reserved peak");
    assert_eq!(s.cache_releases.len(), 3, "the program's three empty_cache calls are kept");
}

#[test]
fn the_expandable_program_without_them_differs_by_one_small_segment_of_window_start_packing() {
    let Some(root) = common::corpus() else { return };
    let recorded = sim(&root, "snapshot_with_empty_cache.pkl", "");
    assert_eq!(recorded.reproduces_recording, Some(true));
    let s = sim(&root, "snapshot_with_empty_cache_expandable.pkl", "expandable_segments:False");
    assert_eq!(s.recorded_reserved_peak.bytes, 643_825_664);
    // Every byte of the difference: the large pool is the recording's to the byte at the peak,
    // and the small pool holds one 2 MiB segment more (README: the window starts after 320
    // allocations the expandable run packed into one 8 MiB mapping).
    let large = |x: &Simulation| x.reserved_peak.bytes - x.small_pool_at_reserved_peak;
    assert_eq!(large(&s), large(&recorded));
    assert_eq!(s.small_pool_at_reserved_peak, recorded.small_pool_at_reserved_peak + (2 << 20));
    assert_eq!(s.reserved_peak.bytes, 662_700_032 + (2 << 20));
}

#[test]
fn the_oom_of_the_annotated_run_would_happen_earlier_without_expandable_segments() {
    let Some(root) = common::corpus() else { return };
    let e = open(&root.join("cuda/Constructor-Sun__code_location/memory_snapshot.pickle"));
    let a = e.analyze(1, snapscope::engine::At::Peak(snapscope::analysis::basis::Counter::Allocated)).unwrap();
    let w = a.what_if.unwrap();
    assert_eq!(w.conf, "expandable_segments:False");
    assert_eq!(w.ooms.len(), 1);
    assert!(w.ooms[0].happens);
    assert!(w.sentence.contains("would have run out of memory at event 420"), "{}", w.sentence);
    let oom = a.findings.iter().find(|f| f.category == "oom").unwrap();
    assert!(oom.evidence.contains("would still have happened (simulated)"), "{}", oom.evidence);
}

#[test]
fn the_what_if_follows_a_new_device_memory_and_lets_go_of_the_replay() {
    use snapscope::analysis::basis::Counter;
    use snapscope::engine::At;
    let f = common::fixtures().join("sim_oom_retry.pickle");
    let what_if = |e: &snapscope::engine::Engine| {
        let d = e.devices().unwrap()[0];
        serde_json::to_value(e.analyze(d, At::Peak(Counter::Allocated)).unwrap().what_if.unwrap()).unwrap()
    };
    let mut e = open(&f);
    let recorded = what_if(&e);
    // Natively simulated in the background: a device memory set afterwards is simulated anew.
    e.set_device_memory(Some(1));
    let small = what_if(&e);
    let fresh = open(&f);
    fresh.set_device_memory(Some(1));
    assert_eq!(small, what_if(&fresh));
    assert_ne!(small, recorded, "one byte of device memory changes the what-if");
    e.set_device_memory(None);
    assert_eq!(what_if(&e), recorded);
    // No simulation still holds the replay: the rules can change.
    e.set_category_rules(None).unwrap();
}
