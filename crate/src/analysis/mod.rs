//! Analyses over a replayed snapshot. Each returns a typed, serializable result; the CLI prints
//! it and the page renders it, so nothing is computed twice.

pub mod bands;
pub mod basis;
pub mod categories;
pub mod category_series;
pub mod compare;
pub mod compare_match;
pub mod compare_steps;
pub mod diff;
pub mod event;
pub mod findings;
pub mod fragment;
pub mod held_gradients;
pub mod holders;
pub mod leak;
pub mod live;
pub mod markers;
pub mod oom;
pub mod overview;
pub mod peak;
pub mod peak_rows;
pub mod stack_labels;
pub mod state;
pub mod step_growth;
pub mod steps;
pub mod streams;
pub mod timeline;
pub mod tree;

/// All analyses of one device, as `analyze --mode all` prints them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceAnalysis {
    pub device: i64,
    pub overview: overview::DeviceOverview,
    /// Who holds the memory at the chosen event (at the dump without trace events).
    pub peak: Option<peak::PeakAnalysis>,
    pub fragment: fragment::Fragmentation,
    pub leak: Option<leak::LeakAnalysis>,
    pub oom: oom::OomAnalysis,
    /// The live memory by category at the peak analysis's event.
    pub categories: categories::CategoryBreakdown,
    /// Phases, steps and growth (None for a SnapshotDB file: they need the replay).
    pub steps: Option<steps::StepsAnalysis>,
    /// Figures per stream (None for a SnapshotDB file).
    pub streams: Option<streams::StreamAnalysis>,
    /// The recording simulated with expandable segments toggled (None without a trace or for a
    /// SnapshotDB file).
    pub what_if: Option<crate::simulate::WhatIf>,
    /// The previous step's gradients alive at a forward-pass peak (None for a SnapshotDB file).
    pub held_gradients: Option<held_gradients::HeldGradients>,
    pub findings: Vec<findings::Finding>,
}
