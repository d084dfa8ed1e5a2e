//! The thin wasm-bindgen facade the page's Web Worker drives: it streams the file in, then
//! adapts calls to the engine API (`engine::Engine`). Results cross the boundary as JSON text
//! (what the CLI prints with `--json`, so 64-bit integers stay intact); errors as JSON
//! `{code, message, hint}`.

use crate::codes::ErrorCode;
use crate::engine::{envelope, At, Engine, LoadStats, Mode};
use crate::query::sql::{self, RowShape};
use crate::reader::ChunkReader;
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
    crate::clock::now_ms()
}

/// The engine of one file as the worker holds it (`Engine` in JavaScript).
#[wasm_bindgen(js_name = Engine)]
pub struct WasmEngine {
    reader: Option<ChunkReader>,
    snapshot: Option<crate::model::Snapshot>,
    engine: Option<Engine>,
    name: String,
    started: f64,
    stats: LoadStats,
}

impl Default for WasmEngine {
    fn default() -> Self {
        WasmEngine::new()
    }
}

#[wasm_bindgen(js_class = Engine)]
impl WasmEngine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> WasmEngine {
        WasmEngine { reader: None, snapshot: None, engine: None, name: String::new(), started: 0.0, stats: LoadStats::default() }
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

    /// Start loading a file of `total_bytes` (refused at once, INPUT_TOO_LARGE, beyond what the
    /// engine reads); `warm_up_ms` is the warm-up the worker ran for this file, reported with
    /// its stats.
    pub fn begin(&mut self, name: String, total_bytes: f64, warm_up_ms: f64) -> Result<(), JsValue> {
        let reader = ChunkReader::default();
        reader.declare_size(total_bytes as u64).map_err(err)?;
        self.reader = Some(reader);
        self.snapshot = None;
        self.engine = None;
        self.name = name;
        self.started = now();
        self.stats = LoadStats { bytes: total_bytes, warm_up_ms, ..LoadStats::default() };
        Ok(())
    }

    /// Where in the engine's memory (`wasmMemory()`) the worker copies the file's next `n`
    /// bytes (`File.stream()` order), before `pushed(n)`: one copy of each chunk (passing it as
    /// a `&[u8]` copied it into memory of wasm-bindgen's first).
    #[wasm_bindgen(js_name = pushRoom)]
    pub fn push_room(&mut self, n: usize) -> Result<usize, JsValue> {
        Ok(self.reader.as_mut().ok_or_else(|| err(not_loading()))?.room(n) as usize)
    }

    /// The `n` bytes copied at `pushRoom(n)` are the file's next ones.
    pub fn pushed(&mut self, n: usize) -> Result<(), JsValue> {
        let t = now();
        let reader = self.reader.as_mut().ok_or_else(|| err(not_loading()))?;
        // SAFETY: the worker calls pushRoom(n), copies n bytes there, then this (worker.ts);
        // the reader checks that n is within the room it made.
        let pushed = unsafe { reader.filled(n) }.map_err(err);
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
        let engine = Engine::from_loaded(Loaded::from_snapshot(snap), vec![("source_name", self.name.clone())]);
        let overview = json(&envelope(engine.overview().map_err(err)?));
        self.engine = Some(engine);
        self.stats.replay_ms = now() - t;
        self.stats.first_view_ms = now() - self.started;
        self.stats.wasm_memory_at_first_view_bytes = wasm_memory_bytes();
        Ok(overview)
    }

    /// Build the in-memory SnapshotDB for about `budget_ms` (the worker answers other calls
    /// between slices); true once it is built.
    #[wasm_bindgen(js_name = storeStep)]
    pub fn store_step(&mut self, budget_ms: f64) -> Result<bool, JsValue> {
        self.engine()?.build_db_step(budget_ms).map_err(err)
    }

    /// Build the in-memory SnapshotDB (templates, SQL and the analyses run on it), or finish
    /// the build `storeStep` began.
    pub fn store(&mut self) -> Result<String, JsValue> {
        self.engine()?.build_db().map_err(err)?;
        // The call that needed it first may have built it (the worker builds it when idle).
        let progress = self.engine()?.store_progress();
        self.stats.set_store(progress);
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
        self.overview()
    }

    fn engine(&self) -> Result<&Engine, JsValue> {
        self.engine.as_ref().ok_or_else(|| err(Error::new(ErrorCode::NotLoaded, "no snapshot is loaded", "load a snapshot first")))
    }

    fn engine_mut(&mut self) -> Result<&mut Engine, JsValue> {
        self.engine.as_mut().ok_or_else(|| err(Error::new(ErrorCode::NotLoaded, "no snapshot is loaded", "load a snapshot first")))
    }

