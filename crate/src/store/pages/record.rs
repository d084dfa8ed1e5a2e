//! SQLite's record format, written as SQLite's own `OP_MakeRecord` writes it, so that a row the
//! page writer stores is the row SQLite would have stored byte for byte (a `.dump` cannot tell
//! them apart, `PRAGMA integrity_check` finds each index entry where it looks for it).
//!
//! File-format spec (<https://www.sqlite.org/fileformat2.html>), §2.1 "Record Format": a varint
//! header size, one varint serial type per column, then the values. Integers take the smallest
//! serial type that holds them (1-6 for 1, 2, 3, 4, 6 and 8 bytes, big-endian), 0 and 1 take
//! none (types 8 and 9, schema format 4), text is type 13 + 2·n for n bytes of UTF-8, NULL is
//! type 0. §2.2 "Record Sort Order" orders index entries: field by field, NULL before numbers
//! before text before blobs, numbers by value, text by the BINARY collation (memcmp).
//! Varints (§1.2 "Database Header", "variable-length integer"): big-endian groups of 7 bits with
//! the high bit set on all but the last, the ninth byte (if any) holding 8 bits.

use crate::store::cells::CellValue;
use std::cmp::Ordering;

/// Bytes of `v` as a varint.
#[inline]
pub fn varint_len(v: u64) -> usize {
    if v <= 0x7f {
        return 1;
    }
    if v > 0x00ff_ffff_ffff_ffff {
        return 9;
    }
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Append `v` as a varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v <= 0x7f {
        out.push(v as u8);
        return;
    }
    if v > 0x00ff_ffff_ffff_ffff {
        // Eight groups of 7 bits, then the last 8 bits whole.
        for k in (0..8).rev() {
            out.push(((v >> (8 + 7 * k)) & 0x7f) as u8 | 0x80);
        }
        out.push(v as u8);
        return;
    }
    let n = varint_len(v);
    for k in (1..n).rev() {
        out.push(((v >> (7 * k)) & 0x7f) as u8 | 0x80);
    }
    out.push((v & 0x7f) as u8);
}

/// The varint at the start of `b`, and its length. `b` is a record this module wrote.
pub fn get_varint(b: &[u8]) -> (u64, usize) {
    try_varint(b).expect("a whole varint")
}

/// The varint at the start of `b` and its length, or None when `b` ends inside it (a file's
/// bytes are not trusted: `read.rs`).
#[inline]
pub fn try_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..8 {
        let byte = *b.get(i)?;
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte < 0x80 {
            return Some((v, i + 1));
        }
    }
    Some(((v << 8) | u64::from(*b.get(8)?), 9))
}

/// Bytes of the value of serial type `ty` (§2.1), or None for the reserved types 10 and 11.
#[inline]
pub const fn serial_size(ty: u64) -> Option<usize> {
    match ty {
        0..=9 => Some([0, 1, 2, 3, 4, 6, 8, 8, 0, 0][ty as usize]),
        10 | 11 => None,
        t => Some(((t - 12) / 2) as usize),
    }
}

/// A column's affinity, from its declared type (SQLite's datatype rules, §3.1 of
/// <https://www.sqlite.org/datatype3.html>): a value stored in the column is converted to it
/// first. Only the two the SnapshotDB's large tables declare are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Affinity {
    Integer,
    Text,
}

impl Affinity {
    /// The affinity of a column declared `ty` (its type name is the first word), or None for one
    /// the page writer does not write (it would have to convert values as SQLite does).
    pub fn of(ty: &str) -> Option<Affinity> {
        let name = ty.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        if name.contains("INT") {
            Some(Affinity::Integer)
        } else if name.contains("CHAR") || name.contains("CLOB") || name.contains("TEXT") {
            Some(Affinity::Text)
        } else {
            None
        }
    }
}

/// Serial type and value bytes of an integer whose magnitude takes `bits` bits (the index):
/// types 1-4 for 1-4 bytes, 5 for 6 and 6 for 8 (§2.1), the sign bit counted.
const INT_TYPES: [(u8, u8); 65] = {
    let mut t = [(6u8, 8u8); 65];
    let mut bits = 0;
    while bits <= 64 {
        t[bits] = match bits {
            0..=7 => (1, 1),
            8..=15 => (2, 2),
            16..=23 => (3, 3),
            24..=31 => (4, 4),
            32..=47 => (5, 6),
            _ => (6, 8),
        };
        bits += 1;
    }
    t
};

/// One record being written: the serial types and the values, joined by [`Record::write`].
pub struct Record {
    types: Vec<u8>,
    body: Vec<u8>,
    /// Schema format 4 or later: 0 and 1 are serial types 8 and 9 (no value bytes).
    format4: bool,
}

