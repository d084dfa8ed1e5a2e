//! The engine API: one open snapshot (replayed in memory, or a SnapshotDB file) and a method for
//! everything a surface needs. The CLI and the wasm facade are adapters over it: they parse
//! input, call one method, and print or serialize what it returns. No surface touches SQL.

use crate::codes::ErrorCode;
mod envelope;
#[cfg(not(target_arch = "wasm32"))]
mod files;
mod load_stats;
mod modes;
mod view_parts;
mod what_if;

use crate::analysis::basis::Counter;
use crate::analysis::{
    bands, categories, category_series, compare, event, findings, fragment, held_gradients, leak, live, markers, oom, overview, peak,
    state, steps, streams, timeline, tree, DeviceAnalysis,
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
pub use load_stats::LoadStats;
pub use modes::{Answer, Mode, ANALYSES};
pub use view_parts::{LeakView, OomView};

/// Which event of a device a question is about. Across the page's boundary and in JSON:
/// `"allocated_peak"` (or `active_`, `reserved_`, `requested_peak`), `"window_start"`, `"dump"`
/// or `{"event": N}`: no sentinel integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "AtJson", into = "AtJson")]
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

/// `At` as JSON names it.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
enum AtJson {
    AllocatedPeak,
    ActivePeak,
    ReservedPeak,
    RequestedPeak,
    WindowStart,
    Dump,
    Event(i64),
}

#[cfg(not(target_arch = "wasm32"))]
impl schemars::JsonSchema for At {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "At".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        AtJson::json_schema(g)
    }
}

impl From<AtJson> for At {
    fn from(a: AtJson) -> At {
        match a {
            AtJson::AllocatedPeak => At::Peak(Counter::Allocated),
            AtJson::ActivePeak => At::Peak(Counter::Active),
            AtJson::ReservedPeak => At::Peak(Counter::Reserved),
            AtJson::RequestedPeak => At::Peak(Counter::Requested),
            AtJson::WindowStart => At::WindowStart,
            AtJson::Dump => At::Dump,
            AtJson::Event(e) => At::Event(e),
        }
    }
}

impl From<At> for AtJson {
    fn from(a: At) -> AtJson {
        match a {
            At::Peak(Counter::Allocated) => AtJson::AllocatedPeak,
            At::Peak(Counter::Active) => AtJson::ActivePeak,
            At::Peak(Counter::Reserved) => AtJson::ReservedPeak,
            At::Peak(Counter::Requested) => AtJson::RequestedPeak,
            At::WindowStart => AtJson::WindowStart,
            At::Dump => AtJson::Dump,
            At::Event(e) => AtJson::Event(e),
        }
    }
}

impl At {
    /// From a plain index as the CLI takes it: `None` = the allocated peak.
    pub fn event_or_peak(event: Option<i64>) -> At {
        event.map_or(At::Peak(Counter::Allocated), At::Event)
    }

    /// From its JSON (`"dump"`, `{"event": 5}`, …), with an error that lists the forms.
    pub fn parse_json(text: &str) -> Result<At> {
        serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::InvalidParameter,
                format!("not an event choice: {text} ({e})"),
                r#"pass "allocated_peak", "reserved_peak", "active_peak", "requested_peak", "window_start", "dump" or {"event": N}"#,
            )
        })
    }
}

/// A device's position in the replay (semantics are stored by position) and its replay.
fn device_of(l: &Loaded, device: i64) -> Result<(usize, &crate::replay::DeviceReplay)> {
    l.devices.iter().enumerate().find(|(_, d)| d.device == device).ok_or_else(|| Error::no_device(device))
}

/// A simulation with its reserved line beside the recorded one (the What if chart).
#[derive(serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SimulationLines {
    #[serde(flatten)]
    pub simulation: crate::simulate::Simulation,
    pub lines: Vec<crate::simulate::LinePoint>,
}

/// How far the SnapshotDB's build is (the page's `stats`, and its tests: a call answered while
/// `built` is false did not wait for the whole build).
#[derive(Clone, Copy, Default, Debug)]
pub struct StoreProgress {
    pub built: bool,
    /// Slices run so far.
    pub slices: u32,
    /// Their milliseconds in all, and the longest slice's.
    pub spent_ms: f64,
    pub longest_ms: f64,
}

