//! A rowid table read straight from its B-tree pages in the file, rows in rowid order, values as
//! SQLite would return them. Reading a `.db` input's `traces` (most of its bytes) through SQLite
//! spent about half of `analyze F.db` in SQLite's VM and its value API; the records are decoded
//! here instead. SQLite still opens and checks the file and answers every other question: which
//! page is the table's root, its columns, every other table.
//!
//! Nothing in the file is trusted: every offset, length, page number and varint is checked, a
//! page is visited once (a damaged tree with a cycle ends with an error, not a loop), and any
//! surprise is an error, after which the caller reads the table through SQLite instead.
//!
//! File-format spec (<https://www.sqlite.org/fileformat2.html>): §1.2 the header (page size,
//! reserved bytes, text encoding), §1.5 table B-tree pages (interior 0x05: `left child u32,
//! rowid varint` cells and a right-most child; leaf 0x0D: `payload size varint, rowid varint,
//! payload`), §1.6 overflow chains, §2.1 records, §2.4 an `INTEGER PRIMARY KEY` column is the
//! rowid (its record field NULL).

use super::btree::{local_size, min_local};
use super::record::{serial_size, try_varint};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Pages read from the file at once: leaves written one after another are read in large reads.
const WINDOW_PAGES: usize = 64;

/// Deeper than any tree of 2^32 pages with at least two children per interior page.
const MAX_DEPTH: usize = 40;

/// A payload larger than this is refused (SQLite's own limit on a row is 1 GB).
const MAX_PAYLOAD: u64 = 1 << 30;

const INTERIOR_TABLE: u8 = 0x05;
const LEAF_TABLE: u8 = 0x0d;

/// Why the pages could not be read: the caller falls back to SQLite.
#[derive(Debug)]
pub struct Unreadable(pub String);

fn fail<T>(what: impl Into<String>) -> Result<T, Unreadable> {
    Err(Unreadable(what.into()))
}

/// One table's rows, read leaf by leaf: `columns` of the SELECT this stands for, in its order.
pub struct TableScan {
    file: File,
    page_size: usize,
    usable: usize,
    /// Pages the file holds.
    pages: u32,
    /// The table's leaves in key order, and the next one to read.
    leaves: Vec<u32>,
    next_leaf: usize,
    /// Pages `window_first ..` as read from the file.
    window: Vec<u8>,
    window_first: u32,
    window_pages: u32,
    /// The current leaf, its cells and the next one.
    leaf: u32,
    cells: usize,
    next_cell: usize,
    /// The current row: its rowid, its record (and 8 zero bytes after it, so that any integer
    /// field is read as one 8-byte load), its fields.
    rowid: i64,
    record: Vec<u8>,
    /// The decoded fields a selected column reads (by position; the others are not written),
    /// and how many fields the current record has (a short record's missing ones read NULL).
    fields: Vec<Field>,
    field_count: usize,
    /// Which fields a selected column reads (the others are skipped, not decoded).
    wanted: Vec<bool>,
    /// Each selected column: its field in the record, or None for the rowid column.
    projection: Vec<Option<usize>>,
    /// The rowid's alias column, whose field every record holds as NULL.
    alias: Option<usize>,
}

