//! TypeScript declarations from the answers' JSON Schemas (`capabilities --typescript`): the
//! page's protocol types and the npm package's `.d.ts` are generated from the Rust types through
//! the same schemas agents read, so there is one declaration of each answer.

use serde_json::{Map, Value};
use std::fmt::Write;

/// A TypeScript type expression for `schema`.
pub fn type_of(schema: &Value) -> String {
    let Value::Object(s) = schema else {
        // `true`: any JSON value.
        return "unknown".into();
    };
    if let Some(Value::String(r)) = s.get("$ref") {
        return r.rsplit('/').next().unwrap_or("unknown").to_string();
    }
    if let Some(c) = s.get("const") {
        return c.to_string();
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = s.get(key) {
            let base = without(s, &[key]);
            let alts = union(alts.iter().map(|a| paren(type_of(a))).collect());
            return if base.is_empty() { alts } else { format!("({alts}) & {}", paren(type_of(&Value::Object(base)))) };
        }
    }
    if let Some(Value::Array(parts)) = s.get("allOf") {
        let mut all: Vec<String> = parts.iter().map(|p| paren(type_of(p))).collect();
        let base = without(s, &["allOf"]);
        if !base.is_empty() {
            all.insert(0, paren(type_of(&Value::Object(base))));
        }
        return all.join(" & ");
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if s.contains_key("properties") => vec!["object"],
        _ => return "unknown".into(),
    };
    union(types.iter().map(|t| of_json_type(t, s)).collect())
}

fn of_json_type(t: &str, s: &Map<String, Value>) -> String {
    match t {
        "integer" | "number" => "number".into(),
        "string" => "string".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => {
            if let Some(Value::Array(items)) = s.get("prefixItems") {
                return format!("[{}]", items.iter().map(type_of).collect::<Vec<_>>().join(", "));
            }
            match s.get("items") {
                Some(items) => format!("{}[]", paren(type_of(items))),
                None => "unknown[]".into(),
            }
        }
        "object" => object(s, ""),
        _ => "unknown".into(),
    }
}

/// An object type; `indent` is the indentation of its closing brace.
fn object(s: &Map<String, Value>, indent: &str) -> String {
    let props = s.get("properties").and_then(Value::as_object);
    let extra = match s.get("additionalProperties") {
        Some(Value::Bool(false)) | None => None,
        Some(v) => Some(type_of(v)),
    };
    let Some(props) = props.filter(|p| !p.is_empty()) else {
        return format!("Record<string, {}>", extra.unwrap_or_else(|| "unknown".into()));
    };
    let required: Vec<&str> =
        s.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let mut out = String::from("{\n");
    for (name, p) in props {
        if let Some(doc) = p.get("description").and_then(Value::as_str) {
            writeln!(out, "{indent}  /** {} */", comment(doc)).unwrap();
        }
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        writeln!(out, "{indent}  {}{optional}: {};", key(name), type_of(p)).unwrap();
    }
    if let Some(e) = extra {
        writeln!(out, "{indent}  [key: string]: {e};").unwrap();
    }
    out.push_str(indent);
    out.push('}');
    out
}

fn without(s: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    let mut m = s.clone();
    for k in keys.iter().chain(&["description", "title", "$schema", "$defs", "default", "examples"]) {
        m.remove(*k);
    }
    m
}

fn union(mut alts: Vec<String>) -> String {
    alts.dedup();
    if alts.is_empty() {
        "never".into()
    } else {
        alts.join(" | ")
    }
}

fn paren(t: String) -> String {
    if t.contains(" | ") || t.contains(" & ") {
        format!("({t})")
    } else {
        t
    }
}

fn key(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit()) {
        name.to_string()
    } else {
        serde_json::to_string(name).expect("a string")
    }
}

fn comment(doc: &str) -> String {
    doc.replace("*/", "*\\/").replace('\n', " ")
}

/// `export` declarations for every definition (sorted by name), then `extra` named types.
pub fn declarations(defs: &Map<String, Value>, extra: &[(&str, Value)]) -> String {
    let mut out = String::new();
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    let named = names.into_iter().map(|n| (n.as_str(), &defs[n])).chain(extra.iter().map(|(n, v)| (*n, v)));
    for (name, schema) in named {
        if let Some(doc) = schema.get("description").and_then(Value::as_str) {
            writeln!(out, "/** {} */", comment(doc)).unwrap();
        }
        let is_object = schema.get("type") == Some(&Value::String("object".into())) && schema.get("properties").is_some();
        if is_object && !["anyOf", "oneOf", "allOf"].iter().any(|k| schema.get(*k).is_some()) {
            writeln!(out, "export interface {name} {}\n", object(schema.as_object().expect("an object"), "")).unwrap();
        } else {
            writeln!(out, "export type {name} = {};\n", type_of(schema)).unwrap();
        }
    }
    out
}
