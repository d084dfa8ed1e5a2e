//! Compare by meaning and `snapscope diff`, on generated fixtures whose answers the generator
//! knows: the same program with model.py's lines moved, and two moments of one run.

use crate::common;
use serde_json::Value;

fn fixture(name: &str) -> std::path::PathBuf {
    common::fixtures().join(name)
}

fn expected(name: &str) -> Value {
    let all: Value = serde_json::from_slice(&std::fs::read(fixture("expected.json")).unwrap()).unwrap();
    all[name].clone()
}

#[test]
fn a_moved_line_is_the_same_site_with_its_line_change() {
    let moved = expected("program_steps_moved.pickle");
    assert_eq!(moved["moved_from"]["lines"], 3);
    let a = common::open(&fixture("program_steps_stable.pickle"));
    let b = common::open(&fixture("program_steps_moved.pickle"));
    let c = a.compare_with(&b.compare_side().unwrap()).unwrap();
    let d = &c.devices[0];
    assert!(d.stacks.iter().all(|s| s.change == "same"), "nothing new or vanished: {:#?}", d.stacks);
    assert!(d.stacks.iter().all(|s| s.delta == 0 && s.bytes_a == s.bytes_b && s.bytes_a > 0));
    let forward = d.stacks.iter().find(|s| s.site_a.as_deref() == Some("/work/prog/model.py:20 forward")).expect("the layer's site");
    assert_eq!(forward.matched_by.as_deref(), Some("code"));
    assert_eq!(forward.line_change.as_deref(), Some("model.py:20 → 23"));
    assert_eq!(forward.site_b.as_deref(), Some("/work/prog/model.py:23 forward"));
    // Sites outside model.py are the same stacks, with no line change.
    assert!(d
        .stacks
        .iter()
        .filter(|s| !s.stack.contains("model.py"))
        .all(|s| s.matched_by.as_deref() == Some("stack") && s.line_change.is_none()));
    // The rows hold all of both sides' live memory at the peaks.
    let live: i64 = d.stacks.iter().map(|s| s.bytes_a).sum();
    assert_eq!(Some(live), d.figures.iter().find(|f| f.label == "peak allocated").and_then(|f| f.a));
}

#[test]
fn two_moments_of_one_run_by_category_match_the_generator() {
    let e = common::open(&fixture("program_steps_stable.pickle"));
    for m in expected("program_steps_stable.pickle")["program"]["moments"].as_array().unwrap() {
        let (a, b) = (m["a"].as_i64().unwrap(), m["b"].as_i64().unwrap());
        let d = e.diff_moments(0, Some(a), Some(b)).unwrap();
        // Either order: the earlier moment is A.
        assert_eq!(
            serde_json::to_value(e.diff_moments(0, Some(b), Some(a)).unwrap().by_category).unwrap(),
            serde_json::to_value(&d.by_category).unwrap()
        );
        let want = m["by_category"].as_object().unwrap();
        for (cat, w) in want {
            let got = d.by_category.iter().find(|c| &c.category == cat).map(|c| c.bytes.clone()).unwrap_or_default();
            let v = |k: &str| w[k].as_i64().unwrap();
            assert_eq!(
                (got.kept, got.freed, got.born, got.transient),
                (v("kept"), v("freed"), v("born"), v("transient")),
                "{cat} between {a} and {b}"
            );
        }
        // live(A) = kept + freed, live(B) = kept + born, and the sites sum to the same.
        let active = |ev: i64| e.state(0, snapscope::engine::At::Event(ev)).unwrap().active;
        assert_eq!((d.live_a, d.live_b), (active(a), active(b)));
        let sites: i64 = d.by_site.iter().map(|s| s.bytes.delta).sum();
        assert_eq!(sites, d.live_b - d.live_a);
        assert_eq!(d.total.born - d.total.freed, d.live_b - d.live_a);
    }
}

