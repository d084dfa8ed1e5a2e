//! Answers a person reads, on the real corpus: stacks named by user code (also in snapshots
//! recorded with C++ frames), no debug formatting or raw byte counts in sentences, and an answer
//! for dump-only files.

use crate::common;
use snapscope::analysis::basis::Counter;
use snapscope::engine::At;

const PEAK: At = At::Peak(Counter::Allocated);

use common::open;

/// Frames that say nothing about the program: never a stack's name.
const PLUMBING: [&str; 8] = ["unwind", "CachingAllocator", "CapturedTraceback", "__libc", "_PyEval", "Py_BytesMain", "THPVariable", "??:0"];

fn assert_not_plumbing(label: &str, what: &str) {
    assert!(!PLUMBING.iter().any(|p| label.contains(p)), "{what}: {label:?} names plumbing");
}

/// Text people read must carry no Rust debug values and no raw byte counts.
fn assert_readable(text: &str, what: &str) {
    for bad in ["Some(", "None", "NaN", "undefined"] {
        assert!(!text.contains(bad), "{what}: {bad:?} in {text:?}");
    }
    // "84063358976 B": five or more digits then " B".
    let b = text.as_bytes();
    for i in 0..b.len().saturating_sub(2) {
        if b[i] == b' ' && b[i + 1] == b'B' && (i + 2 == b.len() || !b[i + 2].is_ascii_alphanumeric()) {
            let digits = b[..i].iter().rev().take_while(|c| c.is_ascii_digit()).count();
            assert!(digits < 5, "{what}: a raw byte count in {text:?}");
        }
    }
}

#[test]
fn stacks_with_cpp_frames_are_named_by_user_code() {
    let Some(dir) = common::corpus() else { return };
    let e = open(&dir.join("cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"));
    let a = e.analyze(0, PEAK).unwrap();
    let p = a.peak.as_ref().unwrap();
    let named: Vec<_> = p.by_stack.iter().filter(|g| g.stack_id.is_some()).collect();
    assert!(named.len() >= 5);
    for g in &named {
        assert_not_plumbing(&g.label, "peak by stack");
        if g.origin == "dynamic" {
            assert!(g.label.contains(".py:"), "named by a Python frame: {}", g.label);
        }
    }
    // By top frame: the naming frame, never the unwinder's innermost frame.
    for g in p.by_top_frame.iter().filter(|g| g.stack_id.is_some()) {
        assert_not_plumbing(&g.label, "peak by frame");
    }
    // No two rows read alike.
    let mut seen = std::collections::HashSet::new();
    for g in &p.by_stack {
        assert!(seen.insert((g.label.clone(), g.detail.clone())), "two rows read {:?} / {:?}", g.label, g.detail);
    }
    for c in &a.leak.as_ref().unwrap().candidates_by_stack {
        assert_not_plumbing(&c.label, "leak candidates");
    }
    // The memory tree starts at user code: no native or interpreter frame anywhere on a path.
    let tree = e.tree(0, PEAK).unwrap();
    for n in tree.nodes.iter().skip(1) {
        assert_not_plumbing(&n.label, "memory tree");
    }
    let first = tree.nodes.iter().find(|n| n.parent == Some(0) && !n.label.starts_with('[')).unwrap();
    assert!(first.label.contains(".py:"), "{}", first.label);
    // The event panel's stack: every frame typed; the peak event's naming frame is user code.
    let ev = e.event(0, p.event.unwrap()).unwrap();
    assert!(ev.frames.iter().any(|f| f.kind == "user"));
    assert!(ev.frames.iter().any(|f| f.kind == "allocator"), "the full stack is kept");
    assert_not_plumbing(ev.label.as_deref().unwrap(), "event label");
    // Compare with another training snapshot: rows named by user code.
    let other = open(&dir.join("cuda/bcrafton__assignment2-systems/memory_snapshot.pickle"));
    let c = e.compare_with(&other.compare_side().unwrap()).unwrap();
    for s in &c.devices[0].stacks {
        assert_not_plumbing(&s.label, "compare");
    }
}

