//! The real corpus (../shared/snapshots, when present): every file reads, and its figures equal
//! the reference (events, exact reserved peak, the state after the last event equal to the dump,
//! consistency, allocated/active peaks within the bytes that cannot be known), and the
//! SnapshotDB answers the four overview queries.

use crate::common;
use serde_json::Value;

fn reference() -> Option<(std::path::PathBuf, serde_json::Map<String, Value>)> {
    let dir = common::corpus()?;
    let v: Value = serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    Some((dir, v.as_object().unwrap().clone()))
}

fn peak(got: &Value, k: &str) -> (i64, i64) {
    let p = &got["peaks"][k];
    (p["bytes"].as_i64().unwrap(), p["event"].as_i64().unwrap_or(-1))
}

#[test]
fn every_corpus_file_matches_the_reference() {
    let Some((dir, files)) = reference() else {
        eprintln!("../shared/snapshots not present: corpus test skipped");
        return;
    };
    let mut failures = Vec::new();
    for (rel, fig) in &files {
        let got = common::overview_json(&std::fs::read(dir.join(rel)).unwrap());
        let devs: std::collections::BTreeMap<String, &Value> =
            got["devices"].as_array().unwrap().iter().map(|d| (d["device"].to_string(), d)).collect();
        let want_devs = fig["devices"].as_object().unwrap();
        if devs.keys().collect::<Vec<_>>() != want_devs.keys().collect::<Vec<_>>() {
            failures.push(format!("{rel}: devices {:?} != {:?}", devs.keys(), want_devs.keys()));
            continue;
        }
        for (d, want) in want_devs {
            let g = devs[d];
            let events = want["events"].as_i64().unwrap();
            let mut check = |ok: bool, what: String| {
                if !ok {
                    failures.push(format!("{rel} d{d}: {what}"));
                }
            };
            check(g["events"].as_i64() == Some(events), format!("events {} != {events}", g["events"]));
            check(g["segments_at_dump"] == want["segments_at_dump"], "segments at dump".into());
            if events == 0 {
                continue;
            }
            let (rb, re) = peak(g, "reserved");
            check(
                (rb, re) == (want["reserved_peak"].as_i64().unwrap(), want["reserved_peak_event"].as_i64().unwrap()),
                format!("reserved peak {rb}@{re}"),
            );
            for (k, w) in [("reserved", "reserved_at_dump"), ("allocated", "allocated_at_dump"), ("active", "active_at_dump")] {
                check(g["at_last_event"][k] == want[w], format!("at_last_event.{k} {} != {}", g["at_last_event"][k], want[w]));
            }
            if let Some(ao) = want.get("alloc_oracle") {
                let consistent = ao["anomalies"] == 0 && ao["dump_blocks_matched"][0] == ao["dump_blocks_matched"][1];
                check(
                    g["consistency"]["ok"] == consistent,
                    format!("consistency.ok should be {consistent}: {}", g["consistency"]["issues"]),
                );
                if consistent {
                    let tol = ao["ambiguous_bytes"].as_i64().unwrap();
                    for k in ["allocated", "active"] {
                        let (wb, we) = (ao[format!("peak_{k}")][0].as_i64().unwrap(), ao[format!("peak_{k}")][1].as_i64().unwrap());
                        let (gb, ge) = peak(g, k);
                        check((gb - wb).abs() <= tol && (tol > 0 || ge == we), format!("{k} peak {gb}@{ge} != {wb}@{we} ±{tol}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(files.len(), 35);
}

/// pt-snap-cli uses event sizes for blocks freed in the window and dump sizes for the others, so
/// its peak lies between snapscope's requested and allocated peaks; its leak candidates (blocks
/// allocated in the window and live at the end) are snapscope's in-window blocks live at the dump.
#[test]
fn npu_files_agree_with_pt_snap_cli() {
    let Some(dir) = common::corpus() else { return };
    let golden: Value = serde_json::from_slice(&std::fs::read(dir.join("../docs/pt-snap-cli-golden.json")).unwrap()).unwrap();
    let mut seen = 0;
    for (key, g) in golden.as_object().unwrap() {
        let (file, dev) = key.split_once("#device").unwrap();
        let dev: i64 = dev.parse().unwrap();
        let loaded = snapscope::Loaded::from_bytes(&std::fs::read(dir.join("npu").join(file)).unwrap()).unwrap();
        let d = loaded.device(dev).unwrap();
        let pt_peak = g["allocator_gap"]["peak_allocated"].as_i64().unwrap();
        let (lo, hi) = (d.series.peak("requested").bytes, d.series.peak("allocated").bytes);
        assert!(lo <= pt_peak && pt_peak <= hi, "{key}: pt-snap peak {pt_peak} outside [{lo}, {hi}]");
        let leaks: Vec<_> = d.lifetimes.iter().filter(|l| l.alloc_event().is_some() && l.state_at_dump.is_some()).collect();
        assert_eq!(leaks.len() as i64, g["leak_candidates_total"].as_i64().unwrap(), "{key}: leak candidates");
        seen += 1;
    }
    assert!(seen >= 5);
}

#[test]
fn corpus_snapshot_dbs_answer_the_overview_queries() {
    let Some((dir, files)) = reference() else { return };
    let queries = [
        "WITH device_overview AS (SELECT d.device_index, SUM(s.total_size) AS reserved_bytes, SUM(s.allocated_size) AS allocated_bytes, SUM(s.active_size) AS active_bytes, ROUND((SUM(s.total_size) - SUM(s.allocated_size)) * 100.0 / NULLIF(SUM(s.total_size), 0), 2) AS frag_pct, COUNT(s.id) AS segment_count, SUM(s.is_expandable) AS expandable_segments FROM segments s JOIN devices d ON s.device_id = d.id GROUP BY d.device_index) SELECT * FROM device_overview",
        "WITH block_state_dist AS (SELECT d.device_index, b.state, COUNT(b.id) AS block_count, SUM(b.size) AS total_size, AVG(b.size) AS avg_size FROM blocks b JOIN segments s ON b.segment_id = s.id JOIN devices d ON s.device_id = d.id GROUP BY d.device_index, b.state) SELECT * FROM block_state_dist",
        "WITH expansion_timeline AS (SELECT d.device_index, t.trace_index, t.action, t.size, t.addr, cs.frames_json FROM traces t JOIN devices d ON t.device_id = d.id LEFT JOIN call_stacks cs ON t.stack_id = cs.id WHERE t.action IN ('segment_alloc', 'segment_map', 'segment_free', 'segment_unmap') ORDER BY d.device_index, t.trace_index) SELECT * FROM expansion_timeline",
        "WITH top_allocations AS (SELECT d.device_index, b.size, b.requested_size, b.state, cs.frames_json FROM blocks b JOIN segments s ON b.segment_id = s.id JOIN devices d ON s.device_id = d.id LEFT JOIN call_stacks cs ON b.stack_id = cs.id WHERE b.state = 'active_allocated' ORDER BY b.size DESC LIMIT 20) SELECT * FROM top_allocations",
    ];
    for (rel, fig) in &files {
        let loaded = std::sync::Arc::new(snapscope::Loaded::from_bytes(&std::fs::read(dir.join(rel)).unwrap()).unwrap());
        let conn = snapscope::store::to_memory(&loaded, &snapscope::store::Records::NONE).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for q in queries {
            conn.prepare(q).and_then(|mut s| s.query([]).map(|_| ())).unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
        for (d, want) in fig["devices"].as_object().unwrap() {
            let reserved: i64 = conn
                .query_row(
                    "SELECT COALESCE(SUM(s.total_size),0) FROM segments s JOIN devices d ON s.device_id = d.id WHERE d.device_index = ?1",
                    [d.parse::<i64>().unwrap()],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(reserved, want["reserved_at_dump"].as_i64().unwrap(), "{rel} d{d}");
            let events: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM traces t JOIN devices d ON t.device_id = d.id WHERE d.device_index = ?1",
                    [d.parse::<i64>().unwrap()],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(events, want["events"].as_i64().unwrap(), "{rel} d{d}");
        }
    }
}
