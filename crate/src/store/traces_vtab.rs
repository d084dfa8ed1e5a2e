//! `traces` as a virtual table over the replayed snapshot held in memory, instead of a copy of
//! every event as SQLite rows: at millions of events the copy doubled the memory and took most of
//! the load time. Rows, columns and ids are exactly those of the materialized table written to
//! .db files (schema.sql); a test compares the two. Constraints on `id`, `device_id` and
//! `trace_index` narrow the scan to a range, and that order is reported to SQLite so that
//! `ORDER BY trace_index` needs no sort.

use crate::Loaded;
use rusqlite::vtab::{Context, CreateVTab, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection, VTabCursor, VTabKind};
use rusqlite::{ffi, Connection, Result};
use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::sync::Arc;

pub const MODULE_NAME: &CStr = c"snapscope_traces";

/// Register the module; `CREATE VIRTUAL TABLE traces USING snapscope_traces` then serves `loaded`.
pub fn register(conn: &Connection, loaded: Arc<Loaded>) -> Result<()> {
    const MODULE: Module<TracesTab> = Module::read_only_module();
    conn.create_module(MODULE_NAME, &MODULE, Some(loaded))
}

const COLUMNS: &CStr =
    c"CREATE TABLE x(id INTEGER, device_id INTEGER, trace_index INTEGER, action TEXT, addr INTEGER, size INTEGER, stream INTEGER,
  time_us INTEGER, stack_id INTEGER, lifetime_id INTEGER, allocated INTEGER, active INTEGER, reserved INTEGER, requested INTEGER,
  device_free INTEGER, compile_context TEXT, user_metadata TEXT, extra_json TEXT)";
const COL_ID: c_int = 0;
const COL_DEVICE: c_int = 1;
const COL_INDEX: c_int = 2;

#[repr(C)]
pub struct TracesTab {
    base: ffi::sqlite3_vtab,
    loaded: Arc<Loaded>,
    /// Per device (position in `loaded.devices`): id of its first row minus one, and first
    /// lifetime id, as the materialized table numbers them.
    row_base: Vec<i64>,
    lifetime_base: Vec<i64>,
}

impl TracesTab {
    fn events(&self, dev: usize) -> usize {
        self.loaded.devices[dev].events
    }
    fn total(&self) -> i64 {
        self.row_base.last().copied().unwrap_or(0) + self.loaded.devices.last().map_or(0, |d| d.events as i64)
    }
}

unsafe impl<'vtab> VTab<'vtab> for TracesTab {
    type Aux = Arc<Loaded>;
    type Cursor = TracesCursor<'vtab>;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Arc<Loaded>>,
        _module: &[u8],
        _database: &[u8],
        _table: &[u8],
        _args: &[&[u8]],
    ) -> Result<(Cow<'static, CStr>, Self)> {
        let loaded = aux.cloned().ok_or_else(|| rusqlite::Error::ModuleError("snapscope_traces needs a snapshot".into()))?;
        let (mut row_base, mut lifetime_base) = (Vec::new(), Vec::new());
        let (mut rows, mut lifes) = (0i64, 0i64);
        for d in &loaded.devices {
            row_base.push(rows);
            lifetime_base.push(lifes);
            rows += d.events as i64;
            lifes += d.lifetimes.len() as i64;
        }
        Ok((Cow::Borrowed(COLUMNS), TracesTab { base: ffi::sqlite3_vtab::default(), loaded, row_base, lifetime_base }))
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
                COL_INDEX => 't',
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
        let in_row_order = ascending
            && (matches!(columns.as_slice(), [COL_ID] | [COL_DEVICE] | [COL_DEVICE, COL_INDEX] | [COL_DEVICE, COL_INDEX, COL_ID])
                || (matches!(columns.as_slice(), [COL_INDEX] | [COL_INDEX, COL_ID]) && (device_eq || self.loaded.devices.len() <= 1)));
        if in_row_order && !columns.is_empty() {
            info.set_order_by_consumed(true);
        }
        info.set_estimated_rows(rows.max(1.0) as i64);
        info.set_estimated_cost(rows.max(1.0));
        info.set_idx_str(&plan.join(","));
        Ok(true)
    }

    fn open(&'vtab mut self) -> Result<TracesCursor<'vtab>> {
        Ok(TracesCursor {
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

impl CreateVTab<'_> for TracesTab {
    const KIND: VTabKind = VTabKind::Default;
}

#[repr(C)]
pub struct TracesCursor<'vtab> {
    base: ffi::sqlite3_vtab_cursor,
    tab: &'vtab TracesTab,
    /// Current row: device position and event index.
    dev: usize,
    index: usize,
    /// Bounds: devices [dev, end_dev), trace_index [index_lo, index_hi], id [id_lo, id_hi].
    end_dev: usize,
    index_lo: i64,
    index_hi: i64,
    id_lo: i64,
    id_hi: i64,
}

impl TracesCursor<'_> {
    fn id(&self) -> i64 {
        self.tab.row_base[self.dev] + self.index as i64 + 1
    }

    /// Move to the first row at or after the current position that lies within the bounds.
    fn settle(&mut self) {
        while self.dev < self.end_dev {
            let n = self.tab.events(self.dev) as i64;
            let base = self.tab.row_base[self.dev];
            let lo = self.index_lo.max(self.id_lo.saturating_sub(base + 1)).max(0);
            let hi = self.index_hi.min(self.id_hi.saturating_sub(base + 1)).min(n - 1);
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

unsafe impl VTabCursor for TracesCursor<'_> {
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
        let l = &self.tab.loaded;
        let d = &l.devices[self.dev];
        let i = self.index;
        let trace = l.snapshot.trace(d.device);
        let Some(e) = trace.and_then(|t| t.events.get(i)) else {
            return ctx.set_result(rusqlite::types::Null);
        };
        let x = trace.and_then(|t| t.extra(e));
        match col {
            COL_ID => ctx.set_result(self.id()),
            COL_DEVICE => ctx.set_result(self.dev as i64),
            COL_INDEX => ctx.set_result(i as i64),
            3 => ctx.set_result(x.and_then(|x| x.action_name.as_deref()).unwrap_or(e.action.name())),
            4 => ctx.set_result(e.addr as i64),
            5 => ctx.set_result(e.size as i64),
            6 => ctx.set_result(e.stream as i64),
            7 => ctx.set_result(e.time_us),
            8 => ctx.set_result(e.stack.map(|s| s as i64)),
            9 => {
                let life = d.event_lifetime[i];
                ctx.set_result((life != crate::replay::NONE).then(|| self.tab.lifetime_base[self.dev] + life as i64))
            }
            10 => ctx.set_result(d.series.allocated[i]),
            11 => ctx.set_result(d.series.active[i]),
            12 => ctx.set_result(d.series.reserved[i]),
            13 => ctx.set_result(d.series.requested[i]),
            14 => ctx.set_result(x.and_then(|x| x.device_free).map(|v| v as i64)),
            15 => ctx.set_result(x.and_then(|x| x.compile_context.as_deref())),
            16 => ctx.set_result(x.and_then(|x| x.user_metadata.as_deref())),
            _ => ctx.set_result(super::extra_json(x)),
        }
    }

    fn rowid(&self) -> Result<i64> {
        Ok(self.id())
    }
}
