//! The SnapshotDB's two large tables, `traces` and `lifetimes`, as virtual tables over the
//! replayed snapshot held in memory instead of copies as SQLite rows: at millions of events the
//! copies doubled the memory and took most of the load time. Columns and cells come from the
//! same declarations (`tables.rs`) as the materialized tables written to .db files; a test
//! compares the two query by query.
//!
//! Rows are numbered per device in `loaded.devices` order. Constraints on `id`, `device_id` and
//! (for `traces`) `trace_index` narrow the scan to ranges, and that order is reported to SQLite
//! so that `ORDER BY trace_index` needs no sort. Comparisons and NULL tests on the other columns
//! are checked by the cursor itself before SQLite sees a row (a *prefilter*: SQLite checks them
//! again, so the cursor only has to be sure never to drop a row that matches). A scan of
//! millions of lifetimes for the few that match then costs a pass in Rust, not millions of
//! column callbacks.

use super::cells::{CellFn, CellValue, Items, Row};
use super::tables::{Table as Declared, LIFETIMES, TRACES};
use crate::model::{Action, Event};
use crate::replay::Lifetime;
use crate::Loaded;
use rusqlite::types::Value;
use rusqlite::vtab::{Context, CreateVTab, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection, VTabCursor, VTabKind};
use rusqlite::{ffi, Connection, Result};
use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::marker::PhantomData;
use std::sync::Arc;

/// What one virtual table serves: its declared columns and cells, its rows per device.
pub trait Rows: Sized + 'static {
    type Item: Items;
    const TABLE: &'static Declared<CellFn<Self::Item>>;
    /// Id of the first row (`traces` counts from 1 as SQLite assigns rowids, `lifetimes` from 0).
    const FIRST_ID: i64;
    /// Column holding the row's position within its device, if the table has one.
    const INDEX_COLUMN: Option<c_int>;

    /// The prefilter for `col <op> '<text>'`: by default only that the cell is not NULL (a
    /// comparison with NULL is never true).
    fn text_prefilter(_col: c_int, _op: Op, _text: &str) -> (Op, i64) {
        (Op::NotNull, 0)
    }

    /// Order in which prefilters on a column are checked, lowest first: the columns that
    /// reject most rows should come first.
    fn check_order(_col: c_int) -> u8 {
        0
    }

    /// The first row of device position `dev` in `from..=to` that may pass every prefilter (the
    /// id and device columns are the cursor's bounds, never prefilters), or `to + 1`.
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, lifetime_base: i64, filters: &[Prefilter<Self::Item>]) -> usize {
        (from..=to).find(|&i| passes(&row::<Self>(l, dev, i, lifetime_base), filters)).unwrap_or(to + 1)
    }
}

/// Per device position: the id of its first row, and of its first lifetime (the one numbering
/// of the large tables' rows; their materialized copies keep it).
fn first_ids<R: Rows>(l: &Loaded) -> (Vec<i64>, Vec<i64>) {
    let (mut row_base, mut lifetime_base) = (Vec::new(), Vec::new());
    let (mut rows, mut lifes) = (R::FIRST_ID, 0i64);
    for d in &l.devices {
        row_base.push(rows);
        lifetime_base.push(lifes);
        rows += R::Item::count(d) as i64;
        lifes += d.lifetimes.len() as i64;
    }
    (row_base, lifetime_base)
}

/// Every row of `R`'s table with the id the table serves it under, in id order.
pub fn each_row<R: Rows, E>(
    l: &Loaded,
    mut each: impl FnMut(&Row<'_, R::Item>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let (row_base, lifetime_base) = first_ids::<R>(l);
    for (dev, d) in l.devices.iter().enumerate() {
        for i in 0..R::Item::count(d) {
            each(&Row { id: row_base[dev] + i as i64, ..row::<R>(l, dev, i, lifetime_base[dev]) })?;
        }
    }
    Ok(())
}

/// Row `i` of device position `dev` (its id is the cursor's business: prefilters never read it).
fn row<R: Rows>(l: &Loaded, dev: usize, i: usize, lifetime_base: i64) -> Row<'_, R::Item> {
    Row { loaded: l, dev, index: i, id: 0, lifetime_base, item: R::Item::item(l, dev, i) }
}

fn passes<T>(row: &Row<'_, T>, filters: &[Prefilter<T>]) -> bool {
    filters.iter().all(|f| f.may_match(&(f.cell)(row)))
}

