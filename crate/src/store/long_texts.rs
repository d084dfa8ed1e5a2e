//! The whole texts behind cells shown cut (`long_texts`, `long_text_uses`): written once per
//! distinct text however many rows name it, and read back into the model's frames and
//! annotations, so a `.db` input holds the very names its snapshot held.

use super::tables::{LONG_TEXTS, LONG_TEXT_USES};
use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::LongText;
use rusqlite::{params, Connection, Statement};
use std::sync::Arc;

/// Writes each distinct whole text once and a use row per cut cell.
pub struct Writer<'c> {
    texts: Statement<'c>,
    uses: Statement<'c>,
    /// By allocation: the model shares one per distinct text (no megabytes hashed per use).
    by_allocation: FastMap<usize, i64>,
    /// By content, for texts the model holds as plain strings (at most 4,096 bytes each).
    by_content: FastMap<String, i64>,
}

impl<'c> Writer<'c> {
    pub fn new(conn: &'c Connection) -> Result<Writer<'c>> {
        Ok(Writer {
            texts: conn.prepare(&LONG_TEXTS.insert_sql())?,
            uses: conn.prepare(&LONG_TEXT_USES.insert_sql())?,
            by_allocation: FastMap::default(),
            by_content: FastMap::default(),
        })
    }

    /// Cell `table.column` of row `row` shows `whole` cut.
    pub fn long(&mut self, table: &str, row: i64, column: &str, whole: &LongText) -> Result<()> {
        let key = Arc::as_ptr(whole.text()) as *const u8 as usize;
        let id = match self.by_allocation.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.insert(whole.text())?;
                self.by_allocation.insert(key, id);
                id
            }
        };
        self.uses.execute(params![table, row, column, id])?;
        Ok(())
    }

    /// Cell `table.column` of row `row` shows `whole` (a plain string of the model) cut.
    pub fn short(&mut self, table: &str, row: i64, column: &str, whole: &str) -> Result<()> {
        let id = match self.by_content.get(whole) {
            Some(&id) => id,
            None => {
                let id = self.insert(whole)?;
                self.by_content.insert(whole.to_string(), id);
                id
            }
        };
        self.uses.execute(params![table, row, column, id])?;
        Ok(())
    }

    fn insert(&mut self, text: &str) -> Result<i64> {
        let id = (self.by_allocation.len() + self.by_content.len()) as i64;
        self.texts.execute(params![id, text])?;
        Ok(id)
    }
}

/// The whole texts of a .db by (table, row id, column), each distinct text one allocation
/// (empty for a .db written before these tables existed).
pub struct Read(FastMap<(String, i64, String), LongText>);

impl Read {
    pub fn get(&self, table: &str, row: i64, column: &str) -> Option<&LongText> {
        self.0.get(&(table.to_string(), row, column.to_string()))
    }
}

pub fn read(conn: &Connection) -> Result<Read> {
    let present: i64 = conn.query_row(include_str!("../../sql/read_back/long_texts_present.sql"), [], |r| r.get(0))?;
    let mut out = FastMap::default();
    if present < 2 {
        return Ok(Read(out));
    }
    let mut texts: FastMap<i64, LongText> = FastMap::default();
    let mut st = conn.prepare("SELECT id, text FROM long_texts")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let text: String = r.get(1)?;
        texts.insert(r.get(0)?, LongText::new(text.into()));
    }
    let mut st = conn.prepare("SELECT table_name, row_id, column_name, text_id FROM long_text_uses")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(3)?;
        let text = texts.get(&id).ok_or_else(|| {
            crate::error::Error::new(
                crate::codes::ErrorCode::DatabaseSchemaInvalid,
                format!("the SnapshotDB's long_text_uses names text {id}, which long_texts does not hold"),
                "re-import the snapshot with `snapscope import SNAPSHOT -o FILE.db`",
            )
        })?;
        out.insert((r.get(0)?, r.get(1)?, r.get(2)?), text.clone());
    }
    Ok(Read(out))
}
