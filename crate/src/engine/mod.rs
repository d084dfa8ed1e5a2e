//! The engine API: one open snapshot (replayed in memory, or a SnapshotDB file) and a method for
//! everything a surface needs. The CLI and the wasm facade are adapters over it: they parse
//! input, call one method, and print or serialize what it returns. No surface touches SQL.

use crate::codes::ErrorCode;
mod envelope;
#[cfg(not(target_arch = "wasm32"))]
mod files;

use crate::analysis::basis::{self, Counter};
use crate::analysis::{
    bands, categories, category_series, compare, event, findings, fragment, held_gradients, leak, oom, overview, peak, state, steps,
    streams, timeline, tree, DeviceAnalysis,
};
use crate::error::{Error, Result};
use crate::query::{catalogue, sql, templates};
use crate::store::{self, Records};
use crate::Loaded;
use rusqlite::Connection;
use std::cell::OnceCell;
use std::sync::Arc;

pub use envelope::{envelope, Envelope, ENVELOPE_VERSION};
#[cfg(not(target_arch = "wasm32"))]
pub use files::{
    dirs_within, folder_files, import_file, now_iso, refuse_input_as_output, sha256_hex, stream_snapshot, write_atomic, ImportOutcome,
};

/// Which event of a device a question is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The first event holding the peak of a counter.
    Peak(Counter),
    /// The state before the first event.
    WindowStart,
    /// Right after event N (checked against the trace).
    Event(i64),
    /// The last event, i.e. the state the dump shows.
    Dump,
}

impl At {
    /// From a plain index as the page and the CLI pass it: `None` = the allocated peak.
    pub fn event_or_peak(event: Option<i64>) -> At {
        event.map_or(At::Peak(Counter::Allocated), At::Event)
    }
}

/// The analysis modes of `analyze`.
pub const ANALYSES: [&str; 12] =
    ["overview", "peak", "fragment", "leak", "oom", "tree", "compare", "categories", "steps", "streams", "tune", "all"];

/// A device's position in the replay (semantics are stored by position) and its replay.
fn device_of(l: &Loaded, device: i64) -> Result<(usize, &crate::replay::DeviceReplay)> {
    l.devices.iter().enumerate().find(|(_, d)| d.device == device).ok_or_else(|| Error::no_device(device))
}