/// Operators a prefilter checks.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Op {
    Eq,
    Gt,
    Ge,
    Lt,
    Le,
    IsNull,
    NotNull,
    /// `traces.action` names `Action::ALL[value]` (from `action = '<known action>'`).
    ActionIs,
}

impl Op {
    fn of(op: IndexConstraintOp) -> Option<Op> {
        Some(match op {
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => Op::Eq,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => Op::Gt,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => Op::Ge,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => Op::Lt,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => Op::Le,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_ISNULL => Op::IsNull,
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_ISNOTNULL => Op::NotNull,
            _ => return None,
        })
    }
    /// The letter of the operator in a plan.
    fn letter(self) -> char {
        match self {
            Op::Eq => '=',
            Op::Gt => '>',
            Op::Ge => 'g',
            Op::Lt => '<',
            Op::Le => 'l',
            Op::IsNull => 'n',
            Op::NotNull => 'N',
            Op::ActionIs => 'a',
        }
    }
    fn from_letter(c: char) -> Option<Op> {
        [Op::Eq, Op::Gt, Op::Ge, Op::Lt, Op::Le, Op::IsNull, Op::NotNull].into_iter().find(|o| o.letter() == c)
    }
}

/// A constraint on a column other than id, device and index, checked by the cursor.
pub struct Prefilter<T: 'static> {
    col: c_int,
    op: Op,
    /// The integer compared with (unused by the NULL tests).
    value: i64,
    /// The column's cell, looked up once.
    cell: CellFn<T>,
}

