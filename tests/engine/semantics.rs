//! What the memory is and when: categories, phases and steps, on the fixture with known answers
//! (scripts/gen_fixtures.py `semantics_training`) and on the real corpus, where the categories
//! must sum exactly to the active counter at every event tested.

use crate::common;
use serde_json::Value;
use snapscope::analysis::step_growth::GrowthVerdict;
use snapscope::engine::{At, Engine};
use snapscope::Loaded;
use std::collections::BTreeMap;

use common::open;

fn expected() -> Value {
    let all: Value = serde_json::from_slice(&std::fs::read(common::fixtures().join("expected.json")).unwrap()).unwrap();
    all["semantics_training.pickle"]["semantics"].clone()
}

fn by_category(e: &Engine, at: At) -> (BTreeMap<String, i64>, i64) {
    let c = e.categories(0, at).unwrap();
    (c.categories.iter().map(|x| (x.category.clone(), x.bytes)).collect(), c.active)
}

#[test]
fn the_fixture_categories_are_the_known_ones_at_every_event() {
    let want = expected();
    let e = open(&common::fixtures().join("semantics_training.pickle"));
    let peak = want["peak_allocated_event"].as_i64().unwrap();
    let (at_peak, active) = by_category(&e, At::Event(peak));
    let known: BTreeMap<String, i64> = serde_json::from_value(want["categories_at_peak"].clone()).unwrap();
    assert_eq!(at_peak, known, "categories at the allocated peak");
    assert_eq!(active, want["active_at_peak"].as_i64().unwrap());
    for (i, sums) in want["by_event"].as_array().unwrap().iter().enumerate() {
        let known: BTreeMap<String, i64> = sums
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, v)| v.as_i64() != Some(0))
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        let (got, active) = by_category(&e, At::Event(i as i64));
        assert_eq!(got, known, "event {i}");
        assert_eq!(got.values().sum::<i64>(), active, "event {i}: the categories sum to the active counter");
    }
    let c = e.categories(0, At::Event(peak)).unwrap();
    assert!(c.finding.as_deref().unwrap().starts_with("Activations are 37%"), "{:?}", c.finding);
    let act = c.categories.iter().find(|x| x.category == "activation").unwrap();
    assert_eq!(act.rules[0].rule, "activation");
    assert!(act.rules[0].why.contains("alive when backward starts"));
}

#[test]
fn the_fixture_steps_phases_and_growth_are_the_known_ones() {
    let want = expected();
    let e = open(&common::fixtures().join("semantics_training.pickle"));
    let s = e.steps(0).unwrap();
    assert_eq!(s.step_source.as_deref(), Some("ProfilerStep annotations"));
    assert_eq!(s.steps.len() as i64, want["steps"].as_i64().unwrap());
    let ends: Vec<i64> = s.steps.iter().map(|x| x.end_allocated).collect();
    let want_ends: Vec<i64> = serde_json::from_value(want["step_end_allocated"].clone()).unwrap();
    assert_eq!(ends, want_ends);
    assert_eq!(s.growth.verdict, GrowthVerdict::Growing);
    assert_eq!(s.growth.bytes_per_step, want["growth_per_step"].as_i64());
    assert_eq!(s.growth.steps_compared, vec![2, 3, 4], "the first step warms up and is left out");
    assert!(s.steps.iter().all(|x| x.peak_phase == "backward"), "each step peaks in backward");
    assert_eq!(s.peak_allocated_at.as_ref().map(|p| (p.step, p.phase.as_str())), Some((Some(4), "backward")));
    assert_eq!(s.framework_ranges, 1, "the dynamo range is grouped");
    let compiled: Vec<_> = s.phases.iter().filter(|p| p.group == "compiled").collect();
    assert_eq!(compiled.len(), 1);
    assert_eq!(compiled[0].name, "0/0");
    let runs: Vec<&str> = s.phases.iter().filter(|p| p.kind == "run").map(|p| p.name.as_str()).collect();
    assert_eq!(runs.iter().filter(|&&r| r == "backward").count(), 4, "one backward pass per step: {runs:?}");
}

