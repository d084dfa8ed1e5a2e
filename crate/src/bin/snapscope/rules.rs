//! `--categories RULES.toml`: the category rules every command that opens a snapshot uses.

use snapscope::engine::Engine;
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static RULES: OnceLock<Option<PathBuf>> = OnceLock::new();

pub fn set(path: Option<PathBuf>) {
    let _ = RULES.set(path);
}

/// `Engine::open` under the user's category rules, if any were given.
pub fn open(path: &Path) -> Result<Engine> {
    let mut engine = Engine::open(path)?;
    if let Some(Some(rules)) = RULES.get() {
        let text = std::fs::read_to_string(rules).map_err(|e| Error::io(&rules.display().to_string(), e))?;
        engine.set_category_rules(Some(&text))?;
    }
    Ok(engine)
}
