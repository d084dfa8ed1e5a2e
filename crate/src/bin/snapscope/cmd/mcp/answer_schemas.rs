//! The answer types' JSON Schemas (derived with schemars from the Rust types where they derive).

use serde_json::{json, Value};

/// The properties (and `$defs`) of tool `name`'s answer body.
pub fn body(name: &str) -> Value {
    let rows = json!({"type": "array", "items": {"type": ["object", "array"]}});
    match name {
        "query" | "sql" | "event" | "stack" => json!({"properties": {
            "rows": rows, "returned": {"type": "integer"}, "has_more": {"type": "boolean"}, "truncated": {"type": "boolean"},
            "cursor": {"type": "integer"}, "next_cursor": {"type": "integer"}
        }}),
        _ => json!({}),
    }
}
