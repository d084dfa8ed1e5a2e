//! Filling a SnapshotDB in bounded slices: [`StoreBuild`] holds the connection inside one open
//! transaction (BEGIN … COMMIT across slices) and a cursor over the steps, so the page's worker
//! answers other calls between slices. Native callers run every slice in one loop: one code path.

use super::cells::{self, pool_name};
use super::long_texts;
use super::stack_texts::StackTexts;
use super::tables::{
    self, ANNOTATIONS, BLOCKS, CALL_STACKS, CATEGORY_RULES, DEVICES, FRAMES, ISSUES, LIFETIMES, METADATA, PHASES, SEGMENTS, SEGMENT_LIVES,
    STACK_FRAMES, START_RANGES, TRACES, WARNINGS,
};
use super::{cut, vtab, Records, Storage, SCHEMA_VERSION};
use super::{
    COPY_LARGE_TABLES_SQL, FILE_PAGE_SIZE_SQL, INDEXES_SQL, LARGE_TABLE_INDEXES_SQL, STACK_FRAME_BATCH, TRACES_INDEX_SQL,
    VIRTUAL_LARGE_TABLES_SQL,
};
use crate::error::Result;
use crate::semantics::snake_name;
use crate::{frames, Loaded};
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::sync::Arc;

/// Frames per unit of work (a unit is never split: a slice may exceed its budget by one). In the
/// page's wasm, 256 stacks took 70-160 ms on 2-4 MB real files (deep C++ stacks), so units are
/// small: a call waits at most about one unit beyond the slice's budget.
const FRAMES_PER_UNIT: usize = 1024;
/// Stacks per unit of work (each writes its JSON, its text and a row per frame).
const STACKS_PER_UNIT: usize = 32;

/// Where the build is: each step runs in units, a slice runs units until its budget is spent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Frames(usize),
    Stacks(usize),
    Devices(usize),
    Annotations,
    Phases,
    Rules,
    Warnings,
    LongTexts,
    CopyLarge,
    Indexes,
    Done,
}

/// A whole text to record in `long_texts`, kept until the `LongTexts` step writes them all in
/// the order the rows met them (the ids follow that order).
enum Pending {
    Shared(&'static str, i64, &'static str, Arc<str>),
    Short(&'static str, i64, &'static str, String),
    /// The `traces` cells' uses go here, between the annotations' and the phases'.
    TraceUses,
}

/// A SnapshotDB being filled; [`StoreBuild::advance`] until done, then [`StoreBuild::finish`].
pub struct StoreBuild {
    conn: Connection,
    loaded: Arc<Loaded>,
    storage: Storage,
    step: Step,
    kinds: Vec<frames::Kind>,
    /// Each frame's piece of a stack's `frames_json` and `text`.
    stack_texts: StackTexts,
    shown: Vec<String>,
    sf_rows: Vec<i64>,
    /// The batched `stack_frames` INSERT, made once: each unit of stacks prepares it (cached),
    /// and making its text per unit (768 `?n` parameters) was 8% of a 10 MB file's import.
    sf_batch_sql: String,
    seg_id: i64,
    lifetime_base: i64,
    pending: Vec<Pending>,
    /// Milliseconds spent in slices, and the longest slice.
    pub spent_ms: f64,
    pub longest_ms: f64,
    /// Slices run (`advance` calls; natively the one that runs them all).
    pub slices: u32,
}