impl Record {
    pub fn new(schema_format: u32) -> Record {
        Record { types: Vec::with_capacity(64), body: Vec::with_capacity(256), format4: schema_format >= 4 }
    }

    pub fn clear(&mut self) {
        self.types.clear();
        self.body.clear();
    }

    #[inline]
    pub fn null(&mut self) {
        self.types.push(0);
    }

    /// An integer in the smallest serial type that holds it (`sqlite3VdbeSerialType`).
    #[inline(always)]
    pub fn int(&mut self, i: i64) {
        // The magnitude's bits (a negative number's complement): one lookup gives the type.
        let u = (i ^ (i >> 63)) as u64;
        let (ty, len) = match INT_TYPES[(64 - u.leading_zeros()) as usize] {
            (1, _) if (i & 1) == i && self.format4 => (8 + i as u8, 0),
            t => t,
        };
        self.types.push(ty);
        // The value's last `len` bytes, big-endian: written as 8 bytes shifted to the front (one
        // store) and cut.
        let at = self.body.len();
        self.body.extend_from_slice(&(i.wrapping_shl(8 * (8 - len) as u32)).to_be_bytes());
        self.body.truncate(at + len as usize);
    }

    #[inline]
    pub fn text(&mut self, t: &[u8]) {
        put_varint(&mut self.types, 13 + 2 * t.len() as u64);
        self.body.extend_from_slice(t);
    }

    /// A cell's value as a column of `affinity` stores it. An integer in a TEXT column is
    /// stored as its decimal text, as SQLite converts it; text in an INTEGER column is refused
    /// (SQLite would convert text that looks like a number: no cell of the large tables gives one).
    #[inline(always)]
    pub fn value(&mut self, v: &CellValue, affinity: Affinity) -> Result<(), &'static str> {
        match (v, affinity) {
            (CellValue::Null, _) => self.null(),
            (CellValue::Int(i), Affinity::Integer) => self.int(*i),
            (CellValue::Int(i), Affinity::Text) => self.text(i.to_string().as_bytes()),
            (CellValue::Text(t), Affinity::Text) => self.text(t.as_bytes()),
            (CellValue::Text(_), Affinity::Integer) => return Err("text in an INTEGER column"),
        }
        Ok(())
    }

    /// The header's size, its own varint included (`OP_MakeRecord`'s rule).
    fn header_len(&self) -> usize {
        let n = self.types.len();
        if n <= 126 {
            return n + 1;
        }
        let v = varint_len(n as u64);
        let mut h = n + v;
        if v < varint_len(h as u64) {
            h += 1;
        }
        h
    }

    /// Append the record to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        put_varint(out, self.header_len() as u64);
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.body);
    }
}

/// One value of a record, as read back for ordering index entries.
#[derive(Debug, PartialEq)]
enum Field<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

impl Field<'_> {
    /// The order of the storage classes (§2.2): NULL, numbers, text, blobs.
    fn class(&self) -> u8 {
        match self {
            Field::Null => 0,
            Field::Int(_) | Field::Real(_) => 1,
            Field::Text(_) => 2,
            Field::Blob(_) => 3,
        }
    }
}

/// The fields of a record, in column order.
struct Fields<'a> {
    rec: &'a [u8],
    /// Next serial type, end of the header, next value.
    at: usize,
    header_end: usize,
    value: usize,
}

impl<'a> Fields<'a> {
    fn new(rec: &'a [u8]) -> Fields<'a> {
        let (h, n) = get_varint(rec);
        Fields { rec, at: n, header_end: h as usize, value: h as usize }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Field<'a>;
    fn next(&mut self) -> Option<Field<'a>> {
        if self.at >= self.header_end {
            return None;
        }
        let (ty, n) = get_varint(&self.rec[self.at..]);
        self.at += n;
        let int = |len: usize| {
            let b = &self.rec[self.value..self.value + len];
            // Sign-extended from the first byte.
            b.iter().fold(if b[0] >= 0x80 { -1i64 } else { 0 }, |v, &x| (v << 8) | i64::from(x))
        };
        // 10 and 11 are reserved: never written here.
        let len = serial_size(ty).unwrap_or(0);
        let field = match ty {
            0 | 10 | 11 => Field::Null,
            1..=6 => Field::Int(int(len)),
            7 => Field::Real(f64::from_bits(int(8) as u64)),
            8 | 9 => Field::Int(ty as i64 - 8),
            t => {
                let bytes = &self.rec[self.value..self.value + len];
                if t % 2 == 1 {
                    Field::Text(bytes)
                } else {
                    Field::Blob(bytes)
                }
            }
        };
        self.value += len;
        Some(field)
    }
}

/// Compare two records as an index orders its entries (§2.2; BINARY collation, ascending).
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let mut fb = Fields::new(b);
    for x in Fields::new(a) {
        let Some(y) = fb.next() else {
            return Ordering::Greater;
        };
        let o = match (&x, &y) {
            (Field::Int(p), Field::Int(q)) => p.cmp(q),
            (Field::Int(p), Field::Real(q)) => (*p as f64).total_cmp(q),
            (Field::Real(p), Field::Int(q)) => p.total_cmp(&(*q as f64)),
            (Field::Real(p), Field::Real(q)) => p.total_cmp(q),
            (Field::Text(p), Field::Text(q)) | (Field::Blob(p), Field::Blob(q)) => p.cmp(q),
            _ => x.class().cmp(&y.class()),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    if fb.next().is_some() {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// Bytes of the record at the start of `b` (its header and values).
pub fn record_len(b: &[u8]) -> usize {
    let mut f = Fields::new(b);
    while f.next().is_some() {}
    f.value
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 1 << 55, (1 << 56) - 1, 1 << 56, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v), "{v}");
            assert_eq!(get_varint(&b), (v, b.len()), "{v}");
        }
    }

