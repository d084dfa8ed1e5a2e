//! Each tool's outputSchema: the envelope every answer has (`ok`, `schema_version`), what the
//! server adds (`provenance`, `bounds`, paging), and the answer's own fields.

use serde_json::{json, Value};

fn provenance() -> Value {
    json!({
        "type": "object",
        "description": "Where the answer comes from.",
        "properties": {
            "file": {"type": "string"}, "size": {"type": "integer"}, "sha256": {"type": "string"},
            "engine_version": {"type": "string"}, "device": {"type": ["integer", "null"]}, "event": {"type": ["integer", "null"]},
            "cache": {"type": "string", "enum": ["hit", "miss", "not kept"]}, "files": {"type": "array", "items": {"type": "string"}}
        }
    })
}

fn bounds() -> Value {
    json!({
        "type": "object",
        "description": "The answer's byte bound and what was cut to keep it.",
        "properties": {
            "max_bytes": {"type": "integer"}, "bytes": {"type": "integer"}, "truncated": {"type": "boolean"},
            "cut": {"type": "array", "items": {"type": "object"}}
        },
        "required": ["max_bytes", "bytes", "truncated", "cut"]
    })
}

/// The outputSchema of tool `name`.
pub fn output(name: &str) -> Value {
    let mut props = json!({
        "ok": {"type": "boolean"},
        "schema_version": {"type": "integer"},
        "provenance": provenance(),
        "bounds": bounds(),
    });
    let body = super::answer_schemas::body(name);
    if let Some(extra) = body.get("properties").and_then(Value::as_object) {
        props.as_object_mut().expect("object").extend(extra.clone());
    }
    let mut s = json!({"type": "object", "properties": props, "required": ["ok", "schema_version"]});
    if let Some(defs) = body.get("$defs") {
        s["$defs"] = defs.clone();
    }
    s
}
