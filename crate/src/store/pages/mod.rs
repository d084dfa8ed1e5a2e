//! The large tables of a `.db` file (`traces`, `lifetimes`) and their indexes, and the rows of
//! every stack's frames (`stack_frames`), written as SQLite pages, not inserted by SQLite. Copied
//! row by row (`INSERT … SELECT` from the virtual tables), SQLite spent most of an import
//! building records through its VM, walking each B-tree from the root per row and sorting the
//! table again for each index (and rebalancing `stack_frames`' pages as its rows came in); the
//! rows are known in key order and every index's entries can be put in order here, so each page
//! is filled once.
//!
//! How a file is made (`store::write_file`): SQLite writes everything else, these tables and
//! their indexes created empty, each with the root page SQLite gave it in sqlite_schema (so the
//! schema's rows, their SQL text and order are SQLite's own). Once SQLite has closed the file,
//! [`write`] appends the pages of each B-tree after the file's last page and writes the top of
//! each tree into its root page, then sets the header's page count. Nothing else in the file
//! changes, and no page is left unused (`PRAGMA integrity_check` counts them).
//!
//! The rows are the virtual tables' rows (`vtab::each_row`, the same ids), each column's value
//! from its one cell function (`tables.rs`, `cells.rs`), stored as SQLite stores it
//! (`record.rs`); the indexes are whatever the SQL declared on the two tables (read back from
//! SQLite: `PRAGMA index_xinfo`), entries in SQLite's order. `btree.rs` writes the pages. The file
//! format: <https://www.sqlite.org/fileformat2.html>, sections cited where they apply.

mod btree;
pub mod read;
mod record;

use super::cells::{CellValue, Row};
use super::tables::STACK_FRAMES;
use super::vtab::{each_row, LifetimeRows, Rows, TraceRows};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::Loaded;
use btree::{IndexTree, PageOut, TableTree};
use record::{compare, record_len, Affinity, Record};
use rusqlite::Connection;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Where each large table's B-trees go: the root pages SQLite gave them.
pub struct Plan {
    traces: TablePlan,
    lifetimes: TablePlan,
    /// `stack_frames`, a WITHOUT ROWID table: one B-tree of its rows as index entries.
    stack_frames: u32,
}

struct TablePlan {
    root: u32,
    indexes: Vec<IndexPlan>,
}

struct IndexPlan {
    name: String,
    root: u32,
    /// The indexed columns, as positions in the table's declared columns.
    columns: Vec<usize>,
}

impl Plan {
    /// Read from `conn` (the build done, the large tables empty): each table's root page, and
    /// the root page and columns of every index on it. An index this writer cannot write
    /// (unique, partial, on an expression, descending or under another collation) is refused.
    pub fn read(conn: &Connection) -> Result<Plan> {
        let stack_frames = stack_frames_plan(conn)?;
        Ok(Plan { traces: table_plan::<TraceRows>(conn)?, lifetimes: table_plan::<LifetimeRows>(conn)?, stack_frames })
    }
}

