//! The answers' JSON Schemas, derived with schemars from the Rust answer types (the shapes the
//! commands build around them are written out here): one per analysis mode and template
//! (`capabilities --json`), and one per MCP tool (its outputSchema). Row answers are the one
//! hand-checked part: their rows are serialized by hand (objects keyed by the columns).

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Value};
use snapscope::analysis::{categories, compare, findings, fragment, leak, oom, overview, peak, steps, streams, tree, DeviceAnalysis};
use snapscope::query::{catalogue, sql, templates};

/// A generator collecting the definitions the schemas refer to (`#/$defs/...`).
#[derive(Default)]
pub struct Gen(SchemaGenerator);

impl Gen {
    pub fn of<T: JsonSchema>(&mut self) -> Value {
        serde_json::to_value(self.0.subschema_for::<T>()).expect("a schema is JSON")
    }

    /// `schema` as a root: with the definitions it refers to.
    pub fn root(mut self, mut schema: Value) -> Value {
        let defs = self.0.take_definitions(true);
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
        schema
    }
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

/// One device's entry in `analyze --mode MODE`'s `devices`.
pub fn mode_item(mode: &str, g: &mut Gen) -> Value {
    let dev = json!({"type": "integer"});
    match mode {
        "overview" => obj(
            json!({"device": dev, "overview": g.of::<overview::DeviceOverview>(), "findings": g.of::<Vec<findings::Finding>>()}),
            &["device", "overview", "findings"],
        ),
        "peak" => obj(json!({"device": dev, "peak": g.of::<Option<peak::PeakAnalysis>>()}), &["device", "peak"]),
        "fragment" => obj(json!({"device": dev, "fragment": g.of::<fragment::Fragmentation>()}), &["device", "fragment"]),
        "leak" => obj(json!({"device": dev, "leak": g.of::<Option<leak::LeakAnalysis>>()}), &["device", "leak"]),
        "oom" => obj(json!({"device": dev, "oom": g.of::<oom::OomAnalysis>()}), &["device", "oom"]),
        "tree" => obj(json!({"device": dev, "tree": g.of::<tree::MemoryTree>()}), &["device", "tree"]),
        "categories" => g.of::<categories::CategoryBreakdown>(),
        "steps" => g.of::<steps::StepsAnalysis>(),
        "streams" => g.of::<streams::StreamAnalysis>(),
        "tune" => json!({"anyOf": [
            g.of::<snapscope::simulate::tune::Tuning>(),
            obj(json!({"device": dev, "rows": {"type": "array", "maxItems": 0}, "try_first": {"type": "null"}, "verdict": {"type": "string"}}), &["device", "rows", "verdict"]),
        ]}),
        _ => g.of::<DeviceAnalysis>(),
    }
}

/// The body of `analyze --mode MODE --json` (after `ok` and `schema_version`).
pub fn analyze_body(mode: &str, g: &mut Gen) -> Value {
    if mode == "compare" {
        return json!({"mode": {"const": "compare"}, "comparison": g.of::<compare::Comparison>()});
    }
    let rules = g.of::<Option<Vec<snapscope::semantics::rules::RuleInfo>>>();
    json!({"mode": {"const": mode}, "devices": {"type": "array", "items": mode_item(mode, g)}, "rules": rules})
}

/// A cell of a column with this unit.
fn cell(unit: Option<&str>) -> Value {
    match unit {
        Some("bytes" | "event" | "address" | "count") => json!({"type": ["integer", "null"]}),
        Some("percent" | "GiB") => json!({"type": ["number", "null"]}),
        _ => json!({"type": ["integer", "number", "string", "null"]}),
    }
}

/// Rows as objects keyed by `columns` (or as arrays in column order).
fn rows(columns: Option<&[catalogue::Column]>) -> Value {
    let object = match columns {
        Some(cols) => {
            let props: serde_json::Map<String, Value> = cols.iter().map(|c| (c.name.to_string(), cell(c.unit))).collect();
            json!({"type": "object", "properties": props})
        }
        None => json!({"type": "object"}),
    };
    json!({"type": "array", "items": {"anyOf": [object, {"type": "array"}]}})
}

/// The body of a template's answer (`query -t NAME --json`).
pub fn template_body(t: Option<&catalogue::Template>, g: &mut Gen) -> Value {
    let result = g.of::<templates::TemplateResult>();
    let mut body = json!({"rows": rows(t.map(|t| t.columns.as_slice()))});
    body["_result"] = result;
    body
}

/// The body of `sql --json`.
pub fn sql_body(g: &mut Gen) -> Value {
    let mut body = json!({"rows": rows(None)});
    body["_result"] = g.of::<sql::Rows>();
    body
}

/// A whole answer schema: the envelope, the body's properties, and `extra` (what the MCP server
/// adds). A body's `_result` is a derived schema whose properties are merged through `allOf`.
pub fn answer(body: Value, extra: Value, g: Gen) -> Value {
    let mut props = json!({"ok": {"type": "boolean"}, "schema_version": {"type": "integer"}});
    let mut all_of = Vec::new();
    if let Value::Object(b) = body {
        for (k, v) in b {
            if k == "_result" {
                all_of.push(v);
            } else {
                props[k] = v;
            }
        }
    }
    if let Value::Object(e) = extra {
        for (k, v) in e {
            props[k] = v;
        }
    }
    let mut s = json!({"type": "object", "properties": props, "required": ["ok", "schema_version"]});
    if !all_of.is_empty() {
        s["allOf"] = Value::Array(all_of);
    }
    g.root(s)
}

/// Each analysis mode's and each template's answer schema (`capabilities --json`).
pub fn capabilities() -> Value {
    let mut modes = serde_json::Map::new();
    for m in snapscope::engine::ANALYSES {
        let mut g = Gen::default();
        let body = analyze_body(m, &mut g);
        modes.insert(m.to_string(), answer(body, json!({}), g));
    }
    let mut tpl = serde_json::Map::new();
    for t in snapscope::engine::Engine::catalogue() {
        let mut g = Gen::default();
        let body = template_body(Some(&t), &mut g);
        tpl.insert(t.name.to_string(), answer(body, json!({}), g));
    }
    json!({"analyses": modes, "templates": tpl, "commands": {"diff": diff_answer()}})
}

/// `diff --json`: two files (`files`), step by step (`steps`) or two moments of one (`moments`).
pub fn diff_answer() -> Value {
    use snapscope::analysis::{compare_steps, diff};
    let mut g = Gen::default();
    let path = json!({"type": "string"});
    let bodies = [
        json!({"mode": {"const": "files"}, "a": path, "b": path, "comparison": g.of::<compare::Comparison>()}),
        json!({"mode": {"const": "steps"}, "a": path, "b": path, "devices": g.of::<Vec<compare_steps::DeviceSteps>>()}),
        json!({"mode": {"const": "moments"}, "file": path, "devices": g.of::<Vec<diff::MomentsDiff>>()}),
    ];
    let one_of: Vec<Value> = bodies.into_iter().map(|b| json!({"type": "object", "properties": b, "required": ["mode"]})).collect();
    let mut s = json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "schema_version": {"type": "integer"}}, "required": ["ok", "schema_version"], "allOf": [{"anyOf": one_of}]});
    s = g.root(s);
    s
}