    /// Every integer boundary, text length and conversion gives the bytes SQLite stores: SQLite
    /// writes the rows through INSERTs into a file, and each record read from the table's leaf
    /// page is compared with ours.
    #[test]
    fn records_match_sqlite_byte_for_byte() {
        let ints = [
            0i64,
            1,
            2,
            -1,
            127,
            128,
            -128,
            -129,
            32_767,
            32_768,
            -32_769,
            8_388_607,
            8_388_608,
            2_147_483_647,
            2_147_483_648,
            0x7fff_ffff_ffff,
            0x8000_0000_0000,
            i64::MAX,
            i64::MIN,
        ];
        let path = std::env::temp_dir().join(format!("snapscope-record-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA page_size = 65536; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c INTEGER, d TEXT)")
            .unwrap();
        let mut ours = Vec::new();
        for (k, &i) in ints.iter().enumerate() {
            let text = "é".repeat(k * 7);
            conn.execute("INSERT INTO t (a, b, c, d) VALUES (?1, ?2, NULL, ?1)", rusqlite::params![i, text]).unwrap();
            let mut rec = Record::new(4);
            rec.null();
            rec.int(i);
            rec.text(text.as_bytes());
            rec.null();
            rec.value(&CellValue::Int(i), Affinity::Text).unwrap();
            let mut b = Vec::new();
            rec.write(&mut b);
            assert_eq!(record_len(&b), b.len());
            ours.push(b);
        }
        let root: i64 = conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = 't'", [], |r| r.get(0)).unwrap();
        drop(conn);
        let file = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let page = &file[(root as usize - 1) * 65536..root as usize * 65536];
        assert_eq!(page[0], 0x0d, "one leaf page");
        assert_eq!(u16::from_be_bytes([page[3], page[4]]) as usize, ints.len());
        for (k, want) in ours.iter().enumerate() {
            let at = u16::from_be_bytes([page[8 + 2 * k], page[9 + 2 * k]]) as usize;
            let (len, n) = get_varint(&page[at..]);
            let (rowid, m) = get_varint(&page[at + n..]);
            assert_eq!(rowid, k as u64 + 1);
            assert_eq!(&page[at + n + m..at + n + m + len as usize], &want[..], "row {k}: {}", ints[k]);
        }
    }

    #[test]
    fn records_order_as_sqlite_orders_them() {
        let values: Vec<Vec<CellValue>> = vec![
            vec![CellValue::Null, CellValue::Int(5)],
            vec![CellValue::Int(-3), CellValue::Int(1)],
            vec![CellValue::Int(0), CellValue::Null],
            vec![CellValue::Int(0), CellValue::Int(-1)],
            vec![CellValue::Int(1), CellValue::Int(0)],
            vec![CellValue::Int(300), CellValue::Int(0)],
            vec![CellValue::Int(i64::MAX), CellValue::Int(0)],
            vec![CellValue::Text("a".into()), CellValue::Int(0)],
            vec![CellValue::Text("ab".into()), CellValue::Int(0)],
            vec![CellValue::Text("b".into()), CellValue::Int(0)],
        ];
        let recs: Vec<Vec<u8>> = values
            .iter()
            .map(|row| {
                let mut r = Record::new(4);
                for v in row {
                    match v {
                        CellValue::Text(t) => r.text(t.as_bytes()),
                        v => r.value(v, Affinity::Integer).unwrap(),
                    }
                }
                let mut out = Vec::new();
                r.write(&mut out);
                out
            })
            .collect();
        for (i, a) in recs.iter().enumerate() {
            for (j, b) in recs.iter().enumerate() {
                assert_eq!(compare(a, b), i.cmp(&j), "{i} {j}");
            }
        }
    }
}
