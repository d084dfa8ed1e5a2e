//! Read-only SQL over a SnapshotDB with a row limit and a time limit: the engine behind custom
//! queries in the CLI and the page's SQL console, and behind every template.

use crate::clock::now_ms;
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(String),
}

/// How result rows are written in JSON: objects keyed by column name (pt-snap-cli's shape, what
/// `jq` users expect) or arrays in column order (compact; the page reads these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowShape {
    Objects,
    #[default]
    Arrays,
}

/// Result rows as JSON in the chosen shape.
pub struct ShapedRows<'a> {
    pub names: Vec<&'a str>,
    pub rows: &'a [Vec<Cell>],
    pub shape: RowShape,
}

impl Serialize for ShapedRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows {
            match self.shape {
                RowShape::Arrays => seq.serialize_element(row)?,
                RowShape::Objects => seq.serialize_element(&RowObject { names: &self.names, cells: row })?,
            }
        }
        seq.end()
    }
}

struct RowObject<'a> {
    names: &'a [&'a str],
    cells: &'a [Cell],
}

impl Serialize for RowObject<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.cells.len()))?;
        for (name, cell) in self.names.iter().zip(self.cells) {
            m.serialize_entry(name, cell)?;
        }
        m.end()
    }
}

/// A result with its rows in a chosen shape (the rows come last).
#[derive(Serialize)]
pub struct WithRows<'a, T: Serialize> {
    #[serde(flatten)]
    pub result: &'a T,
    pub rows: ShapedRows<'a>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Rows {
    pub columns: Vec<String>,
    /// Written through [`Rows::with_rows`].
    #[serde(skip)]
    pub rows: Vec<Vec<Cell>>,
    pub returned: usize,
    /// More rows exist beyond `max_rows`, or beyond the `answer_bytes` budget.
    pub has_more: bool,
    pub truncated: bool,
}

impl Rows {
    pub fn with_rows(&self, shape: RowShape) -> WithRows<'_, Rows> {
        WithRows { result: self, rows: ShapedRows { names: self.columns.iter().map(String::as_str).collect(), rows: &self.rows, shape } }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_rows: usize,
    pub timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_rows: 10_000, timeout_ms: 30_000 }
    }
}

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    /// Set by a surface that can cancel a call (the MCP server): SQL on this thread stops when it is.
    static CANCEL: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> = const { std::cell::RefCell::new(None) };
}

/// Stop SQL run on this thread once `flag` is set (None: no such flag).
#[cfg(not(target_arch = "wasm32"))]
pub fn cancel_with(flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
    CANCEL.with(|c| *c.borrow_mut() = flag);
}

#[cfg(not(target_arch = "wasm32"))]
fn cancelled() -> bool {
    CANCEL.with(|c| c.borrow().as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)))
}

#[cfg(target_arch = "wasm32")]
fn cancelled() -> bool {
    false
}

