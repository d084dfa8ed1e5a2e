//! Which files the server may read: under the client's roots (when it declares them), else under
//! the working directory; and under every `--allow` path in both cases.

use snapscope::codes::ErrorCode;
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(Clone)]
pub struct Access {
    /// The working directory and `--allow` paths, canonical.
    cwd: PathBuf,
    allow: Vec<PathBuf>,
}

impl Access {
    pub fn new(allow: &[PathBuf]) -> Result<Access> {
        let cwd = std::env::current_dir().and_then(|d| d.canonicalize()).map_err(|e| Error::io("the working directory", e))?;
        let allow =
            allow.iter().map(|p| p.canonicalize().map_err(|e| Error::io(&p.display().to_string(), e))).collect::<Result<Vec<_>>>()?;
        Ok(Access { cwd, allow })
    }

    /// The readable folders: the client's roots (None: it declares none) or the working
    /// directory, and the `--allow` paths.
    pub fn bases(&self, roots: Option<&[PathBuf]>) -> Vec<PathBuf> {
        let mut v = match roots {
            Some(r) => r.to_vec(),
            None => vec![self.cwd.clone()],
        };
        v.extend(self.allow.iter().cloned());
        v
    }

    /// `path` made absolute (relative to the working directory) and canonical, if it lies under
    /// one of `bases`.
    pub fn check(&self, path: &str, bases: &[PathBuf]) -> Result<PathBuf> {
        let p = Path::new(path);
        let abs = if p.is_absolute() { p.to_path_buf() } else { self.cwd.join(p) };
        let canon = abs.canonicalize().map_err(|e| {
            Error::new(
                ErrorCode::FileNotFound,
                format!("{path}: {e}"),
                "pass the path of a snapshot (.pickle, .pickle.gz, .json) or SnapshotDB (.db) that exists",
            )
        })?;
        if bases.iter().any(|b| canon.starts_with(b)) {
            return Ok(canon);
        }
        let shown: Vec<String> = bases.iter().map(|b| b.display().to_string()).collect();
        Err(Error::new(
            ErrorCode::PathNotAllowed,
            format!("{path} is outside the folders this server may read ({})", shown.join(", ")),
            "add the folder to the client's roots, or start the server with `snapscope mcp --allow FOLDER`",
        ))
    }
}

/// A `file://` root URI as a canonical path (None for other schemes or missing folders).
pub fn root_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    PathBuf::from(percent_decode(rest)).canonicalize().ok()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
