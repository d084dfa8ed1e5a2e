//! The thin wasm-bindgen facade the page's Web Worker drives. Results cross the boundary as JSON
//! text (exactly what the CLI prints with `--json`, and 64-bit integers stay intact); errors as
//! JSON `{code, message, hint}`.

use crate::query::sql;
use crate::reader::ChunkReader;
use crate::session::Session;
use crate::{Error, Loaded};
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn err(e: Error) -> JsValue {
    JsValue::from_str(&serde_json::json!({"code": e.code, "message": e.message, "hint": e.hint}).to_string())
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn now() -> f64 {
    sql::now_ms()
}

/// Milliseconds spent in each load stage and the wasm memory high-water mark.
#[derive(Serialize, Default, Clone)]
struct Stats {
    bytes: f64,
    read_ms: f64,
    /// Of `read_ms`, the time spent decoding pushed chunks (the rest is waiting for the file).
    decode_ms: f64,
    parse_ms: f64,
    replay_ms: f64,
    store_ms: f64,
    /// Until the overview could be shown (read + parse + replay).
    first_view_ms: f64,
    total_ms: f64,
    events: usize,
    /// Wasm memory when the overview was ready (before the SnapshotDB), and now.
    wasm_memory_at_first_view_bytes: f64,
    wasm_memory_bytes: f64,
    /// The engine's warm-up on this load's path (0 if none ran or it ran ahead of the file).
    warm_up_ms: f64,
}

#[wasm_bindgen]
pub struct Engine {
    reader: Option<ChunkReader>,
    snapshot: Option<crate::model::Snapshot>,
    loaded: Option<Loaded>,
    session: Option<Session>,
    name: String,
    started: f64,
    stats: Stats,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        Engine { reader: None, snapshot: None, loaded: None, session: None, name: String::new(), started: 0.0, stats: Stats::default() }
    }

    /// Run a synthetic snapshot through the load path so that the browser optimizes it before
    /// the user's file arrives (see `warmup.rs`): the long one when `ahead` (the page waits for
    /// a file), the short one on a load's path. Returns the milliseconds it took.
    #[wasm_bindgen(js_name = warmUp)]
    pub fn warm_up(ahead: bool) -> Result<f64, JsValue> {
        let t = now();
        let events = if ahead { crate::warmup::AHEAD_EVENTS } else { crate::warmup::ON_LOAD_EVENTS };
        crate::warmup::run(events).map_err(err)?;
        Ok(now() - t)
    }

    /// Start loading a file of `total_bytes` (used to size the buffer once); `warm_up_ms` is
    /// the warm-up the worker ran for this file, reported with its stats.
    pub fn begin(&mut self, name: String, total_bytes: f64, warm_up_ms: f64) {
        self.reader = Some(ChunkReader::default());
        self.snapshot = None;
        self.loaded = None;
        self.session = None;
        self.name = name;
        self.started = now();
        self.stats = Stats { bytes: total_bytes, warm_up_ms, ..Stats::default() };
    }

    /// Feed the next chunk of the file (`File.stream()` order).
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        let t = now();
        let pushed = self.reader.as_mut().ok_or_else(|| err(not_loading()))?.push(chunk).map_err(err);
        self.stats.decode_ms += now() - t;
        pushed
    }

    /// Decode the gathered bytes into the typed snapshot. Returns the number of trace events.
    pub fn parse(&mut self) -> Result<usize, JsValue> {
        let t = now();
        self.stats.read_ms = t - self.started;
        let reader = self.reader.take().ok_or_else(|| err(not_loading()))?;
        let snap = reader.finish().map_err(err)?;
        self.stats.events = snap.traces.iter().map(|t| t.events.len()).sum();
        self.snapshot = Some(snap);
        self.stats.parse_ms = now() - t;
        Ok(self.stats.events)
    }

    /// Replay every device's allocator trace. Returns the overview JSON, which needs no
    /// database: the page shows it while `store()` builds the SnapshotDB.
    pub fn replay(&mut self) -> Result<String, JsValue> {
        let t = now();
        let snap = self.snapshot.take().ok_or_else(|| err(not_loading()))?;
        let loaded = Loaded::from_snapshot(snap);
        let overview = json(&crate::analysis::overview::overview(&loaded));
        self.loaded = Some(loaded);
        self.stats.replay_ms = now() - t;
        self.stats.first_view_ms = now() - self.started;
        self.stats.wasm_memory_at_first_view_bytes = wasm_memory_bytes();
        Ok(overview)
    }

    /// Build the in-memory SnapshotDB (templates, SQL and the analyses run on it).
    pub fn store(&mut self) -> Result<String, JsValue> {
        let t = now();
        let loaded = self.loaded.take().ok_or_else(|| err(not_loading()))?;
        let session = Session::from_loaded(loaded, &[("source_name", self.name.clone())]).map_err(err)?;
        self.stats.store_ms = now() - t;
        self.stats.total_ms = now() - self.started;
        web_sys::console::info_1(
            &format!(
                "snapscope: {} ({} bytes, {} events) read {:.0} ms, parsed {:.0} ms, replayed {:.0} ms, SnapshotDB {:.0} ms",
                self.name,
                self.stats.bytes,
                self.stats.events,
                self.stats.read_ms,
                self.stats.parse_ms,
                self.stats.replay_ms,
                self.stats.store_ms
            )
            .into(),
        );
        let ov = session.overview_json().map_err(err)?;
        self.session = Some(session);
        Ok(ov)
    }

    fn session(&self) -> Result<&Session, JsValue> {
        self.session.as_ref().ok_or_else(|| err(Error::new("NOT_LOADED", "no snapshot is loaded", "load a snapshot first")))
    }

    pub fn overview(&self) -> Result<String, JsValue> {
        self.session()?.overview_json().map_err(err)
    }

    pub fn timeline(&self, device: i32, from: u32, to: u32, buckets: u32) -> Result<String, JsValue> {
        Ok(json(&self.session()?.timeline(device as i64, from, to, buckets).map_err(err)?))
    }

    /// Stacked live allocations of events `from..=to` in `columns` columns, the `max_blocks`
    /// largest blocks drawn one by one.
    pub fn bands(&self, device: i32, from: u32, to: u32, columns: u32, max_blocks: u32) -> Result<String, JsValue> {
        let loaded = self.session()?.loaded.as_ref().ok_or_else(|| err(Error::new("NOT_LOADED", "no snapshot is loaded", "")))?;
        Ok(json(&crate::analysis::bands::bands(loaded, device as i64, from, to, columns, max_blocks as usize).map_err(err)?))
    }

    /// Device and event indices are plain JS numbers; `event` < 0 means before the first event.
    pub fn tree(&self, device: i32, event: i32) -> Result<String, JsValue> {
        Ok(json(&self.session()?.tree(device as i64, (event >= 0).then_some(event as i64)).map_err(err)?))
    }

    pub fn state(&self, device: i32, event: i32) -> Result<String, JsValue> {
        Ok(json(&self.session()?.state(device as i64, (event >= 0).then_some(event as i64)).map_err(err)?))
    }

    pub fn event(&self, device: i32, index: i32) -> Result<String, JsValue> {
        Ok(json(&self.session()?.event(device as i64, index as i64).map_err(err)?))
    }

    pub fn sql(&mut self, text: String, max_rows: u32, timeout_ms: u32) -> Result<String, JsValue> {
        let s = self.session.as_mut().ok_or_else(|| err(Error::new("NOT_LOADED", "no snapshot is loaded", "load a snapshot first")))?;
        let rows =
            sql::run(&mut s.conn, &text, &[], sql::Limits { max_rows: max_rows as usize, timeout_ms: timeout_ms as u64 }).map_err(err)?;
        Ok(json(&rows))
    }

    /// Every analysis of one device (`analyze --mode all --json`); `event` < 0 = the allocated peak.
    pub fn analyze(&self, device: i32, event: i32) -> Result<String, JsValue> {
        let ev = (event >= 0).then_some(Some(event as i64));
        Ok(json(&self.session()?.analyze(device as i64, ev).map_err(err)?))
    }

    /// Live bytes per stack at the allocated peak of `device`: {label: bytes} (for compare).
    #[wasm_bindgen(js_name = peakStacks)]
    pub fn peak_stacks(&self, device: i32) -> Result<String, JsValue> {
        let (_, stacks) = crate::analysis::compare::at_peak(&self.session()?.conn, device as i64).map_err(err)?;
        Ok(json(&stacks))
    }

    /// Stacks at this snapshot's peak against another's (`peakStacks` of the other file).
    #[wasm_bindgen(js_name = compareStacks)]
    pub fn compare_stacks(&self, device: i32, other: String) -> Result<String, JsValue> {
        let (_, mine) = crate::analysis::compare::at_peak(&self.session()?.conn, device as i64).map_err(err)?;
        let theirs: std::collections::BTreeMap<String, i64> = serde_json::from_str(&other)
            .map_err(|e| err(Error::new("INVALID_PARAMETER", format!("stacks must be a JSON object: {e}"), "")))?;
        Ok(json(&crate::analysis::compare::diff_stacks(&mine, &theirs, 20)))
    }

    /// The self-contained HTML report.
    pub fn report(&self) -> Result<String, JsValue> {
        crate::report::html(self.session()?, &self.name).map_err(err)
    }

    /// The template catalogue (typed parameters, columns with units).
    pub fn catalogue(&self) -> String {
        json(&crate::query::catalogue::catalogue())
    }

    /// Run a template; `params` is a JSON object.
    pub fn query(&mut self, name: String, params: String) -> Result<String, JsValue> {
        let s = self.session.as_mut().ok_or_else(|| err(Error::new("NOT_LOADED", "no snapshot is loaded", "load a snapshot first")))?;
        let p: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&params)
            .map_err(|e| err(Error::new("INVALID_PARAMETER", format!("params must be a JSON object: {e}"), "")))?;
        let r = crate::query::templates::run(&mut s.conn, &name, &p, sql::Limits { max_rows: 100_000, timeout_ms: 30_000 }).map_err(err)?;
        Ok(json(&r))
    }

    /// The SnapshotDB as an SQLite file image.
    #[wasm_bindgen(js_name = exportDb)]
    pub fn export_db(&mut self) -> Result<Vec<u8>, JsValue> {
        let s = self.session.as_mut().ok_or_else(|| err(Error::new("NOT_LOADED", "no snapshot is loaded", "load a snapshot first")))?;
        // The session's `traces` is virtual; an exported file holds it as rows.
        let Some(loaded) = s.loaded.as_ref() else {
            return Ok(s.conn.serialize(rusqlite::MAIN_DB).map_err(|e| err(Error::from(e)))?.to_vec());
        };
        let meta = crate::store::all_metadata(&s.conn).map_err(err)?;
        let meta: Vec<(&str, String)> = meta.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let mut conn = crate::store::to_memory_materialized(loaded, &meta).map_err(err)?;
        let data = conn.serialize(rusqlite::MAIN_DB).map_err(|e| err(Error::from(e)))?;
        Ok(data.to_vec())
    }

    /// Load timings and the wasm memory high-water mark, as a plain JS object.
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let mut s = self.stats.clone();
        s.wasm_memory_bytes = wasm_memory_bytes();
        // Plain objects, and JS numbers (every figure here is far below 2^53).
        s.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true)).map_err(|e| JsValue::from_str(&e.to_string()))
    }
}

fn not_loading() -> Error {
    Error::new("NOT_LOADING", "no load in progress", "call begin() first")
}

/// Wasm linear memory size in bytes (it only grows, so this is the high-water mark).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}
