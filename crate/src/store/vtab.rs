//! The SnapshotDB's two large tables, `traces` and `lifetimes`, as virtual tables over the
//! replayed snapshot held in memory instead of copies as SQLite rows: at millions of events the
//! copies doubled the memory and took most of the load time. Rows, columns and ids are exactly
//! those of the materialized tables written to .db files (schema.sql); a test compares them.
//!
//! Rows are numbered per device in `loaded.devices` order. Constraints on `id`, `device_id` and
//! (for `traces`) `trace_index` narrow the scan to ranges, and that order is reported to SQLite
//! so that `ORDER BY trace_index` needs no sort.

use crate::replay::{DeviceReplay, NONE};
use crate::Loaded;
use rusqlite::vtab::{Context, CreateVTab, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection, VTabCursor, VTabKind};
use rusqlite::{ffi, Connection, Result};
use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::marker::PhantomData;
use std::sync::Arc;

/// What one virtual table serves: its declaration, its rows per device, and their cells.
pub trait Rows: Sized + 'static {
    const DECLARATION: &'static CStr;
    /// Id of the first row (`traces` counts from 1 as SQLite assigns rowids, `lifetimes` from 0).
    const FIRST_ID: i64;
    /// Column holding the row's position within its device, if the table has one.
    const INDEX_COLUMN: Option<c_int>;
    fn count(d: &DeviceReplay) -> usize;
    /// Cell `col` of row `i` of device position `dev` (columns 0 and 1, id and device_id, are
    /// answered by the table itself).
    fn cell(l: &Loaded, dev: usize, i: usize, col: c_int, lifetime_base: i64, ctx: &mut Context) -> Result<()>;
}

/// Register both modules; `CREATE VIRTUAL TABLE traces USING snapscope_traces` (and
/// `lifetimes USING snapscope_lifetimes`) then serve `loaded`.
pub fn register(conn: &Connection, loaded: &Arc<Loaded>) -> Result<()> {
    const TRACES: Module<Table<TraceRows>> = Module::read_only_module();
    const LIFETIMES: Module<Table<LifetimeRows>> = Module::read_only_module();
    conn.create_module(c"snapscope_traces", &TRACES, Some(Arc::clone(loaded)))?;
    conn.create_module(c"snapscope_lifetimes", &LIFETIMES, Some(Arc::clone(loaded)))
}

const COL_ID: c_int = 0;
const COL_DEVICE: c_int = 1;

#[repr(C)]
pub struct Table<R: Rows> {
    base: ffi::sqlite3_vtab,
    loaded: Arc<Loaded>,
    /// Per device position: id of its first row, and of its first lifetime.
    row_base: Vec<i64>,
    lifetime_base: Vec<i64>,
    rows: PhantomData<R>,
}

impl<R: Rows> Table<R> {
    fn count(&self, dev: usize) -> usize {
        R::count(&self.loaded.devices[dev])
    }
    fn total(&self) -> usize {
        self.loaded.devices.iter().map(R::count).sum()
    }
}