impl StoreProgress {
    fn of(b: &store::build::StoreBuild) -> StoreProgress {
        StoreProgress { built: b.done(), slices: b.slices, spent_ms: b.spent_ms, longest_ms: b.longest_ms }
    }
}

pub struct Engine {
    /// The replay, shared with the SnapshotDB's virtual tables; for a `.db` input, read back
    /// from its tables on first use (`store::read_back`).
    loaded: OnceCell<Arc<Loaded>>,
    /// The SnapshotDB, built on first use over a replay (the overview needs none), or the input.
    db: OnceCell<Connection>,
    /// The SnapshotDB being built in slices (`build_db_step`), until it is done.
    building: std::cell::RefCell<Option<store::build::StoreBuild>>,
    /// The finished build's slices, their time in all and the longest (see [`StoreProgress`]).
    db_built: std::cell::Cell<StoreProgress>,
    /// `db` is the `.db` file given as input (exports copy it rather than rebuild it).
    db_input: bool,
    /// Metadata rows the SnapshotDB records (source name, hash).
    meta: Vec<(&'static str, String)>,
    /// Computed once: it scans every event, and most calls resolve an event through it.
    overview: OnceCell<overview::Overview>,
    /// The expandable-segments toggle per device: a whole simulation, the same for every event.
    what_ifs: std::cell::RefCell<std::collections::HashMap<i64, crate::simulate::WhatIf>>,
    /// Those being simulated in the background (`what_if.rs`).
    pending_what_ifs: std::cell::RefCell<std::collections::HashMap<i64, what_if::Pending>>,
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
            loaded: OnceCell::from(loaded),
            db: OnceCell::new(),
            building: Default::default(),
            db_built: Default::default(),
            db_input: false,
            meta,
            overview: OnceCell::new(),
            what_ifs: Default::default(),
            pending_what_ifs: Default::default(),
            device_memory: Default::default(),
        }
    }

    /// An engine over a SnapshotDB (read-only): its tables are read back into the model on the
    /// first question that needs it, then answered by the same code as a snapshot; SQL and
    /// templates run on the file itself.
    pub fn from_db(conn: Connection) -> Result<Engine> {
        store::check_schema(&conn)?;
        Ok(Engine {
            loaded: OnceCell::new(),
            db: OnceCell::from(conn),
            building: Default::default(),
            db_built: Default::default(),
            db_input: true,
            meta: Vec::new(),
            overview: OnceCell::new(),
            what_ifs: Default::default(),
            pending_what_ifs: Default::default(),
            device_memory: Default::default(),
        })
    }

    /// The SnapshotDB (built now if it is not yet, or its build finished if begun in slices).
    fn conn(&self) -> Result<&Connection> {
        if let Some(c) = self.db.get() {
            return Ok(c);
        }
        self.build_db_step(f64::INFINITY)?;
        Ok(self.db.get().expect("built above"))
    }

    /// Advance the SnapshotDB's build by about `budget_ms` (begun now if it is not yet); true
    /// once it is built. Calls answered from the replay run between slices; one that needs SQL
    /// finishes the build first (`conn`).
    pub fn build_db_step(&self, budget_ms: f64) -> Result<bool> {
        if self.db.get().is_some() {
            return Ok(true);
        }
        let mut building = self.building.borrow_mut();
        if building.is_none() {
            let started = crate::clock::now_ms();
            let loaded = self.shared()?;
            let overview_json = serde_json::to_string(self.overview()?).expect("serializable");
            let b = building.insert(store::begin_memory(loaded, &Records { meta: &self.meta, overview_json: &overview_json })?);
            // The setup (the overview's JSON, the schema, every frame's shown text: 100-400 ms
            // in the page's wasm on a 2-4 MB file) is a slice of its own when slices are asked for.
            let took = crate::clock::now_ms() - started;
            (b.spent_ms, b.longest_ms) = (took, took);
            if budget_ms.is_finite() {
                b.slices = 1;
                return Ok(false);
            }
        }
        let b = building.as_mut().expect("begun above");
        // A failed slice leaves the build half done: dropped, to begin again on next use.
        let done = b.advance(budget_ms).inspect_err(|_| *building = None)?;
        if !done {
            return Ok(false);
        }
        let b = building.take().expect("begun above");
        self.db_built.set(StoreProgress { built: true, ..StoreProgress::of(&b) });
        let conn = b.finish()?;
        let _ = self.db.set(conn);
        Ok(true)
    }

    /// How far the SnapshotDB's build is, whichever call ran it: the slices so far (all of
    /// them once built; none for a `.db` input, which is built already).
    pub fn store_progress(&self) -> StoreProgress {
        if self.db.get().is_some() {
            return StoreProgress { built: true, ..self.db_built.get() };
        }
        // Borrowed only inside `build_db_step`, which never calls back here.
        match self.building.try_borrow().as_deref() {
            Ok(Some(b)) => StoreProgress::of(b),
            _ => StoreProgress::default(),
        }
    }

    fn conn_mut(&mut self) -> Result<&mut Connection> {
        self.conn()?;
        Ok(self.db.get_mut().expect("built above"))
    }

    /// Build the SnapshotDB now (the page does it right after showing the overview).
    pub fn build_db(&self) -> Result<()> {
        self.conn().map(|_| ())
    }

    /// The replay (a `.db` input's read back now if it is not yet).
    fn shared(&self) -> Result<&Arc<Loaded>> {
        if let Some(l) = self.loaded.get() {
            return Ok(l);
        }
        let conn = self.db.get().expect("an engine without a replay has its input database");
        let l = Arc::new(store::read_back::loaded(conn)?);
        Ok(self.loaded.get_or_init(|| l))
    }

    fn model(&self) -> Result<&Loaded> {
        self.shared().map(|l| &**l)
    }

    // ---- what the snapshot holds ------------------------------------------------------------

    pub fn overview(&self) -> Result<&overview::Overview> {
        if let Some(ov) = self.overview.get() {
            return Ok(ov);
        }
        // A `.db` input's overview is stored: no read-back for the first answer.
        let ov = match self.db_input {
            false => overview::overview(self.model()?),
            true => serde_json::from_str(&self.stored_overview()?).map_err(|e| {
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
        let mut all = self.devices()?;
        all.sort_unstable();
        templates::pick_device(&all, device)
    }

    /// The SHA-256 of the snapshot's bytes, when it was computed while reading (`open_hashed`).
    pub fn source_sha256(&self) -> Option<String> {
        self.meta.iter().find(|(k, _)| *k == "source_sha256").map(|(_, v)| v.clone())
    }

    /// Source, hash, engine version, device selection and counts, as one JSON object.
    pub fn metadata(&self) -> Result<serde_json::Value> {
        store::metadata_summary(self.conn()?)
    }

    /// The overview of one device.
    fn device_overview(&self, device: i64) -> Result<&overview::DeviceOverview> {
        self.overview()?.devices.iter().find(|d| d.device == device).ok_or_else(|| Error::no_device(device))
    }

    /// The replay and the device's position in it.
    fn replayed(&self, device: i64) -> Result<(&Loaded, usize)> {
        let l = self.model()?;
        Ok((l, device_of(l, device)?.0))
    }

    /// The index the analyses take for `at` on `device` (None = the window start). Event
    /// indices are validated: an index past the end is an error, not the end state.
    pub fn resolve(&self, device: i64, at: At) -> Result<Option<i64>> {
        let events = self.device_overview(device)?.events as i64;
        Ok(match at {
            At::WindowStart => None,
            At::Dump => (events > 0).then_some(events - 1),
            At::Peak(c) => live::peak_of(&self.device_overview(device)?.peaks, c).event.map(i64::from),
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
        self.analyze_parts(device, at, true)
    }

    /// `analyze`, with the streams part only when `streams` (the findings do not read it: the
    /// `overview` mode leaves it out).
    pub(super) fn analyze_parts(&self, device: i64, at: At, streams: bool) -> Result<DeviceAnalysis> {
        let ov = self.overview()?.devices.iter().find(|d| d.device == device).cloned().ok_or_else(|| Error::no_device(device))?;
        let event = self.resolve(device, at)?;
        let has_events = ov.events > 0;
        let simulated = has_events && self.model()?.snapshot.host_device != Some(device);
        if simulated {
            // Two simulations: natively on a thread of their own while the analyses below run.
            self.start_what_if(device);
        }
        // Without events the state before the first one is the dump's: attribute that.
        let peak = Some(self.peak_at(device, event)?);
        let fragment = self.fragment(device)?;
        let leak = self.leak(device)?;
        let oom = self.oom(device)?;
        let categories = self.categories_at(device, event)?;
        // A dump-only file gets its steps answer too: it says the program kind (`dump_only`).
        let steps = Some(self.steps(device)?);
        let streams = if streams && has_events { Some(self.streams(device)?) } else { None };
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
        self.peak_at(device, self.resolve(device, at)?)
    }

    fn peak_at(&self, device: i64, event: Option<i64>) -> Result<peak::PeakAnalysis> {
        let ov = self.device_overview(device)?;
        let (l, pos) = self.replayed(device)?;
        Ok(peak::peak(l, pos, ov, event, 10))
    }

    /// Free memory in reserved segments at the peaks and the dump (`--mode fragment`).
    pub fn fragment(&self, device: i64) -> Result<fragment::Fragmentation> {
        let ov = self.device_overview(device)?;
        fragment::fragmentation(device, ov.events, ov.peaks.allocated.event, |e| self.state_at(device, e))
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
        let l = self.model()?;
        let (pos, d) = device_of(l, device)?;
        let sem = l.semantics();
        let Some(gradient) = sem.rules.categories.iter().position(|c| c == "gradient") else { return Ok(None) };
        Ok(held_gradients::held_gradients(d, &l.phases()[pos], &sem.categories[pos], gradient as u8))
    }

    /// Each OOM with its verdict, or the room at the dump (`--mode oom`).
    pub fn oom(&self, device: i64) -> Result<oom::OomAnalysis> {
        let (l, pos) = self.replayed(device)?;
        Ok(oom::oom(l, pos))
    }

    fn leaks(&self, device: i64) -> Result<leak::LeakAnalysis> {
        let (l, pos) = self.replayed(device)?;
        Ok(leak::leak(l, pos, 10))
    }

    /// The live memory by category after `at` (default in the CLI: the allocated peak).
    pub fn categories(&self, device: i64, at: At) -> Result<categories::CategoryBreakdown> {
        self.categories_at(device, self.resolve(device, at)?)
    }

    fn categories_at(&self, device: i64, event: Option<i64>) -> Result<categories::CategoryBreakdown> {
        let (l, pos) = self.replayed(device)?;
        Ok(categories::categories(l, pos, event))
    }

    /// Phases, named ranges, steps and growth across steps.
    pub fn steps(&self, device: i64) -> Result<steps::StepsAnalysis> {
        let l = self.model()?;
        let (pos, d) = device_of(l, device)?;
        let ooms = l.snapshot.trace(device).map(|t| t.oom_events()).unwrap_or_default();
        Ok(steps::steps(d, &l.phases()[pos], &ooms))
    }

    /// Peak, share at the allocated peak and pending frees of each stream.
    pub fn streams(&self, device: i64) -> Result<streams::StreamAnalysis> {
        let l = self.model()?;
        Ok(streams::streams(l.device(device).ok_or_else(|| Error::no_device(device))?))
    }

    /// Active memory by category over events `from..=to` in `columns` columns.
    pub fn category_series(&self, device: i64, from: u32, to: u32, columns: u32) -> Result<category_series::CategorySeries> {
        let l = self.model()?;
        let (pos, d) = device_of(l, device)?;
        let sem = l.semantics();
        Ok(category_series::category_series(d, &sem.categories[pos], &sem.rules.categories, from, to, columns))
    }

    /// The category rules in the order they are tried.
    pub fn category_rules(&self) -> Result<Vec<crate::semantics::rules::RuleInfo>> {
        Ok(self.model()?.rules().info())
    }

    /// Categorize under a user's rules file (`None`: the defaults again). The SnapshotDB is
    /// rebuilt on next use, so its `category` columns follow.
    pub fn set_category_rules(&mut self, text: Option<&str>) -> Result<()> {
        let rules = match text {
            Some(t) => crate::semantics::RuleSet::from_user(t)?,
            None => crate::semantics::RuleSet::defaults(),
        };
        // The SnapshotDB's virtual tables and the background simulations hold the replay: let
        // go of them first.
        self.drop_pending_what_ifs();
        self.shared()?;
        let arc = self.loaded.get_mut().expect("read above");
        self.db = OnceCell::new();
        *self.building.get_mut() = None;
        // The SnapshotDB is built from the replay again, under these rules.
        self.db_input = false;
        let loaded = Arc::get_mut(arc).ok_or_else(|| {
            Error::new(ErrorCode::Busy, "the snapshot is shared with another view", "close the comparison, then change the rules")
        })?;
        loaded.set_rules(rules);
        Ok(())
    }

    /// The device capacity the analyses' simulations assume (`analyze --device-memory`).
    pub fn set_device_memory(&self, bytes: Option<u64>) {
        self.drop_pending_what_ifs();
        self.device_memory.set(bytes);
        self.what_ifs.borrow_mut().clear();
    }

    /// This file as one rank of a distributed run (what `snapscope ranks` combines).
    pub fn rank_summary(&self, file: &str) -> Result<crate::ranks::FileSummary> {
        let l = self.model()?;
        Ok(crate::ranks::summarize(file, self.overview()?.source_bytes, l))
    }

    /// The allocator settings the recording ran under, as the simulator reads them.
    pub fn recorded_settings(&self, device: i64) -> Result<crate::simulate::Settings> {
        crate::simulate::recorded_settings(self.model()?, device)
    }

    /// Run the allocator on the device's recorded requests under the recorded settings changed
    /// by `conf` (`PYTORCH_CUDA_ALLOC_CONF` syntax; None or "" = as recorded, the self-check).
    /// `device_memory` bytes, else the capacity seen at a recorded OOM, else unknown.
    pub fn simulate(&self, device: i64, conf: Option<&str>, device_memory: Option<u64>) -> Result<crate::simulate::Simulation> {
        crate::simulate::simulate_loaded(self.model()?, device, conf.unwrap_or(""), device_memory)
    }

    /// `simulate` with the recorded and simulated reserved lines over the events, for a chart.
    pub fn simulate_lines(&self, device: i64, conf: Option<&str>, device_memory: Option<u64>, columns: u32) -> Result<SimulationLines> {
        let inputs = crate::simulate::SimulationInputs::of(self.model()?, device, device_memory)?;
        let mut simulation = inputs.run_with_lines(conf.unwrap_or(""), Some(columns))?;
        let lines = std::mem::take(&mut simulation.lines);
        Ok(SimulationLines { simulation, lines })
    }

    /// Alloc-conf strings of the standard set for a device ("" = as recorded).
    pub fn tune_candidates(&self, device: i64, device_memory: Option<u64>) -> Result<Vec<String>> {
        crate::simulate::tune::candidates(self.model()?, device, device_memory)
    }

    /// Simulate the standard set (on every core natively) and rank it by reserved peak.
    pub fn tune(&self, device: i64, device_memory: Option<u64>) -> Result<crate::simulate::tune::Tuning> {
        crate::simulate::tune::tune(self.model()?, device, device_memory)
    }

    pub fn tree(&self, device: i64, at: At) -> Result<tree::MemoryTree> {
        let (event, opts) = (self.resolve(device, at)?, tree::TreeOptions::default());
        let (l, pos) = self.replayed(device)?;
        Ok(tree::tree(l, pos, event, opts))
    }

    pub fn state(&self, device: i64, at: At) -> Result<state::AllocatorState> {
        self.state_at(device, self.resolve(device, at)?)
    }

    fn state_at(&self, device: i64, event: Option<i64>) -> Result<state::AllocatorState> {
        let (l, pos) = self.replayed(device)?;
        Ok(state::state(l, pos, event))
    }

    pub fn event(&self, device: i64, index: i64) -> Result<event::EventDetail> {
        event::event_detail(self.conn()?, device, index)
    }

    /// OOM and snapshot events and the annotations in at most `buckets` time buckets (from the
    /// replay: the Timeline draws before the SnapshotDB is built).
    pub fn timeline_markers(&self, device: i64, buckets: u32) -> Result<markers::TimelineMarkers> {
        Ok(markers::timeline_markers(self.model()?, device, buckets))
    }

    /// One stack's naming frame, caller and text (None: no such stack).
    pub fn stack_text(&self, stack_id: i64) -> Result<Option<markers::StackText>> {
        markers::stack_text(self.conn()?, stack_id)
    }

    /// Frames `offset..offset + limit` of one stack (a `stack_id` from another answer).
    pub fn stack(&self, stack_id: i64, offset: i64, limit: i64) -> Result<event::StackPage> {
        event::stack_page(self.conn()?, stack_id, offset, limit)
    }

    /// Counters over events `from..=to` in `buckets` min/max columns.
    pub fn timeline(&self, device: i64, from: u32, to: u32, buckets: u32) -> Result<timeline::Timeline> {
        let l = self.model()?;
        let d = l.device(device).ok_or_else(|| Error::no_device(device))?;
        let trace = l.snapshot.trace(device);
        let time_of = |i: usize| trace.and_then(|t| t.events.get(i)).and_then(|e| e.time_us());
        Ok(timeline::downsample(device, &d.series, time_of, from, to, buckets))
    }

    /// Stacked live allocations of events `from..=to` in `columns` columns, the `max_blocks`
    /// largest blocks drawn one by one.
    pub fn bands(&self, device: i64, from: u32, to: u32, columns: u32, max_blocks: usize) -> Result<bands::Bands> {
        bands::bands(self.model()?, device, from, to, columns, max_blocks)
    }

    /// What this snapshot contributes to a comparison (see [`Engine::compare_with`]).
    pub fn compare_side(&self) -> Result<compare::Side> {
        Ok(compare::side(self.model()?, self.overview()?))
    }

    /// This snapshot (a) against another's side (b): figures, peaks and the stacks at the peaks.
    pub fn compare_with(&self, other: &compare::Side) -> Result<compare::Comparison> {
        Ok(compare::compare(&self.compare_side()?, other, 20))
    }

    /// Kept, freed and born memory between two events of one device (None = the window start).
    pub fn diff_moments(&self, device: i64, a: Option<i64>, b: Option<i64>) -> Result<crate::analysis::diff::MomentsDiff> {
        crate::analysis::diff::moments(self.conn()?, device, a, b, 20)
    }

    /// Each step of one device with this snapshot's side at the step's allocated peak.
    pub fn step_sides(&self, device: i64) -> Result<Vec<crate::analysis::compare_steps::StepSide>> {
        let d = self.overview()?.devices.iter().find(|d| d.device == device).ok_or_else(|| Error::no_device(device))?;
        let (l, pos) = self.replayed(device)?;
        Ok(self
            .steps(device)?
            .steps
            .iter()
            .map(|s| {
                let side = compare::device_side(l, pos, d, s.peak_allocated.event.map(i64::from));
                crate::analysis::compare_steps::StepSide { step: s.step, peak_bytes: s.peak_allocated.bytes, side }
            })
            .collect())
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
                let host = self.model()?.snapshot.host_device == Some(d.device);
                if d.events > 0 && !host {
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
        if self.db_input {
            return Ok(self.conn_mut()?.serialize(rusqlite::MAIN_DB)?.to_vec());
        }
        let loaded = self.shared()?.clone();
        let meta = store::all_metadata(self.conn()?)?;
        let meta: Vec<(&str, String)> = meta.iter().filter(|(k, _)| k != "overview_json").map(|(k, v)| (k.as_str(), v.clone())).collect();
        let overview_json = self.stored_overview()?;
        let mut conn = store::to_memory_materialized(&loaded, &Records { meta: &meta, overview_json: &overview_json })?;
        Ok(conn.serialize(rusqlite::MAIN_DB)?.to_vec())
    }
}
