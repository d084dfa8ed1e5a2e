//! `--categories RULES.toml`: the category rules every command that opens a snapshot uses, and
//! the one place commands open their input (so the MCP server can hand them a kept engine).

use snapscope::engine::Engine;
use snapscope::{Error, Result};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static RULES: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Another way to open an input (the MCP server's cache and path check): None = open as usual.
pub type Opener = fn(&Path) -> Option<Result<Opened>>;
static OPENER: OnceLock<Opener> = OnceLock::new();

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

pub fn set_opener(f: Opener) {
    let _ = OPENER.set(f);
}

/// An opened input: the command's own engine, or one the MCP server keeps between calls (held
/// for this command alone while it runs).
pub enum Opened {
    Own(Box<Engine>),
    Kept(tokio::sync::OwnedMutexGuard<Engine>),
}

impl Deref for Opened {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        match self {
            Opened::Own(e) => e,
            Opened::Kept(g) => g,
        }
    }
}

impl DerefMut for Opened {
    fn deref_mut(&mut self) -> &mut Engine {
        match self {
            Opened::Own(e) => e,
            Opened::Kept(g) => g,
        }
    }
}

/// `Engine::open` under the user's category rules, if any were given.
pub fn open(path: &Path) -> Result<Opened> {
    if let Some(r) = OPENER.get().and_then(|f| f(path)) {
        return r;
    }
    open_engine(path, false).map(|e| Opened::Own(Box::new(e)))
}

/// A new engine on `path` (with the SHA-256 of a snapshot's bytes when `hashed`).
pub fn open_engine(path: &Path, hashed: bool) -> Result<Engine> {
    let mut engine = if hashed { Engine::open_hashed(path)? } else { Engine::open(path)? };
    if let Some(Some(rules)) = RULES.get() {
        engine.set_category_rules(Some(&read_rules(rules)?))?;
    }
    Ok(engine)
}