/// The root page of `stack_frames`, checked to be the WITHOUT ROWID table of three integer
/// columns keyed by its first two that [`stack_frames`] writes, empty and without other indexes.
fn stack_frames_plan(conn: &Connection) -> Result<u32> {
    let table = STACK_FRAMES.name;
    let columns: Vec<(String, String, i64)> = conn
        .prepare("SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid")?
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let expected: Vec<(String, String, i64)> =
        STACK_FRAMES.columns.iter().zip([1, 2, 0]).map(|(c, pk)| (c.name.to_string(), "INTEGER".to_string(), pk)).collect();
    let (without_rowid, indexes, empty): (bool, i64, bool) =
        conn.query_row(include_str!("../../../sql/store/stack_frames_pages.sql"), [table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    if columns != expected || !without_rowid || indexes != 0 || !empty {
        return Err(internal(format!("{table} is not the empty WITHOUT ROWID table the page writer writes")));
    }
    Ok(conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = ?1", [table], |r| r.get(0))?)
}

/// Every stack's frames as `stack_frames` rows, (stack, position, frame) in key order: the
/// entries of the table's one B-tree (a WITHOUT ROWID table is stored as an index whose entries
/// are its rows, key columns first, §2.4 and §2.5).
fn stack_frames(out: &mut PageOut, l: &Loaded, root: u32, schema_format: u32) -> Result<()> {
    let mut tree = IndexTree::new(out);
    let (mut rec, mut entry) = (Record::new(schema_format), Vec::new());
    let failed = |e: std::io::Error| Error::io(STACK_FRAMES.name, e);
    for (stack, frames) in l.snapshot.interner.stacks.iter().enumerate() {
        for (position, &frame) in frames.iter().enumerate() {
            rec.clear();
            rec.int(stack as i64);
            rec.int(position as i64);
            rec.int(i64::from(frame));
            entry.clear();
            rec.write(&mut entry);
            tree.push(out, &entry).map_err(failed)?;
        }
    }
    tree.finish(out, root).map_err(failed)
}

fn internal(message: String) -> Error {
    Error::new(ErrorCode::Internal, message, "report it; `snapscope import` cannot write this SnapshotDB")
}

fn table_plan<R: Rows>(conn: &Connection) -> Result<TablePlan> {
    let table = R::TABLE.name;
    let root = |name: &str| conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = ?1", [name], |r| r.get::<_, u32>(0));
    let empty: bool = conn.query_row(&format!("SELECT NOT EXISTS (SELECT 1 FROM main.{table})"), [], |r| r.get(0))?;
    if !empty {
        return Err(internal(format!("{table} has rows before its pages are written")));
    }
    let mut indexes = Vec::new();
    let listed: Vec<(String, bool, bool)> = conn
        .prepare("SELECT name, \"unique\", partial FROM pragma_index_list(?1)")?
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (name, unique, partial) in listed {
        if unique || partial {
            return Err(internal(format!("index {name}: unique or partial indexes are not written as pages")));
        }
        let mut columns = Vec::new();
        let mut info = conn.prepare("SELECT cid, name, \"desc\", coll FROM pragma_index_xinfo(?1) WHERE key ORDER BY seqno")?;
        let keys = info.query_map([&name], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, bool>(2)?, r.get::<_, String>(3)?))
        })?;
        for key in keys {
            let (cid, column, desc, coll) = key?;
            let declared = usize::try_from(cid).ok().filter(|&c| R::TABLE.columns.get(c).map(|x| x.name) == column.as_deref());
            match declared {
                Some(c) if !desc && coll == "BINARY" => columns.push(c),
                _ => return Err(internal(format!("index {name}: only ascending BINARY columns are written as pages"))),
            }
        }
        indexes.push(IndexPlan { root: root(&name)?, name, columns });
    }
    Ok(TablePlan { root: root(table)?, indexes })
}

/// The fields of the database header (§1.2 "The Database Header") the writer reads and sets.
struct Header {
    bytes: [u8; 100],
    page_size: usize,
    reserved: usize,
    pages: u32,
    schema_format: u32,
}

impl Header {
    /// Read and check the header of a file SQLite has just written and closed: UTF-8 text
    /// (§1.2.13), no auto-vacuum (§1.2.12: no pointer-map pages to keep), its page count valid
    /// (§1.2.7) and matching the file's length.
    fn read(file: &mut File) -> std::io::Result<Header> {
        let mut bytes = [0u8; 100];
        file.seek(SeekFrom::Start(0))?;
        file.read_exact(&mut bytes)?;
        let be32 = |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let page_size = match u16::from_be_bytes([bytes[16], bytes[17]]) {
            1 => 65536,
            n => n as usize,
        };
        let h = Header { bytes, page_size, reserved: bytes[20] as usize, pages: be32(28), schema_format: be32(44) };
        let len = file.metadata()?.len();
        let fits = bytes.starts_with(b"SQLite format 3\0")
            && be32(56) == 1
            && be32(52) == 0
            && be32(24) == be32(92)
            && len == u64::from(h.pages) * page_size as u64;
        if !fits {
            return Err(std::io::Error::other("not a database file the page writer can append to"));
        }
        Ok(h)
    }

