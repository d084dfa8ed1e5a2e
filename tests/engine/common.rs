//! Helpers shared by the engine test suites.
#![allow(dead_code)]

use std::path::PathBuf;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// The real corpus beside the checkout, when it is there.
pub fn corpus() -> Option<PathBuf> {
    let p = repo().join("..").join("shared").join("snapshots");
    p.join("reference.json").exists().then_some(p)
}

pub fn overview_json(bytes: &[u8]) -> serde_json::Value {
    let loaded = snapscope::Loaded::from_bytes(bytes).expect("snapshot loads");
    serde_json::to_value(snapscope::analysis::overview::overview(&loaded)).unwrap()
}
