//! JSON snapshots (Mosaic's `mosaic_get_json_snapshot`, other re-encodings) of the same shape as
//! the pickle, read into the same arena so that one decoder serves both.

use super::arena::{Arena, Node};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use serde_json::Value;

pub fn parse(bytes: &[u8], arena: &mut Arena) -> Result<Node> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorCode::JsonInvalid,
            format!("line {}, column {}: {e}", e.line(), e.column()),
            "the file starts like JSON but is not valid JSON; check that it is complete",
        )
    })?;
    Ok(insert(&v, arena))
}

// serde_json limits nesting to 128 levels, so this recursion is bounded.
fn insert(v: &Value, arena: &mut Arena) -> Node {
    match v {
        Value::Null => Node::None,
        Value::Bool(b) => Node::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Node::Int(i)
            } else if let Some(u) = n.as_u64() {
                arena.new_int(u as i128)
            } else {
                Node::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => arena.new_str(s),
        Value::Array(items) => {
            let ids = items.iter().map(|i| insert(i, arena)).collect();
            arena.new_seq(Node::List, ids)
        }
        Value::Object(map) => {
            let pairs = map
                .iter()
                .map(|(k, v)| {
                    let key = arena.new_str(k);
                    (key, insert(v, arena))
                })
                .collect();
            arena.new_dict(pairs)
        }
    }
}
