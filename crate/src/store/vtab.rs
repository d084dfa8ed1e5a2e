//! The SnapshotDB's two large tables, `traces` and `lifetimes`, as virtual tables over the
//! replayed snapshot held in memory instead of copies as SQLite rows: at millions of events the
//! copies doubled the memory and took most of the load time. Rows, columns and ids are exactly
//! those of the materialized tables written to .db files (schema.sql); a test compares them.
//!
//! Rows are numbered per device in `loaded.devices` order. Constraints on `id`, `device_id` and
//! (for `traces`) `trace_index` narrow the scan to ranges, and that order is reported to SQLite
//! so that `ORDER BY trace_index` needs no sort. Comparisons and NULL tests on the other columns
//! are checked by the cursor itself before SQLite sees a row (a *prefilter*: SQLite checks them
//! again, so the cursor only has to be sure never to drop a row that matches). A scan of
//! millions of lifetimes for the few that match then costs a pass in Rust, not millions of
//! column callbacks.

use crate::model::Action;
use crate::replay::{DeviceReplay, Lifetime, NONE};
use crate::Loaded;
use rusqlite::types::Value;
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
    /// answered by the table itself): integers and NULLs exactly, text only as "not NULL".
    fn value(l: &Loaded, dev: usize, i: usize, col: c_int, lifetime_base: i64) -> Cell;
    /// The text of a text cell (only asked when `value` says `Cell::Text`).
    fn text(l: &Loaded, dev: usize, i: usize, col: c_int) -> Option<Cow<'_, str>>;

    /// The prefilter for `col <op> '<text>'`: by default only that the cell is not NULL (a
    /// comparison with NULL is never true).
    fn text_prefilter(col: c_int, _op: Op, _text: &str) -> Prefilter {
        Prefilter { col, op: Op::NotNull, value: 0 }
    }

    /// Order in which prefilters on a column are checked, lowest first: the columns that
    /// reject most rows should come first.
    fn check_order(_col: c_int) -> u8 {
        0
    }

    /// The first row of device position `dev` in `from..=to` that may pass every prefilter (the
    /// id and device columns are the cursor's bounds, never prefilters), or `to + 1`.
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, lifetime_base: i64, filters: &[Prefilter]) -> usize {
        (from..=to).find(|&i| filters.iter().all(|f| f.may_match(Self::value(l, dev, i, f.col, lifetime_base)))).unwrap_or(to + 1)
    }
}

/// A cell's value as far as prefilters are concerned.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Cell {
    Null,
    Int(i64),
    Text,
}