#[test]
fn step_by_step_pairs_the_same_steps() {
    let a = common::open(&fixture("program_steps_stable.pickle"));
    let b = common::open(&fixture("program_steps_leak.pickle"));
    let d = snapscope::analysis::compare_steps::compare_steps(0, &a.step_sides(0).unwrap(), &b.step_sides(0).unwrap(), 20);
    assert_eq!((d.steps_a, d.steps_b), (5, 5));
    assert_eq!(d.steps.iter().map(|s| s.step).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    // The leaking run keeps one activation (1 MiB + 512 B) per step: its step N holds N − 1
    // more at the step's peak (the step's own one is kept after its peak).
    for s in &d.steps {
        let act = s.categories.iter().find(|c| c.category == "activation").map_or(0, |c| c.delta);
        assert_eq!(s.delta, s.peak_b - s.peak_a);
        let cats: i64 = s.categories.iter().map(|c| c.delta).sum();
        assert_eq!(cats, s.delta, "step {}: categories sum to the peak difference", s.step);
        assert!(act >= 0, "step {}: {act}", s.step);
    }
    assert!(d.steps.last().unwrap().delta > 0);
}

#[test]
fn diff_cli_answers_in_text_and_json() {
    let dir = std::env::temp_dir();
    let (a, b) = (fixture("program_steps_stable.pickle"), fixture("program_steps_moved.pickle"));
    let (rc, out, err) = common::cli_in(&dir, &["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("[line model.py:20 → 23]"), "{out}");
    assert!(out.contains("by category:") && !out.contains(" new "), "{out}");
    let (rc, out, err) = common::cli_in(&dir, &["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "files");
    assert!(v["comparison"]["devices"][0]["stacks"].as_array().unwrap().iter().any(|s| s["line_change"] == "model.py:8 → 11"));
    let (rc, out, err) = common::cli_in(&dir, &["diff", a.to_str().unwrap(), "--at", "peak", "--at", "end", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = &v["devices"][0];
    assert_eq!(v["mode"], "moments");
    assert_eq!(
        m["live_a"].as_i64().unwrap() - m["live_b"].as_i64().unwrap(),
        (18 << 20) + 512,
        "the peak's activations and autograd seed freed by the end"
    );
    let (rc, out, err) =
        common::cli_in(&dir, &["diff", a.to_str().unwrap(), fixture("program_steps_leak.pickle").to_str().unwrap(), "--steps", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["devices"][0]["steps"].as_array().unwrap().len(), 5);
    // Wrong combinations say what to pass.
    let (rc, _, err) = common::cli_in(&dir, &["diff", a.to_str().unwrap(), "--json"]);
    assert_eq!(rc, 1);
    let e: Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(e["error"]["code"], "INVALID_PARAMETER");
    assert!(e["error"]["hint"].as_str().unwrap().contains("--at"));
    let (rc, _, err) = common::cli_in(&dir, &["diff", a.to_str().unwrap(), "--at", "0", "--at", "99999", "--json"]);
    assert_eq!(rc, 1);
    assert!(err.contains("99999") && err.contains("trace events"), "{err}");
    // capabilities lists diff's answer schema.
    let (rc, out, _) = common::cli_in(&dir, &["capabilities", "--json"]);
    assert_eq!(rc, 0);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["answer_schemas"]["commands"]["diff"]["allOf"].is_array());
}

#[test]
fn a_dump_without_stacks_is_out_for_its_stacks_and_a_dump_with_stacks_takes_part() {
    let a = common::open(&fixture("program_steps_stable.pickle"));
    // segments_only: a dump (no trace events) whose blocks carry stacks: compared at its dump.
    let b = common::open(&fixture("segments_only.pickle"));
    let d = &a.compare_with(&b.compare_side().unwrap()).unwrap().devices[0];
    assert_eq!((d.a_lacks.as_deref(), d.b_lacks.as_deref()), (None, None));
    let Some(root) = common::corpus() else { return };
    let dump = root.join("cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle");
    if !dump.exists() {
        return;
    }
    let c = a.compare_with(&common::open(&dump).compare_side().unwrap()).unwrap();
    assert!(
        c.devices.iter().any(|d| d.b_lacks.as_deref() == Some("stacks")),
        "{:?}",
        c.devices.iter().map(|d| &d.b_lacks).collect::<Vec<_>>()
    );
}
