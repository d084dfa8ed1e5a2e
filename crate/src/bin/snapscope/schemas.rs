//! The answers' JSON Schemas, derived with schemars from the Rust answer types (the shapes the
//! commands build around them are written out here): one per analysis mode and template
//! (`capabilities --json`), and one per MCP tool (its outputSchema). Row answers are the one
//! hand-checked part: their rows are serialized by hand (objects keyed by the columns).

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Value};
use snapscope::analysis::{categories, compare, findings, fragment, leak, oom, overview, peak, steps, streams, tree, DeviceAnalysis};
use snapscope::engine::Mode;
use snapscope::query::{catalogue, sql, templates};

/// A generator collecting the definitions the schemas refer to (`#/$defs/...`). Schemas of what
/// the engine writes (the serialize contract: a field is required unless it may be skipped).
pub struct Gen(SchemaGenerator);

impl Default for Gen {
    fn default() -> Gen {
        Gen(schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator())
    }
}

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

/// A mode's part for one device (the page's `analyze(mode, device, at)`): the compiler asks for
/// each new mode here.
fn part(mode: Mode, g: &mut Gen) -> Value {
    match mode {
        Mode::Overview => obj(
            json!({"overview": g.of::<overview::DeviceOverview>(), "findings": g.of::<Vec<findings::Finding>>()}),
            &["overview", "findings"],
        ),
        Mode::Peak => g.of::<Option<peak::PeakAnalysis>>(),
        Mode::Fragment => g.of::<fragment::Fragmentation>(),
        Mode::Leak => g.of::<Option<leak::LeakAnalysis>>(),
        Mode::Oom => g.of::<oom::OomAnalysis>(),
        Mode::Tree => g.of::<tree::MemoryTree>(),
        Mode::Compare => g.of::<compare::Comparison>(),
        Mode::Categories => g.of::<categories::CategoryBreakdown>(),
        Mode::Steps => g.of::<steps::StepsAnalysis>(),
        Mode::Streams => g.of::<streams::StreamAnalysis>(),
        Mode::Tune => g.of::<snapscope::simulate::tune::Tuning>(),
        Mode::All => g.of::<DeviceAnalysis>(),
    }
}

/// One device's entry in `analyze --mode MODE`'s `devices`: `{device, <mode>: part}`; the
/// overview's part is spread into the entry, and `all`'s part is the entry.
pub fn mode_item(mode: &str, g: &mut Gen) -> Value {
    let Ok(mode) = Mode::parse(mode) else { return g.of::<DeviceAnalysis>() };
    let p = part(mode, g);
    match mode {
        Mode::All => p,
        Mode::Overview => {
            let mut entry = p;
            entry["properties"]["device"] = json!({"type": "integer"});
            entry["required"] = json!(["device", "overview", "findings"]);
            entry
        }
        m => obj(json!({"device": {"type": "integer"}, m.name(): p}), &["device", m.name()]),
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

/// The three forms of `diff --json`'s body, one object schema each.
pub fn diff_forms(g: &mut Gen) -> Vec<Value> {
    use snapscope::analysis::{compare_steps, diff};
    let path = json!({"type": "string"});
    let bodies = [
        json!({"mode": {"const": "files"}, "a": path, "b": path, "comparison": g.of::<compare::Comparison>()}),
        json!({"mode": {"const": "steps"}, "a": path, "b": path, "devices": g.of::<Vec<compare_steps::DeviceSteps>>()}),
        json!({"mode": {"const": "moments"}, "file": path, "devices": g.of::<Vec<diff::MomentsDiff>>()}),
    ];
    bodies.into_iter().map(|b| json!({"type": "object", "properties": b, "required": ["mode"]})).collect()
}

/// `diff --json`: two files (`files`), step by step (`steps`) or two moments of one (`moments`).
pub fn diff_answer() -> Value {
    let mut g = Gen::default();
    let one_of = diff_forms(&mut g);
    let mut s = json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "schema_version": {"type": "integer"}}, "required": ["ok", "schema_version"], "allOf": [{"anyOf": one_of}]});
    s = g.root(s);
    s
}