#[test]
fn memory_known_only_by_its_free_is_not_an_allocation_site() {
    let Some(dir) = common::corpus() else { return };
    let e = open(&dir.join("cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"));
    let p = e.analyze(0, PEAK).unwrap().peak.unwrap();
    let freed: Vec<_> = p.by_stack.iter().filter(|g| g.detail.as_deref().is_some_and(|d| d.starts_with("freed at"))).collect();
    assert!(!freed.is_empty(), "the training snapshot has pre-window memory known by its free");
    for g in freed {
        assert_eq!(g.origin, "before_window");
        assert_eq!(g.label, "[allocated before the window]");
        assert!(g.site.is_none(), "no allocation site for it");
    }
    // Allocated inside the window on autograd's thread (no stack) and known by its free: not
    // "before the window".
    let e = open(&dir.join("npu/snapshot_with_empty_cache.pkl"));
    let p = e.analyze(0, PEAK).unwrap().peak.unwrap();
    let g = p.by_stack.iter().find(|g| g.label == "[allocation stack not recorded]").expect("in-window memory known by its free");
    assert_eq!(g.origin, "dynamic");
    assert!(g.detail.as_deref().unwrap().starts_with("freed at train_one_step"));
    assert!(!p.by_stack.iter().any(|g| g.label == "[allocated before the window]" && g.blocks == 161));
}

#[test]
fn every_sentence_of_every_corpus_file_reads_as_text() {
    let Some(dir) = common::corpus() else { return };
    let reference: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    for rel in reference.as_object().unwrap().keys() {
        let e = open(&dir.join(rel));
        let report = e.report(rel).unwrap();
        // The report's prose (stacks fold behind <details> and may hold anything).
        let prose: String = report.split("<details>").map(|part| part.split("</details>").last().unwrap_or("")).collect();
        // Exact byte counts on hover are wanted: leave the title attributes out.
        let prose: String = prose.split(" title=\"").map(|part| part.split_once('"').map_or(part, |(_, rest)| rest)).collect();
        assert_readable(&prose, rel);
        for d in e.devices().unwrap() {
            let a = e.analyze(d, PEAK).unwrap();
            for f in &a.findings {
                for t in [&f.title, &f.evidence, &f.suggestion, &f.expected_effect] {
                    assert_readable(t, &format!("{rel} d{d} finding"));
                }
            }
            for o in &a.oom.ooms {
                assert_readable(&o.explanation, &format!("{rel} d{d} oom"));
            }
            if let Some(room) = &a.oom.at_dump {
                assert_readable(&room.summary, &format!("{rel} d{d} dump room"));
            }
        }
    }
}

#[test]
fn dump_only_and_one_event_files_get_answers() {
    let Some(dir) = common::corpus() else { return };
    // Dump only: attribution, fragmentation and the room at the dump.
    let e = open(&dir.join("cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle"));
    let a = e.analyze(0, PEAK).unwrap();
    let p = a.peak.as_ref().expect("attribution of the dump");
    assert!(p.at_dump);
    assert_eq!(p.live_bytes, a.overview.at_dump.active as i64);
    let room = a.oom.at_dump.as_ref().unwrap();
    assert!(room.summary.contains("no trace events"), "{}", room.summary);
    assert_eq!(room.reserved, a.overview.at_dump.reserved as i64);
    assert!(a.findings.iter().any(|f| f.title.contains("dump only")));
    // A dump taken after an OOM (one `snapshot` event, no `oom` action).
    let e = open(&dir.join("cuda/Yiyi-philosophy__LLM-inference/oom_snapshot.pickle"));
    let a = e.analyze(0, PEAK).unwrap();
    assert!(a.oom.ooms.is_empty());
    let room = a.oom.at_dump.as_ref().unwrap();
    assert!(room.summary.starts_with("This trace has no OOM event"), "{}", room.summary);
    assert!(room.largest_free_block <= room.free_in_reserved);
}
