//! `snapscope ranks`: the generated 64-rank run (scripts/gen_ranks.py, one outlier rank with a
//! known extra allocation site) and the real corpus as a folder, whose every file must show the
//! peaks `overview` shows.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn snapscope(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_snapscope")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("ranks-{name}"))
}

/// The generated run in `tmp` and its answers (written beside it).
fn generated(tmp: &Path) -> (PathBuf, Value) {
    let dir = tmp.join("run");
    let ok = Command::new("python3").arg(common::repo().join("scripts/gen_ranks.py")).arg(&dir).status().unwrap();
    assert!(ok.success());
    let answers = serde_json::from_slice(&std::fs::read(format!("{}.expected.json", dir.display())).unwrap()).unwrap();
    (dir, answers)
}

#[test]
fn the_outlier_rank_its_excess_and_the_site_behind_it() {
    let tmp = scratch("outlier");
    let (dir, want) = generated(&tmp);
    let d = dir.to_str().unwrap();
    let v = snapscope(&["ranks", d, "--json", "-j", "2"]);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 64);
    for f in files {
        let r = f["rank"].as_i64().unwrap();
        assert_eq!(f["devices"][0]["peaks"]["allocated"]["bytes"], want["peak_allocated"][r.to_string()], "rank {r}");
    }
    let s = &v["summary"];
    assert_eq!(s["max"]["allocated"]["bytes"], want["max"]);
    assert_eq!(s["median"]["allocated"]["bytes"], want["median"]);
    assert_eq!(s["min"]["allocated"]["bytes"], want["min"]);
    let w = &s["worst"];
    assert_eq!(w["rank"], want["worst_rank"]);
    assert_eq!(w["median_rank"], want["median_rank"]);
    assert_eq!(w["excess_bytes"], want["excess_bytes"]);
    let site = &w["top_sites"][0];
    assert!(site["label"].as_str().unwrap().contains(want["site"].as_str().unwrap()), "{site}");
    assert_eq!(site["delta"], want["site_bytes"]);
    assert_rows_sum_to_the_excess(w);
    let outliers: Vec<i64> = s["outliers"].as_array().unwrap().iter().map(|o| o["rank"].as_i64().unwrap()).collect();
    assert_eq!(serde_json::json!(outliers), want["outliers"]);
    let imbalance = s["imbalance"]["allocated"].as_f64().unwrap();
    assert!((imbalance - want["max"].as_f64().unwrap() / want["median"].as_f64().unwrap()).abs() < 1e-9);

    // One core or two, summaries merged later: the same answer.
    let one = snapscope(&["ranks", d, "--json", "-j", "1"]);
    assert_eq!(one["summary"], v["summary"]);
    let sums = tmp.join("summaries");
    let written = snapscope(&["ranks", d, "--json", "--summary-out", sums.to_str().unwrap()]);
    assert_eq!(written["summary"], v["summary"]);
    assert_eq!(std::fs::read_dir(&sums).unwrap().count(), 64);
    let merged = snapscope(&["ranks", "--merge", sums.to_str().unwrap(), "--json"]);
    assert_eq!(merged["summary"], v["summary"]);
    assert_eq!(merged["files"].as_array().unwrap().len(), 64);
}

#[test]
fn every_corpus_file_shows_the_peaks_of_overview() {
    let Some(root) = common::corpus() else {
        return;
    };
    let files = common::corpus_files(&root);
    let args: Vec<String> =
        ["ranks".to_string(), "--json".into()].into_iter().chain(files.iter().map(|p| p.display().to_string())).collect();
    let v = snapscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{}", v["errors"]);
    assert_eq!(v["files"].as_array().unwrap().len(), files.len());
    for f in v["files"].as_array().unwrap() {
        let ov = snapscope(&["overview", f["file"].as_str().unwrap(), "--json"]);
        for d in f["devices"].as_array().unwrap() {
            let o = ov["devices"].as_array().unwrap().iter().find(|o| o["device"] == d["device"]).unwrap();
            assert_eq!(d["peaks"]["allocated"], o["peaks"]["allocated"], "{}", f["file"]);
            assert_eq!(d["peaks"]["reserved"], o["peaks"]["reserved"], "{}", f["file"]);
        }
    }
    // The worst of the whole corpus against its median: ranks running different programs, so
    // sites differ both ways; the rows still add up.
    assert_rows_sum_to_the_excess(&v["summary"]["worst"]);
}

/// "Why the worst differs": its site rows and its category rows each sum to worst − median,
/// rows of both signs kept.
fn assert_rows_sum_to_the_excess(w: &Value) {
    let excess = w["excess_bytes"].as_i64().unwrap();
    for part in ["top_sites", "categories"] {
        let rows = w[part].as_array().unwrap();
        let sum: i64 = rows.iter().map(|r| r["delta"].as_i64().unwrap()).sum();
        assert_eq!(sum, excess, "{part} rows {rows:?} sum to the headline difference");
        for r in rows {
            assert_eq!(r["delta"].as_i64().unwrap(), r["worst"].as_i64().unwrap() - r["median"].as_i64().unwrap(), "{r}");
        }
    }
}

#[test]
fn one_report_for_the_whole_run() {
    let tmp = scratch("report");
    let (dir, want) = generated(&tmp);
    let html = tmp.join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_snapscope"))
        .args(["report", dir.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains(&format!("Why rank {} differs", want["worst_rank"])), "worst rank section");
    assert!(text.contains("fsdp/_flat_param.py:391"), "the site behind the excess");
    assert_eq!(text.matches("<tr><td class=\"n\">").count(), 64, "one row per rank");
}

/// The run order of a folder's files (the engine's `run_order`, which the page asks for too): by
/// the rank the path names, the last one (`run/rank3/memory_snapshot.pickle` is rank 3), then by
/// file name, then by path (same-named files in two folders), files without a rank last.
#[test]
fn a_runs_files_in_the_engines_order() {
    let dir = scratch("order");
    let names = [
        "b/memory_snapshot.pickle",
        "zeta.pickle",
        "run/rank10/memory_snapshot.pickle",
        "a/memory_snapshot.pickle",
        "rank3/ranking.pickle",
        "run/rank3/memory_snapshot.pickle",
        "rank2.pickle",
    ];
    for n in names {
        let p = dir.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::copy(common::fixtures().join("cuda_training.pickle"), &p).unwrap();
    }
    let v = snapscope(&["ranks", dir.to_str().unwrap(), "--json", "-j", "2"]);
    let got: Vec<String> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f["file"].as_str().unwrap()).strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .collect();
    let want = [
        "rank2.pickle",
        "run/rank3/memory_snapshot.pickle",
        "rank3/ranking.pickle",
        "run/rank10/memory_snapshot.pickle",
        "a/memory_snapshot.pickle",
        "b/memory_snapshot.pickle",
        "zeta.pickle",
    ];
    assert_eq!(got, want);
    // Given one by one in another order, the files come in the same order.
    let mut args: Vec<String> = vec!["ranks".into()];
    args.extend(names.iter().rev().map(|n| dir.join(n).to_string_lossy().into_owned()));
    args.extend(["--json".into()]);
    let v2 = snapscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v2["files"], v["files"]);
    // The engine's function answers the same for the names alone (what the page passes).
    let order = snapscope::ranks::run_order(&names);
    assert_eq!(order.iter().map(|&i| names[i]).collect::<Vec<_>>(), want);
}