unsafe impl<'vtab, R: Rows> VTab<'vtab> for Table<R> {
    type Aux = Arc<Loaded>;
    type Cursor = Cursor<'vtab, R>;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Arc<Loaded>>,
        _module: &[u8],
        _database: &[u8],
        _table: &[u8],
        _args: &[&[u8]],
    ) -> Result<(Cow<'static, CStr>, Self)> {
        let loaded = aux.cloned().ok_or_else(|| rusqlite::Error::ModuleError("this virtual table needs a snapshot".into()))?;
        let (mut row_base, mut lifetime_base) = (Vec::new(), Vec::new());
        let (mut rows, mut lifes) = (R::FIRST_ID, 0i64);
        for d in &loaded.devices {
            row_base.push(rows);
            lifetime_base.push(lifes);
            rows += R::count(d) as i64;
            lifes += d.lifetimes.len() as i64;
        }
        Ok((
            Cow::Borrowed(R::DECLARATION),
            Table { base: ffi::sqlite3_vtab::default(), loaded, row_base, lifetime_base, rows: PhantomData },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<bool> {
        // The plan is the list of (column, operator) pairs used, in argv order, as text.
        let mut plan = Vec::new();
        let mut used = Vec::new();
        let mut device_eq = false;
        let mut rows = self.total().max(1) as f64;
        for (i, c) in info.constraints().enumerate() {
            let column = match c.column() {
                -1 | COL_ID => 'i',
                COL_DEVICE => 'd',
                col if Some(col) == R::INDEX_COLUMN => 't',
                _ => continue,
            };
            let op = match c.operator() {
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => '=',
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => '>',
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => 'g',
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => '<',
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => 'l',
                _ => continue,
            };
            if !c.is_usable() {
                continue;
            }
            device_eq |= column == 'd' && op == '=';
            rows /= match (column, op) {
                ('d', '=') => self.loaded.devices.len().max(1) as f64,
                (_, '=') => rows,
                _ => 3.0,
            };
            plan.push(format!("{column}{op}"));
            used.push(i);
        }
        for (n, i) in used.into_iter().enumerate() {
            let mut u = info.constraint_usage(i);
            u.set_argv_index(n as c_int + 1);
            u.set_omit(true);
        }
        let ascending = info.order_bys().all(|o| !o.is_order_by_desc());
        let columns: Vec<c_int> = info.order_bys().map(|o| o.column()).collect();
        let index = R::INDEX_COLUMN.unwrap_or(-2);
        let single_device = device_eq || self.loaded.devices.len() <= 1;
        let in_row_order = ascending
            && match columns.as_slice() {
                [] => false,
                [COL_ID] | [COL_DEVICE] | [COL_DEVICE, COL_ID] => true,
                [COL_DEVICE, c] | [COL_DEVICE, c, COL_ID] => *c == index,
                [c] | [c, COL_ID] => *c == index && single_device,
                _ => false,
            };
        if in_row_order {
            info.set_order_by_consumed(true);
        }
        info.set_estimated_rows(rows.max(1.0) as i64);
        info.set_estimated_cost(rows.max(1.0));
        info.set_idx_str(&plan.join(","));
        Ok(true)
    }

    fn open(&'vtab mut self) -> Result<Cursor<'vtab, R>> {
        Ok(Cursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            tab: self,
            dev: 0,
            index: 0,
            end_dev: 0,
            index_lo: 0,
            index_hi: 0,
            id_lo: 0,
            id_hi: 0,
        })
    }
}

impl<R: Rows> CreateVTab<'_> for Table<R> {
    const KIND: VTabKind = VTabKind::Default;
}

#[repr(C)]
pub struct Cursor<'vtab, R: Rows> {
    base: ffi::sqlite3_vtab_cursor,
    tab: &'vtab Table<R>,
    /// Current row: device position and row within the device.
    dev: usize,
    index: usize,
    /// Bounds: devices [dev, end_dev), row within device [index_lo, index_hi], id [id_lo, id_hi].
    end_dev: usize,
    index_lo: i64,
    index_hi: i64,
    id_lo: i64,
    id_hi: i64,
}

impl<R: Rows> Cursor<'_, R> {
    fn id(&self) -> i64 {
        self.tab.row_base[self.dev] + self.index as i64
    }

    /// Move to the first row at or after the current position that lies within the bounds.
    fn settle(&mut self) {
        while self.dev < self.end_dev {
            let n = self.tab.count(self.dev) as i64;
            let base = self.tab.row_base[self.dev];
            let lo = self.index_lo.max(self.id_lo.saturating_sub(base)).max(0);
            let hi = self.index_hi.min(self.id_hi.saturating_sub(base)).min(n - 1);
            if (self.index as i64) < lo {
                self.index = lo as usize;
            }
            if (self.index as i64) <= hi {
                return;
            }
            self.dev += 1;
            self.index = 0;
        }
    }
}

unsafe impl<R: Rows> VTabCursor for Cursor<'_, R> {
    fn filter(&mut self, _idx_num: c_int, idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        let (mut dev_lo, mut dev_hi) = (0i64, self.tab.loaded.devices.len() as i64 - 1);
        (self.index_lo, self.index_hi, self.id_lo, self.id_hi) = (0, i64::MAX, i64::MIN, i64::MAX);
        for (k, term) in idx_str.unwrap_or("").split(',').filter(|t| !t.is_empty()).enumerate() {
            let Some(v) = args.get::<Option<f64>>(k)? else {
                // Comparing with NULL matches nothing.
                (dev_lo, dev_hi) = (0, -1);
                continue;
            };
            let mut chars = term.chars();
            let (column, op) = (chars.next().unwrap_or(' '), chars.next().unwrap_or(' '));
            // Integer bounds from a possibly fractional value: x > 2.5 is x >= 3.
            let (lo, hi) = match op {
                '=' if v.fract() == 0.0 => (v as i64, v as i64),
                '=' => (1, 0),
                '>' => (v.floor() as i64 + 1, i64::MAX),
                'g' => (v.ceil() as i64, i64::MAX),
                '<' => (i64::MIN, v.ceil() as i64 - 1),
                _ => (i64::MIN, v.floor() as i64),
            };
            let (blo, bhi) = match column {
                'd' => (&mut dev_lo, &mut dev_hi),
                't' => (&mut self.index_lo, &mut self.index_hi),
                _ => (&mut self.id_lo, &mut self.id_hi),
            };
            *blo = (*blo).max(lo);
            *bhi = (*bhi).min(hi);
        }
        if dev_lo > dev_hi {
            (dev_lo, dev_hi) = (0, -1);
        }
        self.dev = dev_lo.max(0) as usize;
        self.end_dev = (dev_hi + 1).max(0) as usize;
        self.index = 0;
        self.settle();
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.index += 1;
        self.settle();
        Ok(())
    }

    fn eof(&self) -> bool {
        self.dev >= self.end_dev
    }

    fn column(&self, ctx: &mut Context, col: c_int) -> Result<()> {
        match col {
            COL_ID => ctx.set_result(self.id()),
            COL_DEVICE => ctx.set_result(self.dev as i64),
            _ => R::cell(&self.tab.loaded, self.dev, self.index, col, self.tab.lifetime_base[self.dev], ctx),
        }
    }

    fn rowid(&self) -> Result<i64> {
        Ok(self.id())
    }
}