    /// Exactly the object `snapscope overview FILE --json` prints.
    pub fn overview(&self) -> Result<String, JsValue> {
        Ok(json(&envelope(self.engine()?.overview().map_err(err)?)))
    }

    pub fn timeline(&self, device: i32, from: u32, to: u32, buckets: u32) -> Result<String, JsValue> {
        answer(self.engine()?.timeline(device as i64, from, to, buckets))
    }

    /// Stacked live allocations of events `from..=to` in `columns` columns, the `max_blocks`
    /// largest blocks drawn one by one.
    pub fn bands(&self, device: i32, from: u32, to: u32, columns: u32, max_blocks: u32) -> Result<String, JsValue> {
        answer(self.engine()?.bands(device as i64, from, to, columns, max_blocks as usize))
    }

    /// `bands`, its long arrays as typed arrays (no JSON for a million entries and more):
    /// `[rest, column_event, column_start, entry_block, entry_bottom, other_bytes, active]`, `rest`
    /// the JSON of everything else (device, from, to, blocks). Bytes as f64 (exact below 2^53).
    #[wasm_bindgen(js_name = bandsTyped)]
    pub fn bands_typed(&self, device: i32, from: u32, to: u32, columns: u32, max_blocks: u32) -> Result<js_sys::Array, JsValue> {
        let b = self.engine()?.bands(device as i64, from, to, columns, max_blocks as usize).map_err(err)?;
        let rest = serde_json::json!({ "device": b.device, "from": b.from, "to": b.to, "blocks": b.blocks });
        let f64s = |v: &[u64]| js_sys::Float64Array::from(&v.iter().map(|&x| x as f64).collect::<Vec<f64>>()[..]);
        let out = js_sys::Array::new();
        out.push(&JsValue::from_str(&json(&rest)));
        out.push(&js_sys::Uint32Array::from(&b.column_event[..]));
        out.push(&js_sys::Uint32Array::from(&b.column_start[..]));
        out.push(&js_sys::Uint32Array::from(&b.entry_block[..]));
        out.push(&f64s(&b.entry_bottom));
        out.push(&f64s(&b.other_bytes));
        out.push(&f64s(&b.active));
        Ok(out)
    }

    /// The allocator state at `at` (JSON: `"window_start"`, `{"event": N}`, …; see `At`).
    pub fn state(&self, device: i32, at: String) -> Result<String, JsValue> {
        answer(self.engine()?.state(device as i64, At::parse_json(&at).map_err(err)?))
    }

    /// Active memory by category over events `from..=to` in `columns` columns.
    #[wasm_bindgen(js_name = categorySeries)]
    pub fn category_series(&self, device: i32, from: u32, to: u32, columns: u32) -> Result<String, JsValue> {
        answer(self.engine()?.category_series(device as i64, from, to, columns))
    }

    /// The category rules in the order they are tried, and the user's rules text if any.
    #[wasm_bindgen(js_name = categoryRules)]
    pub fn category_rules(&self) -> Result<String, JsValue> {
        answer(self.engine()?.category_rules())
    }

    /// Categorize under a rules file's text (empty: the defaults again).
    #[wasm_bindgen(js_name = setCategoryRules)]
    pub fn set_category_rules(&mut self, text: String) -> Result<String, JsValue> {
        let text = Some(text).filter(|t| !t.trim().is_empty());
        self.engine_mut()?.set_category_rules(text.as_deref()).map_err(err)?;
        answer(self.engine()?.category_rules())
    }

    /// What if: the allocator simulated on this device's requests under `conf`
    /// (PYTORCH_CUDA_ALLOC_CONF syntax, "" = as recorded) with `device_memory` bytes (≤ 0: from a
    /// recorded OOM, else unknown), plus the recorded and simulated reserved lines in `columns`.
    pub fn simulate(&self, device: i32, conf: String, device_memory: f64, columns: u32) -> Result<String, JsValue> {
        let memory = (device_memory > 0.0).then_some(device_memory as u64);
        answer(self.engine()?.simulate_lines(device as i64, Some(&conf), memory, columns))
    }

    /// The standard set of settings to try ("" = as recorded), for the page to run one by one.
    #[wasm_bindgen(js_name = tuneCandidates)]
    pub fn tune_candidates(&self, device: i32, device_memory: f64) -> Result<String, JsValue> {
        answer(self.engine()?.tune_candidates(device as i64, (device_memory > 0.0).then_some(device_memory as u64)))
    }