impl TableScan {
    /// The rows of `table` in the file `conn` has open, as `SELECT columns FROM table ORDER BY
    /// rowid` gives them. Unreadable when the file or the table is one this reader does not
    /// read the way SQLite would: not UTF-8, WITHOUT ROWID, a column with a default (a row
    /// written before it was added would read as the default), a name not in the table.
    pub fn open(conn: &Connection, table: &str, columns: &[&str]) -> Result<TableScan, Unreadable> {
        let path = match conn.path() {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => return fail("no file"),
        };
        let file = File::open(&path).map_err(|e| Unreadable(e.to_string()))?;
        let mut head = [0u8; 100];
        file.read_exact_at(&mut head, 0).map_err(|e| Unreadable(e.to_string()))?;
        let be32 = |at: usize| u32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
        let page_size = match u16::from_be_bytes([head[16], head[17]]) {
            1 => 65536,
            n if n >= 512 && n.is_power_of_two() => n as usize,
            _ => return fail("page size"),
        };
        let usable = page_size - head[20] as usize;
        if !head.starts_with(b"SQLite format 3\0") || be32(56) != 1 || usable < 480 {
            return fail("not a UTF-8 database this reader reads");
        }
        let len = file.metadata().map_err(|e| Unreadable(e.to_string()))?.len();
        let pages = u32::try_from(len / page_size as u64).map_err(|_| Unreadable("file too large".into()))?;

        let sql: Option<(i64, String)> = conn
            .query_row("SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND name = ?1", [table], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .ok();
        let Some((root, ddl)) = sql else { return fail("no such table") };
        if ddl.to_ascii_uppercase().contains("WITHOUT ROWID") {
            return fail("a WITHOUT ROWID table");
        }
        let root = u32::try_from(root).ok().filter(|&r| r >= 1 && r <= pages).ok_or_else(|| Unreadable("root page".into()))?;
        // (name, declared type, default, primary-key position) per column, in record order.
        let declared: Vec<(String, String, Option<String>, i64)> = conn
            .prepare("SELECT name, type, dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid")
            .and_then(|mut s| s.query_map([table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect())
            .map_err(|e| Unreadable(e.to_string()))?;
        if declared.iter().any(|c| c.2.is_some()) {
            return fail("a column with a default");
        }
        // The rowid's alias: the one primary-key column, declared exactly INTEGER (§2.4).
        let keys: Vec<usize> = (0..declared.len()).filter(|&i| declared[i].3 > 0).collect();
        let alias = match keys.as_slice() {
            [k] if declared[*k].1.eq_ignore_ascii_case("INTEGER") => Some(*k),
            _ => None,
        };
        let projection: Vec<Option<usize>> = columns
            .iter()
            .map(|name| match declared.iter().position(|c| c.0.eq_ignore_ascii_case(name)) {
                Some(i) if Some(i) == alias => Ok(None),
                Some(i) => Ok(Some(i)),
                None => fail(format!("no column {name}")),
            })
            .collect::<Result<_, _>>()?;

        let mut scan = TableScan {
            file,
            page_size,
            usable,
            pages,
            leaves: Vec::new(),
            next_leaf: 0,
            window: Vec::new(),
            window_first: 0,
            window_pages: 0,
            leaf: 0,
            cells: 0,
            next_cell: 0,
            rowid: 0,
            record: Vec::new(),
            fields: vec![Field::Null; declared.len()],
            field_count: 0,
            wanted: (0..declared.len()).map(|f| projection.contains(&Some(f)) || Some(f) == alias).collect(),
            projection,
            alias,
        };
        scan.leaves = scan.find_leaves(root)?;
        Ok(scan)
    }

    /// Page `n`'s bytes, read with the pages after it when it is not in the window.
    fn page(&mut self, n: u32) -> Result<&[u8], Unreadable> {
        if n == 0 || n > self.pages {
            return fail(format!("page {n} is outside the file"));
        }
        if !(self.window_first..self.window_first + self.window_pages).contains(&n) {
            let count = (WINDOW_PAGES as u32).min(self.pages - n + 1);
            self.window.resize(count as usize * self.page_size, 0);
            let at = u64::from(n - 1) * self.page_size as u64;
            self.file.read_exact_at(&mut self.window, at).map_err(|e| Unreadable(e.to_string()))?;
            (self.window_first, self.window_pages) = (n, count);
        }
        let at = (n - self.window_first) as usize * self.page_size;
        Ok(&self.window[at..at + self.page_size])
    }

    /// Where the current leaf's B-tree header is in the window (it is in the window).
    fn leaf_at(&self) -> usize {
        (self.leaf - self.window_first) as usize * self.page_size + if self.leaf == 1 { 100 } else { 0 }
    }

    /// The tree's leaves under `root`, in key order, each interior page read once.
    fn find_leaves(&mut self, root: u32) -> Result<Vec<u32>, Unreadable> {
        let mut leaves = Vec::new();
        let mut seen = vec![false; self.pages as usize + 1];
        // Pages to visit, last first, with their depth.
        let mut todo = vec![(root, 0usize)];
        while let Some((n, depth)) = todo.pop() {
            if depth > MAX_DEPTH || std::mem::replace(&mut seen[n as usize], true) {
                return fail(format!("page {n} is reached twice or too deep"));
            }
            let usable = self.usable;
            let page = self.page(n)?;
            let head = if n == 1 { 100 } else { 0 };
            match page[head] {
                LEAF_TABLE => leaves.push(n),
                INTERIOR_TABLE => {
                    let cells = be16(page, head + 3);
                    let child = |at: usize| -> Result<u32, Unreadable> {
                        match at + 4 <= usable {
                            true if be32(page, at) != 0 => Ok(be32(page, at)),
                            _ => fail("an interior cell"),
                        }
                    };
                    // Right-most child first onto the stack, so the leftmost is visited first.
                    let mut children = Vec::with_capacity(cells + 1);
                    for i in 0..cells {
                        let ptr = head + 12 + 2 * i;
                        if ptr + 2 > usable {
                            return fail("a cell pointer array");
                        }
                        children.push(child(be16(page, ptr))?);
                    }
                    children.push(child(head + 8)?);
                    todo.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
                }
                t => return fail(format!("page {n} is of type {t:#x}, not a table page")),
            }
        }
        Ok(leaves)
    }

    /// Move to the next row; false after the last.
    pub fn step(&mut self) -> Result<bool, Unreadable> {
        while self.next_cell >= self.cells {
            let Some(&n) = self.leaves.get(self.next_leaf) else { return Ok(false) };
            self.next_leaf += 1;
            self.leaf = n;
            self.page(n)?;
            self.cells = be16(&self.window, self.leaf_at() + 3);
            self.next_cell = 0;
        }
        // In the window again (an overflow chain may have moved it).
        self.page(self.leaf)?;
        let leaf_at = self.leaf_at();
        let leaf_start = leaf_at - leaf_at % self.page_size;
        let page_end = leaf_start + self.usable;
        let ptr = leaf_at + 8 + 2 * self.next_cell;
        self.next_cell += 1;
        if ptr + 2 > page_end {
            return fail("a cell pointer array");
        }
        let mut at = leaf_start + be16(&self.window, ptr);
        let (size, n) = varint(&self.window[..page_end], at)?;
        at += n;
        let (rowid, n) = varint(&self.window[..page_end], at)?;
        at += n;
        if size > MAX_PAYLOAD {
            return fail("a payload over 1 GB");
        }
        self.rowid = rowid as i64;
        let size = size as usize;
        let local = local_size(size, self.usable - 35, min_local(self.usable), self.usable);
        if at + local > page_end || (local < size && at + local + 4 > page_end) {
            return fail("a cell past its page");
        }
        self.record.clear();
        self.record.extend_from_slice(&self.window[at..at + local]);
        if local < size {
            let first = be32(&self.window, at + local);
            self.overflow(first, size)?;
        }
        self.record.extend_from_slice(&[0; 8]);
        self.parse_record(size)?;
        // A value in the alias's field: the column is no alias after all (`INTEGER PRIMARY
        // KEY DESC` is not one), and this reader would have read the rowid for it.
        match self.alias.and_then(|a| self.field(a)) {
            Some(Field::Null) | None => Ok(true),
            Some(_) => fail("a value in the rowid's column"),
        }
    }

    /// The rest of a payload of `size` bytes from its chain of overflow pages, from `next`.
    fn overflow(&mut self, mut next: u32, size: usize) -> Result<(), Unreadable> {
        let mut hops = 0u32;
        while self.record.len() < size {
            hops += 1;
            if next == 0 || hops > self.pages {
                return fail("an overflow chain");
            }
            let take = (size - self.record.len()).min(self.usable - 4);
            let page = self.page(next)?;
            let following = be32(page, 0);
            let bytes = page[4..4 + take].to_vec();
            self.record.extend_from_slice(&bytes);
            next = following;
        }
        Ok(())
    }

    /// The record's fields (its first `len` bytes) that a selected column reads, decoded.
    fn parse_record(&mut self, len: usize) -> Result<(), Unreadable> {
        let (record, wanted, fields) = (&self.record[..len + 8], &self.wanted, &mut self.fields);
        let (header, mut at) = varint(&record[..len], 0)?;
        let header = header as usize;
        if header > len {
            return fail("a record header");
        }
        let (mut value, mut field) = (header, 0);
        while at < header {
            // Most serial types are one byte (integers, texts under 58 bytes): their sizes by
            // lookup.
            let (ty, size) = match record[at] {
                b if b < 0x80 => {
                    at += 1;
                    (u64::from(b), ONE_BYTE_SIZES[b as usize])
                }
                _ => {
                    let (ty, n) = varint(&record[..header], at)?;
                    at += n;
                    (ty, serial_size(ty).unwrap_or(RESERVED))
                }
            };
            if size == RESERVED {
                return fail("a reserved serial type");
            }
            if value + size > len {
                return fail("a record's values past its end");
            }
            if wanted.get(field).copied().unwrap_or(false) {
                fields[field] = decode(record, ty, value, size);
            }
            value += size;
            field += 1;
        }
        self.field_count = field;
        Ok(())
    }

    /// Field `i` of the current record (None past its last field).
    #[inline]
    fn field(&self, i: usize) -> Option<&Field> {
        self.fields.get(i).filter(|_| i < self.field_count)
    }

    /// Selected column `i` of the current row.
    #[inline]
    pub fn value(&self, i: usize) -> ValueRef<'_> {
        let field = match self.projection.get(i) {
            None => return ValueRef::Null,
            Some(None) => return ValueRef::Integer(self.rowid),
            Some(Some(f)) => *f,
        };
        let bytes = |at: u32, n: u32| &self.record[at as usize..(at + n) as usize];
        // A record shorter than the table (columns added later, no default): NULL.
        match self.field(field) {
            None | Some(Field::Null) => ValueRef::Null,
            Some(&Field::Int(v)) => ValueRef::Integer(v),
            Some(&Field::Real(v)) => ValueRef::Real(v),
            Some(&Field::Text(at, n)) => ValueRef::Text(bytes(at, n)),
            Some(&Field::Blob(at, n)) => ValueRef::Blob(bytes(at, n)),
        }
    }
}

/// The field of serial type `ty` at `at` of `record` (`size` bytes; the record is followed by
/// 8 zero bytes).
#[inline(always)]
fn decode(record: &[u8], ty: u64, at: usize, size: usize) -> Field {
    // A big-endian integer, sign-extended: 8 bytes from its start, shifted down.
    let int = || {
        let b: [u8; 8] = record[at..at + 8].try_into().expect("8 bytes");
        i64::from_be_bytes(b) >> (64 - 8 * size)
    };
    match ty {
        0 => Field::Null,
        1..=6 => Field::Int(int()),
        7 => Field::Real(f64::from_bits(int() as u64)),
        8 | 9 => Field::Int(ty as i64 - 8),
        t if t % 2 == 1 => Field::Text(at as u32, size as u32),
        _ => Field::Blob(at as u32, size as u32),
    }
}

/// A record's field as read: a value, or where its bytes are in the record.
#[derive(Clone, Copy)]
enum Field {
    Null,
    Int(i64),
    Real(f64),
    Text(u32, u32),
    Blob(u32, u32),
}

/// A serial type's size that marks the reserved types 10 and 11.
const RESERVED: usize = usize::MAX;

/// [`serial_size`] of each serial type written in one byte, `RESERVED` for 10 and 11.
const ONE_BYTE_SIZES: [usize; 128] = {
    let mut sizes = [0; 128];
    let mut ty = 0;
    while ty < 128 {
        sizes[ty] = match serial_size(ty as u64) {
            Some(n) => n,
            None => RESERVED,
        };
        ty += 1;
    }
    sizes
};

fn be16(b: &[u8], at: usize) -> usize {
    u16::from_be_bytes([b[at], b[at + 1]]) as usize
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The varint at `at` in `b` and its length, or Unreadable when it runs past `b`.
fn varint(b: &[u8], at: usize) -> Result<(u64, usize), Unreadable> {
    b.get(at..).and_then(try_varint).ok_or_else(|| Unreadable("a varint past its page".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    /// A new database file of 512-byte pages (small pages: trees of several levels, overflow
    /// chains from short texts).
    fn small_pages(name: &str) -> (std::path::PathBuf, Connection) {
        let path = std::env::temp_dir().join(format!("snapscope-pages-read-{}-{name}.db", std::process::id()));
        std::fs::remove_file(&path).ok();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA page_size = 512").unwrap();
        (path, conn)
    }

    /// Every row and column of `table` through the pages and through SQLite.
    fn both(conn: &Connection, table: &str, columns: &[&str]) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
        let mut scan = TableScan::open(conn, table, columns).expect("readable");
        let mut pages = Vec::new();
        while scan.step().expect("a row") {
            pages.push(
                (0..columns.len()).map(|i| <Value as rusqlite::types::FromSql>::column_result(scan.value(i)).unwrap()).collect::<Vec<_>>(),
            );
        }
        let sql = format!("SELECT {} FROM {table} ORDER BY rowid", columns.join(", "));
        let mut st = conn.prepare(&sql).unwrap();
        let rows = st.query_map([], |r| (0..columns.len()).map(|i| r.get::<_, Value>(i)).collect()).unwrap();
        (pages, rows.collect::<rusqlite::Result<_>>().unwrap())
    }

    /// Values of every storage class and size (integers at each serial type's bounds, reals,
    /// empty and long texts and blobs on overflow chains, NULLs), a column added after rows were
    /// written (their records one field short), rowids with gaps and negative ones, a tree of
    /// several levels (512-byte pages): read as SQLite reads them, in rowid order.
    #[test]
    fn rows_read_from_pages_are_the_rows_sqlite_reads() {
        let (path, conn) = small_pages("values");
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c, d REAL)").unwrap();
        conn.execute_batch("CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID").unwrap();
        let ints = [0i64, 1, -1, 127, 128, -129, 32_767, 32_768, 8_388_607, 8_388_608, 2_147_483_647, 1 << 40, i64::MAX, i64::MIN];
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..3000i64 {
            let text = match i % 5 {
                0 => None,
                1 => Some(String::new()),
                2 => Some("é".repeat((i % 700) as usize)),
                3 => Some("x".repeat(1500 + i as usize)),
                _ => Some(format!("row {i}")),
            };
            let c: Value = match i % 4 {
                0 => Value::Blob(vec![i as u8; (i % 900) as usize]),
                1 => Value::Real(i as f64 / 7.0),
                2 => Value::Integer(ints[i as usize % ints.len()]),
                _ => Value::Null,
            };
            let id = if i % 3 == 0 { -i * 11 } else { i * 13 };
            conn.execute("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)", rusqlite::params![id, ints[i as usize % ints.len()], text, c, 0.5])
                .unwrap();
        }
        conn.execute_batch("ALTER TABLE t ADD COLUMN e INTEGER; UPDATE t SET e = id WHERE id % 2 = 0;").unwrap();
        tx.commit().unwrap();
        let columns = ["id", "a", "b", "c", "d", "e"];
        let (pages, sqlite) = both(&conn, "t", &columns);
        assert_eq!(pages.len(), 3000);
        assert_eq!(pages, sqlite);
        // Columns in another order, one twice.
        let (pages, sqlite) = both(&conn, "t", &["e", "id", "b", "id"]);
        assert_eq!(pages, sqlite);
        // What this reader does not read is said, not misread.
        assert!(TableScan::open(&conn, "w", &["k"]).is_err(), "WITHOUT ROWID");
        assert!(TableScan::open(&conn, "t", &["nope"]).is_err(), "no such column");
        assert!(TableScan::open(&conn, "missing", &["id"]).is_err(), "no such table");
        conn.execute_batch("ALTER TABLE t ADD COLUMN f INTEGER DEFAULT 7").unwrap();
        assert!(TableScan::open(&conn, "t", &["id"]).is_err(), "a default the old rows would read as");
        drop(conn);
        std::fs::remove_file(&path).ok();
    }

    /// A damaged tree (an interior page whose child is itself, a cell pointer past its page, a
    /// record with a reserved serial type) gives an error, never a loop or a panic.
    #[test]
    fn damaged_pages_are_an_error() {
        let (path, conn) = small_pages("damaged");
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, b TEXT)").unwrap();
        for i in 0..200 {
            conn.execute("INSERT INTO t (b) VALUES (?1)", [format!("text {i:040}")]).unwrap();
        }
        let root: u32 = conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = 't'", [], |r| r.get(0)).unwrap();
        drop(conn);
        let clean = std::fs::read(&path).unwrap();
        let at = (root as usize - 1) * 512;
        assert_eq!(clean[at], INTERIOR_TABLE, "200 rows of 50 bytes take more than one 512-byte page");
        let mut cases = Vec::new();
        // The right-most child pointer names the root itself.
        let mut cycle = clean.clone();
        cycle[at + 8..at + 12].copy_from_slice(&root.to_be_bytes());
        cases.push(cycle);
        // The first leaf's first cell pointer points past the page.
        let leaf = u32::from_be_bytes(clean[at + 8..at + 12].try_into().unwrap()) as usize;
        let mut past = clean.clone();
        past[(leaf - 1) * 512 + 8..(leaf - 1) * 512 + 10].copy_from_slice(&600u16.to_be_bytes());
        cases.push(past);
        // A row's `b` of the reserved serial type 10: its cell is the payload size and rowid
        // varints, then the record (header size, NULL for the rowid alias, `b`).
        let mut reserved = clean.clone();
        let cell = (leaf - 1) * 512 + be16(&clean, (leaf - 1) * 512 + 8);
        let (_, size_len) = try_varint(&clean[cell..]).unwrap();
        let (_, rowid_len) = try_varint(&clean[cell + size_len..]).unwrap();
        let record = cell + size_len + rowid_len;
        assert_eq!(clean[record..record + 3], [3, 0, 13 + 2 * 45], "the record as written");
        reserved[record + 2] = 10;
        cases.push(reserved);
        for bytes in cases {
            std::fs::write(&path, &bytes).unwrap();
            let conn = Connection::open(&path).unwrap();
            let read = TableScan::open(&conn, "t", &["id", "b"]).and_then(|mut s| {
                while s.step()? {}
                Ok(())
            });
            assert!(read.is_err());
        }
        std::fs::remove_file(&path).ok();
    }
}