/// The page's engine protocol as TypeScript (`capabilities --typescript`): every answer type, a
/// map from each wasm `Engine` method to its answer, and from each analysis mode to its part.
pub fn typescript() -> String {
    use snapscope::analysis::{category_series, event, held_gradients, timeline};
    use snapscope::engine::{LoadStats, SimulationLines};
    use snapscope::semantics::rules::RuleInfo;
    let mut g = Gen::default();
    let envelope = |body: Value| json!({"allOf": [{"type": "object", "properties": {"ok": {"type": "boolean"}, "schema_version": {"type": "integer"}}, "required": ["ok", "schema_version"]}, body]});
    let with_rows = |body: Value| json!({"allOf": [body, {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "array"}}}, "required": ["rows"]}]});
    let methods = vec![
        ("overview", envelope(g.of::<overview::Overview>())),
        ("timeline", g.of::<timeline::Timeline>()),
        ("bands", g.of::<snapscope::analysis::bands::Bands>()),
        ("state", g.of::<snapscope::analysis::state::AllocatorState>()),
        ("categorySeries", g.of::<category_series::CategorySeries>()),
        ("categoryRules", g.of::<Vec<RuleInfo>>()),
        ("setCategoryRules", g.of::<Vec<RuleInfo>>()),
        ("simulate", g.of::<SimulationLines>()),
        ("tuneCandidates", g.of::<Vec<String>>()),
        ("rankTune", g.of::<snapscope::simulate::tune::Tuning>()),
        ("rankSummary", g.of::<snapscope::ranks::FileSummary>()),
        ("event", g.of::<event::EventDetail>()),
        ("timelineMarkers", g.of::<snapscope::analysis::markers::TimelineMarkers>()),
        ("stackText", g.of::<Option<snapscope::analysis::markers::StackText>>()),
        ("sql", envelope(with_rows(g.of::<sql::Rows>()))),
        ("compareSide", g.of::<compare::Side>()),
        ("compareWith", g.of::<compare::Comparison>()),
        ("diffMoments", g.of::<snapscope::analysis::diff::MomentsDiff>()),
        ("leakView", g.of::<snapscope::engine::LeakView>()),
        ("oomView", g.of::<snapscope::engine::OomView>()),
        ("stepSides", g.of::<Vec<snapscope::analysis::compare_steps::StepSide>>()),
        ("diffSteps", g.of::<snapscope::analysis::compare_steps::DeviceSteps>()),
        ("report", json!({"type": "string"})),
        ("catalogue", g.of::<Vec<catalogue::Template>>()),
        ("schema", g.of::<Vec<snapscope::store::tables::TableDoc>>()),
        ("query", envelope(with_rows(g.of::<templates::TemplateResult>()))),
        ("stats", g.of::<LoadStats>()),
        ("combineRanks", g.of::<snapscope::ranks::RanksReport>()),
    ];
    let modes: Vec<(&str, Value)> = Mode::ALL.into_iter().filter(|m| *m != Mode::Compare).map(|m| (m.name(), part(m, &mut g))).collect();
    g.of::<snapscope::engine::At>();
    g.of::<held_gradients::HeldGradients>();
    let table = |rows: Vec<(&str, Value)>| {
        let props: serde_json::Map<String, Value> = rows.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let names: Vec<String> = props.keys().cloned().collect();
        json!({"type": "object", "properties": props, "required": names})
    };
    let engine_answers = table(methods);
    let mode_answers = table(modes);
    let defs = g.0.take_definitions(true);
    let mut out = String::from(
        "// Generated by `snapscope capabilities --typescript` from the engine's Rust answer types\n\
         // (scripts/gen_types.sh): do not edit. The same JSON Schemas are in `capabilities --json`.\n\n",
    );
    out.push_str(&crate::typescript::declarations(
        &defs,
        &[
            ("EngineAnswers", with_doc(engine_answers, "What each method of the wasm `Engine` answers (JSON text, parsed).")),
            ("ModeAnswers", with_doc(mode_answers, "What `analyze(mode, device, at)` answers for each mode.")),
        ],
    ));
    out
}

fn with_doc(mut schema: Value, doc: &str) -> Value {
    schema["description"] = Value::String(doc.into());
    schema
}