    /// Rank rows of the standard set (JSON array of `{conf, label, reserved_peak, change, oom,
    /// segment_allocs, largest_free_at_reserved_peak}`) and name the one to try first.
    #[wasm_bindgen(js_name = rankTune)]
    pub fn rank_tune(&self, device: i32, rows: String) -> Result<String, JsValue> {
        let rows: Vec<crate::simulate::tune::TuneRow> = serde_json::from_str(&rows).map_err(|e| {
            err(Error::new(ErrorCode::InvalidParameter, format!("tune rows: {e}"), "pass the rows the page built from simulate()"))
        })?;
        answer(Ok(crate::simulate::tune::rank(device as i64, rows)))
    }

    /// This file as one rank of a distributed run: peaks, OOMs, steps and who holds the memory
    /// at the peak (`snapscope ranks --summary-out`'s JSON). `name` is the file name shown.
    #[wasm_bindgen(js_name = rankSummary)]
    pub fn rank_summary(&self, name: String) -> Result<String, JsValue> {
        answer(self.engine()?.rank_summary(&name))
    }

    pub fn event(&self, device: i32, index: i32) -> Result<String, JsValue> {
        answer(self.engine()?.event(device as i64, index as i64))
    }

    /// OOM and snapshot events and the annotations in at most `buckets` time buckets.
    #[wasm_bindgen(js_name = timelineMarkers)]
    pub fn timeline_markers(&self, device: i32, buckets: u32) -> Result<String, JsValue> {
        answer(self.engine()?.timeline_markers(device as i64, buckets))
    }

    /// One stack's naming frame, caller and text (null: no such stack).
    #[wasm_bindgen(js_name = stackText)]
    pub fn stack_text(&self, stack_id: f64) -> Result<String, JsValue> {
        answer(self.engine()?.stack_text(stack_id as i64))
    }

    /// Read-only SQL; rows as arrays.
    pub fn sql(&mut self, text: String, max_rows: u32, timeout_ms: u32) -> Result<String, JsValue> {
        let limits = sql::Limits { max_rows: max_rows as usize, timeout_ms: timeout_ms as u64 };
        let rows = self.engine_mut()?.sql(&text, limits).map_err(err)?;
        Ok(json(&envelope(rows.with_rows(RowShape::Arrays))))
    }

    /// One analysis mode's part for one device (`analyze --mode MODE --json`'s
    /// `devices[i][MODE]`; `overview` answers `{overview, findings}`, `all` the whole entry) at
    /// `at` (JSON of `At`: `"allocated_peak"`, `"window_start"`, `"dump"`, `{"event": N}`, …).
    pub fn analyze(&self, mode: String, device: i32, at: String) -> Result<String, JsValue> {
        let mode = Mode::parse(&mode).map_err(err)?;
        let at = At::parse_json(&at).map_err(err)?;
        Ok(json(&self.engine()?.answer(mode, device as i64, at).map_err(err)?.part_json()))
    }

    /// This snapshot's side of a comparison, for another file's `compareWith`.
    #[wasm_bindgen(js_name = compareSide)]
    pub fn compare_side(&self) -> Result<String, JsValue> {
        answer(self.engine()?.compare_side())
    }

    /// Kept, freed, born and transient memory between two events of one device (< 0 = the window start).
    #[wasm_bindgen(js_name = diffMoments)]
    pub fn diff_moments(&self, device: i32, a: String, b: String) -> Result<String, JsValue> {
        let e = self.engine()?;
        let at = |t: &str| At::parse_json(t).and_then(|at| e.resolve(device as i64, at)).map_err(err);
        answer(e.diff_moments(device as i64, at(&a)?, at(&b)?))
    }

    /// What the Leaks view shows of one device (`LeakView`): the leak analysis, the steps and
    /// the leak findings, without the rest of `analyze`.
    #[wasm_bindgen(js_name = leakView)]
    pub fn leak_view(&self, device: i32) -> Result<String, JsValue> {
        answer(self.engine()?.leak_view(device as i64))
    }

    /// What the OOM view shows of one device (`OomView`): the OOMs and the what-if they cite.
    #[wasm_bindgen(js_name = oomView)]
    pub fn oom_view(&self, device: i32) -> Result<String, JsValue> {
        answer(self.engine()?.oom_view(device as i64))
    }

    /// This snapshot's steps of one device, each at its allocated peak, for another file's
    /// `diffSteps` (`snapscope diff A B --steps`).
    #[wasm_bindgen(js_name = stepSides)]
    pub fn step_sides(&self, device: i32) -> Result<String, JsValue> {
        answer(self.engine()?.step_sides(device as i64))
    }

