//! `--categories RULES.toml`: the category rules every command that opens a snapshot uses.

use snapscope::engine::Engine;
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static RULES: OnceLock<Option<PathBuf>> = OnceLock::new();

pub fn set(path: Option<PathBuf>) {
    let _ = RULES.set(path);
}

/// A rules file, read up to the `rules_bytes` budget (a name like `/dev/zero` once read until
/// memory ran out).
fn read_rules(path: &Path) -> Result<String> {
    use snapscope::budget::RULES_BYTES;
    use std::io::Read;
    let shown = path.display().to_string();
    let limit = RULES_BYTES.limit();
    let file = std::fs::File::open(path).map_err(|e| Error::io(&shown, e))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(&shown, e))?;
    if bytes.len() as u64 > limit {
        return Err(RULES_BYTES.exceeded(limit, format_args!("the rules file {shown} is larger")));
    }
    String::from_utf8(bytes).map_err(|_| Error::rules(format!("{shown} is not UTF-8 text")))
}

/// `Engine::open` under the user's category rules, if any were given.
pub fn open(path: &Path) -> Result<Engine> {
    let mut engine = Engine::open(path)?;
    if let Some(Some(rules)) = RULES.get() {
        engine.set_category_rules(Some(&read_rules(rules)?))?;
    }
    Ok(engine)
}