impl StoreBuild {
    /// Open the transaction, create the schema and write the metadata (small, done now).
    pub(super) fn new(conn: Connection, records: &Records, shared: &Arc<Loaded>, storage: Storage) -> Result<StoreBuild> {
        let virtual_tables = storage == Storage::Virtual;
        vtab::register(&conn, shared)?;
        if !virtual_tables {
            // A file of millions of rows: 16 KiB pages take a quarter of the page writes and
            // splits of SQLite's 4 KiB (about a tenth less CPU for the whole import). Set before
            // the first table makes the page size final.
            conn.execute_batch(FILE_PAGE_SIZE_SQL)?;
        }
        // Every statement of the build is prepared once and kept across slices.
        conn.set_prepared_statement_cache_capacity(32);
        conn.execute_batch("BEGIN")?;
        conn.execute_batch(&tables::schema_sql())?;
        if virtual_tables {
            conn.execute_batch(VIRTUAL_LARGE_TABLES_SQL)?;
        }
        let s = &shared.snapshot;
        {
            let mut m = conn.prepare(&METADATA.insert_sql().replace("INSERT", "INSERT OR REPLACE"))?;
            m.execute(params!["schema_version", SCHEMA_VERSION.to_string()])?;
            m.execute(params!["engine_version", crate::VERSION])?;
            m.execute(params!["format", s.format.map(|f| format!("{f:?}").to_lowercase())])?;
            m.execute(params!["encoding", s.encoding])?;
            m.execute(params!["source_bytes", s.source_bytes.to_string()])?;
            if let Some(a) = &s.allocator_settings {
                m.execute(params!["allocator_settings", a.to_string()])?;
            }
            m.execute(params!["overview_json", records.overview_json])?;
            for (k, v) in records.meta {
                m.execute(params![k, v])?;
            }
        }
        let kinds: Vec<frames::Kind> = s.interner.frames.iter().map(frames::kind).collect();
        let root = frames::user_root(s.interner.frames.iter());
        let shown: Vec<String> = s.interner.frames.iter().map(|f| frames::display(f, &root)).collect();
        Ok(StoreBuild {
            conn,
            loaded: shared.clone(),
            storage,
            step: Step::Frames(0),
            stack_texts: StackTexts::new(kinds.len()),
            kinds,
            shown,
            sf_rows: Vec::with_capacity(3 * STACK_FRAME_BATCH),
            sf_batch_sql: STACK_FRAMES.insert_sql_rows(STACK_FRAME_BATCH),
            seg_id: 0,
            lifetime_base: 0,
            pending: Vec::new(),
            // The caller times the setup (it includes what comes before `new`).
            spent_ms: 0.0,
            longest_ms: 0.0,
            slices: 0,
        })
    }

    pub fn done(&self) -> bool {
        self.step == Step::Done
    }

    /// Run units of work until `budget_ms` is spent or the build is done (then true).
    pub fn advance(&mut self, budget_ms: f64) -> Result<bool> {
        let started = crate::clock::now_ms();
        while !self.done() {
            self.step = self.unit()?;
            if crate::clock::now_ms() - started >= budget_ms {
                break;
            }
        }
        let took = crate::clock::now_ms() - started;
        self.spent_ms += took;
        self.longest_ms = self.longest_ms.max(took);
        self.slices += 1;
        Ok(self.done())
    }

    /// The database, committed (after `advance` returned true).
    pub fn finish(self) -> Result<Connection> {
        debug_assert!(self.done());
        self.conn.execute_batch("COMMIT")?;
        self.conn.flush_prepared_statement_cache();
        Ok(self.conn)
    }

