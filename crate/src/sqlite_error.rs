//! How SQLite's failures read as snapscope errors. Apart from `error.rs` because one of them is a
//! budget's (a stopped statement over an input database), and budgets build their errors from
//! `Error`.

use crate::codes::ErrorCode;
use crate::error::Error;

impl From<rusqlite::Error> for Error {
    /// SQLite's IO failures (full disk, no permission, a read-only or unopenable file) are IO
    /// errors, never "check the SQL".
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::*;
        if let rusqlite::Error::SqliteFailure(f, _) = &e {
            match f.code {
                DiskFull => return Error::new(ErrorCode::IoError, e.to_string(), "free disk space and run it again"),
                // The user's SQL maps its own interruptions (QUERY_TIMEOUT); any other is the
                // statement limit on an input .db.
                OperationInterrupted => {
                    let b = &crate::budget::DB_STATEMENT_MS;
                    return b.exceeded(b.limit(), "a statement over the input database ran longer and was stopped");
                }
                CannotOpen | PermissionDenied | ReadOnly | SystemIoFailure => {
                    return Error::new(
                        ErrorCode::IoError,
                        e.to_string(),
                        "check the free disk space and the permissions of the file and its folder",
                    )
                }
                _ => {}
            }
        }
        Error::sql(e)
    }
}
