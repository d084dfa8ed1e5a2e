//! Prompts: the snapscope skills (`crate/skills/*.md`), each with an optional snapshot path.

use crate::skills::SKILLS;
use serde_json::{json, Value};

fn description(text: &str) -> &str {
    text.lines().find_map(|l| l.strip_prefix("description: ")).unwrap_or("")
}

pub fn list() -> Vec<Value> {
    SKILLS
        .iter()
        .map(|(name, text)| {
            json!({
                "name": name,
                "description": description(text),
                "arguments": [{"name": "snapshot", "description": "The snapshot to work on (a path).", "required": false}],
            })
        })
        .collect()
}

pub fn get(name: &str, snapshot: Option<&str>) -> Option<Value> {
    let (_, text) = SKILLS.iter().find(|(n, _)| *n == name)?;
    let mut body = text.to_string();
    if let Some(s) = snapshot {
        body.push_str(&format!("\n\nThe snapshot to work on: {s}\n"));
    }
    Some(json!({"description": description(text), "messages": [{"role": "user", "content": {"type": "text", "text": body}}]}))
}