pub struct Engine {
    /// The replay, shared with the SnapshotDB's virtual tables (None for a .db file).
    loaded: Option<Arc<Loaded>>,
    /// The SnapshotDB, built on first use over a replay (the overview needs none).
    db: OnceCell<Connection>,
    /// Metadata rows the SnapshotDB records (source name, hash).
    meta: Vec<(&'static str, String)>,
    /// Computed once: it scans every event, and most calls resolve an event through it.
    overview: OnceCell<overview::Overview>,
    /// The expandable-segments toggle per device: a whole simulation, the same for every event.
    what_ifs: std::cell::RefCell<std::collections::HashMap<i64, crate::simulate::WhatIf>>,
    /// Device capacity for the simulations the analyses cite (None: from a recorded OOM).
    device_memory: std::cell::Cell<Option<u64>>,
}

impl Engine {
    /// An engine over a replayed snapshot; `meta` are metadata rows (source name, hash).
    pub fn from_loaded(loaded: Loaded, meta: Vec<(&'static str, String)>) -> Engine {
        Engine::from_shared(Arc::new(loaded), meta)
    }

    /// `from_loaded` for a replay the caller keeps a handle on.
    pub fn from_shared(loaded: Arc<Loaded>, meta: Vec<(&'static str, String)>) -> Engine {
        Engine {
            loaded: Some(loaded),
            db: OnceCell::new(),
            meta,
            overview: OnceCell::new(),
            what_ifs: Default::default(),
            device_memory: Default::default(),
        }
    }

    /// An engine over a SnapshotDB (read-only).
    pub fn from_db(conn: Connection) -> Result<Engine> {
        store::check_schema(&conn)?;
        Ok(Engine {
            loaded: None,
            db: OnceCell::from(conn),
            meta: Vec::new(),
            overview: OnceCell::new(),
            what_ifs: Default::default(),
            device_memory: Default::default(),
        })
    }

    /// The SnapshotDB (built now if it is not yet).
    fn conn(&self) -> Result<&Connection> {
        if let Some(c) = self.db.get() {
            return Ok(c);
        }
        let loaded = self.loaded.as_ref().expect("an engine without a database has a replay");
        let overview_json = serde_json::to_string(self.overview()?).expect("serializable");
        let conn = store::to_memory(loaded, &Records { meta: &self.meta, overview_json: &overview_json })?;
        Ok(self.db.get_or_init(|| conn))
    }

    fn conn_mut(&mut self) -> Result<&mut Connection> {
        self.conn()?;
        Ok(self.db.get_mut().expect("built above"))
    }

    /// Build the SnapshotDB now (the page does it right after showing the overview).
    pub fn build_db(&self) -> Result<()> {
        self.conn().map(|_| ())
    }

    fn loaded(&self, what: &str) -> Result<&Loaded> {
        self.loaded.as_deref().ok_or_else(|| Error::needs_snapshot(what))
    }

    // ---- what the snapshot holds ------------------------------------------------------------

    pub fn overview(&self) -> Result<&overview::Overview> {
        if let Some(ov) = self.overview.get() {
            return Ok(ov);
        }
        let ov = match &self.loaded {
            Some(l) => overview::overview(l),
            None => serde_json::from_str(&self.stored_overview()?).map_err(|e| {
                Error::new(ErrorCode::DatabaseSchemaInvalid, format!("stored overview unreadable: {e}"), "re-import the snapshot")
            })?,
        };
        Ok(self.overview.get_or_init(|| ov))
    }

    fn stored_overview(&self) -> Result<String> {
        store::metadata(self.conn()?, "overview_json")?
            .ok_or_else(|| Error::new(ErrorCode::DatabaseSchemaInvalid, "the SnapshotDB has no overview", "re-import the snapshot"))
    }

    pub fn devices(&self) -> Result<Vec<i64>> {
        Ok(self.overview()?.devices.iter().map(|d| d.device).collect())
    }

    /// The device asked for (checked), or every device.
    pub fn devices_or(&self, device: Option<i64>) -> Result<Vec<i64>> {
        let all = self.devices()?;
        match device {
            Some(d) if all.contains(&d) => Ok(vec![d]),
            Some(d) => Err(Error::no_device(d)),
            None => Ok(all),
        }
    }

    /// The device asked for (checked), or the first one.
    pub fn device_or_first(&self, device: Option<i64>) -> Result<i64> {
        templates::resolve_device(self.conn()?, device)
    }

    /// The SHA-256 of the snapshot's bytes, when it was computed while reading (`open_hashed`).
    pub fn source_sha256(&self) -> Option<String> {
        self.meta.iter().find(|(k, _)| *k == "source_sha256").map(|(_, v)| v.clone())
    }

    /// Source, hash, engine version, device selection and counts, as one JSON object.
    pub fn metadata(&self) -> Result<serde_json::Value> {
        store::metadata_summary(self.conn()?)
    }

    /// The index the analyses take for `at` on `device` (None = the window start). Event
    /// indices are validated: an index past the end is an error, not the end state.
    pub fn resolve(&self, device: i64, at: At) -> Result<Option<i64>> {
        let events = self.overview()?.devices.iter().find(|d| d.device == device).ok_or_else(|| Error::no_device(device))?.events as i64;
        Ok(match at {
            At::WindowStart => None,
            At::Dump => (events > 0).then_some(events - 1),
            At::Peak(c) => basis::peak_of(self.conn()?, device, c)?.event.map(i64::from),
            At::Event(e) if e < 0 || e >= events => {
                return Err(Error::new(
                    ErrorCode::EventOutOfRange,
                    format!("event {e} is outside device {device}'s trace (0..{})", events.max(1) - 1),
                    "omit the event for the state before the first event, or pick one from `overview`",
                ))
            }
            At::Event(e) => Some(e),
        })
    }

    // ---- analyses ---------------------------------------------------------------------------

    /// Every analysis of one device; `at` picks the peak analysis's event (default: the
    /// allocated peak).
    pub fn analyze(&self, device: i64, at: At) -> Result<DeviceAnalysis> {
        let ov = self.overview()?.devices.iter().find(|d| d.device == device).cloned().ok_or_else(|| Error::no_device(device))?;
        let event = self.resolve(device, at)?;
        let has_events = ov.events > 0;
        // Without events the state before the first one is the dump's: attribute that.
        let peak = Some(peak::peak(self.conn()?, device, event, 10)?);
        let fragment = self.fragment(device)?;
        let leak = self.leak(device)?;
        let oom = self.oom(device)?;
        let categories = categories::categories_at(self.conn()?, device, event)?;
        // A dump-only file gets its steps answer too: it says the program kind (`dump_only`).
        let steps = if self.loaded.is_some() { Some(self.steps(device)?) } else { None };
        let streams = if has_events && self.loaded.is_some() { Some(self.streams(device)?) } else { None };
        let simulated = has_events && self.loaded.as_ref().is_some_and(|l| l.snapshot.host_device != Some(device));
        let what_if = if simulated { Some(self.what_if(device, &oom)?) } else { None };
        let held = self.held_gradients(device)?;
        let findings = findings::findings(
            &ov,
            peak.as_ref(),
            &fragment,
            leak.as_ref(),
            &oom,
            (Some(&categories), steps.as_ref(), held.as_ref()),
            what_if.as_ref(),
        );
        Ok(DeviceAnalysis {
            device,
            overview: ov,
            peak,
            fragment,
            leak,
            oom,
            categories,
            steps,
            streams,
            what_if,
            held_gradients: held,
            findings,
        })
    }

    /// Who holds the memory after `at` (the dump for a file without events): one part of
    /// `analyze`, computed alone for `--mode peak`.
    pub fn peak(&self, device: i64, at: At) -> Result<peak::PeakAnalysis> {
        peak::peak(self.conn()?, device, self.resolve(device, at)?, 10)
    }

    /// Free memory in reserved segments at the peaks and the dump (`--mode fragment`).
    pub fn fragment(&self, device: i64) -> Result<fragment::Fragmentation> {
        fragment::fragmentation(self.conn()?, device)
    }

    /// Blocks kept to the dump and the floor over the window (`--mode leak`; None without events).
    pub fn leak(&self, device: i64) -> Result<Option<leak::LeakAnalysis>> {
        let events = self.overview()?.devices.iter().find(|d| d.device == device).ok_or_else(|| Error::no_device(device))?.events;
        if events > 0 {
            self.leaks(device).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The previous step's gradients alive at a forward-pass peak (None without the replay).
    pub fn held_gradients(&self, device: i64) -> Result<Option<held_gradients::HeldGradients>> {
        let Some(l) = self.loaded.as_ref() else { return Ok(None) };
        let (pos, d) = device_of(l, device)?;
        let sem = l.semantics();
        let Some(gradient) = sem.rules.categories.iter().position(|c| c == "gradient") else { return Ok(None) };
        Ok(held_gradients::held_gradients(d, &l.phases()[pos], &sem.categories[pos], gradient as u8))
    }

    /// Each OOM with its verdict, or the room at the dump (`--mode oom`).
    pub fn oom(&self, device: i64) -> Result<oom::OomAnalysis> {
        oom::oom(self.conn()?, device)
    }

    /// The recording with expandable segments toggled, for the findings and the OOM view.
    fn what_if(&self, device: i64, oom: &oom::OomAnalysis) -> Result<crate::simulate::WhatIf> {
        if let Some(w) = self.what_ifs.borrow().get(&device) {
            return Ok(w.clone());
        }
        let conf = crate::simulate::WhatIf::toggle_conf(&self.recorded_settings(device)?);
        let memory = self.device_memory.get();
        let sim = self.simulate(device, Some(conf), memory)?;
        let baseline = self.simulate(device, None, memory)?;
        let recorded: Vec<u32> = oom.ooms.iter().map(|o| o.event as u32).collect();
        let w = crate::simulate::WhatIf::from_simulation(conf, &sim, &baseline, &recorded);
        self.what_ifs.borrow_mut().insert(device, w.clone());
        Ok(w)
    }

    fn leaks(&self, device: i64) -> Result<leak::LeakAnalysis> {
        // The floor per tenth comes from the replay's block extremes when it is in memory.
        let floor = self.loaded.as_ref().and_then(|l| l.device(device)).map(|d| leak::tenth_floors(&d.series));
        leak::leak(self.conn()?, device, 10, floor)
    }

    /// The live memory by category after `at` (default in the CLI: the allocated peak).
    pub fn categories(&self, device: i64, at: At) -> Result<categories::CategoryBreakdown> {
        categories::categories_at(self.conn()?, device, self.resolve(device, at)?)
    }

    /// Phases, named ranges, steps and growth across steps.
    pub fn steps(&self, device: i64) -> Result<steps::StepsAnalysis> {
        let l = self.loaded("steps and phases")?;
        let (pos, d) = device_of(l, device)?;
        Ok(steps::steps(d, &l.phases()[pos]))
    }

    /// Peak, share at the allocated peak and pending frees of each stream.
    pub fn streams(&self, device: i64) -> Result<streams::StreamAnalysis> {
        let l = self.loaded("figures per stream")?;
        Ok(streams::streams(l.device(device).ok_or_else(|| Error::no_device(device))?))
    }

    /// Active memory by category over events `from..=to` in `columns` columns.
    pub fn category_series(&self, device: i64, from: u32, to: u32, columns: u32) -> Result<category_series::CategorySeries> {
        let l = self.loaded("a timeline by category")?;
        let (pos, d) = device_of(l, device)?;
        let sem = l.semantics();
        Ok(category_series::category_series(d, &sem.categories[pos], &sem.rules.categories, from, to, columns))
    }

    /// The category rules in the order they are tried.
    pub fn category_rules(&self) -> Result<Vec<crate::semantics::rules::RuleInfo>> {
        match &self.loaded {
            Some(l) => Ok(l.rules().info()),
            None => Err(Error::needs_snapshot("the category rules")),
        }
    }

    /// Categorize under a user's rules file (`None`: the defaults again). The SnapshotDB is
    /// rebuilt on next use, so its `category` columns follow.
    pub fn set_category_rules(&mut self, text: Option<&str>) -> Result<()> {
        let rules = match text {
            Some(t) => crate::semantics::RuleSet::from_user(t)?,
            None => crate::semantics::RuleSet::defaults(),
        };
        let arc = self.loaded.as_mut().ok_or_else(|| Error::needs_snapshot("category rules"))?;
        // The SnapshotDB's virtual tables hold the replay: let go of them first.
        self.db = OnceCell::new();
        let loaded = Arc::get_mut(arc).ok_or_else(|| {
            Error::new(ErrorCode::Busy, "the snapshot is shared with another view", "close the comparison, then change the rules")
        })?;
        loaded.set_rules(rules);
        Ok(())
    }

    /// The device capacity the analyses' simulations assume (`analyze --device-memory`).
    pub fn set_device_memory(&self, bytes: Option<u64>) {
        self.device_memory.set(bytes);
        self.what_ifs.borrow_mut().clear();
    }

    /// This file as one rank of a distributed run (what `snapscope ranks` combines).
    pub fn rank_summary(&self, file: &str) -> Result<crate::ranks::FileSummary> {
        let l = self.loaded("a rank summary")?;
        Ok(crate::ranks::summarize(file, self.overview()?.source_bytes, l))
    }

    /// The allocator settings the recording ran under, as the simulator reads them.
    pub fn recorded_settings(&self, device: i64) -> Result<crate::simulate::Settings> {
        crate::simulate::recorded_settings(self.loaded("the allocator simulator")?, device)
    }

    /// Run the allocator on the device's recorded requests under the recorded settings changed
    /// by `conf` (`PYTORCH_CUDA_ALLOC_CONF` syntax; None or "" = as recorded, the self-check).
    /// `device_memory` bytes, else the capacity seen at a recorded OOM, else unknown.
    pub fn simulate(&self, device: i64, conf: Option<&str>, device_memory: Option<u64>) -> Result<crate::simulate::Simulation> {
        crate::simulate::simulate_loaded(self.loaded("the allocator simulator")?, device, conf.unwrap_or(""), device_memory)
    }

    /// `simulate` with the recorded and simulated reserved lines over the events, for a chart.
    pub fn simulate_lines(&self, device: i64, conf: Option<&str>, device_memory: Option<u64>, columns: u32) -> Result<serde_json::Value> {
        let sim = self.simulate(device, conf, device_memory)?;
        let l = self.loaded("the allocator simulator")?;
        let (_, d) = device_of(l, device)?;
        let lines = crate::simulate::reserved_lines(d, &sim, columns);
        let mut v = serde_json::to_value(&sim).expect("serializable");
        v["lines"] = serde_json::to_value(lines).expect("serializable");
        Ok(v)
    }

    /// Alloc-conf strings of the standard set for a device ("" = as recorded).
    pub fn tune_candidates(&self, device: i64, device_memory: Option<u64>) -> Result<Vec<String>> {
        crate::simulate::tune::candidates(self.loaded("the allocator simulator")?, device, device_memory)
    }

    /// Simulate the standard set (on every core natively) and rank it by reserved peak.
    pub fn tune(&self, device: i64, device_memory: Option<u64>) -> Result<crate::simulate::tune::Tuning> {
        crate::simulate::tune::tune(self.loaded("the allocator simulator")?, device, device_memory)
    }

    pub fn tree(&self, device: i64, at: At) -> Result<tree::MemoryTree> {
        tree::memory_tree(self.conn()?, device, self.resolve(device, at)?, tree::TreeOptions::default())
    }

    pub fn state(&self, device: i64, at: At) -> Result<state::AllocatorState> {
        state::allocator_state(self.conn()?, device, self.resolve(device, at)?)
    }

    pub fn event(&self, device: i64, index: i64) -> Result<event::EventDetail> {
        event::event_detail(self.conn()?, device, index)
    }

    /// Frames `offset..offset + limit` of one stack (a `stack_id` from another answer).
    pub fn stack(&self, stack_id: i64, offset: i64, limit: i64) -> Result<event::StackPage> {
        event::stack_page(self.conn()?, stack_id, offset, limit)
    }

    /// Counters over events `from..=to` in `buckets` min/max columns.
    pub fn timeline(&self, device: i64, from: u32, to: u32, buckets: u32) -> Result<timeline::Timeline> {
        let l = self.loaded("a timeline")?;
        let d = l.device(device).ok_or_else(|| Error::no_device(device))?;
        let trace = l.snapshot.trace(device);
        let time_of = |i: usize| trace.and_then(|t| t.events.get(i)).and_then(|e| e.time_us());
        Ok(timeline::downsample(device, &d.series, time_of, from, to, buckets))
    }

    /// Stacked live allocations of events `from..=to` in `columns` columns, the `max_blocks`
    /// largest blocks drawn one by one.
    pub fn bands(&self, device: i64, from: u32, to: u32, columns: u32, max_blocks: usize) -> Result<bands::Bands> {
        bands::bands(self.loaded("the allocations view")?, device, from, to, columns, max_blocks)
    }

    /// What this snapshot contributes to a comparison (see [`Engine::compare_with`]).
    pub fn compare_side(&self) -> Result<compare::Side> {
        compare::side(self.conn()?, self.overview()?)
    }

    /// This snapshot (a) against another's side (b): figures, peaks and the stacks at the peaks.
    pub fn compare_with(&self, other: &compare::Side) -> Result<compare::Comparison> {
        Ok(compare::compare(&self.compare_side()?, other, 20))
    }

    /// The self-contained HTML report.
    pub fn report(&self, title: &str) -> Result<String> {
        let ov = self.overview()?;
        let analyses: Vec<DeviceAnalysis> =
            ov.devices.iter().map(|d| self.analyze(d.device, At::Peak(Counter::Allocated))).collect::<Result<_>>()?;
        let timelines: Vec<timeline::Timeline> =
            ov.devices.iter().map(|d| timeline::from_db(self.conn()?, d.device, 300)).collect::<Result<_>>()?;
        let tunings: Vec<Option<crate::simulate::tune::Tuning>> = ov
            .devices
            .iter()
            .map(|d| {
                let host = self.loaded.as_ref().is_some_and(|l| l.snapshot.host_device == Some(d.device));
                if d.events > 0 && self.loaded.is_some() && !host {
                    self.tune(d.device, None).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect::<Result<_>>()?;
        Ok(crate::report::html(title, ov, &analyses, &timelines, &tunings))
    }

    // ---- queries ----------------------------------------------------------------------------

    pub fn catalogue() -> Vec<catalogue::Template> {
        catalogue::catalogue()
    }

    /// Run a catalogue template with JSON parameters.
    pub fn query(
        &mut self,
        template: &str,
        params: &serde_json::Map<String, serde_json::Value>,
        limits: sql::Limits,
    ) -> Result<templates::TemplateResult> {
        templates::run(self.conn_mut()?, template, params, limits)
    }

    /// Run read-only SQL.
    pub fn sql(&mut self, text: &str, limits: sql::Limits) -> Result<sql::Rows> {
        sql::run(self.conn_mut()?, text, &[], limits)
    }

    // ---- exports ----------------------------------------------------------------------------

    /// The SnapshotDB as an SQLite file image, every table as rows.
    pub fn export_db(&mut self) -> Result<Vec<u8>> {
        let Some(loaded) = self.loaded.clone() else {
            return Ok(self.conn_mut()?.serialize(rusqlite::MAIN_DB)?.to_vec());
        };
        let meta = store::all_metadata(self.conn()?)?;
        let meta: Vec<(&str, String)> = meta.iter().filter(|(k, _)| k != "overview_json").map(|(k, v)| (k.as_str(), v.clone())).collect();
        let overview_json = self.stored_overview()?;
        let mut conn = store::to_memory_materialized(&loaded, &Records { meta: &meta, overview_json: &overview_json })?;
        Ok(conn.serialize(rusqlite::MAIN_DB)?.to_vec())
    }
}