    /// One unit of the current step; the step after it.
    fn unit(&mut self) -> Result<Step> {
        let l = self.loaded.clone();
        let s = &l.snapshot;
        Ok(match self.step {
            Step::Frames(from) => {
                let to = (from + FRAMES_PER_UNIT).min(s.interner.frames.len());
                self.frames(&l, from, to)?;
                if to == s.interner.frames.len() {
                    Step::Stacks(0)
                } else {
                    Step::Frames(to)
                }
            }
            Step::Stacks(from) => {
                let to = (from + STACKS_PER_UNIT).min(s.interner.stacks.len());
                self.stacks(&l, from, to)?;
                if to < s.interner.stacks.len() {
                    Step::Stacks(to)
                } else {
                    let mut sf = self.conn.prepare_cached(&STACK_FRAMES.insert_sql())?;
                    for row in self.sf_rows.chunks(3) {
                        sf.execute(rusqlite::params_from_iter(row))?;
                    }
                    drop(sf);
                    self.sf_rows.clear();
                    Step::Devices(0)
                }
            }
            Step::Devices(at) if at < l.devices.len() => {
                self.device(&l, at)?;
                Step::Devices(at + 1)
            }
            Step::Devices(_) => Step::Annotations,
            Step::Annotations => {
                self.annotations(&l)?;
                Step::Phases
            }
            Step::Phases => {
                self.phases(&l)?;
                Step::Rules
            }
            Step::Rules => {
                self.rules(&l)?;
                Step::Warnings
            }
            Step::Warnings => {
                let mut w = self.conn.prepare_cached(&WARNINGS.insert_sql())?;
                for x in &s.warnings {
                    w.execute(params![x.device, x.event.map(|e| e as i64), x.code.name(), x.message])?;
                }
                Step::LongTexts
            }
            Step::LongTexts => {
                self.long_texts(&l)?;
                Step::CopyLarge
            }
            Step::CopyLarge => {
                if self.storage != Storage::Virtual {
                    self.conn.execute_batch(TRACES_INDEX_SQL)?;
                }
                if self.storage == Storage::Rows {
                    let copy = [TRACES.copy_sql("temp.replay_traces"), LIFETIMES.copy_sql("temp.replay_lifetimes")].join(";\n");
                    self.conn.execute_batch(&COPY_LARGE_TABLES_SQL.replace("{copy}", &copy))?;
                }
                Step::Indexes
            }
            Step::Indexes => {
                self.conn.execute_batch(INDEXES_SQL)?;
                if self.storage != Storage::Virtual {
                    self.conn.execute_batch(LARGE_TABLE_INDEXES_SQL)?;
                }
                Step::Done
            }
            Step::Done => Step::Done,
        })
    }

    fn frames(&mut self, l: &Loaded, from: usize, to: usize) -> Result<()> {
        let mut f = self.conn.prepare_cached(&FRAMES.insert_sql())?;
        for (i, fr) in l.snapshot.interner.frames[from..to].iter().enumerate().map(|(k, fr)| (from + k, fr)) {
            if let Some(w) = fr.whole.as_deref() {
                for (column, whole) in [("filename", &w.filename), ("name", &w.name)] {
                    if let Some(whole) = whole {
                        self.pending.push(Pending::Shared("frames", i as i64, column, whole.text().clone()));
                    }
                }
            }
            let fx = fr.fx.as_deref();
            f.execute(params![
                i as i64,
                fr.filename,
                fr.line,
                fr.name,
                self.kinds[i].name(),
                self.shown[i],
                fx.and_then(|x| x.op.as_deref()),
                fx.and_then(|x| x.name.as_deref()),
                fx.and_then(|x| x.target.as_deref()),
                fx.and_then(|x| x.original_trace.as_deref())
            ])?;
        }
        Ok(())
    }

