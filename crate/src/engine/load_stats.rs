//! What the page's load took, stage by stage (the wasm engine's `stats()`).

/// Milliseconds spent in each load stage and the wasm memory high-water mark.
#[derive(serde::Serialize, Default, Clone)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LoadStats {
    pub bytes: f64,
    pub read_ms: f64,
    /// Of `read_ms`, the time spent decoding pushed chunks (the rest is waiting for the file).
    pub decode_ms: f64,
    pub parse_ms: f64,
    pub replay_ms: f64,
    /// The SnapshotDB's build so far: its slices in all, and the longest (the longest any call
    /// waited behind it); how many slices ran, and whether it is built.
    pub store_ms: f64,
    pub store_longest_slice_ms: f64,
    pub store_slices: u32,
    pub store_built: bool,
    /// Until the overview could be shown (read + parse + replay).
    pub first_view_ms: f64,
    pub total_ms: f64,
    pub events: usize,
    /// Wasm memory when the overview was ready (before the SnapshotDB), and now.
    pub wasm_memory_at_first_view_bytes: f64,
    pub wasm_memory_bytes: f64,
    /// The engine's warm-up on this load's path (0 if none ran or it ran ahead of the file).
    pub warm_up_ms: f64,
    /// Whether the engine had warmed up before the file arrived (the worker fills it in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmed_ahead: Option<bool>,
}

impl LoadStats {
    /// The SnapshotDB's figures from how far its build is.
    pub fn set_store(&mut self, p: super::StoreProgress) {
        (self.store_ms, self.store_longest_slice_ms, self.store_slices, self.store_built) = (p.spent_ms, p.longest_ms, p.slices, p.built);
    }
}
