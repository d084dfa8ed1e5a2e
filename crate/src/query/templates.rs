//! Running a catalogue template: parameters are validated against the catalogue (unknown,
//! mistyped, missing and out-of-range values fail with what is accepted), then the SQL runs
//! read-only with row and time limits.

use super::catalogue::{catalogue, render_sql, Column, Kind, ParamType, Template};
use super::sql::{self, Cell, Limits};
use crate::analysis::tree::{memory_tree, TreeOptions};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use rusqlite::types::Value;
use rusqlite::Connection;
use serde::Serialize;
use serde_json::{Map, Value as J};

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TemplateResult {
    pub template: &'static str,
    pub device: i64,
    pub effective_params: Map<String, J>,
    pub columns: Vec<Column>,
    /// Written through [`TemplateResult::with_rows`].
    #[serde(skip)]
    pub rows: Vec<Vec<Cell>>,
    /// Rows the query has in all (exact).
    pub total: u64,
    pub returned: usize,
    pub has_more: bool,
    pub truncated: bool,
    pub total_is_exact: bool,
}

pub fn find(name: &str) -> Result<Template> {
    catalogue().into_iter().find(|t| t.name == name).ok_or_else(|| {
        Error::new(
            ErrorCode::TemplateNotFound,
            format!("no template named {name:?}"),
            format!("templates: {}", catalogue().iter().map(|t| t.name).collect::<Vec<_>>().join(", ")),
        )
    })
}

fn invalid(msg: String, t: &Template) -> Error {
    let accepted: Vec<String> = std::iter::once("device (int)".to_string())
        .chain(t.params.iter().map(|p| {
            let ty = match p.ty {
                ParamType::Int => "int",
                ParamType::Bool => "bool",
                ParamType::String => "string",
            };
            format!("{}{} ({ty})", p.name, if p.required { "*" } else { "" })
        }))
        .collect();
    Error::new(ErrorCode::InvalidParameter, msg, format!("{} accepts: {} (* = required)", t.name, accepted.join(", ")))
}

/// Resolve the device: the given one if the DB has it, else the first one.
pub fn resolve_device(conn: &Connection, device: Option<i64>) -> Result<i64> {
    let all: Vec<i64> = conn
        .prepare("SELECT device_index FROM devices ORDER BY device_index")?
        .query_map([], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    pick_device(&all, device)
}

/// The device asked for (checked against `all`, ascending), or the first one.
pub fn pick_device(all: &[i64], device: Option<i64>) -> Result<i64> {
    match device {
        Some(d) if all.contains(&d) => Ok(d),
        Some(d) => Err(Error::new(
            ErrorCode::DeviceNotFound,
            format!("device {d} not found; available: {all:?}"),
            "pick one of the available devices",
        )),
        None => all.first().copied().ok_or_else(|| {
            Error::new(ErrorCode::DeviceNotFound, "the snapshot has no devices", "it holds no segments and no trace events")
        }),
    }
}

impl TemplateResult {
    pub fn with_rows(&self, shape: sql::RowShape) -> sql::WithRows<'_, TemplateResult> {
        let names = self.columns.iter().map(|c| c.name).collect();
        sql::WithRows { result: self, rows: sql::ShapedRows { names, rows: &self.rows, shape } }
    }
}