    fn stacks(&mut self, l: &Loaded, from: usize, to: usize) -> Result<()> {
        let s = &l.snapshot;
        let mut cs = self.conn.prepare_cached(&CALL_STACKS.insert_sql())?;
        // `stack_frames` has a row per frame of every stack (150,000 for 5,000 stacks of 30):
        // inserted many rows to a statement, the per-statement cost is paid once per batch.
        let mut sf_batch = self.conn.prepare_cached(&self.sf_batch_sql)?;
        let mut stack_kinds = Vec::new();
        let (mut json, mut text) = (String::new(), String::new());
        for (i, st) in s.interner.stacks[from..to].iter().enumerate().map(|(k, st)| (from + k, st)) {
            self.stack_texts.write(&s.interner.frames, st, &mut json, &mut text);
            stack_kinds.clear();
            stack_kinds.extend(st.iter().map(|&fid| self.kinds[fid as usize]));
            let label = frames::label_index_in(&stack_kinds, st, l.loop_lines());
            let caller = label.and_then(|at| frames::caller_index(&stack_kinds, at)).map(|at| self.shown[st[at] as usize].as_str());
            let label_frame = label.map(|at| st[at]);
            let site = label_frame
                .map(|fid| {
                    let f = &s.interner.frames[fid as usize];
                    format!("{}:{} {}", cut(&f.filename), f.line, cut(&f.name))
                })
                .unwrap_or_default();
            let shown_label = label_frame.map_or("", |fid| self.shown[fid as usize].as_str());
            cs.execute(params![
                i as i64,
                st.len() as i64,
                st.first().map(|&x| x as i64),
                json,
                text,
                site,
                label_frame.map(i64::from),
                shown_label,
                caller
            ])?;
            // A file's `stack_frames` are written as pages once SQLite is done (`pages`).
            if self.storage != Storage::Pages {
                for (pos, &fid) in st.iter().enumerate() {
                    self.sf_rows.extend([i as i64, pos as i64, fid as i64]);
                    if self.sf_rows.len() == 3 * STACK_FRAME_BATCH {
                        sf_batch.execute(rusqlite::params_from_iter(self.sf_rows.drain(..)))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// One device's rows: its counters, segments and blocks, segment lives, ranges and issues.
    fn device(&mut self, l: &Loaded, dev_pos: usize) -> Result<()> {
        let s = &l.snapshot;
        let d = &l.devices[dev_pos];
        let c = &self.conn;
        let mut dev = c.prepare_cached(&DEVICES.insert_sql())?;
        let mut seg = c.prepare_cached(&SEGMENTS.insert_sql())?;
        let mut blk = c.prepare_cached(&BLOCKS.insert_sql())?;
        // Virtual tables take no rows (and refuse to prepare an INSERT).
        let mut sl = c.prepare_cached(&SEGMENT_LIVES.insert_sql())?;
        let mut iss = c.prepare_cached(&ISSUES.insert_sql())?;
        let mut sr = c.prepare_cached(&START_RANGES.insert_sql())?;
        let dev_id = dev_pos as i64;
        let st = d.series.start;
        // Each counter's peak over the events, as MAX() over the rows finds it.
        let peaks = ["allocated", "active", "reserved", "requested"]
            .map(|name| d.series.first_max(name).map_or((None, None), |(b, i)| (Some(b), Some(i as i64))));
        dev.execute(params![
            dev_id,
            d.device,
            d.events as i64,
            d.rules.source,
            d.consistency.ok,
            d.consistency.ambiguous_bytes as i64,
            st.allocated,
            st.active,
            st.reserved,
            st.requested,
            peaks[0].0,
            peaks[0].1,
            peaks[1].0,
            peaks[1].1,
            peaks[2].0,
            peaks[2].1,
            peaks[3].0,
            peaks[3].1
        ])?;
        let live_lifetime: HashMap<u64, i64> = d
            .lifetimes
            .iter()
            .enumerate()
            .filter(|(_, x)| x.state_at_dump.is_some() && !x.orphan)
            .map(|(i, x)| (x.addr, self.lifetime_base + i as i64))
            .collect();
        for sg in s.segments.iter().filter(|x| x.device == d.device) {
            seg.execute(params![
                self.seg_id,
                dev_id,
                sg.address as i64,
                sg.total_size as i64,
                sg.allocated_size as i64,
                sg.active_size as i64,
                sg.requested_size as i64,
                sg.stream as i64,
                pool_name(sg.pool),
                sg.pool_id.map(|p| p.0),
                sg.pool_id.map(|p| p.1),
                sg.is_expandable,
                sg.stack.map(|x| x as i64)
            ])?;
            for b in &sg.blocks {
                let life = (b.state != crate::model::BlockState::Inactive).then(|| live_lifetime.get(&b.address).copied()).flatten();
                blk.execute(params![
                    self.seg_id,
                    b.address as i64,
                    b.size as i64,
                    b.requested_size as i64,
                    b.state.name(),
                    b.stack.map(|x| x as i64),
                    life
                ])?;
            }
            self.seg_id += 1;
        }
        self.lifetime_base += d.lifetimes.len() as i64;
        for x in &d.segments {
            sl.execute(params![
                dev_id,
                x.addr as i64,
                x.size as i64,
                x.stream as i64,
                pool_name(x.pool),
                x.expandable,
                x.alloc_event,
                x.free_event,
                x.at_dump
            ])?;
        }
        for r in d.start_ranges.iter() {
            sr.execute(params![dev_id, r.start as i64, r.size as i64, r.stream as i64, pool_name(r.pool), r.expandable])?;
        }
        for x in &d.consistency.issues {
            iss.execute(params![dev_id, x.event, x.code.name(), x.message])?;
        }
        Ok(())
    }

    fn annotations(&mut self, l: &Loaded) -> Result<()> {
        let mut an = self.conn.prepare_cached(&ANNOTATIONS.insert_sql())?;
        // An annotation's name is repeated per row (every START and END of a range): cut like
        // the events' shared texts (3,000 rows sharing one long name made a 21 MB database),
        // its whole text once in `long_texts`.
        for a in &l.snapshot.annotations {
            let shown = cells::shared_cut(&a.name);
            an.execute(params![a.device, a.time_us, shown.as_deref().unwrap_or(&a.name), a.stage])?;
            let row = self.conn.last_insert_rowid();
            match &a.whole_name {
                Some(whole) => self.pending.push(Pending::Shared("annotations", row, "name", whole.text().clone())),
                None if shown.is_some() => self.pending.push(Pending::Short("annotations", row, "name", a.name.to_string())),
                None => {}
            }
        }
        self.pending.push(Pending::TraceUses);
        Ok(())
    }

    fn phases(&mut self, l: &Loaded) -> Result<()> {
        let mut ph = self.conn.prepare_cached(&PHASES.insert_sql())?;
        for (dev_id, p) in l.phases().iter().enumerate() {
            for r in &p.runs {
                ph.execute(params![dev_id as i64, "run", r.phase.name(), "phase", r.first, r.last, None::<i64>, None::<i64>])?;
            }
            for r in &p.ranges {
                let shown = cells::shared_cut(&r.name);
                ph.execute(params![
                    dev_id as i64,
                    "range",
                    shown.as_deref().unwrap_or(&r.name),
                    snake_name(&r.group),
                    r.start_event,
                    r.end_event,
                    r.start_us,
                    r.end_us
                ])?;
                if shown.is_some() {
                    let row = self.conn.last_insert_rowid();
                    self.pending.push(match &r.whole {
                        Some(whole) => Pending::Shared("phases", row, "name", whole.clone()),
                        None => Pending::Short("phases", row, "name", r.name.to_string()),
                    });
                }
            }
        }
        Ok(())
    }

    fn rules(&mut self, l: &Loaded) -> Result<()> {
        let mut cr = self.conn.prepare_cached(&CATEGORY_RULES.insert_sql())?;
        for (i, r) in l.rules().info().iter().enumerate() {
            cr.execute(params![
                i as i64,
                r.name,
                r.category,
                r.file,
                r.function,
                snake_name(&r.frames),
                r.phase.map(|p| p.name()),
                snake_name(&r.lifetime),
                r.why,
                r.origin
            ])?;
        }
        Ok(())
    }

    /// Every whole text the rows met, in their order (one writer: each distinct text once).
    fn long_texts(&mut self, l: &Loaded) -> Result<()> {
        let mut long = long_texts::Writer::new(&self.conn)?;
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pending::Shared(table, row, column, whole) => long.shared(table, row, column, &whole)?,
                Pending::Short(table, row, column, whole) => long.short(table, row, column, &whole)?,
                Pending::TraceUses => long_texts::trace_uses(&mut long, l)?,
            }
        }
        Ok(())
    }
}