    /// Set the page count (offset 28) and count one more change (24), the count valid for it
    /// (92), and write the header back.
    fn write(mut self, file: &mut File, pages: u32) -> std::io::Result<()> {
        let changes = u32::from_be_bytes([self.bytes[24], self.bytes[25], self.bytes[26], self.bytes[27]]).wrapping_add(1);
        self.bytes[24..28].copy_from_slice(&changes.to_be_bytes());
        self.bytes[28..32].copy_from_slice(&pages.to_be_bytes());
        self.bytes[92..96].copy_from_slice(&changes.to_be_bytes());
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&self.bytes)
    }
}

/// Write the large tables' B-trees into the database at `path` (closed by SQLite), as `plan`
/// says, with the rows of `loaded`.
pub fn write(path: &Path, loaded: &Loaded, plan: &Plan) -> Result<()> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| Error::io(&shown, e);
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
    let header = Header::read(&mut file).map_err(io)?;
    let mut out = PageOut::new(file, header.page_size, header.reserved, header.pages).map_err(io)?;
    table::<TraceRows>(&mut out, loaded, &plan.traces, header.schema_format).map_err(|e| e.writing(path))?;
    table::<LifetimeRows>(&mut out, loaded, &plan.lifetimes, header.schema_format).map_err(|e| e.writing(path))?;
    stack_frames(&mut out, loaded, plan.stack_frames, header.schema_format).map_err(|e| e.writing(path))?;
    let (mut file, pages) = out.finish().map_err(io)?;
    header.write(&mut file, pages).map_err(io)
}

/// The sign bit of an `i64`, flipped in an index key so that integers order as unsigned ones.
const SIGN: u64 = 1 << 63;

/// Column `c`'s cell of `row`. The table's columns are a constant: matched on `c` (up to 32
/// columns), each arm calls its cell function directly, where the compiler can inline it; a call
/// through the column's function pointer per cell was most of the encoding's cost (the import's
/// page writing took 0.88x the instructions with direct calls).
#[inline(always)]
fn cell<'r, R: Rows>(c: usize, row: &Row<'r, R::Item>) -> CellValue<'r> {
    let columns = R::TABLE.columns;
    macro_rules! direct {
        ($($k:literal)*) => {
            match c {
                $($k if $k < columns.len() => (columns[$k].cell)(row),)*
                _ => (columns[c].cell)(row),
            }
        };
    }
    direct!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
}

/// How one table's records are made: each column's affinity, and the column that is the rowid.
struct Layout<R: Rows> {
    affinity: Vec<Affinity>,
    /// The `INTEGER PRIMARY KEY` column: its cell is the rowid, its record field NULL (§2.3).
    rowid_column: Option<usize>,
    table: std::marker::PhantomData<R>,
}

impl<R: Rows> Layout<R> {
    fn new() -> Result<Layout<R>> {
        let columns = R::TABLE.columns;
        let affinity = columns
            .iter()
            .map(|c| Affinity::of(c.ty).ok_or_else(|| internal(format!("column {} of type {}: not written as pages", c.name, c.ty))))
            .collect::<Result<_>>()?;
        let rowid_column = columns.iter().position(|c| c.ty.starts_with("INTEGER PRIMARY KEY"));
        Ok(Layout { affinity, rowid_column, table: std::marker::PhantomData })
    }

    /// The row's rowid: its rowid column's cell, else the row's id.
    #[inline]
    fn rowid(&self, row: &Row<'_, R::Item>) -> Result<i64> {
        match self.rowid_column.map(|c| cell::<R>(c, row)) {
            None => Ok(row.id),
            Some(CellValue::Int(id)) => Ok(id),
            Some(_) => Err(internal("a rowid that is not an integer".into())),
        }
    }