impl Cell {
    fn of(v: Option<i64>) -> Cell {
        v.map_or(Cell::Null, Cell::Int)
    }
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
#[derive(Clone, Copy, Debug)]
pub struct Prefilter {
    col: c_int,
    op: Op,
    /// The integer compared with (unused by the NULL tests).
    value: i64,
}

impl Prefilter {
    /// False only when the row certainly fails the constraint.
    fn may_match(&self, cell: Cell) -> bool {
        match (self.op, cell) {
            (Op::IsNull, c) => c == Cell::Null,
            (Op::NotNull, c) => c != Cell::Null,
            // Only `traces` can tell (see `TraceRows::next_match`).
            (Op::ActionIs, _) => true,
            // A comparison with NULL is never true.
            (_, Cell::Null) => false,
            // Text compares with integers by SQLite's type order: leave it to SQLite.
            (_, Cell::Text) => true,
            (Op::Eq, Cell::Int(v)) => v == self.value,
            (Op::Gt, Cell::Int(v)) => v > self.value,
            (Op::Ge, Cell::Int(v)) => v >= self.value,
            (Op::Lt, Cell::Int(v)) => v < self.value,
            (Op::Le, Cell::Int(v)) => v <= self.value,
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
/// `traces.action`.
const COL_ACTION: c_int = 3;

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
    prefilters: Vec<Prefilter>,
}

impl<R: Rows> Cursor<'_, R> {
    fn id(&self) -> i64 {
        self.tab.row_base[self.dev] + self.index as i64
    }

    fn value(&self, col: c_int) -> Cell {
        match col {
            COL_ID => Cell::Int(self.id()),
            COL_DEVICE => Cell::Int(self.dev as i64),
            _ => R::value(&self.tab.loaded, self.dev, self.index, col, self.tab.lifetime_base[self.dev]),
        }
    }

    /// Move to the first row at or after the current position that lies within the bounds
    /// and passes the prefilters.
    fn settle(&mut self) {
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
        match self.value(col) {
            Cell::Null => ctx.set_result(rusqlite::types::Null),
            Cell::Int(v) => ctx.set_result(v),
            Cell::Text => ctx.set_result(R::text(&self.tab.loaded, self.dev, self.index, col)),
        }
    }

    fn rowid(&self) -> Result<i64> {
        Ok(self.id())
    }
}

/// What plan term `c<column><op>` checks against `arg`.
enum Check {
    Filter(Prefilter),
    /// A comparison with NULL: no row matches.
    Nothing,
    /// A comparison with a real value: left to SQLite alone.
    Unchecked,
}

fn prefilter<R: Rows>(term: &str, arg: Value) -> Check {
    let parsed = term.chars().last().and_then(Op::from_letter).zip(term[..term.len().saturating_sub(1)].parse().ok());
    let Some((op, col)) = parsed else {
        return Check::Unchecked;
    };
    match (op, arg) {
        (Op::IsNull | Op::NotNull, _) => Check::Filter(Prefilter { col, op, value: 0 }),
        (_, Value::Integer(value)) => Check::Filter(Prefilter { col, op, value }),
        (_, Value::Null) => Check::Nothing,
        (_, Value::Text(t)) => Check::Filter(R::text_prefilter(col, op, &t)),
        _ => Check::Unchecked,
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

    fn value(l: &Loaded, dev: usize, i: usize, col: c_int, lifetime_base: i64) -> Cell {
        let d = &l.devices[dev];
        // The counters and ids (what scans for peaks read) need no event lookup.
        match col {
            2 => return Cell::Int(i as i64),
            9 => return Cell::of((d.event_lifetime[i] != NONE).then(|| lifetime_base + d.event_lifetime[i] as i64)),
            10 => return Cell::Int(d.series.allocated.at(i)),
            11 => return Cell::Int(d.series.active.at(i)),
            12 => return Cell::Int(d.series.reserved.at(i)),
            13 => return Cell::Int(d.series.requested.at(i)),
            _ => {}
        }
        let trace = l.snapshot.trace(d.device);
        let Some(e) = trace.and_then(|t| t.events.get(i)) else {
            return Cell::Null;
        };
        let x = trace.and_then(|t| t.extra(e));
        let text_if = |present: bool| if present { Cell::Text } else { Cell::Null };
        match col {
            3 => Cell::Text,
            4 => Cell::Int(e.addr as i64),
            5 => Cell::Int(e.size as i64),
            6 => Cell::Int(e.stream as i64),
            7 => Cell::of(e.time_us()),
            8 => Cell::of(e.stack().map(|s| s as i64)),
            14 => Cell::of(x.and_then(|x| x.device_free).map(|v| v as i64)),
            15 => text_if(x.is_some_and(|x| x.compile_context.is_some())),
            16 => text_if(x.is_some_and(|x| x.user_metadata.is_some())),
            _ => text_if(super::has_extra_json(x)),
        }
    }

    /// `action = '<known action>'` is exact: an event of an unknown action keeps a name that
    /// parses as no known one.
    fn text_prefilter(col: c_int, op: Op, text: &str) -> Prefilter {
        let action = Action::parse(text);
        match Action::ALL.iter().position(|&a| a == action) {
            Some(i) if col == COL_ACTION && op == Op::Eq && action != Action::Unknown => {
                Prefilter { col, op: Op::ActionIs, value: i as i64 }
            }
            _ => Prefilter { col, op: Op::NotNull, value: 0 },
        }
    }

    /// Segment actions visit only the device's segment events.
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, lifetime_base: i64, filters: &[Prefilter]) -> usize {
        let d = &l.devices[dev];
        let events = l.snapshot.trace(d.device).map(|t| &t.events);
        let action_is = |i: usize, f: &Prefilter| {
            events.and_then(|ev| ev.get(i)).is_some_and(|e| Action::ALL.get(f.value as usize) == Some(&e.action()))
        };
        let passes = |i: usize| {
            filters.iter().all(|f| {
                if f.op == Op::ActionIs {
                    action_is(i, f)
                } else {
                    f.may_match(Self::value(l, dev, i, f.col, lifetime_base))
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

    fn text(l: &Loaded, dev: usize, i: usize, col: c_int) -> Option<Cow<'_, str>> {
        let trace = l.snapshot.trace(l.devices[dev].device)?;
        let e = trace.events.get(i)?;
        let x = trace.extra(e);
        match col {
            3 => Some(Cow::Borrowed(x.and_then(|x| x.action_name.as_deref()).unwrap_or(e.action().name()))),
            15 => x.and_then(|x| x.compile_context.as_deref()).map(Cow::Borrowed),
            16 => x.and_then(|x| x.user_metadata.as_deref()).map(Cow::Borrowed),
            _ => super::extra_json(x).map(Cow::Owned),
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

    fn value(l: &Loaded, dev: usize, i: usize, col: c_int, _lifetime_base: i64) -> Cell {
        lifetime_value(&l.devices[dev].lifetimes[i], col)
    }

    /// Event columns first: a live-at query's event bounds reject most lifetimes, while its
    /// `orphan = 0` and size terms pass nearly all.
    fn check_order(col: c_int) -> u8 {
        match col {
            6..=8 | 10 => 0,
            _ => 1,
        }
    }

    /// A tight loop over the device's lifetimes: live-at and leak queries scan millions of them.
    /// `alloc_event IS NULL` and `free_completed_event IS NULL` visit only the few lifetimes
    /// listed as such, and so does `state_at_dump IS NOT NULL` (a block live at the dump has no
    /// free in the window: the replay sets `free_completed_event` only on lifetimes it creates
    /// at a free, never on a dump block's).
    fn next_match(l: &Loaded, dev: usize, from: usize, to: usize, _lifetime_base: i64, filters: &[Prefilter]) -> usize {
        let d = &l.devices[dev];
        let passes = |x: &Lifetime| filters.iter().all(|f| f.may_match(lifetime_value(x, f.col)));
        let listed = filters.iter().find_map(|f| match (f.op, f.col) {
            (Op::IsNull, 6) => Some(&d.before_window),
            (Op::IsNull, 8) | (Op::NotNull, 10) => Some(&d.never_freed),
            _ => None,
        });
        match listed {
            Some(ids) => {
                let start = ids.partition_point(|&i| (i as usize) < from);
                ids[start..].iter().map(|&i| i as usize).take_while(|&i| i <= to).find(|&i| passes(&d.lifetimes[i])).unwrap_or(to + 1)
            }
            None => d.lifetimes[from..=to].iter().position(passes).map_or(to + 1, |k| from + k),
        }
    }

    fn text(l: &Loaded, dev: usize, i: usize, col: c_int) -> Option<Cow<'_, str>> {
        let x = &l.devices[dev].lifetimes[i];
        Some(Cow::Borrowed(match col {
            9 => super::origin_name(x),
            10 => x.state_at_dump?.name(),
            _ => super::stack_source_name(x.stack_source),
        }))
    }
}

/// Cell `col` of a lifetime row.
#[inline]
fn lifetime_value(x: &Lifetime, col: c_int) -> Cell {
    match col {
        2 => Cell::Int(x.addr as i64),
        3 => Cell::Int(x.size as i64),
        4 => Cell::Int(x.requested as i64),
        5 => Cell::Int(x.stream as i64),
        6 => Cell::of(x.alloc_event().map(i64::from)),
        7 => Cell::of(x.free_requested_event().map(i64::from)),
        8 => Cell::of(x.free_completed_event().map(i64::from)),
        10 if x.state_at_dump.is_none() => Cell::Null,
        9 | 10 | 12 => Cell::Text,
        11 => Cell::of(x.stack().map(i64::from)),
        13 => Cell::Int(x.size_exact as i64),
        14 => Cell::Int(x.size_uncertainty as i64),
        _ => Cell::Int(x.orphan as i64),
    }
}
