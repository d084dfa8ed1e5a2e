//! The whole texts behind cells shown cut (`long_texts`, `long_text_uses`): written once per
//! distinct text however many rows name it, and read back into the model's frames and
//! annotations, so a `.db` input holds the very names its snapshot held.

use super::tables::{LONG_TEXTS, LONG_TEXT_USES};
use crate::error::Result;
use crate::fasthash::FastMap;
use crate::model::LongText;
use crate::store::{cells, vtab};
use crate::Loaded;
use rusqlite::{params, Connection, Statement};
use std::sync::Arc;

/// Writes each distinct whole text once and a use row per cut cell.
pub struct Writer<'c> {
    texts: Statement<'c>,
    uses: Statement<'c>,
    /// By allocation: the model shares one per distinct pickled string, so a text of megabytes
    /// named by thousands of cells is hashed once, not per use.
    by_allocation: FastMap<usize, i64>,
    /// By content: two allocations of one text (two pickled strings, or plain strings of the
    /// model) are still one row.
    by_content: FastMap<Arc<str>, i64>,
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
        self.shared(table, row, column, whole.text())
    }

    /// Cell `table.column` of row `row` shows `whole` (a text the model shares) cut.
    pub fn shared(&mut self, table: &str, row: i64, column: &str, whole: &Arc<str>) -> Result<()> {
        // The map holds no reference: the model keeps every text alive (no address reused)
        // until the writer is done.
        let key = Arc::as_ptr(whole) as *const u8 as usize;
        let id = match self.by_allocation.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.id_of(whole)?;
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
            None => self.id_of(&Arc::from(whole))?,
        };
        self.uses.execute(params![table, row, column, id])?;
        Ok(())
    }

    /// The row of `text`, inserted when new.
    fn id_of(&mut self, text: &Arc<str>) -> Result<i64> {
        if let Some(&id) = self.by_content.get(text) {
            return Ok(id);
        }
        let id = self.by_content.len() as i64;
        self.texts.execute(params![id, &**text])?;
        self.by_content.insert(text.clone(), id);
        Ok(id)
    }
}

/// The `traces` cells that show an event's shared text cut, under the ids the table serves.
pub fn trace_uses(w: &mut Writer, l: &Loaded) -> Result<()> {
    // Only an event with extras can show a text cut: when no trace's extras hold one, no row
    // does, and the pass over every row (a sixth of the small tables' work at 650,000 events)
    // is not needed.
    if !l.snapshot.traces.iter().flat_map(|t| &t.extras).any(|x| cells::cut_texts(x).next().is_some()) {
        return Ok(());
    }
    vtab::each_row::<vtab::TraceRows, _>(l, |row| {
        for (column, whole) in row.cut_texts() {
            w.shared("traces", row.id, column, whole)?;
        }
        Ok(())
    })
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