impl<T> Prefilter<T> {
    /// False only when the row certainly fails the constraint.
    fn may_match(&self, cell: &CellValue) -> bool {
        match (self.op, cell) {
            (Op::IsNull, c) => *c == CellValue::Null,
            (Op::NotNull, c) => *c != CellValue::Null,
            // Only `traces` can tell (see `TraceRows::next_match`).
            (Op::ActionIs, _) => true,
            // A comparison with NULL is never true.
            (_, CellValue::Null) => false,
            // Text compares with integers by SQLite's type order: leave it to SQLite.
            (_, CellValue::Text(_)) => true,
            (Op::Eq, CellValue::Int(v)) => *v == self.value,
            (Op::Gt, CellValue::Int(v)) => *v > self.value,
            (Op::Ge, CellValue::Int(v)) => *v >= self.value,
            (Op::Lt, CellValue::Int(v)) => *v < self.value,
            (Op::Le, CellValue::Int(v)) => *v <= self.value,
        }
    }
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
const TRACE_ACTION: c_int = TRACES.position("action") as c_int;

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
        R::Item::count(&self.loaded.devices[dev])
    }
    fn total(&self) -> usize {
        self.loaded.devices.iter().map(R::Item::count).sum()
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
        let (row_base, lifetime_base) = first_ids::<R>(&loaded);
        Ok((
            Cow::Owned(R::TABLE.vtab_declaration()),
            Table { base: ffi::sqlite3_vtab::default(), loaded, row_base, lifetime_base, rows: PhantomData },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<bool> {
        // The plan is the list of (column, operator) pairs used, in argv order, as text.
        let mut plan = Vec::new();
        let mut used = Vec::new();
        let mut device_eq = false;
        let mut rows = self.total().max(1) as f64;
        // Prefilters (argv after the range terms), which SQLite checks again.
        let mut checks = Vec::new();
        for (i, c) in info.constraints().enumerate() {
            if !c.is_usable() {
                continue;
            }
            let Some(op) = Op::of(c.operator()) else {
                continue;
            };
            let column = match c.column() {
                -1 | COL_ID => 'i',
                COL_DEVICE => 'd',
                col if Some(col) == R::INDEX_COLUMN => 't',
                col => {
                    checks.push((i, format!("c{col}{}", op.letter())));
                    // Still a scan of every row: only slightly cheaper, so that a join does not
                    // pick this table as its inner loop (one scan per outer row) for it.
                    rows /= 1.1;
                    continue;
                }
            };
            if matches!(op, Op::IsNull | Op::NotNull) {
                continue;
            }
            let op = op.letter();
            device_eq |= column == 'd' && op == '=';
            rows /= match (column, op) {
                ('d', '=') => self.loaded.devices.len().max(1) as f64,
                (_, '=') => rows,
                _ => 3.0,
            };
            plan.push(format!("{column}{op}"));
            used.push(i);
        }
        let ranges = used.len();
        for (n, i) in used.into_iter().enumerate() {
            let mut u = info.constraint_usage(i);
            u.set_argv_index(n as c_int + 1);
            u.set_omit(true);
        }
        for (n, (i, term)) in checks.into_iter().enumerate() {
            let mut u = info.constraint_usage(i);
            u.set_argv_index((ranges + n) as c_int + 1);
            plan.push(term);
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
            prefilters: Vec::new(),
            item: None,
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
    prefilters: Vec<Prefilter<R::Item>>,
    /// The current row's item, looked up once per row rather than once per column (a copy into
    /// a .db file reads every column of millions of rows). None at the end.
    item: Option<&'vtab R::Item>,
}

impl<'vtab, R: Rows> Cursor<'vtab, R> {
    fn id(&self) -> i64 {
        self.tab.row_base[self.dev] + self.index as i64
    }

    /// Move to the first row at or after the current position that lies within the bounds
    /// and passes the prefilters, and look up its item.
    fn settle(&mut self) {
        self.seek();
        let loaded: &'vtab Loaded = &self.tab.loaded;
        self.item = (!self.eof()).then(|| R::Item::item(loaded, self.dev, self.index));
    }

    fn seek(&mut self) {
        while let Some(hi) = self.within_bounds() {
            if self.prefilters.is_empty() {
                return;
            }
            let base = self.tab.lifetime_base[self.dev];
            self.index = R::next_match(&self.tab.loaded, self.dev, self.index, hi, base, &self.prefilters);
            if self.index <= hi {
                return;
            }
        }
    }

    /// Move to the first row at or after the current position that lies within the bounds and
    /// return the last row of its device within them; None at the end.
    fn within_bounds(&mut self) -> Option<usize> {
        while self.dev < self.end_dev {
            let n = self.tab.count(self.dev) as i64;
            let base = self.tab.row_base[self.dev];
            let lo = self.index_lo.max(self.id_lo.saturating_sub(base)).max(0);
            let hi = self.index_hi.min(self.id_hi.saturating_sub(base)).min(n - 1);
            if (self.index as i64) < lo {
                self.index = lo as usize;
            }
            if (self.index as i64) <= hi {
                return Some(hi as usize);
            }
            self.dev += 1;
            self.index = 0;
        }
        None
    }
}

unsafe impl<R: Rows> VTabCursor for Cursor<'_, R> {
    fn filter(&mut self, _idx_num: c_int, idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        let (mut dev_lo, mut dev_hi) = (0i64, self.tab.loaded.devices.len() as i64 - 1);
        (self.index_lo, self.index_hi, self.id_lo, self.id_hi) = (0, i64::MAX, i64::MIN, i64::MAX);
        self.prefilters.clear();
        for (k, term) in idx_str.unwrap_or("").split(',').filter(|t| !t.is_empty()).enumerate() {
            if let Some(check) = term.strip_prefix('c') {
                match prefilter::<R>(check, args.get::<Value>(k)?) {
                    Check::Filter(f) => self.prefilters.push(f),
                    Check::Nothing => (dev_lo, dev_hi) = (0, -1),
                    Check::Unchecked => {}
                }
                continue;
            }
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
        self.prefilters.sort_by_key(|f| R::check_order(f.col));
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
        let (Some(c), Some(item)) = (R::TABLE.columns.get(col as usize), self.item) else {
            return ctx.set_result(&CellValue::Null);
        };
        let (loaded, dev, index) = (&self.tab.loaded, self.dev, self.index);
        let row = Row { loaded, dev, index, id: self.id(), lifetime_base: self.tab.lifetime_base[dev], item };
        ctx.set_result((c.cell)(&row))
    }

    fn rowid(&self) -> Result<i64> {
        Ok(self.id())
    }
}

/// What plan term `c<column><op>` checks against `arg`.
enum Check<T: 'static> {
    Filter(Prefilter<T>),
    /// A comparison with NULL: no row matches.
    Nothing,
    /// A comparison with a real value: left to SQLite alone.
    Unchecked,
}

fn prefilter<R: Rows>(term: &str, arg: Value) -> Check<R::Item> {
    let parsed = term.chars().last().and_then(Op::from_letter).zip(term[..term.len().saturating_sub(1)].parse::<c_int>().ok());
    let Some((op, col)) = parsed else {
        return Check::Unchecked;
    };
    let Some(cell) = R::TABLE.columns.get(col as usize).map(|c| c.cell) else {
        return Check::Unchecked;
    };
    let (op, value) = match (op, arg) {
        (Op::IsNull | Op::NotNull, _) => (op, 0),
        (_, Value::Integer(value)) => (op, value),
        (_, Value::Null) => return Check::Nothing,
        (_, Value::Text(t)) => R::text_prefilter(col, op, &t),
        _ => return Check::Unchecked,
    };
    Check::Filter(Prefilter { col, op, value, cell })
}

/// `traces`: one row per event, with the counters right after it.
pub struct TraceRows;

impl Rows for TraceRows {
    type Item = Event;
    const TABLE: &'static Declared<CellFn<Event>> = &TRACES;
    const FIRST_ID: i64 = 1;
    const INDEX_COLUMN: Option<c_int> = Some(TRACES.position("trace_index") as c_int);

    /// `action = '<known action>'` is exact: an event of an unknown action keeps a name that
    /// parses as no known one.
    fn text_prefilter(col: c_int, op: Op, text: &str) -> (Op, i64) {
        let action = Action::parse(text);
        match Action::ALL.iter().position(|&a| a == action) {
            Some(i) if col == TRACE_ACTION && op == Op::Eq && action != Action::Unknown => (Op::ActionIs, i as i64),
            _ => (Op::NotNull, 0),
        }
    }

    /// Segment actions visit only the device's segment events.
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, lifetime_base: i64, filters: &[Prefilter<Event>]) -> usize {
        let d = &l.devices[dev];
        let passes = |i: usize| {
            let row = row::<Self>(l, dev, i, lifetime_base);
            filters.iter().all(|f| {
                if f.op == Op::ActionIs {
                    Action::ALL.get(f.value as usize) == Some(&row.item.action())
                } else {
                    f.may_match(&(f.cell)(&row))
                }
            })
        };
        let segment_only =
            filters.iter().any(|f| f.op == Op::ActionIs && Action::ALL.get(f.value as usize).is_some_and(|a| a.is_segment()));
        if segment_only {
            let ids = &d.segment_events;
            let start = ids.partition_point(|&i| (i as usize) < from);
            return ids[start..].iter().map(|&i| i as usize).take_while(|&i| i <= to).find(|&i| passes(i)).unwrap_or(to + 1);
        }
        (from..=to).find(|&i| passes(i)).unwrap_or(to + 1)
    }
}

/// `lifetimes`: one row per block lifetime the replay found.
pub struct LifetimeRows;

const ALLOC_EVENT: c_int = LIFETIMES.position("alloc_event") as c_int;
const FREE_REQUESTED_EVENT: c_int = LIFETIMES.position("free_requested_event") as c_int;
const FREE_COMPLETED_EVENT: c_int = LIFETIMES.position("free_completed_event") as c_int;
const STATE_AT_DUMP: c_int = LIFETIMES.position("state_at_dump") as c_int;

impl Rows for LifetimeRows {
    type Item = Lifetime;
    const TABLE: &'static Declared<CellFn<Lifetime>> = &LIFETIMES;
    const FIRST_ID: i64 = 0;
    const INDEX_COLUMN: Option<c_int> = None;

    /// Event columns first: a live-at query's event bounds reject most lifetimes, while its
    /// `orphan = 0` and size terms pass nearly all.
    fn check_order(col: c_int) -> u8 {
        match col {
            ALLOC_EVENT | FREE_REQUESTED_EVENT | FREE_COMPLETED_EVENT | STATE_AT_DUMP => 0,
            _ => 1,
        }
    }

    /// A tight loop over the device's lifetimes: live-at and leak queries scan millions of them.
    /// `alloc_event IS NULL` and `free_completed_event IS NULL` visit only the few lifetimes
    /// listed as such, and so does `state_at_dump IS NOT NULL` (a block live at the dump has no
    /// free in the window: the replay sets `free_completed_event` only on lifetimes it creates
    /// at a free, never on a dump block's).
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, lifetime_base: i64, filters: &[Prefilter<Lifetime>]) -> usize {
        let d = &l.devices[dev];
        let passes = |i: usize| passes(&Row { loaded: l, dev, index: i, id: 0, lifetime_base, item: &d.lifetimes[i] }, filters);
        let listed = filters.iter().find_map(|f| match (f.op, f.col) {
            (Op::IsNull, ALLOC_EVENT) => Some(&d.before_window),
            (Op::IsNull, FREE_COMPLETED_EVENT) | (Op::NotNull, STATE_AT_DUMP) => Some(&d.never_freed),
            _ => None,
        });
        match listed {
            Some(ids) => {
                let start = ids.partition_point(|&i| (i as usize) < from);
                ids[start..].iter().map(|&i| i as usize).take_while(|&i| i <= to).find(|&i| passes(i)).unwrap_or(to + 1)
            }
            None => (from..=to).find(|&i| passes(i)).unwrap_or(to + 1),
        }
    }
}