    /// Column `c`'s value into `rec`.
    #[inline(always)]
    fn value(&self, rec: &mut Record, c: usize, row: &Row<'_, R::Item>) -> Result<()> {
        let v = cell::<R>(c, row);
        rec.value(&v, self.affinity[c]).map_err(|e| internal(format!("column {}: {e}", R::TABLE.columns[c].name)))
    }

    /// The row's table record.
    fn record(&self, rec: &mut Record, row: &Row<'_, R::Item>) -> Result<()> {
        rec.clear();
        for c in 0..R::TABLE.columns.len() {
            if Some(c) == self.rowid_column {
                rec.null();
            } else {
                self.value(rec, c, row)?;
            }
        }
        Ok(())
    }

    /// The row's entry in an index on `columns` as integers that order as SQLite orders the
    /// entries (§2.2: NULL first, then integers by value): NULL as 0, an integer with its sign
    /// bit flipped, the rowid last, appended to `key`. False (and `key` unfinished) when a field
    /// is not an integer column holding an integer or NULL, or is the one integer that would
    /// read as NULL (i64::MIN).
    fn int_key(&self, key: &mut Vec<u64>, columns: &[usize], row: &Row<'_, R::Item>) -> Result<bool> {
        for &c in columns {
            let v = if Some(c) == self.rowid_column { CellValue::Int(self.rowid(row)?) } else { cell::<R>(c, row) };
            match v {
                CellValue::Null => key.push(0),
                CellValue::Int(i) if i != i64::MIN && self.affinity[c] == Affinity::Integer => key.push(i as u64 ^ SIGN),
                _ => return Ok(false),
            }
        }
        match self.rowid(row)? {
            i64::MIN => Ok(false),
            id => {
                key.push(id as u64 ^ SIGN);
                Ok(true)
            }
        }
    }

    /// The row's entry in an index on `columns`: their values, then the rowid (§2.5).
    fn entry(&self, rec: &mut Record, columns: &[usize], row: &Row<'_, R::Item>) -> Result<()> {
        rec.clear();
        for &c in columns {
            if Some(c) == self.rowid_column {
                rec.int(self.rowid(row)?);
            } else {
                self.value(rec, c, row)?;
            }
        }
        rec.int(self.rowid(row)?);
        Ok(())
    }
}

/// One table's rows, then each of its indexes.
fn table<R: Rows>(out: &mut PageOut, l: &Loaded, plan: &TablePlan, schema_format: u32) -> Result<()> {
    let layout = Layout::<R>::new()?;
    let mut tree = TableTree::new(out);
    let mut rec = Record::new(schema_format);
    let mut payload = Vec::new();
    each_row::<R, Error>(l, |row| {
        layout.record(&mut rec, row)?;
        payload.clear();
        rec.write(&mut payload);
        tree.push(out, layout.rowid(row)?, &payload).map_err(|e| internal(format!("{}: {e}", R::TABLE.name)))
    })?;
    tree.finish(out, plan.root).map_err(|e| Error::io(R::TABLE.name, e))?;
    for index in &plan.indexes {
        write_index::<R>(out, l, &layout, index, schema_format)?;
    }
    Ok(())
}

/// What a pass over the rows found about one index's entries.
struct Order {
    /// Every field an integer or NULL: see [`Layout::int_key`].
    integers: bool,
    key: Vec<u64>,
    /// Each field's least and greatest key (while `integers`): how many bits it needs.
    least: Vec<u64>,
    most: Vec<u64>,
}

impl Order {
    /// Take this row's key (in `key`) into each field's range of values other than NULL (0).
    fn widen(&mut self) {
        if self.least.is_empty() {
            self.least = vec![u64::MAX; self.key.len()];
            self.most = vec![0; self.key.len()];
        }
        for (i, &k) in self.key.iter().enumerate().filter(|(_, &k)| k != 0) {
            self.least[i] = self.least[i].min(k);
            self.most[i] = self.most[i].max(k);
        }
    }

