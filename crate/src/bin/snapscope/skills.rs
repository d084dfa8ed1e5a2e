//! `snapscope skill`: concise agent playbooks, installed where agents look for skills.

use crate::emit::Out;
use snapscope::codes::ErrorCode;
use snapscope::engine::{dirs_within, write_atomic};
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};

pub const SKILLS: [(&str, &str); 5] = [
    ("snapscope-preflight", include_str!("../../../skills/snapscope-preflight.md")),
    ("snapscope-peak", include_str!("../../../skills/snapscope-peak.md")),
    ("snapscope-leak", include_str!("../../../skills/snapscope-leak.md")),
    ("snapscope-fragmentation", include_str!("../../../skills/snapscope-fragmentation.md")),
    ("snapscope-oom", include_str!("../../../skills/snapscope-oom.md")),
];

/// The usual skill folders: (host, folder relative to the scope root).
const HOSTS: [(&str, &str); 3] = [("claude", ".claude/skills"), ("codex", ".codex/skills"), ("agents", ".agents/skills")];

fn description(text: &str) -> &str {
    text.lines().find_map(|l| l.strip_prefix("description: ")).unwrap_or("")
}

fn root(scope: &str) -> Result<PathBuf> {
    match scope {
        "project" => Ok(PathBuf::from(".")),
        "user" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| Error::new(ErrorCode::SkillError, "HOME is not set", "use --scope project")),
        _ => Err(Error::new(ErrorCode::InvalidParameter, format!("unknown scope {scope:?}"), "--scope project|user")),
    }
}

pub fn list(scope: &str, out: Out) -> Result<()> {
    let base = root(scope)?;
    let skills: Vec<_> = SKILLS
        .iter()
        .map(|(name, text)| {
            let locations: Vec<_> = HOSTS
                .iter()
                .map(|(host, dir)| {
                    let path = base.join(dir).join(name).join("SKILL.md");
                    let status = match std::fs::read_to_string(&path) {
                        Ok(t) if t == *text => "installed",
                        Ok(_) => "outdated",
                        Err(_) => "missing",
                    };
                    serde_json::json!({"host": host, "scope": scope, "path": path, "status": status})
                })
                .collect();
            serde_json::json!({"name": name, "description": description(text), "locations": locations})
        })
        .collect();
    out.answer(serde_json::json!({ "skills": skills }), |_| {
        for s in &skills {
            say!("{}: {}", s["name"].as_str().unwrap_or(""), s["description"].as_str().unwrap_or(""));
            for l in s["locations"].as_array().into_iter().flatten() {
                say!(
                    "    {:<8} {:<10} {}",
                    l["host"].as_str().unwrap_or(""),
                    l["status"].as_str().unwrap_or(""),
                    l["path"].as_str().unwrap_or("")
                );
            }
        }
    });
    Ok(())
}

pub fn install(scope: &str, host: &str, out: Out) -> Result<()> {
    let base = root(scope)?;
    let mut written = Vec::new();
    for (h, dir) in HOSTS.iter().filter(|(h, _)| host == "all" || *h == host) {
        for (name, text) in SKILLS {
            // Folder by folder, never through a planted `.claude` (or deeper) link.
            let path = dirs_within(&base, &Path::new(dir).join(name))?.join("SKILL.md");
            write_atomic(&path, text.as_bytes())?;
            written.push(serde_json::json!({"host": h, "name": name, "path": path}));
        }
    }
    if written.is_empty() {
        return Err(Error::new(ErrorCode::InvalidParameter, format!("unknown host {host:?}"), "--host claude|codex|agents|all"));
    }
    out.answer(serde_json::json!({ "installed": written }), |_| {
        for w in &written {
            say!("installed {}", w["path"].as_str().unwrap_or(""));
        }
    });
    Ok(())
}
