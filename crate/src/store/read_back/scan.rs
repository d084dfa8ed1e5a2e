//! One SELECT stepped through SQLite's C API, each column read where SQLite holds it. The
//! read-back is hundreds of thousands of rows of a dozen columns: rusqlite's `Row::get` asks a
//! column's type and then its value (two locked calls, about 170 instructions); one
//! `sqlite3_column_value` and reads of the value cost about 70 (callgrind, 66k-event .db).

use rusqlite::ffi;
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::ffi::c_int;

/// A prepared statement over `conn`, finalized when dropped.
pub struct Scan<'c> {
    stmt: *mut ffi::sqlite3_stmt,
    /// Its result columns: an index past them reads NULL, never memory outside the row.
    columns: usize,
    conn: &'c Connection,
}

impl<'c> Scan<'c> {
    pub fn new(conn: &'c Connection, sql: &str) -> rusqlite::Result<Scan<'c>> {
        let mut stmt = std::ptr::null_mut();
        let len = c_int::try_from(sql.len()).map_err(|_| rusqlite::Error::SqlInputError {
            error: ffi::Error::new(ffi::SQLITE_TOOBIG),
            msg: "statement too long".into(),
            sql: String::new(),
            offset: 0,
        })?;
        // SAFETY: the handle is the open connection's (borrowed for 'c); the text is `len`
        // bytes; SQLite writes the statement (or null) into `stmt`.
        let rc = unsafe { ffi::sqlite3_prepare_v2(conn.handle(), sql.as_ptr().cast(), len, &mut stmt, std::ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(failure(conn, rc));
        }
        if stmt.is_null() {
            return Err(rusqlite::Error::InvalidQuery);
        }
        // SAFETY: `stmt` is the statement just prepared.
        let columns = unsafe { ffi::sqlite3_column_count(stmt) } as usize;
        Ok(Scan { stmt, columns, conn })
    }

    /// The next row (false after the last).
    pub fn step(&mut self) -> rusqlite::Result<bool> {
        // SAFETY: `stmt` lives until drop; `&mut self` ends every borrow of the previous row.
        match unsafe { ffi::sqlite3_step(self.stmt) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => Err(failure(self.conn, rc)),
        }
    }

    /// Column `i` of the current row, valid until the next `step`.
    pub fn value(&self, i: usize) -> ValueRef<'_> {
        if i >= self.columns {
            return ValueRef::Null;
        }
        // SAFETY: `i` is one of the statement's columns and a row is current (`step` returned
        // true: callers read only then); the value and the bytes it points to stay SQLite's
        // until the next step, which needs `&mut self` and so outlives no borrow of them. The
        // value is unprotected (no mutex): the connection is used by this thread alone.
        unsafe {
            let v = ffi::sqlite3_column_value(self.stmt, i as c_int);
            match ffi::sqlite3_value_type(v) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(v)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(v)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_value_text(v);
                    let n = ffi::sqlite3_value_bytes(v) as usize;
                    ValueRef::Text(if p.is_null() { &[] } else { std::slice::from_raw_parts(p, n) })
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_value_blob(v) as *const u8;
                    let n = ffi::sqlite3_value_bytes(v) as usize;
                    ValueRef::Blob(if p.is_null() || n == 0 { &[] } else { std::slice::from_raw_parts(p, n) })
                }
                _ => ValueRef::Null,
            }
        }
    }
}

impl Drop for Scan<'_> {
    fn drop(&mut self) {
        // SAFETY: prepared in `new`, finalized once.
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

/// SQLite's error for `rc`, with the connection's message when it is about `rc`.
fn failure(conn: &Connection, rc: c_int) -> rusqlite::Error {
    // SAFETY: the connection is open; the message is copied before any other call on it.
    let msg = unsafe {
        let db = conn.handle();
        let p = if ffi::sqlite3_extended_errcode(db) == rc { ffi::sqlite3_errmsg(db) } else { ffi::sqlite3_errstr(rc) };
        (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), msg)
}
