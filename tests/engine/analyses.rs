//! Analyses on the project's fixtures, against answers worked out from how each fixture was
//! built (scripts/gen_fixtures.py), and on every corpus file: every mode and template runs, and
//! attribution conserves bytes.

use crate::common;
use snapscope::analysis::basis::Counter;
use snapscope::codes::ErrorCode;
use snapscope::engine::{At, Engine};
use snapscope::query::{catalogue::catalogue, sql::Limits};
use snapscope::store::Records;
use snapscope::Loaded;
use std::sync::Arc;

use common::open as session;

const PEAK: At = At::Peak(Counter::Allocated);

/// An in-memory SnapshotDB over `loaded`, for checks below the engine API.
fn db(loaded: &Arc<Loaded>) -> rusqlite::Connection {
    snapscope::store::to_memory(loaded, &Records::NONE).unwrap()
}

const MIB: i64 = 1 << 20;

#[test]
fn cuda_training_leaks_fragmentation_and_tree() {
    let s = session(&common::fixtures().join("cuda_training.pickle"));
    let a = s.analyze(0, PEAK).unwrap();
    // Weights (4000 B → 4096) and one 700 B (→ 1024) tensor per iteration stay alive.
    let leak = a.leak.as_ref().unwrap();
    assert_eq!((leak.candidates, leak.candidate_bytes), (4, 4096 + 3 * 1024));
    assert_eq!(leak.pending_free_bytes, 0);
    assert!(leak.floor_growth > 0);
    // At the dump: 2 MiB small + 20 MiB large segment; the large one is entirely free.
    let dump = &a.fragment.at[0];
    assert_eq!(dump.label, "dump");
    assert_eq!(dump.reserved, 22 * MIB);
    assert_eq!(dump.allocated, 7168);
    assert_eq!(dump.free_bytes, 22 * MIB - 7168);
    assert_eq!(dump.largest_free, 20 * MIB);
    assert_eq!(dump.free_blocks, 2);
    assert_eq!(dump.rounding_waste, (4096 - 4000) + 3 * (1024 - 700));
    // The peak: the groups sum to the active counter, and the tree's root too.
    let p = a.peak.as_ref().unwrap();
    assert_eq!(p.event, Some(19));
    assert_eq!(p.live_bytes, p.counters_at_event.active);
    assert_eq!(p.by_stack.iter().map(|g| g.bytes).sum::<i64>(), p.counters_at_event.active);
    let tree = s.tree(0, At::Event(19)).unwrap();
    assert_eq!(tree.nodes[0].total_bytes, p.counters_at_event.active);
    for n in &tree.nodes {
        let children: i64 = tree.nodes.iter().filter(|c| c.parent == Some(n.id)).map(|c| c.total_bytes).sum();
        assert_eq!(n.total_bytes, n.self_bytes + children, "node {} conserves bytes", n.label);
    }
    assert!(a.oom.ooms.is_empty());
}

#[test]
fn multi_device_oom_verdict_and_pending_free() {
    let s = session(&common::fixtures().join("multi_device_oom.pickle"));
    let a = s.analyze(1, PEAK).unwrap();
    assert_eq!(a.oom.ooms.len(), 1);
    let o = &a.oom.ooms[0];
    assert_eq!(o.event, 2);
    assert_eq!(o.requested, 40 * MIB);
    assert_eq!(o.device_free, Some(6 * MIB));
    assert_eq!(o.counters.allocated, 12 * MIB);
    assert_eq!(o.free_in_reserved, 8 * MIB);
    assert_eq!(o.largest_free_block, 8 * MIB);
    // 40 MiB is more than half of 20 MiB reserved + 6 MiB free.
    assert_eq!(o.verdict, "one_huge_request");
    assert!(a.findings.iter().any(|f| f.category == "oom" && f.priority == "high"));
    let leak = a.leak.unwrap();
    assert_eq!((leak.pending_free_blocks, leak.pending_free_bytes), (1, 12 * MIB));
    let st = s.state(1, At::Event(4)).unwrap();
    assert_eq!((st.allocated, st.active, st.reserved), (8 * MIB, 20 * MIB, 20 * MIB));
}

#[test]
fn compare_finds_the_changed_device() {
    let a = session(&common::fixtures().join("cuda_training.pickle"));
    let b = session(&common::fixtures().join("multi_device_oom.pickle"));
    let c = a.compare_with(&b.compare_side().unwrap()).unwrap();
    assert_eq!(c.devices.len(), 2);
    assert!(c.devices[1].peaks_a.is_none() && c.devices[1].peaks_b.is_some());
    assert!(c.devices[1].stacks.iter().all(|s| s.change == "new"));
    assert_eq!(c.devices[0].allocated_peak_delta, Some(0));
}