/// `traces`: one row per event, with the counters right after it.
pub struct TraceRows;

impl Rows for TraceRows {
    const DECLARATION: &'static CStr =
        c"CREATE TABLE x(id INTEGER, device_id INTEGER, trace_index INTEGER, action TEXT, addr INTEGER, size INTEGER,
  stream INTEGER, time_us INTEGER, stack_id INTEGER, lifetime_id INTEGER, allocated INTEGER, active INTEGER, reserved INTEGER,
  requested INTEGER, device_free INTEGER, compile_context TEXT, user_metadata TEXT, extra_json TEXT)";
    const FIRST_ID: i64 = 1;
    const INDEX_COLUMN: Option<c_int> = Some(2);

    fn count(d: &DeviceReplay) -> usize {
        d.events
    }

    fn cell(l: &Loaded, dev: usize, i: usize, col: c_int, lifetime_base: i64, ctx: &mut Context) -> Result<()> {
        let d = &l.devices[dev];
        // The counters and ids (what scans for peaks read) need no event lookup.
        match col {
            2 => return ctx.set_result(i as i64),
            9 => return ctx.set_result((d.event_lifetime[i] != NONE).then(|| lifetime_base + d.event_lifetime[i] as i64)),
            10 => return ctx.set_result(d.series.allocated[i]),
            11 => return ctx.set_result(d.series.active[i]),
            12 => return ctx.set_result(d.series.reserved[i]),
            13 => return ctx.set_result(d.series.requested[i]),
            _ => {}
        }
        let trace = l.snapshot.trace(d.device);
        let Some(e) = trace.and_then(|t| t.events.get(i)) else {
            return ctx.set_result(rusqlite::types::Null);
        };
        let x = trace.and_then(|t| t.extra(e));
        match col {
            3 => ctx.set_result(x.and_then(|x| x.action_name.as_deref()).unwrap_or(e.action().name())),
            4 => ctx.set_result(e.addr as i64),
            5 => ctx.set_result(e.size as i64),
            6 => ctx.set_result(e.stream as i64),
            7 => ctx.set_result(e.time_us()),
            8 => ctx.set_result(e.stack().map(|s| s as i64)),
            14 => ctx.set_result(x.and_then(|x| x.device_free).map(|v| v as i64)),
            15 => ctx.set_result(x.and_then(|x| x.compile_context.as_deref())),
            16 => ctx.set_result(x.and_then(|x| x.user_metadata.as_deref())),
            _ => ctx.set_result(super::extra_json(x)),
        }
    }
}

/// `lifetimes`: one row per block lifetime the replay found.
pub struct LifetimeRows;

impl Rows for LifetimeRows {
    const DECLARATION: &'static CStr =
        c"CREATE TABLE x(id INTEGER, device_id INTEGER, address INTEGER, size INTEGER, requested_size INTEGER,
  stream INTEGER, alloc_event INTEGER, free_requested_event INTEGER, free_completed_event INTEGER, origin TEXT, state_at_dump TEXT,
  stack_id INTEGER, stack_source TEXT, size_exact INTEGER, size_uncertainty INTEGER, orphan INTEGER)";
    const FIRST_ID: i64 = 0;
    const INDEX_COLUMN: Option<c_int> = None;

    fn count(d: &DeviceReplay) -> usize {
        d.lifetimes.len()
    }

    fn cell(l: &Loaded, dev: usize, i: usize, col: c_int, _lifetime_base: i64, ctx: &mut Context) -> Result<()> {
        let x = &l.devices[dev].lifetimes[i];
        match col {
            2 => ctx.set_result(x.addr as i64),
            3 => ctx.set_result(x.size as i64),
            4 => ctx.set_result(x.requested as i64),
            5 => ctx.set_result(x.stream as i64),
            6 => ctx.set_result(x.alloc_event),
            7 => ctx.set_result(x.free_requested_event),
            8 => ctx.set_result(x.free_completed_event),
            9 => ctx.set_result(super::origin_name(x)),
            10 => ctx.set_result(x.state_at_dump.map(|s| s.name())),
            11 => ctx.set_result(x.stack.map(|s| s as i64)),
            12 => ctx.set_result(super::stack_source_name(x.stack_source)),
            13 => ctx.set_result(x.size_exact),
            14 => ctx.set_result(x.size_uncertainty as i64),
            _ => ctx.set_result(x.orphan),
        }
    }
}
