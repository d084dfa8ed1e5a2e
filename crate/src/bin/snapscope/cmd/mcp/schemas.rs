//! Each tool's outputSchema: the command's answer schema (`crate::schemas`, derived from the
//! Rust answer types) with what the server adds (`provenance`, `bounds`, paging).

use crate::schemas::{analyze_body, answer, diff_forms, mode_item, sql_body, template_body, Gen};
use serde_json::{json, Value};

fn added() -> Value {
    json!({
        "provenance": {
            "type": "object",
            "description": "Where the answer comes from.",
            "properties": {
                "file": {"type": "string"}, "size": {"type": "integer"}, "sha256": {"type": "string"},
                "engine_version": {"type": "string"}, "device": {"type": ["integer", "null"]}, "event": {"type": ["integer", "null"]},
                "cache": {"type": "string", "enum": ["hit", "miss", "not kept"]}, "files": {"type": "array", "items": {"type": "string"}}
            }
        },
        "bounds": {
            "type": "object",
            "description": "The answer's byte bound, its size (structured content and text), and what was cut to keep it.",
            "properties": {
                "max_bytes": {"type": "integer"}, "bytes": {"type": "integer"}, "truncated": {"type": "boolean"},
                "cut": {"type": "array", "items": {"type": "object"}}
            },
            "required": ["max_bytes", "bytes", "truncated", "cut"]
        },
        "cursor": {"type": "integer", "description": "Where this page starts."},
        "next_cursor": {"type": "integer", "description": "Pass as `cursor` for the next page (present while `has_more`)."}
    })
}

/// The outputSchema of tool `name`.
pub fn output(name: &str) -> Value {
    let mut g = Gen::default();
    let body = match name {
        "overview" => json!({"_result": g.of::<snapscope::analysis::overview::Overview>()}),
        "analyze" => {
            let items: Vec<Value> = snapscope::engine::ANALYSES.iter().filter(|m| **m != "compare").map(|m| mode_item(m, &mut g)).collect();
            let rules = g.of::<Option<Vec<snapscope::semantics::rules::RuleInfo>>>();
            json!({"mode": {"type": "string"}, "devices": {"type": "array", "items": {"anyOf": items}}, "rules": rules})
        }
        "compare" => analyze_body("compare", &mut g),
        "tree" => analyze_body("tree", &mut g),
        "diff" => json!({"_result": {"anyOf": diff_forms(&mut g)}}),
        "simulate" => json!({"devices": {"type": "array", "items": g.of::<snapscope::simulate::Simulation>()}}),
        "ranks" => json!({"_result": g.of::<snapscope::ranks::RanksReport>()}),
        "query" | "stack" => template_body(None, &mut g),
        "event" => {
            let t = snapscope::engine::Engine::catalogue().into_iter().find(|t| t.name == "event");
            template_body(t.as_ref(), &mut g)
        }
        "sql" => sql_body(&mut g),
        "holders" => json!({
            "rows": {"type": "array", "items": {"type": "object"}, "description": "by stack or category: the template's rows"},
            "groups": {"type": "array", "items": g.of::<snapscope::analysis::basis::Group>(), "description": "by frame: the peak analysis's top frames"},
        }),
        _ => json!({}),
    };
    // `stack` answers a template's rows (by event) or the engine's stack page (by stack_id).
    let body = if name == "stack" {
        let page = g.of::<snapscope::analysis::event::StackPage>();
        json!({"rows": body["rows"].clone(), "frames": {"type": "array"}, "_result": {"anyOf": [page, {"required": ["rows"]}]}})
    } else {
        body
    };
    answer(body, added(), g)
}