#[test]
fn report_is_self_contained() {
    let s = session(&common::fixtures().join("multi_device_oom.pickle"));
    let html = s.report("multi <device>").unwrap();
    assert!(html.contains("multi &lt;device&gt;"), "titles are escaped");
    assert!(html.contains("Out of memory at event 2"));
    for banned in ["<script", "http://", "https://", "src=\""] {
        assert!(!html.contains(banned), "report must not load anything: found {banned}");
    }
}

fn default_params(t: &snapscope::query::catalogue::Template, event: i64) -> serde_json::Map<String, serde_json::Value> {
    let mut p = serde_json::Map::new();
    if t.params.iter().any(|x| x.name == "event_id") {
        p.insert("event_id".into(), event.into());
    }
    p
}

#[test]
fn every_mode_and_template_runs_on_every_corpus_file() {
    let Some(dir) = common::corpus() else {
        eprintln!("every_mode_and_template_runs_on_every_corpus_file: SKIPPED, no corpus beside the checkout (0 files read)");
        return;
    };
    let reference: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    let templates = catalogue();
    // Per template: runs that answered, and runs skipped (a dump-only device has no event to name).
    let mut answered = vec![0usize; templates.len()];
    let mut skipped = vec![0usize; templates.len()];
    let files = reference.as_object().unwrap().keys().count();
    for rel in reference.as_object().unwrap().keys() {
        let loaded = Arc::new(Loaded::from_bytes(&std::fs::read(dir.join(rel)).unwrap()).unwrap());
        let mut s = Engine::from_shared(Arc::clone(&loaded), Vec::new());
        let conn = db(&loaded);
        for d in s.devices().unwrap() {
            let a = s.analyze(d, PEAK).unwrap_or_else(|e| panic!("{rel} d{d}: {e}"));
            if let Some(p) = &a.peak {
                // The SQL peaks (one MAX() scan each) equal the replay's, ties included.
                let o = &a.overview.peaks;
                assert_eq!(
                    (p.peaks.allocated, p.peaks.active, p.peaks.reserved, p.peaks.requested),
                    (o.allocated, o.active, o.reserved, o.requested),
                    "{rel} d{d}"
                );
                assert_eq!(p.by_stack.iter().map(|g| g.bytes).sum::<i64>(), p.live_bytes, "{rel} d{d}");
                if a.overview.consistency.ok {
                    assert_eq!(p.live_bytes, p.counters_at_event.active, "{rel} d{d}: attribution covers the active counter");
                    let st = s.state(d, p.event.map_or(At::WindowStart, At::Event)).unwrap();
                    assert_eq!(st.allocated, p.counters_at_event.allocated, "{rel} d{d}: state at the peak");
                    assert_eq!(st.reserved, p.counters_at_event.reserved, "{rel} d{d}: reserved ranges at the peak");
                    assert_eq!(st.unplaced_blocks, 0, "{rel} d{d}");
                }
            }
            let event = a.peak.as_ref().and_then(|p| p.event).unwrap_or(0);
            let _ = s.tree(d, PEAK).unwrap();
            // Every template on every device: each run checks that its SQL returns exactly the
            // columns the catalogue declares (TEMPLATE_COLUMNS otherwise).
            for (i, t) in templates.iter().enumerate() {
                let mut p = default_params(t, event);
                p.insert("device".into(), d.into());
                let r = s.query(t.name, &p, Limits::default());
                match r {
                    Ok(_) => answered[i] += 1,
                    // Dump-only devices have no events to name.
                    Err(e) if a.overview.events == 0 && e.code == ErrorCode::EventOutOfRange => skipped[i] += 1,
                    Err(e) => panic!("{rel} d{d} {}: {e}", t.name),
                }
            }
            // memory_peak without a range reads the peaks stored at load; with one it scans.
            let peak = |s: &mut Engine, range: bool| {
                let mut p = serde_json::Map::new();
                p.insert("device".into(), d.into());
                if range {
                    p.insert("start_id".into(), 0.into());
                }
                let r = s.query("memory_peak", &p, Limits::default()).unwrap();
                serde_json::to_string(&r.rows).unwrap()
            };
            assert_eq!(peak(&mut s, false), peak(&mut s, true), "{rel} d{d}: stored peaks = scanned peaks");
            // The leak floor from the replay's block extremes = the lowest `allocated` row of
            // each tenth of the events.
            if let Some(leak) = s.leak(d).unwrap() {
                let floor: Vec<i64> = if leak.events >= 10 {
                    let sql = "SELECT MIN(allocated) FROM traces WHERE device_id = (SELECT id FROM devices WHERE device_index = ?1) GROUP BY (trace_index * 10) / ?2 ORDER BY (trace_index * 10) / ?2";
                    conn.prepare(sql)
                        .unwrap()
                        .query_map(rusqlite::params![d, leak.events], |r| r.get(0))
                        .unwrap()
                        .map(|r| r.unwrap())
                        .collect()
                } else {
                    Vec::new()
                };
                assert_eq!(floor, leak.floor, "{rel} d{d}: leak floor");
                // Long-lived blocks, split for the virtual table = the one-condition definition.
                let by_definition: (i64, Option<i64>) = conn
                    .query_row(
                        "SELECT COUNT(*), SUM(size) FROM lifetimes WHERE device_id = (SELECT id FROM devices WHERE device_index = ?1)
                           AND orphan = 0 AND alloc_event IS NOT NULL AND COALESCE(free_completed_event, ?2) - alloc_event >= ?2 / 2",
                        rusqlite::params![d, leak.events],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .unwrap();
                assert_eq!((leak.long_lived_blocks, leak.long_lived_bytes), (by_definition.0, by_definition.1.unwrap_or(0)), "{rel} d{d}");
            }
        }
    }
    // Every template answered somewhere, its columns checked against the declaration each time.
    for (i, t) in templates.iter().enumerate() {
        assert!(answered[i] > 0, "template {} never answered on the corpus", t.name);
    }
    eprintln!(
        "every_mode_and_template_runs_on_every_corpus_file: {files} corpus files, 0 skipped; {} templates, {} runs checked, {} skipped (dump-only devices)",
        templates.len(),
        answered.iter().sum::<usize>(),
        skipped.iter().sum::<usize>()
    );
}

#[test]
fn template_parameters_are_validated() {
    let mut s = session(&common::fixtures().join("cuda_training.pickle"));
    let run = |s: &mut Engine, name: &str, p: serde_json::Value| s.query(name, p.as_object().unwrap(), Limits::default());
    assert_eq!(run(&mut s, "nope", serde_json::json!({})).unwrap_err().code, "TEMPLATE_NOT_FOUND");
    let e = run(&mut s, "memory_peak", serde_json::json!({"bogus": 1})).unwrap_err();
    assert_eq!(e.code, "INVALID_PARAMETER");
    assert!(e.hint.contains("start_id"), "{}", e.hint);
    assert_eq!(run(&mut s, "active_blocks_at_event", serde_json::json!({})).unwrap_err().code, "INVALID_PARAMETER");
    assert_eq!(run(&mut s, "active_blocks_at_event", serde_json::json!({"event_id": 99999})).unwrap_err().code, "EVENT_OUT_OF_RANGE");
    assert_eq!(run(&mut s, "allocation", serde_json::json!({"order_by": "nonsense"})).unwrap_err().code, "INVALID_PARAMETER");
    assert_eq!(run(&mut s, "memory_peak", serde_json::json!({"device": 7})).unwrap_err().code, "DEVICE_NOT_FOUND");
    let r = run(&mut s, "allocation", serde_json::json!({"order_by": "allocated", "order_dir": "desc", "limit": 3})).unwrap();
    assert_eq!((r.returned, r.total, r.has_more), (3, 24, true));
    let r = run(&mut s, "event", serde_json::json!({"limit": 2, "stack_bytes": 10})).unwrap();
    assert_eq!(r.columns.last().unwrap().name, "stack_truncated");
    let stack = r.columns.iter().position(|c| c.name == "callstack").unwrap();
    for row in &r.rows {
        if let snapscope::query::sql::Cell::Text(t) = &row[stack] {
            assert!(t.len() <= 10);
        }
    }
}

#[test]
fn stacked_bands_add_up_to_the_active_counter_in_every_column() {
    for (name, max_blocks) in [("cuda_training.pickle", 2), ("cuda_training.pickle", 1000), ("npu_expandable.pkl", 1000)] {
        let loaded = snapscope::Loaded::from_bytes(&std::fs::read(common::fixtures().join(name)).unwrap()).unwrap();
        let n = loaded.devices[0].events as u32;
        let b = snapscope::analysis::bands::bands(&loaded, 0, 0, n - 1, 50, max_blocks).unwrap();
        assert!(b.blocks.len() <= max_blocks);
        for c in 0..b.column_event.len() {
            let (s, e) = (b.column_start[c] as usize, b.column_start[c + 1] as usize);
            let drawn: u64 = (s..e).map(|k| b.blocks[b.entry_block[k] as usize].size).sum();
            assert_eq!(drawn + b.other_bytes[c], b.active[c], "{name} column {c}");
            // Stacked without gaps, in allocation order.
            let mut bottom = 0;
            for k in s..e {
                assert_eq!(b.entry_bottom[k], bottom);
                bottom += b.blocks[b.entry_block[k] as usize].size;
            }
        }
    }
}

/// The blocks drawn are the `max_blocks` weightiest alive in the range (size × events alive in
/// it; ties to the earlier lifetime), stacked in allocation order: the engine selects them without
/// sorting every lifetime, and must give what the plain definition gives, in the same order.
#[test]
fn band_blocks_are_the_weightiest_in_allocation_order() {
    let mut files: Vec<std::path::PathBuf> =
        ["cuda_training.pickle", "npu_expandable.pkl", "multi_device_oom.pickle"].iter().map(|f| common::fixtures().join(f)).collect();
    if let Some(corpus) = common::corpus() {
        let reference: serde_json::Value = serde_json::from_slice(&std::fs::read(corpus.join("reference.json")).unwrap()).unwrap();
        files.extend(reference.as_object().unwrap().keys().take(12).map(|rel| corpus.join(rel)));
    }
    for f in files {
        let loaded = snapscope::Loaded::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
        for d in &loaded.devices {
            let n = d.events as u32;
            if n == 0 {
                continue;
            }
            for (from, to) in [(0, n - 1), (n / 3, 2 * n / 3)] {
                for max_blocks in [0, 1, 2, 7, 100, 1000] {
                    let b = snapscope::analysis::bands::bands(&loaded, d.device, from, to, 20, max_blocks).unwrap();
                    let weight = |i: u32| {
                        let l = &d.lifetimes[i as usize];
                        let born = l.alloc_event().map_or(from, |a| a.max(from));
                        let dies = l.free_completed_event().map_or(to + 1, |e| e.min(to + 1));
                        l.size as u128 * u128::from(dies.saturating_sub(born).max(1))
                    };
                    let mut want: Vec<u32> = (0..d.lifetimes.len() as u32)
                        .filter(|&i| {
                            let l = &d.lifetimes[i as usize];
                            !l.orphan && l.alloc_event().is_none_or(|a| a <= to) && l.free_completed_event().is_none_or(|e| e > from)
                        })
                        .collect();
                    want.sort_by_key(|&i| std::cmp::Reverse(weight(i)));
                    want.truncate(max_blocks);
                    want.sort_by_key(|&i| {
                        let l = &d.lifetimes[i as usize];
                        (l.alloc_event().map(|a| a as i64).unwrap_or(-1), l.addr)
                    });
                    let got: Vec<u32> = b.blocks.iter().map(|x| x.lifetime).collect();
                    assert_eq!(got, want, "{} device {} [{from}, {to}] max_blocks {max_blocks}", f.display(), d.device);
                }
            }
        }
    }
}

/// An open session serves `traces` and `lifetimes` as virtual tables over the replay; files hold
/// them as rows.
/// Both must answer every query the same: full scans, and scans the virtual table narrows
/// itself (id, device_id, trace_index ranges, fractional and NULL bounds, ORDER BY it consumes).
#[test]
fn virtual_tables_equal_materialized_rows() {
    let mut files: Vec<std::path::PathBuf> =
        ["multi_device_oom.pickle", "cuda_training.pickle", "npu_expandable.pkl", "ring_buffer_cut.pickle", "segments_only.pickle"]
            .iter()
            .map(|f| common::fixtures().join(f))
            .collect();
    if let Some(corpus) = common::corpus() {
        let reference: serde_json::Value = serde_json::from_slice(&std::fs::read(corpus.join("reference.json")).unwrap()).unwrap();
        files.extend(reference.as_object().unwrap().keys().take(8).map(|rel| corpus.join(rel)));
    }
    let queries = [
        "SELECT * FROM traces ORDER BY id",
        "SELECT * FROM traces",
        "SELECT id, action, allocated FROM traces WHERE device_id = 1 AND trace_index BETWEEN 3 AND 7",
        "SELECT id FROM traces WHERE device_id = 0 AND trace_index > 2.5 AND trace_index <= 9.5 ORDER BY trace_index",
        "SELECT id FROM traces WHERE id >= 5 AND id < 12",
        "SELECT id FROM traces WHERE id = 3 OR trace_index = 4",
        "SELECT COUNT(*) FROM traces WHERE trace_index = NULL",
        "SELECT device_id, MAX(allocated), MIN(trace_index) FROM traces GROUP BY device_id",
        "SELECT trace_index FROM traces WHERE device_id = 0 ORDER BY trace_index DESC LIMIT 5",
        "SELECT t.id, l.size FROM traces t JOIN lifetimes l ON l.id = t.lifetime_id WHERE t.device_id = 0 ORDER BY t.id LIMIT 50",
        "SELECT l.id, t.action FROM lifetimes l JOIN traces t ON t.device_id = l.device_id AND t.trace_index = l.alloc_event ORDER BY l.id LIMIT 50",
        "SELECT * FROM lifetimes ORDER BY id",
        "SELECT * FROM lifetimes",
        "SELECT * FROM devices",
        "SELECT id, size FROM lifetimes WHERE device_id = 1 AND id BETWEEN 2 AND 9",
        "SELECT id FROM lifetimes WHERE id > 3.5 ORDER BY device_id, id",
        "SELECT COUNT(*), SUM(size) FROM lifetimes WHERE alloc_event <= 20 AND (free_completed_event IS NULL OR free_completed_event > 20)",
        "SELECT origin, stack_source, state_at_dump, COUNT(*) FROM lifetimes GROUP BY 1, 2, 3",
        // Prefilters: comparisons and NULL tests on other columns, with every kind of value.
        "SELECT id FROM lifetimes WHERE alloc_event IS NULL ORDER BY id",
        "SELECT id, size FROM lifetimes WHERE orphan = 0 AND alloc_event IS NOT NULL AND state_at_dump IS NOT NULL AND size >= 1024 ORDER BY size DESC, id",
        "SELECT id FROM lifetimes WHERE alloc_event <= 20 AND free_completed_event > 20 UNION ALL SELECT id FROM lifetimes WHERE alloc_event IS NULL AND free_completed_event IS NULL",
        "SELECT id FROM lifetimes WHERE size > 2.5 AND stack_id < 3.5 AND free_requested_event >= 1",
        "SELECT COUNT(*) FROM lifetimes WHERE size < 'a' AND state_at_dump > 0",
        "SELECT COUNT(*) FROM lifetimes WHERE stack_id = NULL OR size = NULL",
        "SELECT COUNT(*) FROM lifetimes WHERE state_at_dump = 'active_allocated' AND origin = 'in_window' AND size_exact = 1",
        "SELECT id FROM traces WHERE action = 'alloc' AND size >= 512 AND lifetime_id IS NOT NULL",
        "SELECT id FROM traces WHERE compile_context IS NULL AND extra_json IS NULL AND time_us IS NOT NULL AND addr > 0 AND allocated < 1e18",
        "SELECT COUNT(*) FROM traces WHERE stack_id IS NULL OR device_free IS NOT NULL",
        "SELECT trace_index, action, addr FROM traces WHERE action = 'segment_alloc' AND trace_index <= 200 UNION ALL SELECT trace_index, action, addr FROM traces WHERE action = 'free_completed' ORDER BY 1",
        "SELECT COUNT(*) FROM traces WHERE action = 'segment_map' OR action IN ('alloc', 'segment_free')",
        "SELECT COUNT(*) FROM traces WHERE action = 'no_such_action' AND compile_context > 'a'",
        "SELECT (SELECT COUNT(*) FROM traces WHERE size = NULL), (SELECT COUNT(*) FROM traces WHERE extra_json > NULL), (SELECT COUNT(*) FROM lifetimes WHERE size < NULL)",
    ];
    for path in &files {
        let loaded = std::sync::Arc::new(snapscope::Loaded::from_bytes(&std::fs::read(path).unwrap()).unwrap());
        let virt = snapscope::store::to_memory(&loaded, &snapscope::store::Records::NONE).unwrap();
        let rows = snapscope::store::to_memory_materialized(&loaded, &snapscope::store::Records::NONE).unwrap();
        for table in ["traces", "lifetimes"] {
            let kind: String = virt.query_row("SELECT sql FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap();
            assert!(kind.contains("VIRTUAL"), "{kind}");
        }
        for q in queries {
            assert_eq!(dump(&virt, q), dump(&rows, q), "{}: {q}", path.display());
        }
    }
}

fn dump(conn: &rusqlite::Connection, sql: &str) -> Vec<Vec<String>> {
    let mut st = conn.prepare(sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| Ok((0..n).map(|i| format!("{:?}", r.get_ref(i).unwrap())).collect())).unwrap().map(|r| r.unwrap()).collect()
}

/// The Timeline's markers come from the replay (the page draws the Timeline before its
/// SnapshotDB is built): the OOM and snapshot events, and the annotations outside the
/// framework's ranges in equal time buckets, each the bucket's earliest at the first event at or
/// after its time, with the bucket's count. A snapshot written for it, the answer worked out by
/// hand: annotations at 12..52 µs in 4 buckets of 10 µs from 12.
#[test]
fn timeline_markers_from_the_replay() {
    let dir = common::Scratch::new("markers");
    let file = dir.join("markers.pickle");
    let script = r#"
import pickle, sys
ev = lambda action, t, addr=0x7f0000000000: {"action": action, "addr": addr, "size": 512, "stream": 0, "time_us": t, "frames": []}
events = [ev("alloc", 10), ev("alloc", 20, 0x7f0000001000), dict(ev("oom", 30), device_free=0), ev("alloc", 40, 0x7f0000002000),
          ev("snapshot", 50), ev("alloc", 15, 0x7f0000003000), ev("alloc", 60, 0x7f0000004000)]
a = lambda name, stage, t, **k: dict({"name": name, "stage": stage, "time_us": t}, **k)
ann = [a("my_step", "START", 12, device=0), a("my_step", "END", 12, device=0),
       a("TorchDynamo Cache Lookup", "START", 22, device=0), a("TorchDynamo Cache Lookup", "END", 25, device=0),
       a("other_device", "START", 35, device=1), a("all_devices", "START", 45), a("mid", "START", 42, device=0),
       a("late", "START", 52, device=0), a("late", "END", 52, device=0)]
open(sys.argv[1], "wb").write(pickle.dumps({"segments": [], "device_traces": [events], "external_annotations": ann}, protocol=4))
"#;
    assert!(std::process::Command::new("python3").arg("-c").arg(script).arg(&file).status().unwrap().success());
    let m = session(&file).timeline_markers(0, 4).unwrap();
    let events: Vec<(i64, &str)> = m.events.iter().map(|e| (e.index, e.action.as_str())).collect();
    assert_eq!(events, [(2, "oom"), (4, "snapshot")]);
    let marks: Vec<(i64, &str, &str, i64)> =
        m.annotations.iter().map(|a| (a.index, a.name.as_deref().unwrap(), a.stage.as_deref().unwrap(), a.count)).collect();
    // 12: the START of equal times, at event 1 (20 µs); 42 and 45 share a bucket, at event 4
    // (50 µs; event 5's 15 µs comes later but is earlier); 52 at event 6.
    assert_eq!(marks, [(1, "my_step", "START", 2), (4, "mid", "START", 2), (6, "late", "START", 2)]);
    // A device the snapshot does not have has no markers.
    let none = session(&file).timeline_markers(5, 4).unwrap();
    assert!(none.events.is_empty() && none.annotations.is_empty());
}

/// The analyses that walk the events in order (streams, the steps, grown-by-copy chains) read
/// a lifetime's changes from the event that names it: every alloc, free and return event a
/// lifetime records names that lifetime, on every fixture (the bad ones too) and corpus file.
#[test]
fn every_event_a_lifetime_records_names_it() {
    // The bad fixtures too: inconsistent traces (a dropped alloc, a free twice) among them.
    let mut files: Vec<std::path::PathBuf> = [common::fixtures(), common::fixtures().join("bad")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pickle" || x == "gz"))
        .collect();
    files.extend(common::corpus().map(|d| common::corpus_files(&d)).unwrap_or_default());
    let mut checked = 0;
    for f in &files {
        let Ok(loaded) = Loaded::from_bytes(&std::fs::read(f).unwrap()) else { continue };
        for d in &loaded.devices {
            for (i, l) in d.lifetimes.iter().enumerate().filter(|(_, l)| !l.orphan) {
                for e in [l.alloc_event(), l.free_requested_event(), l.free_completed_event()].into_iter().flatten() {
                    assert_eq!(d.event_lifetime[e as usize], i as u32, "{} d{}: event {e}", f.display(), d.device);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100_000, "only {checked} events checked");
}
