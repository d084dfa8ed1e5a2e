//! Resources: each kept snapshot's overview (JSON) and report (HTML), and templates to open
//! any readable file's.

use super::access::Access;
use super::cache;
use serde_json::{json, Value};
use snapscope::codes::ErrorCode;
use snapscope::{Error, Result};
use std::path::PathBuf;

const OVERVIEW: &str = "snapscope://overview";
const REPORT: &str = "snapscope://report";

pub fn list() -> Vec<Value> {
    let mut v = Vec::new();
    for f in cache::list() {
        let name = f.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let p = f.path.display();
        v.push(json!({"uri": format!("{OVERVIEW}{p}"), "name": format!("{name} overview"), "description": "Per-device figures, peaks and replay consistency (the `overview` tool's answer).", "mimeType": "application/json"}));
        v.push(json!({"uri": format!("{REPORT}{p}"), "name": format!("{name} report"), "description": "The self-contained HTML report (every analysis, no scripts).", "mimeType": "text/html"}));
    }
    v
}

pub fn templates() -> Vec<Value> {
    vec![
        json!({"uriTemplate": format!("{OVERVIEW}{{+path}}"), "name": "overview", "description": "A snapshot's overview as JSON; path is absolute, e.g. snapscope://overview/data/run/snapshot.pickle", "mimeType": "application/json"}),
        json!({"uriTemplate": format!("{REPORT}{{+path}}"), "name": "report", "description": "A snapshot's self-contained HTML report; path is absolute.", "mimeType": "text/html"}),
    ]
}

pub fn read(uri: &str, access: &Access, bases: &[PathBuf]) -> Result<Value> {
    let unknown = || Error::new(ErrorCode::ResourceNotFound, format!("no resource {uri}"), "list them with resources/list");
    let (kind, path) = if let Some(p) = uri.strip_prefix(OVERVIEW) {
        ("overview", p)
    } else if let Some(p) = uri.strip_prefix(REPORT) {
        ("report", p)
    } else {
        return Err(unknown());
    };
    if !path.starts_with('/') {
        return Err(unknown());
    }
    let path = access.check(path, bases)?;
    let p = path.display().to_string();
    let (text, mime) = if kind == "overview" {
        let c = crate::run_captured(&["overview".to_string(), p], false)?;
        cache::release_held();
        (serde_json::to_string_pretty(&c.json.unwrap_or_default()).expect("serializable"), "application/json")
    } else {
        let (_, engine) = cache::get(&path)?;
        let title = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let html = engine.blocking_lock().report(&title)?;
        (html, "text/html")
    };
    Ok(json!({"contents": [{"uri": uri, "mimeType": mime, "text": text}]}))
}