#[test]
fn user_rules_go_first_and_bad_ones_are_refused_with_the_reason() {
    let mut e = open(&common::fixtures().join("semantics_training.pickle"));
    let peak = expected()["peak_allocated_event"].as_i64().unwrap();
    e.set_category_rules(Some(
        "[[rule]]\nname = \"history\"\ncategory = \"kept history\"\nfunction = '^keep_history$'\nwhy = \"logged tensors\"\n",
    ))
    .unwrap();
    let (got, active) = by_category(&e, At::Event(peak));
    assert_eq!(got["kept history"], 4 * 2 * 1024 * 1024, "four steps' kept tensors");
    assert_eq!(got.values().sum::<i64>(), active);
    let rows =
        e.sql("SELECT category_rule, COUNT(*) FROM lifetimes WHERE category = 'kept history' GROUP BY 1", Default::default()).unwrap();
    assert_eq!(serde_json::to_value(&rows.rows[0][1]).unwrap(), 4, "the SnapshotDB follows the new rules");
    let err = e.set_category_rules(Some("[[rule]]\nname = \"x\"\ncategory = \"y\"\nfile = '('\n")).unwrap_err();
    assert_eq!(err.code, "RULES_INVALID");
    assert!(err.message.contains("rule 1") && err.message.contains("regular expression"), "{}", err.message);
    e.set_category_rules(None).unwrap();
    assert!(!by_category(&e, At::Event(peak)).0.contains_key("kept history"));
}

/// Every corpus file: at the peaks, the dump and evenly spaced events, the categories sum to
/// the active counter exactly.
#[test]
fn corpus_categories_sum_to_the_active_counter() {
    let Some(dir) = common::corpus() else {
        return;
    };
    let refs: Value = serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    let mut tested = 0;
    for rel in refs.as_object().unwrap().keys() {
        let e = open(&dir.join(rel));
        for d in e.devices().unwrap() {
            let events = e.overview().unwrap().devices.iter().find(|x| x.device == d).unwrap().events as i64;
            let mut at: Vec<At> = vec![At::WindowStart, At::Dump, At::Peak(snapscope::analysis::basis::Counter::Allocated)];
            at.extend((0..12).map(|k| At::Event(k * events / 12)).filter(|_| events > 0));
            let consistent = e.overview().unwrap().devices.iter().find(|x| x.device == d).unwrap().consistency.ok;
            for a in at {
                let c = e.categories(d, a).unwrap();
                let sum: i64 = c.categories.iter().map(|x| x.bytes).sum();
                assert_eq!(sum, c.active, "{rel} device {d} at {:?}", c.event);
                // Only a trace the replay could not reconcile leaves bytes no lifetime explains.
                let gap = c.categories.iter().any(|x| x.category == "unaccounted");
                assert!(!gap || !consistent, "{rel} device {d} at {:?}: unaccounted bytes on a consistent trace", c.event);
                tested += 1;
            }
        }
    }
    assert!(tested > 35 * 10, "{tested} checks");
}

/// The training snapshots show parameters, gradients, optimizer state and activations as
/// separate shares, each with its rule; the NPU run's steps grow.
#[test]
fn corpus_training_runs_have_the_four_training_shares() {
    let Some(dir) = common::corpus() else {
        return;
    };
    for (rel, rules) in [
        (
            "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
            ["pairs-with-gradient", "freed-by-zero-grad", "optimizer-state", "activation"],
        ),
        ("npu/snapshot_with_empty_cache.pkl", ["pairs-with-gradient", "freed-by-zero-grad", "optimizer-state", "activation"]),
    ] {
        let e = open(&dir.join(rel));
        let c = e.categories(0, At::Dump).unwrap();
        let peak = e.categories(0, At::Peak(snapscope::analysis::basis::Counter::Allocated)).unwrap();
        let mut seen = BTreeMap::new();
        for x in c.categories.iter().chain(&peak.categories) {
            for r in &x.rules {
                seen.insert(r.rule.clone(), x.category.clone());
            }
        }
        for (rule, cat) in rules.iter().zip(["parameter", "gradient", "optimizer state", "activation"]) {
            assert_eq!(seen.get(*rule).map(String::as_str), Some(cat), "{rel}: {rule} → {cat} in {seen:?}");
        }
    }
    let e = open(&dir.join("npu/snapshot_with_empty_cache.pkl"));
    let s = e.steps(0).unwrap();
    assert_eq!(s.step_source.as_deref(), Some("optimizer steps"));
    assert_eq!(s.steps.iter().filter(|x| x.complete).count(), 3);
    assert_eq!(s.growth.verdict, GrowthVerdict::Growing, "{}", s.growth.text);
    assert_eq!(s.growth.bytes_per_step, Some(40 * 1024 * 1024 + 512));
    // The annotated CUDA run: its Optimizer.step range is found and zero_grad does not end a step.
    let e = open(&dir.join("cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"));
    let s = e.steps(0).unwrap();
    assert!(s.phases.iter().any(|p| p.name == "Optimizer.step#AdamW.step" && p.group == "optimizer" && p.start_event.is_some()));
    assert_eq!(s.steps.len(), 1, "one optimizer step in the window");
    assert_eq!(s.peak_allocated_at.as_ref().map(|p| p.phase.as_str()), Some("forward"));
}