pub fn run(conn: &mut Connection, sql: &str, params: &[(&str, rusqlite::types::Value)], limits: Limits) -> Result<Rows> {
    let deadline = now_ms() + limits.timeout_ms as f64;
    conn.progress_handler(10_000, Some(move || now_ms() > deadline || cancelled())).map_err(Error::sql)?;
    // A statement SQLite calls read-only may still ATTACH a file (creating it, or rolling back a
    // hot journal beside it): the user's SQL never attaches.
    conn.authorizer(Some(|ctx: rusqlite::hooks::AuthContext<'_>| {
        use rusqlite::hooks::{AuthAction, Authorization};
        match ctx.action {
            AuthAction::Attach { .. } | AuthAction::Detach { .. } => Authorization::Deny,
            _ => Authorization::Allow,
        }
    }))
    .map_err(Error::sql)?;
    // Bounded in bytes too (issue 29.14: one query wrote 900 MB, another grew to 3.6 GB inside one
    // SQLite step, where the time limit is not looked at): no single value beyond the answer's
    // budget, and the cells of the rows kept counted against it.
    let budget = crate::budget::ANSWER_BYTES.limit();
    let length = rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH;
    let old_length = conn.set_limit(length, i32::try_from(budget).unwrap_or(i32::MAX).max(1)).ok();
    let result = run_unguarded(conn, sql, params, limits, budget);
    if let Some(old) = old_length {
        let _ = conn.set_limit(length, old);
    }
    let _ = conn.authorizer(None::<fn(rusqlite::hooks::AuthContext<'_>) -> rusqlite::hooks::Authorization>);
    let _ = conn.progress_handler(0, None::<fn() -> bool>);
    // An input .db's statements stay under their own limit afterwards.
    #[cfg(not(target_arch = "wasm32"))]
    if conn.path().is_some_and(|p| !p.is_empty()) {
        let _ = crate::store::guard_statements(conn);
    }
    result
}

fn run_unguarded(conn: &Connection, sql: &str, params: &[(&str, rusqlite::types::Value)], limits: Limits, budget: u64) -> Result<Rows> {
    let not_readonly = || {
        Error::new(
            ErrorCode::QueryNotReadonly,
            "only read-only statements (SELECT, WITH, read-only PRAGMA) are allowed; no ATTACH",
            "the SnapshotDB is read-only; copy it with sqlite3 to modify it",
        )
    };
    // A write to the virtual `traces` is refused by SQLite while preparing.
    let refused = |e: &rusqlite::Error| ["may not be modified", "not authorized"].iter().any(|m| e.to_string().contains(m));
    let mut stmt = conn.prepare(sql).map_err(|e| if refused(&e) { not_readonly() } else { Error::sql(e) })?;
    if !stmt.readonly() {
        return Err(not_readonly());
    }
    for (name, v) in params {
        if let Some(idx) = stmt.parameter_index(name).map_err(Error::sql)? {
            stmt.raw_bind_parameter(idx, v).map_err(Error::sql)?;
        }
    }
    let columns: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    {
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        let mut has_more = false;
        let mut bytes = 0u64;
        while let Some(r) = rows.next().map_err(|e| timeout_or(e, limits.timeout_ms, budget))? {
            if out.len() == limits.max_rows {
                has_more = true;
                break;
            }
            // A cell costs its text, or 8 bytes for anything else (as JSON: a number, null, "<n bytes>").
            let mut row_bytes = 0u64;
            for i in 0..columns.len() {
                row_bytes = row_bytes.saturating_add(match r.get_ref(i).map_err(Error::sql)? {
                    ValueRef::Text(t) => t.len() as u64 + 2,
                    _ => 8,
                });
            }
            bytes = bytes.saturating_add(row_bytes);
            if bytes > budget {
                // A list is cut at the budget (said by `truncated`); a first row alone over it
                // cannot be cut.
                if out.is_empty() {
                    return Err(answer_too_large(budget, row_bytes));
                }
                has_more = true;
                break;
            }
            let mut row = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                let value = r.get_ref(i).map_err(Error::sql)?;
                row.push(match value {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Blob(format!("<{} bytes>", b.len())),
                });
            }
            out.push(row);
        }
        Ok(Rows { returned: out.len(), rows: out, has_more, truncated: has_more, columns: columns.clone() })
    }
}

fn answer_too_large(budget: u64, row_bytes: u64) -> Error {
    crate::budget::ANSWER_BYTES.exceeded(
        budget,
        format_args!("the first row alone holds {row_bytes} bytes of cells, over {budget}; narrow the query (fewer columns, substr())"),
    )
}

fn timeout_or(e: rusqlite::Error, ms: u64, budget: u64) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::TooBig {
            return crate::budget::ANSWER_BYTES.exceeded(budget, "one value of the query is larger (SQLite refused to build it)");
        }
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return Error::new(
                ErrorCode::QueryTimeout,
                format!("the query ran longer than {ms} ms and was stopped"),
                "narrow it (WHERE, LIMIT) or raise --timeout",
            );
        }
    }
    Error::sql(e)
}