    /// Step N of this snapshot (a) against step N of another's `stepSides()` (b), `top` sites a step.
    #[wasm_bindgen(js_name = diffSteps)]
    pub fn diff_steps(&self, device: i32, other: String, top: u32) -> Result<String, JsValue> {
        let b: Vec<crate::analysis::compare_steps::StepSide> = serde_json::from_str(&other).map_err(|e| {
            err(Error::new(ErrorCode::InvalidParameter, format!("not a stepSides() answer: {e}"), "pass another file's stepSides()"))
        })?;
        let a = self.engine()?.step_sides(device as i64).map_err(err)?;
        Ok(json(&crate::analysis::compare_steps::compare_steps(device as i64, &a, &b, top as usize)))
    }

    /// This snapshot (a) against another's `compareSide()` (b): figures, deltas and stacks.
    #[wasm_bindgen(js_name = compareWith)]
    pub fn compare_with(&self, other: String) -> Result<String, JsValue> {
        let side = serde_json::from_str(&other).map_err(|e| {
            err(Error::new(ErrorCode::InvalidParameter, format!("not a compareSide() answer: {e}"), "pass another file's compareSide()"))
        })?;
        answer(self.engine()?.compare_with(&side))
    }

    /// The self-contained HTML report.
    pub fn report(&self) -> Result<String, JsValue> {
        self.engine()?.report(&self.name).map_err(err)
    }

    /// The template catalogue (typed parameters, columns with units).
    pub fn catalogue(&self) -> String {
        json(&Engine::catalogue())
    }

    /// The SnapshotDB's tables as `store/tables.rs` declares them (docs/schema.md is made from
    /// the same): `[{name, row, columns: [{name, type, unit, doc}]}]`, for the page's schema panel.
    pub fn schema(&self) -> String {
        json(&crate::store::tables::docs())
    }

    /// Run a template; `params` is a JSON object. Rows as arrays.
    pub fn query(&mut self, name: String, params: String) -> Result<String, JsValue> {
        let p: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&params)
            .map_err(|e| err(Error::new(ErrorCode::InvalidParameter, format!("params must be a JSON object: {e}"), "")))?;
        let limits = sql::Limits { max_rows: 100_000, timeout_ms: 30_000 };
        let r = self.engine_mut()?.query(&name, &p, limits).map_err(err)?;
        Ok(json(&envelope(r.with_rows(RowShape::Arrays))))
    }

    /// The SnapshotDB as an SQLite file image.
    #[wasm_bindgen(js_name = exportDb)]
    pub fn export_db(&mut self) -> Result<Vec<u8>, JsValue> {
        self.engine_mut()?.export_db().map_err(err)
    }

    /// Load timings and the wasm memory high-water mark, as a plain JS object.
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let mut s = self.stats.clone();
        s.wasm_memory_bytes = wasm_memory_bytes();
        if let Some(e) = &self.engine {
            s.set_store(e.store_progress());
        }
        // Plain objects, and JS numbers (every figure here is far below 2^53).
        s.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true)).map_err(|e| JsValue::from_str(&e.to_string()))
    }
}

/// An engine answer as JSON text, or its error.
fn answer<T: Serialize>(r: crate::Result<T>) -> Result<String, JsValue> {
    r.map(|v| json(&v)).map_err(err)
}

fn not_loading() -> Error {
    Error::new(ErrorCode::NotLoading, "no load in progress", "call begin() first")
}

/// The engine's `WebAssembly.Memory` (the worker copies chunks into it: `pushRoom`).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Wasm linear memory size in bytes (it only grows, so this is the high-water mark).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}

/// Combine rank summaries (a JSON array of `rankSummary` results, in the order given) into
/// `snapscope ranks --json`'s answer.
#[wasm_bindgen(js_name = combineRanks)]
pub fn combine_ranks(summaries: String) -> Result<String, JsValue> {
    let list: Vec<crate::ranks::FileSummary> = serde_json::from_str(&summaries).map_err(|e| {
        err(Error::new(ErrorCode::InvalidParameter, format!("rank summaries: {e}"), "pass the rankSummary() results as a JSON array"))
    })?;
    answer(Ok(crate::ranks::combine(&list, Vec::new())))
}

/// The run order of files named `names` (a JSON array of paths): a JSON array of their indices,
/// the order `snapscope ranks` reads them in (`ranks::run_order`).
#[wasm_bindgen(js_name = orderRunFiles)]
pub fn order_run_files(names: String) -> Result<String, JsValue> {
    let list: Vec<String> = serde_json::from_str(&names).map_err(|e| {
        err(Error::new(ErrorCode::InvalidParameter, format!("file names: {e}"), "pass the files' paths as a JSON array of strings"))
    })?;
    Ok(json(&crate::ranks::run_order(&list)))
}