#[test]
fn cli_modes_answer_the_json_contract() {
    let fx = common::fixtures().join("semantics_training.pickle");
    let run = |args: &[&str]| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapscope")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let c = run(&["analyze", fx.to_str().unwrap(), "--mode", "categories", "--json"]);
    let d = &c["devices"][0]["categories"];
    assert_eq!(d["event"], expected()["peak_allocated_event"]);
    let sum: i64 = d["categories"].as_array().unwrap().iter().map(|x| x["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, d["active"].as_i64().unwrap());
    for x in d["categories"].as_array().unwrap() {
        assert!(x["rules"].as_array().unwrap().iter().all(|r| r["rule"].is_string() && r["bytes"].is_i64()), "{x}");
    }
    assert!(c["rules"].as_array().unwrap().len() >= 15);
    let s = run(&["analyze", fx.to_str().unwrap(), "--mode", "steps", "--json"]);
    let d = &s["devices"][0]["steps"];
    assert!(d["phases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p.get("name").is_some() && p.get("start_event").is_some() && p.get("end_event").is_some()));
    let st = &d["steps"][1];
    for k in ["step", "first_event", "last_event"] {
        assert!(st[k].is_i64(), "{k}");
    }
    assert!(st["peak_allocated"]["bytes"].is_i64() && st["peak_reserved"]["event"].is_i64());
    assert_eq!(d["growth"]["verdict"], "growing");
    // --categories RULES.toml
    let dir = common::Scratch::new("rules");
    let rules = dir.join("rules.toml");
    std::fs::write(&rules, "[[rule]]\nname = \"history\"\ncategory = \"kept history\"\nfunction = '^keep_history$'\n").unwrap();
    let c = run(&["analyze", fx.to_str().unwrap(), "--mode", "categories", "--categories", rules.to_str().unwrap(), "--json"]);
    assert!(c["devices"][0]["categories"]["categories"].as_array().unwrap().iter().any(|x| x["category"] == "kept history"));
    assert_eq!(c["rules"][0]["origin"], "user");
    std::fs::write(&rules, "[[rule]]\nname = 1\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapscope"))
        .args(["analyze", fx.to_str().unwrap(), "--mode", "categories", "--categories", rules.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("RULES_INVALID"));
}

/// Per stream: the streams' active bytes at the allocated peak sum to the device's active counter.
#[test]
fn corpus_streams_sum_to_the_active_counter_at_the_peak() {
    let Some(dir) = common::corpus() else {
        return;
    };
    for rel in [
        "npu/snapshot_with_multi_devices.pkl",
        "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
        "cuda/JasperSolt__EoR_NN/snapshot.pickle",
    ] {
        let e = open(&dir.join(rel));
        for d in e.devices().unwrap() {
            let s = e.streams(d).unwrap();
            let peak = e.overview().unwrap().devices.iter().find(|x| x.device == d).unwrap().peaks.allocated.event;
            let active = e.categories(d, peak.map_or(At::WindowStart, |p| At::Event(p as i64))).unwrap().active;
            assert_eq!(s.streams.iter().map(|x| x.at_allocated_peak).sum::<i64>(), active, "{rel} device {d}");
            assert!(s.streams.iter().all(|x| x.peak_active.bytes >= x.at_allocated_peak));
        }
    }
}

/// The fixture's second device (scripts/gen_fixtures.py, case 4): a 12 MiB block, an OOM, an
/// 8 MiB block, then the first freed and never returned. Its one stream peaks at both blocks
/// (event 3), and holds the 12 MiB as pending from the free (event 4) to the dump.
#[test]
fn a_free_never_returned_is_pending_on_its_stream_to_the_dump() {
    let e = open(&common::fixtures().join("multi_device_oom.pickle"));
    let s = e.streams(1).unwrap();
    assert_eq!((s.streams_total, s.truncated), (1, false));
    let x = &s.streams[0];
    assert_eq!((x.stream, x.allocations), (0, 2));
    assert_eq!((x.peak_active.bytes, x.peak_active.event), (20 << 20, Some(3)));
    assert_eq!(x.at_allocated_peak, 20 << 20);
    assert_eq!((x.peak_pending_free.bytes, x.peak_pending_free.event), (12 << 20, Some(4)));
    assert_eq!(x.pending_free_at_dump, 12 << 20);
}

/// The newer fields on the fixture: the forward stack and phase of a backward allocation in the
/// event detail, the template's group-bys, the ring buffer said plainly.
#[test]
fn newer_fields_are_shown_and_queryable() {
    let mut e = open(&common::fixtures().join("semantics_training.pickle"));
    let grad = e
        .sql("SELECT trace_index FROM traces WHERE action = 'alloc' AND extra_json LIKE '%forward_frames%' LIMIT 1", Default::default())
        .unwrap();
    let index = serde_json::to_value(&grad.rows[0][0]).unwrap().as_i64().unwrap();
    let d = e.event(0, index).unwrap();
    assert_eq!(d.phase, "backward");
    assert!(d.forward_frames.as_deref().unwrap().contains("model.py:12:forward"));
    assert_eq!(d.lifetime.as_ref().unwrap().category.as_deref(), Some("gradient"));
    let peak = expected()["peak_allocated_event"].as_i64().unwrap();
    let by = |e: &mut Engine, g: &str| -> BTreeMap<String, i64> {
        let p = serde_json::json!({"event_id": peak, "group_by": g});
        let r = e.query("categories", p.as_object().unwrap(), Default::default()).unwrap();
        let v = serde_json::to_value(r.with_rows(snapscope::query::sql::RowShape::Arrays)).unwrap();
        v["rows"].as_array().unwrap().iter().map(|r| (r[0].as_str().unwrap().to_string(), r[2].as_i64().unwrap())).collect()
    };
    assert_eq!(by(&mut e, "user_metadata")["history"], 4 * 2 * 1024 * 1024, "the kept tensors carry user_metadata");
    assert_eq!(by(&mut e, "compile_context")["0/0"], 3 * 10 * 1024 * 1024, "the last step's activations ran compiled");
    assert_eq!(by(&mut e, "category"), serde_json::from_value::<BTreeMap<String, i64>>(expected()["categories_at_peak"].clone()).unwrap());
    // FX node fields of generated code: in the frames table and in the event's frames.
    let act = e
        .sql(
            "SELECT t.trace_index FROM traces t JOIN stack_frames sf ON sf.stack_id = t.stack_id JOIN frames f ON f.id = sf.frame_id
             WHERE f.fx_node_name = 'mm_default' AND t.action = 'alloc' LIMIT 1",
            Default::default(),
        )
        .unwrap();
    let index = serde_json::to_value(&act.rows[0][0]).unwrap().as_i64().unwrap();
    let fx = e.event(0, index).unwrap().frames.into_iter().find_map(|f| f.fx).unwrap();
    assert_eq!((fx.op.as_deref(), fx.target.as_deref()), (Some("call_function"), Some("aten.mm.default")));
    let w = &e.overview().unwrap().devices[0].window;
    assert_eq!((w.max_entries, w.overflowed), (Some(10000), Some(false)));
    // A cut ring buffer (trace_alloc_max_entries = the events kept): the finding says so.
    let cut = open(&common::fixtures().join("ring_buffer_cut.pickle"));
    assert_eq!(cut.overview().unwrap().devices[0].window.overflowed, Some(true));
    let a = cut.analyze(0, At::Peak(snapscope::analysis::basis::Counter::Allocated)).unwrap();
    assert!(a
        .findings
        .iter()
        .any(|f| f.title.contains("ring buffer wrapped") && f.evidence.contains("Peaks, steps and growth are those of the window")));
}

/// `--categories` applies to every command that opens a snapshot: SQL sees the user's category.
#[test]
fn cli_sql_follows_the_category_rules() {
    let fx = common::fixtures().join("semantics_training.pickle");
    let dir = common::Scratch::new("sql-rules");
    let rules = dir.join("rules.toml");
    std::fs::write(&rules, "[[rule]]\nname = \"history\"\ncategory = \"kept history\"\nfunction = '^keep_history$'\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapscope"))
        .args(["sql", fx.to_str().unwrap(), "SELECT COUNT(*) AS n FROM lifetimes WHERE category = 'kept history'", "--categories"])
        .arg(&rules)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"][0]["n"], 4);
}

/// A run that ran out of memory in the forward pass: what held the memory at the OOM is the
/// pass's activations, not "temporaries" (freed only by the exception's unwinding).
#[test]
fn corpus_forward_oom_holders_are_activations() {
    let Some(dir) = common::corpus() else {
        return;
    };
    let e = open(&dir.join("cuda/Constructor-Sun__code_location/memory_snapshot.pickle"));
    let c = e.categories(1, At::Peak(snapscope::analysis::basis::Counter::Allocated)).unwrap();
    assert_eq!(c.categories[0].category, "activation");
    assert_eq!(c.categories[0].rules[0].rule, "activation-at-oom");
    assert!(c.categories[0].share > 0.95);
}

/// Pinned host memory (`host_segments` / `host_traces`) is its own entry after the devices,
/// marked as host memory, with the fixture's known peak; the categories work on it too.
#[test]
fn pinned_host_memory_is_its_own_entry() {
    let all: Value = serde_json::from_slice(&std::fs::read(common::fixtures().join("expected.json")).unwrap()).unwrap();
    let want = &all["pinned_host.pickle"]["devices"][1];
    let e = open(&common::fixtures().join("pinned_host.pickle"));
    let ov = e.overview().unwrap();
    let host = ov.devices.iter().find(|d| d.pinned_host).expect("a pinned-host entry");
    assert_eq!(host.device, 1, "numbered after the last device");
    assert_eq!(host.events as i64, want["events"].as_i64().unwrap());
    assert_eq!(host.peaks.allocated.bytes, want["peaks"]["allocated"]["bytes"].as_i64().unwrap());
    assert!(host.consistency.ok);
    assert!(!ov.devices[0].pinned_host);
    let c = e.categories(1, At::Dump).unwrap();
    assert_eq!(c.categories.iter().map(|x| x.bytes).sum::<i64>(), c.active);
    assert!(ov.warnings.iter().all(|w| w.code != "HOST_MEMORY_IGNORED"));
}

/// A compiled model's thousands of dynamo / inductor ranges are grouped as framework ranges (and
/// hidden by default); the ProfilerStep ranges still give the steps.
#[test]
fn framework_ranges_are_grouped_and_steps_still_found() {
    let all: Value = serde_json::from_slice(&std::fs::read(common::fixtures().join("expected.json")).unwrap()).unwrap();
    let want = &all["compiled_ranges.pickle"];
    let e = open(&common::fixtures().join("compiled_ranges.pickle"));
    let s = e.steps(0).unwrap();
    assert_eq!(s.framework_ranges as i64, want["framework_ranges"].as_i64().unwrap());
    assert_eq!(s.steps.len() as i64, want["steps"].as_i64().unwrap());
    assert_eq!(s.step_source.as_deref(), Some("ProfilerStep annotations"));
    assert_eq!(s.growth.verdict, GrowthVerdict::Stable, "{}", s.growth.text);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapscope"))
        .args(["analyze", common::fixtures().join("compiled_ranges.pickle").to_str().unwrap(), "--mode", "steps"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3,000 framework ranges (dynamo / inductor / AOT) hidden"), "{text}");
    assert!(text.lines().count() < 20, "the text lists the steps, not the framework ranges");
}

/// A repeating allocation pattern without a backward pass or an optimizer step is not a run of
/// steps (the fixture's frames name neither), nor is one forward pass through repeated layers.
#[test]
fn no_steps_from_a_repeating_allocation_pattern() {
    let e = open(&common::fixtures().join("cuda_training.pickle"));
    let s = e.steps(0).unwrap();
    assert_eq!(s.step_source, None);
    assert!(s.steps.is_empty());
    let Some(dir) = common::corpus() else {
        return;
    };
    let e = open(&dir.join("cuda/Constructor-Sun__code_location/memory_snapshot.pickle"));
    assert!(e.steps(2).unwrap().steps.is_empty(), "one forward pass through repeated layers is not a run of steps");
}

/// Compare with a dump-only file: no peak figures or peak delta for the side without a trace.
#[test]
fn compare_with_a_dump_only_file_shows_no_peaks_for_it() {
    let Some(dir) = common::corpus() else {
        return;
    };
    let a = open(&dir.join("cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"));
    let b = open(&dir.join("cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle"));
    let c = a.compare_with(&b.compare_side().unwrap()).unwrap();
    let d = &c.devices[0];
    assert_eq!(d.allocated_peak_delta, None);
    let peak = d.figures.iter().find(|f| f.label == "peak allocated").unwrap();
    assert!(peak.a.is_some() && peak.b.is_none() && peak.delta.is_none());
    let dump = d.figures.iter().find(|f| f.label == "allocated at dump").unwrap();
    assert!(dump.b.is_some() && dump.delta.is_some());
}

/// Programs of each kind, written by `scripts/gen_fixtures.py` with what every block is: the
/// engine names the kind, counts only training steps (never the layers of one forward pass),
/// gives every block the category the program's bookkeeping says, and calls a leak only where a
/// tensor is kept step after step.
#[test]
fn program_fixtures_are_read_as_the_programs_they_are() {
    let all: Value = serde_json::from_slice(&std::fs::read(common::fixtures().join("expected.json")).unwrap()).unwrap();
    let mut seen = 0;
    for (name, want) in all.as_object().unwrap().iter().filter(|(n, _)| n.starts_with("program_")) {
        let want = &want["program"];
        let e = open(&common::fixtures().join(name));
        let s = e.steps(0).unwrap();
        assert_eq!(s.program.kind, want["kind"].as_str().unwrap(), "{name}: {}", s.program.text);
        assert_eq!(s.program.training_steps as i64, want["training_steps"].as_i64().unwrap(), "{name}");
        if want["kind"] == "forward" || want["kind"] == "model_build" {
            assert!(s.steps.is_empty(), "{name}: no steps without a backward pass or an optimizer step");
        }
        if let Some(g) = want["growth_per_step"].as_i64() {
            assert_eq!(s.growth.bytes_per_step, Some(g), "{name}: {}", s.growth.text);
        }
        if let Some(phase) = want["peak_phase"].as_str() {
            assert_eq!(s.peak_allocated_at.as_ref().map(|p| p.phase.as_str()), Some(phase), "{name}: the phase of the peak");
        }
        let peak = want["peak_allocated_event"].as_i64().unwrap();
        let (got, active) = by_category(&e, At::Event(peak));
        let known: BTreeMap<String, i64> = serde_json::from_value(want["categories_at_peak"].clone()).unwrap();
        assert_eq!(got, known, "{name}: categories at the allocated peak");
        assert_eq!(got.values().sum::<i64>(), active);
        let a = e.analyze(0, At::Peak(snapscope::analysis::basis::Counter::Allocated)).unwrap();
        let high_leak: Vec<&str> =
            a.findings.iter().filter(|f| f.category == "leak" && f.priority == "high").map(|f| f.title.as_str()).collect();
        assert_eq!(!high_leak.is_empty(), want["leak"].as_bool().unwrap(), "{name}: high-priority leak findings {high_leak:?}");
        if let Some(f) = a.findings.iter().find(|f| f.category == "leak" && f.priority == "high").filter(|_| want["leak_site"] != false) {
            // The evidence names the site that keeps memory step after step (the fixture's kept tensor).
            assert!(f.evidence.contains("Kept in step after step: forward (model.py:44)"), "{name}: {}", f.evidence);
        }
        if let Some(v) = want["growth_verdict"].as_str() {
            assert_eq!(serde_json::to_value(s.growth.verdict).unwrap(), v, "{name}: {}", s.growth.text);
        }
        if let Some(b) = want["kept_bytes"].as_i64() {
            assert_eq!(s.growth.kept.as_ref().map(|k| k.bytes), Some(b), "{name}: {}", s.growth.text);
        }
        // Kept from some steps, not every one: a medium finding with the steps and the site.
        let kept_steps =
            a.findings.iter().find(|f| f.category == "leak" && f.priority == "medium" && f.title.contains("still held at the end of step"));
        match want["kept_steps"].as_array() {
            Some(steps) => {
                let want_steps: Vec<i64> = steps.iter().map(|v| v.as_i64().unwrap()).collect();
                assert_eq!(s.growth.kept.as_ref().map(|k| k.steps.clone()), Some(want_steps), "{name}");
                let site = want["kept_site"].as_str().unwrap_or("forward (model.py:44)");
                assert!(kept_steps.is_some_and(|f| f.evidence.contains(&format!("Largest site: {site}"))), "{name}: {kept_steps:?}");
            }
            None => assert!(kept_steps.is_none(), "{name}: {kept_steps:?}"),
        }
        let held = a.findings.iter().find(|f| f.title.contains("held through the forward pass"));
        match want["held_gradient_bytes"].as_i64() {
            Some(b) => {
                assert_eq!(a.held_gradients.as_ref().map(|h| h.bytes as i64), Some(b), "{name}");
                assert!(held.is_some_and(|f| f.suggestion.contains("zero_grad")), "{name}: {held:?}");
            }
            None => assert!(held.is_none(), "{name}: {held:?}"),
        }
        if want["kind"] == "forward" && known.iter().max_by_key(|(_, b)| **b).is_some_and(|(c, _)| c == "activation") {
            // The pass's outputs hold most of the peak: the advice names what keeps no activations.
            let activation = a.findings.iter().find(|f| f.title.contains("(activation)") || f.title.starts_with("Activation"));
            assert!(activation.is_some_and(|f| f.suggestion.contains("torch.inference_mode()")), "{name}: {activation:?}");
        }
        // Growth without steps: a site that keeps a block from pass after pass, never the layers
        // of one pass (program_forward_layers) or a cache replaced as it grows.
        let kept = a.findings.iter().find(|f| f.title.starts_with("Memory kept pass after pass"));
        let leak = e.leak(0).unwrap().expect("a leak analysis");
        match want.get("kept_per_pass") {
            Some(k) => {
                let got = leak.kept_per_pass.as_ref().expect("a site kept pass after pass");
                assert_eq!(
                    (got.passes, got.site.blocks, got.site.bytes),
                    (k["passes"].as_i64().unwrap(), k["blocks"].as_i64().unwrap(), k["bytes"].as_i64().unwrap()),
                    "{name}"
                );
                assert!(kept.is_some_and(|f| f.priority == "medium" && f.title.contains("forward (model.py:44)")), "{name}: {kept:?}");
            }
            None => {
                assert!(kept.is_none(), "{name}: {kept:?}");
                // In training the steps give the verdict; the site is still named where one leaks
                // (where it keeps blocks from enough passes: not a buffer replaced as it grows).
                if want["passes_kept"] != false {
                    assert_eq!(leak.kept_per_pass.is_some(), want["leak"].as_bool().unwrap(), "{name}: {:?}", leak.kept_per_pass);
                }
            }
        }
        if want["site_finding"] == false {
            // One line that runs every pass (`trainer.train()`) holds everything: no site to look at.
            let site = a.findings.iter().find(|f| f.title.starts_with("One allocation site"));
            assert!(site.is_none(), "{name}: {site:?}");
        }
        if let Some(holders) = want["oom_advice_for"].as_array() {
            // Out of memory with no activation alive: the advice names what holds the memory,
            // largest first, and nothing about the batch.
            let oom = e.oom(0).unwrap();
            let advice = &oom.ooms[0].suggestions;
            let named: Vec<&str> = advice.iter().filter_map(|s| s.split(" holds ").next().filter(|_| s.contains(" holds "))).collect();
            let want_named: Vec<&str> = holders.iter().map(|v| v.as_str().unwrap()).collect();
            assert_eq!(named, want_named, "{name}: {advice:?}");
            assert!(advice.iter().all(|s| !s.contains("batch")), "{name}: {advice:?}");
            // The step the allocation failed in did not finish, though an optimizer run ends it.
            let failed = s.steps.iter().find(|st| st.oom_event.map(i64::from) == Some(oom.ooms[0].event));
            assert!(failed.is_some_and(|st| !st.complete), "{name}: {failed:?}");
        }
        if let Some(v) = want["oom_verdict"].as_str() {
            // Memory kept step after step until it ran out: the growth is the OOM's cause.
            let oom = e.oom(0).unwrap();
            assert_eq!(oom.ooms[0].verdict, v, "{name}: {}", oom.ooms[0].explanation);
        }
        if want["oom_recovered"] == true {
            // Caught inside the pass, which went on: the step finished.
            let failed: Vec<bool> = s.steps.iter().filter(|st| st.oom_event.is_some()).map(|st| st.complete).collect();
            assert_eq!(failed, [true], "{name}");
        }
        if let Some(retry) = want["retry_at"].as_i64() {
            // A failed attempt, caught and run again: the attempt is a step of its own, not
            // complete, and ends where the program starts again.
            let failed: Vec<(i64, bool)> =
                s.steps.iter().filter(|st| st.oom_event.is_some()).map(|st| (st.last_event as i64, st.complete)).collect();
            assert_eq!(failed, [(retry - 1, false)], "{name}");
        }
        let program = a.findings.iter().find(|f| f.category == "program").expect("a program finding");
        assert!(program.evidence.contains("events:"), "{name}: {}", program.evidence);
        seen += 1;
    }
    let words = ["", "one", "two", "three", "four", "five", "six"];
    let readme = std::fs::read_to_string(common::fixtures().join("../README.md")).unwrap();
    let said = format!("a site that keeps a block from {} or more passes", words[snapscope::analysis::leak::MIN_PASSES as usize]);
    assert!(readme.replace("\n  ", " ").contains(&said), "README.md says {said:?}");
    // The held-past-steps rule's count, as the README and the rule's own why state it.
    let held = format!("still held after {} optimizer steps", words[snapscope::semantics::categories::OUTLIVES_STEPS]);
    assert!(readme.replace("\n  ", " ").contains(&held), "README.md says {held:?}");
    let rules: Vec<String> = snapscope::semantics::RuleSet::defaults().info().into_iter().map(|r| r.why).collect();
    assert!(rules.iter().any(|w| w.contains(&held)), "a default rule says {held:?}");
    assert_eq!(seen, 55, "fifty-five program fixtures (one of them the stable steps with lines moved)");
}

/// A trace with a backward pass every few events (a hostile file can have hundreds of
/// thousands): the steps answer lists the first `MAX_STEPS` and says how many there are.
#[test]
fn steps_answers_are_bounded_and_count_the_rest() {
    use snapscope::analysis::steps::{MAX_SPANS, MAX_STEPS};
    let fwd = serde_json::json!([{"filename": "/w/model.py", "line": 3, "name": "forward"}]);
    let bwd = serde_json::json!([{"filename": "/usr/lib/python3/site-packages/torch/autograd/__init__.py", "line": 9, "name": "backward"}]);
    let (base, n) = (0x7f00_0000_0000_u64, MAX_STEPS + 500);
    let mut events = Vec::new();
    for _ in 0..n {
        events.push(serde_json::json!({"action": "alloc", "addr": base, "size": 512, "stream": 0, "frames": fwd}));
        events.push(serde_json::json!({"action": "free_requested", "addr": base, "size": 512, "stream": 0, "frames": bwd}));
        events.push(serde_json::json!({"action": "free_completed", "addr": base, "size": 512, "stream": 0, "frames": bwd}));
    }
    let block = serde_json::json!({"address": base, "size": 2 << 20, "requested_size": 0, "state": "inactive", "frames": []});
    let segment = serde_json::json!({"device": 0, "address": base, "total_size": 2 << 20, "allocated_size": 0, "active_size": 0,
        "requested_size": 0, "stream": 0, "segment_type": "small", "is_expandable": false, "frames": [], "blocks": [block]});
    let snap = serde_json::json!({"segments": [segment], "device_traces": [events]});
    let e = Engine::from_loaded(Loaded::from_bytes(&serde_json::to_vec(&snap).unwrap()).unwrap(), Vec::new());
    let s = e.steps(0).unwrap();
    assert_eq!(s.steps.len(), MAX_STEPS);
    assert_eq!(s.steps_total, n, "every backward pass after a forward one starts a step");
    assert_eq!(s.phases.len(), MAX_SPANS);
    assert!(s.phases_total > MAX_SPANS);
    assert_eq!(s.program.kind, "training_steps");
}

/// Blocks made inside an optimizer's step that are no optimizer state: torch_npu's fused
/// optimizers copy the parameters and the gradients into flat tensors in their first step (both
/// from one function: unknown, not optimizer state), while the state they then make is state.
#[test]
fn a_fused_npu_optimizers_combined_parameters_are_no_optimizer_state() {
    let site = "/usr/lib/python3/site-packages";
    let step = |function: &str| {
        serde_json::json!([
            {"filename": format!("{site}/torch_npu/optim/npu_fused_optim_base.py"), "line": 85, "name": function},
            {"filename": format!("{site}/torch_npu/optim/npu_fused_optim_base.py"), "line": 120, "name": "step"},
            {"filename": format!("{site}/torch/optim/optimizer.py"), "line": 487, "name": "wrapper"},
            {"filename": "/w/train.py", "line": 60, "name": "<module>"}
        ])
    };
    let base = 0x7f00_0000_0000_u64;
    let mib = 1u64 << 20;
    let events = vec![
        serde_json::json!({"action": "alloc", "addr": base, "size": 4 * mib, "stream": 0, "frames": step("_maybe_init_combined_params_and_grads")}),
        serde_json::json!({"action": "alloc", "addr": base + 4 * mib, "size": 8 * mib, "stream": 0, "frames": step("_maybe_init_combined_states")}),
    ];
    let blocks = serde_json::json!([
        {"address": base, "size": 4 * mib, "requested_size": 4 * mib, "state": "active_allocated", "frames": []},
        {"address": base + 4 * mib, "size": 8 * mib, "requested_size": 8 * mib, "state": "active_allocated", "frames": []},
        {"address": base + 12 * mib, "size": 8 * mib, "requested_size": 0, "state": "inactive", "frames": []}
    ]);
    let segment = serde_json::json!({"device": 0, "address": base, "total_size": 20 * mib, "allocated_size": 12 * mib, "active_size": 12 * mib,
        "requested_size": 12 * mib, "stream": 0, "segment_type": "large", "is_expandable": false, "frames": [], "blocks": blocks});
    let snap = serde_json::json!({"segments": [segment], "device_traces": [events]});
    let e = Engine::from_loaded(Loaded::from_bytes(&serde_json::to_vec(&snap).unwrap()).unwrap(), Vec::new());
    let c = e.categories(0, At::Dump).unwrap();
    let rule_of = |category: &str| c.categories.iter().find(|x| x.category == category).map(|x| (x.bytes, x.rules[0].rule.clone()));
    assert_eq!(rule_of("unknown"), Some((4 * mib as i64, "npu-fused-params-and-grads".to_string())), "{:?}", c.categories);
    assert_eq!(rule_of("optimizer state"), Some((8 * mib as i64, "optimizer-state".to_string())), "{:?}", c.categories);
}