pub fn run(conn: &mut Connection, name: &str, params: &Map<String, J>, limits: Limits) -> Result<TemplateResult> {
    let t = find(name)?;
    for k in params.keys() {
        if k != "device" && !t.params.iter().any(|p| p.name == k) {
            return Err(invalid(format!("unknown parameter {k:?}"), &t));
        }
    }
    let device = match params.get("device") {
        None | Some(J::Null) => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| invalid(format!("device must be an integer, got {v}"), &t))?),
    };
    let device = resolve_device(conn, device)?;
    let events: i64 = conn.query_row("SELECT events FROM devices WHERE device_index = ?1", [device], |r| r.get(0))?;

    let mut effective = Map::new();
    let mut binds: Vec<(String, Value)> = vec![(":device".into(), Value::Integer(device))];
    for p in &t.params {
        let given = params.get(p.name).filter(|v| !v.is_null());
        let v = match given {
            Some(v) => v.clone(),
            None if p.required => return Err(invalid(format!("parameter {:?} is required", p.name), &t)),
            None => p.default.clone(),
        };
        let bound = match (p.ty, &v) {
            (_, J::Null) => Value::Null,
            (ParamType::Int, J::Number(n)) if n.is_i64() => Value::Integer(n.as_i64().unwrap()),
            (ParamType::Int, J::String(s)) if s.parse::<i64>().is_ok() => Value::Integer(s.parse().unwrap()),
            (ParamType::Bool, J::Bool(b)) => Value::Integer(*b as i64),
            (ParamType::String, J::String(s)) => match p.choices {
                Some(choices) => {
                    let hit = choices
                        .iter()
                        .find(|c| c.eq_ignore_ascii_case(s))
                        .ok_or_else(|| invalid(format!("{} must be one of {choices:?}, got {s:?}", p.name), &t))?;
                    Value::Text(hit.to_string())
                }
                None => Value::Text(s.clone()),
            },
            _ => return Err(invalid(format!("parameter {:?} must be {:?}, got {v}", p.name, p.ty), &t)),
        };
        if p.name == "event_id" {
            if let Value::Integer(e) = bound {
                if e < 0 || e >= events {
                    return Err(Error::new(
                        ErrorCode::EventOutOfRange,
                        format!("event_id {e} is outside device {device}'s trace of {events} events"),
                        "event ids run from 0 to events-1 (see `snapscope overview`)",
                    ));
                }
            }
        }
        effective.insert(
            p.name.to_string(),
            match &bound {
                Value::Text(s) => J::String(s.clone()),
                _ => v.clone(),
            },
        );
        binds.push((format!(":{}", p.name), bound));
    }
    let text = |k: &str| effective.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let stack_bytes = effective.get("stack_bytes").and_then(|v| v.as_i64()).unwrap_or(-1);

    let (rows, total, has_more, truncated) = match t.kind {
        Kind::Sql => {
            let sql_text = render_sql(&t, text("order_by").as_deref(), text("order_dir").as_deref());
            // A template's own `limit` fetches one row more, to tell whether more exist.
            let want = effective.get("limit").and_then(|v| v.as_i64()).filter(|&l| l >= 0);
            let named: Vec<(&str, Value)> = binds
                .iter()
                .map(|(k, v)| match (k.as_str(), want) {
                    (":limit", Some(l)) => (k.as_str(), Value::Integer(l + 1)),
                    _ => (k.as_str(), v.clone()),
                })
                .collect();
            let mut rows = sql::run(conn, &sql_text, &named, limits)?;
            // The catalogue declares each template's columns (with units): its SQL must return
            // exactly those, in that order.
            let declared: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
            if rows.columns.iter().map(String::as_str).ne(declared.iter().copied()) {
                return Err(Error::new(
                    ErrorCode::TemplateColumns,
                    format!("template {} returned the columns {:?}, not the declared {declared:?}", t.name, rows.columns),
                    "a bug in the template catalogue (crate/sql/templates): report it",
                ));
            }
            if let Some(l) = want.map(|l| l as usize).filter(|&l| rows.rows.len() > l) {
                rows.rows.truncate(l);
                rows.returned = l;
                rows.has_more = true;
            }
            let offset = effective.get("offset").and_then(|v| v.as_i64()).unwrap_or(0);
            let total = if rows.has_more || offset > 0 {
                let unlimited: Vec<(&str, Value)> = named
                    .iter()
                    .map(|(k, v)| match *k {
                        ":limit" => (*k, Value::Integer(-1)),
                        ":offset" => (*k, Value::Integer(0)),
                        _ => (*k, v.clone()),
                    })
                    .collect();
                let counted = sql::run(conn, &format!("SELECT COUNT(*) FROM ({sql_text})"), &unlimited, limits)?;
                match counted.rows.first().and_then(|r| r.first()) {
                    Some(Cell::Int(n)) => *n as u64,
                    _ => rows.returned as u64,
                }
            } else {
                rows.returned as u64
            };
            let truncated = rows.has_more || offset > 0;
            (rows.rows, total, rows.has_more, truncated)
        }
        Kind::FrameTree => {
            let event = effective.get("event_id").and_then(|v| v.as_i64());
            let opts = TreeOptions {
                include_static: effective.get("include_static").and_then(|v| v.as_bool()).unwrap_or(true),
                min_size: effective.get("min_size").and_then(|v| v.as_i64()).unwrap_or(0),
                all_frames: false,
            };
            let tree = memory_tree(conn, device, event, opts)?;
            let root = tree.nodes.first().map(|n| n.total_bytes).unwrap_or(0).max(1) as f64;
            let all: Vec<Vec<Cell>> = tree
                .nodes
                .iter()
                .map(|n| {
                    vec![
                        Cell::Int(n.id as i64),
                        n.parent.map(|p| Cell::Int(p as i64)).unwrap_or(Cell::Null),
                        Cell::Int(n.depth as i64),
                        Cell::Text(n.label.clone()),
                        n.filename.clone().map(Cell::Text).unwrap_or(Cell::Null),
                        n.line.map(Cell::Int).unwrap_or(Cell::Null),
                        n.name.clone().map(Cell::Text).unwrap_or(Cell::Null),
                        Cell::Int(n.blocks),
                        Cell::Int(n.total_bytes),
                        Cell::Int(n.requested_bytes),
                        Cell::Int(n.self_blocks),
                        Cell::Int(n.self_bytes),
                        Cell::Real((n.total_bytes as f64 * 100.0 / root * 10000.0).round() / 10000.0),
                    ]
                })
                .collect();
            let total = all.len() as u64;
            let has_more = all.len() > limits.max_rows;
            let rows: Vec<_> = all.into_iter().take(limits.max_rows).collect();
            (rows, total, has_more, has_more)
        }
    };
    let mut result = TemplateResult {
        template: t.name,
        device,
        effective_params: effective,
        columns: t.columns.clone(),
        returned: rows.len(),
        rows,
        total,
        has_more,
        truncated,
        total_is_exact: true,
    };
    if stack_bytes >= 0 {
        cut_stacks(&mut result, stack_bytes as usize);
    }
    Ok(result)
}

/// `--stack-bytes N`: a UTF-8-safe prefix of each callstack plus a `stack_truncated` flag; the
/// stable `stack_id` column identifies the whole stack.
fn cut_stacks(r: &mut TemplateResult, max: usize) {
    let Some(ci) = r.columns.iter().position(|c| c.name == "callstack") else { return };
    r.columns.push(Column { name: "stack_truncated", unit: None });
    for row in &mut r.rows {
        let mut cut = false;
        if let Cell::Text(s) = &mut row[ci] {
            if s.len() > max {
                let mut end = max;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
                cut = true;
            }
        }
        row.push(Cell::Int(cut as i64));
    }
}