    /// The keys packed into one `u64` each, when their fields fit in 64 bits together.
    fn packing(&self) -> Option<Packing> {
        // A field's values take 1 ..= most - least + 1 (0 is NULL).
        let span = |(l, m): (&u64, &u64)| if m >= l { (m - l).checked_add(1) } else { Some(0) };
        let spans: Option<Vec<u64>> = self.least.iter().zip(&self.most).map(span).collect();
        let bits: Vec<u32> = spans?.iter().map(|s| 64 - s.leading_zeros()).collect();
        (bits.iter().sum::<u32>() <= 64).then(|| Packing { least: self.least.clone(), bits })
    }
}

/// A key as one `u64`: each field as 0 (NULL) or 1 + its value less the field's least, in as
/// many bits as its range needs, the first field highest, so packed keys order as the keys do (a
/// sort of 8 bytes an entry, not of a `u64` a field and a `u32` position: at 973 MiB, 17 MB
/// instead of 60 MB for a lifetimes index).
struct Packing {
    least: Vec<u64>,
    bits: Vec<u32>,
}

impl Packing {
    fn pack(&self, key: &[u64]) -> u64 {
        let field = |k: u64, l: u64| if k == 0 { 0 } else { k - l + 1 };
        key.iter().zip(&self.least).zip(&self.bits).fold(0u64, |p, ((&k, &l), &b)| p.checked_shl(b).unwrap_or(0) | field(k, l))
    }

    fn unpack(&self, mut packed: u64, key: &mut Vec<u64>) {
        key.clear();
        key.resize(self.bits.len(), 0);
        for (i, &b) in self.bits.iter().enumerate().rev() {
            let v = packed & u64::MAX.checked_shr(64 - b).filter(|_| b > 0).unwrap_or(0);
            key[i] = if v == 0 { 0 } else { v - 1 + self.least[i] };
            packed = packed.checked_shr(b).unwrap_or(0);
        }
    }
}

/// Why streaming an index's entries in row order stopped.
enum Stream {
    /// An entry not an integer key, or not greater than the one before: the index is written
    /// the other ways.
    OutOfOrder,
    Failed(Error),
}

impl From<Error> for Stream {
    fn from(e: Error) -> Stream {
        Stream::Failed(e)
    }
}

