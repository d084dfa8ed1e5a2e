//! One error type for every stage: a stable code for scripts, a message that says what and
//! where (byte offset or event index), and a hint that says what to do.

use crate::codes::ErrorCode;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error { code, message: message.into(), hint: hint.into() }
    }

    /// A malformed or hostile pickle, located by byte offset.
    pub fn pickle(offset: usize, message: impl fmt::Display) -> Self {
        Error::new(
            ErrorCode::PickleInvalid,
            format!("byte {offset}: {message}"),
            "the file is not a readable snapshot pickle; re-dump it with torch.cuda.memory._dump_snapshot() or check that the download is complete",
        )
    }

    /// Well-formed data that is not shaped like a memory snapshot.
    pub fn snapshot(message: impl Into<String>) -> Self {
        Error::new(
            ErrorCode::SnapshotInvalid,
            message,
            "expected the output of torch.cuda.memory._dump_snapshot() (a dict with 'segments' and 'device_traces') or torch.cuda.memory_snapshot()",
        )
    }

    pub fn io(path: &str, e: impl fmt::Display) -> Self {
        Error::new(ErrorCode::IoError, format!("{path}: {e}"), "check the path and its permissions")
    }

    pub fn no_device(device: i64) -> Self {
        Error::new(ErrorCode::DeviceNotFound, format!("device {device} is not in this snapshot"), "see `overview` for the devices it has")
    }

    /// A category rules file that cannot be used.
    pub fn rules(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::RulesInvalid, message, "fix the rules file (docs/categories.md shows the format and the default rules)")
    }

    pub fn sql(e: impl fmt::Display) -> Self {
        Error::new(ErrorCode::QueryFailed, e.to_string(), "check the SQL against docs/schema.md")
    }

    /// A database error while writing `path`: a full disk or a refusal is an IO error on it.
    pub fn write(path: &str, e: rusqlite::Error) -> Self {
        Error::from(e).writing(std::path::Path::new(path))
    }

    /// This error happened writing `path`: an IO error names it.
    pub fn writing(mut self, path: &std::path::Path) -> Self {
        let shown = path.display().to_string();
        if self.code == ErrorCode::IoError && !self.message.starts_with(&shown) {
            self.message = format!("{shown}: {}", self.message);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}