/// One index. Its entries are first streamed into the tree as the rows come, while each is an
/// integer key (every field an integer or NULL: see [`Layout::int_key`]) greater than the one
/// before (as `traces` come in `traces_by_event`'s order): one pass, no key kept. At the first
/// that is not, the pages written are given back and the entries are gathered instead: integer
/// keys packed into one `u64` each (or one `u64` a field) and sorted, others as records sorted by
/// SQLite's record order.
fn write_index<R: Rows>(out: &mut PageOut, l: &Loaded, layout: &Layout<R>, index: &IndexPlan, schema_format: u32) -> Result<()> {
    let width = index.columns.len() + 1;
    let mut key = Vec::with_capacity(width);
    let mut last = Vec::with_capacity(width);
    let mut rec = Record::new(schema_format);
    let failed = |e: std::io::Error| Error::io(&index.name, e);
    let mut entry = Vec::new();
    let mut push_key = |tree: &mut IndexTree, out: &mut PageOut, key: &[u64]| {
        rec.clear();
        for &k in key {
            match k {
                0 => rec.null(),
                k => rec.int((k ^ SIGN) as i64),
            }
        }
        entry.clear();
        rec.write(&mut entry);
        tree.push(out, &entry).map_err(failed)
    };
    let mark = out.mark();
    let mut tree = IndexTree::new(out);
    let streamed = each_row::<R, Stream>(l, |row| {
        key.clear();
        if !layout.int_key(&mut key, &index.columns, row)? || (!last.is_empty() && last >= key) {
            return Err(Stream::OutOfOrder);
        }
        push_key(&mut tree, out, &key)?;
        std::mem::swap(&mut key, &mut last);
        Ok(())
    });
    match streamed {
        Ok(()) => return tree.finish(out, index.root).map_err(failed),
        Err(Stream::Failed(e)) => return Err(e),
        Err(Stream::OutOfOrder) => out.rewind(mark).map_err(failed)?,
    }
    let mut tree = IndexTree::new(out);
    // Whether every entry is an integer key, and each field's range (how many bits it needs).
    let mut order = Order { integers: true, key: Vec::new(), least: Vec::new(), most: Vec::new() };
    each_row::<R, Error>(l, |row| {
        if order.integers {
            order.key.clear();
            order.integers = layout.int_key(&mut order.key, &index.columns, row)?;
            if order.integers {
                order.widen();
            }
        }
        Ok(())
    })?;
    if let Some(packing) = order.packing().filter(|_| order.integers) {
        let mut packed = Vec::new();
        each_row::<R, Error>(l, |row| {
            key.clear();
            layout.int_key(&mut key, &index.columns, row)?;
            packed.push(packing.pack(&key));
            Ok(())
        })?;
        packed.sort_unstable();
        for &p in &packed {
            packing.unpack(p, &mut key);
            push_key(&mut tree, out, &key)?;
        }
    } else if order.integers {
        // Every key one after another, then their positions in the index's order.
        let mut keys = Vec::new();
        each_row::<R, Error>(l, |row| layout.int_key(&mut keys, &index.columns, row).map(|_| ()))?;
        let mut order: Vec<u32> = (0..(keys.len() / width) as u32).collect();
        let at = |k: u32| &keys[k as usize * width..(k as usize + 1) * width];
        order.sort_unstable_by(|&a, &b| at(a).cmp(at(b)));
        for &k in &order {
            push_key(&mut tree, out, at(k))?;
        }
    } else {
        // Every entry one after another, then their starts in the index's order.
        let (mut all, mut starts) = (Vec::new(), Vec::new());
        let mut rec = Record::new(schema_format);
        each_row::<R, Error>(l, |row| {
            layout.entry(&mut rec, &index.columns, row)?;
            starts.push(all.len());
            rec.write(&mut all);
            Ok(())
        })?;
        starts.sort_by(|&a, &b| compare(&all[a..], &all[b..]));
        for &s in &starts {
            tree.push(out, &all[s..s + record_len(&all[s..])]).map_err(failed)?;
        }
    }
    tree.finish(out, index.root).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed keys order as the keys do and unpack to them, whatever the fields' widths (one
    /// field of all 64 bits, fields of no bits).
    #[test]
    fn packed_keys_keep_their_order_and_values() {
        let cases: [Vec<Vec<u64>>; 4] = [
            vec![vec![SIGN, SIGN + 5, SIGN + 2], vec![SIGN, SIGN + 1, SIGN + 9], vec![SIGN, 0, SIGN + 3]],
            vec![vec![1], vec![u64::MAX - 1], vec![12]],
            vec![vec![3, 1, 1 << 40], vec![3, 0, 5], vec![3, 1, 0]],
            vec![vec![0, 0], vec![0, 9], vec![0, 2]],
        ];
        for keys in cases {
            let mut o = Order { integers: true, key: Vec::new(), least: Vec::new(), most: Vec::new() };
            for k in &keys {
                o.key = k.clone();
                o.widen();
            }
            let p = o.packing().expect("fits in 64 bits");
            let mut sorted = keys.clone();
            sorted.sort();
            let mut packed: Vec<u64> = keys.iter().map(|k| p.pack(k)).collect();
            packed.sort_unstable();
            let mut key = Vec::new();
            let back: Vec<Vec<u64>> = packed
                .iter()
                .map(|&x| {
                    p.unpack(x, &mut key);
                    key.clone()
                })
                .collect();
            assert_eq!(back, sorted);
        }
        let mut o = Order { integers: true, key: Vec::new(), least: Vec::new(), most: Vec::new() };
        for k in [[1, 1], [1 << 40, 1 << 40]] {
            o.key = k.to_vec();
            o.widen();
        }
        assert!(o.packing().is_none(), "82 bits do not fit");
    }
}
