//! B-trees bulk-loaded into SQLite pages from rows that arrive in key order: each page is filled
//! once and written once, the leaves as they fill, the levels above them at the end. SQLite
//! inserting row by row walks the tree from the root for every row, moves cells between pages
//! when one fills and builds each index by sorting the table again; none of that is needed when
//! the order is known.
//!
//! File-format spec (<https://www.sqlite.org/fileformat2.html>):
//! - §1.5 "B-tree Pages": a page is an 8-byte header (12 for interior pages, whose last 4 bytes
//!   are the right-most child), an array of 2-byte cell offsets in key order, unallocated space,
//!   then the cell content area at the page's end. Pages are written without freeblocks or
//!   fragments: the cells packed from the end, header bytes 1-2 and 7 left 0.
//! - Table B-trees (rowid tables) are B+trees: leaf pages (0x0D) hold `payload size varint,
//!   rowid varint, payload`; interior pages (0x05) hold `left child u32, rowid varint`, the rowid
//!   being the largest in that child (every key in the left child is ≤ it).
//! - Index B-trees are not B+trees: an interior page (0x02) holds real entries, `left child u32,
//!   payload size varint, payload`, each entry greater than everything in its left child and
//!   less than everything right of it; leaf pages (0x0A) hold `payload size varint, payload`. So
//!   when a leaf is full, the next entry goes up a level as the separator, and the next leaf
//!   starts after it.
//! - §1.6 "Cell Payload Overflow Pages": a payload longer than the page's largest local payload
//!   keeps a prefix in its cell (the size rule in [`local_size`]) and the rest in a chain of
//!   overflow pages, each a 4-byte next page number (0 on the last) and `usable − 4` bytes.
//! - §1.3 "The Lock-Byte Page": the page holding the file's bytes from 2^30 is never used.
//!
//! Every leaf is at the same depth, no page but a root is empty and every interior page has at
//! least one cell (what `PRAGMA integrity_check` and SQLite's own balancing expect); pages are
//! numbered in the order they are appended to the file, the root written last into the page
//! SQLite gave the table or index when it was created (its number in sqlite_schema).

use super::record::put_varint;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::ops::Range;

/// Page types (§1.5).
const INTERIOR_INDEX: u8 = 0x02;
const INTERIOR_TABLE: u8 = 0x05;
const LEAF_INDEX: u8 = 0x0a;
const LEAF_TABLE: u8 = 0x0d;

/// The byte offset whose page is the lock-byte page (SQLite's PENDING_BYTE).
const PENDING_BYTE: u64 = 0x4000_0000;

/// Pages appended to a database file after its last page, and roots written in place.
pub struct PageOut {
    w: BufWriter<File>,
    page_size: usize,
    /// Page size less the reserved bytes at each page's end (§1.2.4).
    usable: usize,
    /// The number the next page written gets (the lock-byte page is skipped, left zero).
    next: u32,
    lock_page: u32,
    roots: Vec<(u32, Vec<u8>)>,
    scratch: Vec<u8>,
}

impl PageOut {
    /// Pages appended to `file`, which holds `pages` pages of `page_size` bytes.
    pub fn new(file: File, page_size: usize, reserved: usize, pages: u32) -> io::Result<PageOut> {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.seek(SeekFrom::Start(u64::from(pages) * page_size as u64))?;
        Ok(PageOut {
            w,
            page_size,
            usable: page_size - reserved,
            next: pages + 1,
            lock_page: (PENDING_BYTE / page_size as u64) as u32 + 1,
            roots: Vec::new(),
            scratch: vec![0; page_size],
        })
    }

    /// The number the next appended page gets.
    fn next_number(&self) -> u32 {
        self.after(self.next - 1)
    }

    /// The number of the page appended right after page `page`.
    fn after(&self, page: u32) -> u32 {
        if page + 1 == self.lock_page {
            page + 2
        } else {
            page + 1
        }
    }

    /// Append one page; its number.
    fn append(&mut self, page: &[u8]) -> io::Result<u32> {
        debug_assert_eq!(page.len(), self.page_size);
        if self.next == self.lock_page {
            self.scratch.fill(0);
            self.w.write_all(&self.scratch)?;
            self.next += 1;
        }
        self.w.write_all(page)?;
        self.next += 1;
        Ok(self.next - 1)
    }

    /// Where the next page goes, for [`PageOut::rewind`].
    pub fn mark(&self) -> u32 {
        self.next
    }

    /// Forget the pages appended since `mark` (the next ones are written over them): a tree
    /// abandoned half-way. Roots are written only by `finish`, so none of them is lost.
    pub fn rewind(&mut self, mark: u32) -> io::Result<()> {
        self.w.seek(SeekFrom::Start(u64::from(mark - 1) * self.page_size as u64))?;
        self.next = mark;
        Ok(())
    }

    /// The root page's content, written into page `page` (already in the file) by `finish`.
    fn put_root(&mut self, page: u32, content: &[u8]) {
        self.roots.push((page, content.to_vec()));
    }

    /// A chain of overflow pages holding `rest`; the first page's number.
    fn overflow(&mut self, rest: &[u8]) -> io::Result<u32> {
        let chunk = self.usable - 4;
        let first = self.next_number();
        let (mut page, mut buf) = (first, std::mem::take(&mut self.scratch));
        let last = rest.len().div_ceil(chunk) - 1;
        for (k, part) in rest.chunks(chunk).enumerate() {
            let next = if k < last { self.after(page) } else { 0 };
            buf.fill(0);
            buf[..4].copy_from_slice(&next.to_be_bytes());
            buf[4..4 + part.len()].copy_from_slice(part);
            let got = self.append(&buf)?;
            debug_assert_eq!(got, page);
            page = next;
        }
        self.scratch = buf;
        Ok(first)
    }

    /// Write the roots in place; the file, cut to its number of pages (pages of an abandoned
    /// tree may have gone past the last one), and that number.
    pub fn finish(mut self) -> io::Result<(File, u32)> {
        for (page, content) in std::mem::take(&mut self.roots) {
            self.w.seek(SeekFrom::Start(u64::from(page - 1) * self.page_size as u64))?;
            self.w.write_all(&content)?;
        }
        let pages = self.next - 1;
        let file = self.w.into_inner().map_err(|e| e.into_error())?;
        file.set_len(u64::from(pages) * self.page_size as u64)?;
        Ok((file, pages))
    }
}

/// Bytes of a payload of `p` bytes its cell keeps on the page (§1.6): all of it up to
/// `max_local`; past that, `min_local` plus what the last overflow page would hold if that fits
/// under `max_local`, else `min_local`.
pub fn local_size(p: usize, max_local: usize, min_local: usize, usable: usize) -> usize {
    if p <= max_local {
        return p;
    }
    let k = min_local + (p - min_local) % (usable - 4);
    if k <= max_local {
        k
    } else {
        min_local
    }
}

/// The smallest local payload of any page kind (§1.6).
pub fn min_local(usable: usize) -> usize {
    (usable - 12) * 32 / 255 - 23
}

/// One page being filled: cell offsets from the header down, cells from the end up.
struct Page {
    buf: Vec<u8>,
    kind: u8,
    usable: usize,
    cells: usize,
    /// Start of the cell content area.
    content: usize,
    /// Offset and length of the last cell added (a leaf gives it back: [`IndexTree::finish`]).
    last: (usize, usize),
}

impl Page {
    fn new(kind: u8, out: &PageOut) -> Page {
        Page { buf: vec![0; out.page_size], kind, usable: out.usable, cells: 0, content: out.usable, last: (0, 0) }
    }

    fn header_len(&self) -> usize {
        if self.kind == LEAF_TABLE || self.kind == LEAF_INDEX {
            8
        } else {
            12
        }
    }

    /// Whether a cell of `len` bytes and its offset still fit.
    fn fits(&self, len: usize) -> bool {
        self.header_len() + 2 * (self.cells + 1) + len <= self.content
    }

    /// Add `cell` after the cells already on the page (it must fit).
    fn add(&mut self, cell: &[u8]) {
        debug_assert!(self.fits(cell.len()));
        self.content -= cell.len();
        self.buf[self.content..self.content + cell.len()].copy_from_slice(cell);
        let at = self.header_len() + 2 * self.cells;
        self.buf[at..at + 2].copy_from_slice(&(self.content as u16).to_be_bytes());
        self.cells += 1;
        self.last = (self.content, cell.len());
    }

    /// Take back the last cell added.
    fn pop(&mut self) -> Vec<u8> {
        let (at, len) = self.last;
        debug_assert_eq!(at, self.content);
        let cell = self.buf[at..at + len].to_vec();
        self.buf[at..at + len].fill(0);
        self.cells -= 1;
        let ptr = self.header_len() + 2 * self.cells;
        self.buf[ptr..ptr + 2].fill(0);
        self.content += len;
        cell
    }

    /// The page with its header (§1.5); `right` is the right-most child of an interior page.
    fn image(&mut self, right: u32) -> &[u8] {
        let interior = self.header_len() == 12;
        let b = &mut self.buf;
        b[0] = self.kind;
        b[1..3].fill(0);
        b[3..5].copy_from_slice(&(self.cells as u16).to_be_bytes());
        // 65536 is written as 0.
        b[5..7].copy_from_slice(&((self.content & 0xffff) as u16).to_be_bytes());
        b[7] = 0;
        if interior {
            b[8..12].copy_from_slice(&right.to_be_bytes());
        }
        &self.buf
    }

    fn reset(&mut self) {
        self.buf.fill(0);
        self.cells = 0;
        self.content = self.usable;
    }
}

/// Write a cell's payload part into `cell`: its size, its local bytes and, past `max_local`, the
/// first overflow page of the rest (the overflow pages are appended now).
fn payload_cell(out: &mut PageOut, cell: &mut Vec<u8>, payload: &[u8], max_local: usize) -> io::Result<()> {
    let local = local_size(payload.len(), max_local, min_local(out.usable), out.usable);
    cell.extend_from_slice(&payload[..local]);
    if local < payload.len() {
        let first = out.overflow(&payload[local..])?;
        cell.extend_from_slice(&first.to_be_bytes());
    }
    Ok(())
}

/// A rowid table's B-tree, fed its rows in rowid order.
pub struct TableTree {
    leaf: Page,
    /// The leaves written so far: page number and largest rowid.
    children: Vec<(u32, i64)>,
    last_rowid: Option<i64>,
    cell: Vec<u8>,
}

impl TableTree {
    pub fn new(out: &PageOut) -> TableTree {
        TableTree { leaf: Page::new(LEAF_TABLE, out), children: Vec::new(), last_rowid: None, cell: Vec::new() }
    }

    /// The next row: its rowid (greater than the previous one) and its record.
    pub fn push(&mut self, out: &mut PageOut, rowid: i64, payload: &[u8]) -> io::Result<()> {
        if self.last_rowid.is_some_and(|last| rowid <= last) {
            return Err(io::Error::other(format!("rowid {rowid} after {}", self.last_rowid.unwrap_or_default())));
        }
        self.cell.clear();
        put_varint(&mut self.cell, payload.len() as u64);
        put_varint(&mut self.cell, rowid as u64);
        // A table leaf keeps up to usable − 35 bytes of a payload.
        payload_cell(out, &mut self.cell, payload, out.usable - 35)?;
        if !self.leaf.fits(self.cell.len()) {
            self.write_leaf(out)?;
        }
        self.leaf.add(&self.cell);
        self.last_rowid = Some(rowid);
        Ok(())
    }

    fn write_leaf(&mut self, out: &mut PageOut) -> io::Result<()> {
        let page = out.append(self.leaf.image(0))?;
        self.children.push((page, self.last_rowid.unwrap_or_default()));
        self.leaf.reset();
        Ok(())
    }

    /// The levels above the leaves, the top one into page `root`. A table without rows keeps
    /// the empty root SQLite wrote.
    pub fn finish(mut self, out: &mut PageOut, root: u32) -> io::Result<()> {
        if self.leaf.cells == 0 {
            return Ok(());
        }
        if self.children.is_empty() {
            out.put_root(root, self.leaf.image(0));
            return Ok(());
        }
        self.write_leaf(out)?;
        let mut children = self.children;
        let mut page = Page::new(INTERIOR_TABLE, out);
        // Children per interior page with every cell at its largest (4 + 9 bytes and an offset):
        // the pages of a level get as even a share as the count allows, at least 2 each.
        let per_page = (out.usable - 12) / (2 + 4 + 9) + 1;
        loop {
            let n = children.len();
            let pages = n.div_ceil(per_page);
            let mut above = Vec::with_capacity(pages);
            let mut from = 0;
            for k in 0..pages {
                let group = &children[from..from + n / pages + usize::from(k < n % pages)];
                from += group.len();
                page.reset();
                let (right, largest) = group[group.len() - 1];
                for &(child, key) in &group[..group.len() - 1] {
                    self.cell.clear();
                    self.cell.extend_from_slice(&child.to_be_bytes());
                    put_varint(&mut self.cell, key as u64);
                    page.add(&self.cell);
                }
                if pages == 1 {
                    out.put_root(root, page.image(right));
                    return Ok(());
                }
                above.push((out.append(page.image(right))?, largest));
            }
            children = above;
        }
    }
}

/// An index's B-tree, fed its entries (index records, the rowid last) in the index's order.
pub struct IndexTree {
    leaf: Page,
    /// A full leaf and the entry after it, kept until another entry comes: should none come, the
    /// leaf's own last entry goes up instead and that one makes the last leaf (no empty leaf).
    held: Option<(Page, Vec<u8>)>,
    /// Leaves written, each with the entry that follows it (to go up a level).
    separators: Vec<(u32, Vec<u8>)>,
    spare: Option<Page>,
    cell: Vec<u8>,
}

impl IndexTree {
    pub fn new(out: &PageOut) -> IndexTree {
        IndexTree { leaf: Page::new(LEAF_INDEX, out), held: None, separators: Vec::new(), spare: None, cell: Vec::new() }
    }

    /// The largest payload an index cell keeps on its page (§1.6).
    fn max_local(usable: usize) -> usize {
        (usable - 12) * 64 / 255 - 23
    }

    /// The next entry (greater than the previous one: the caller orders them).
    pub fn push(&mut self, out: &mut PageOut, record: &[u8]) -> io::Result<()> {
        self.cell.clear();
        put_varint(&mut self.cell, record.len() as u64);
        payload_cell(out, &mut self.cell, record, Self::max_local(out.usable))?;
        if let Some((mut full, separator)) = self.held.take() {
            let page = out.append(full.image(0))?;
            self.separators.push((page, separator));
            full.reset();
            self.spare = Some(full);
        }
        if self.leaf.fits(self.cell.len()) {
            self.leaf.add(&self.cell);
        } else {
            let fresh = self.spare.take().unwrap_or_else(|| Page::new(LEAF_INDEX, out));
            let full = std::mem::replace(&mut self.leaf, fresh);
            self.held = Some((full, self.cell.clone()));
        }
        Ok(())
    }

    /// The levels above the leaves, the top one into page `root`. An index without entries
    /// keeps the empty root SQLite wrote.
    pub fn finish(mut self, out: &mut PageOut, root: u32) -> io::Result<()> {
        if let Some((mut full, separator)) = self.held.take() {
            #[cfg(test)]
            tests::FIXES.with(|f| f.set((f.get().0 + 1, f.get().1)));
            let last = full.pop();
            let page = out.append(full.image(0))?;
            self.separators.push((page, last));
            self.leaf.add(&separator);
        }
        if self.leaf.cells == 0 {
            return Ok(());
        }
        if self.separators.is_empty() {
            out.put_root(root, self.leaf.image(0));
            return Ok(());
        }
        let last = out.append(self.leaf.image(0))?;
        let (mut children, mut entries): (Vec<u32>, Vec<Vec<u8>>) = self.separators.into_iter().unzip();
        children.push(last);
        let mut page = Page::new(INTERIOR_INDEX, out);
        loop {
            // `children[k]` holds what is less than `entries[k]`; the last child what is greater
            // than the last entry.
            let groups = index_groups(&entries, out.usable - 12);
            let mut above = (Vec::with_capacity(groups.len()), Vec::with_capacity(groups.len()));
            for (g, range) in groups.iter().enumerate() {
                page.reset();
                for k in range.clone() {
                    self.cell.clear();
                    self.cell.extend_from_slice(&children[k].to_be_bytes());
                    self.cell.extend_from_slice(&entries[k]);
                    page.add(&self.cell);
                }
                let right = children[range.end];
                if groups.len() == 1 {
                    out.put_root(root, page.image(right));
                    return Ok(());
                }
                above.0.push(out.append(page.image(right))?);
                if g + 1 < groups.len() {
                    above.1.push(std::mem::take(&mut entries[range.end]));
                }
            }
            (children, entries) = above;
        }
    }
}

/// The interior pages of one level of an index: ranges of `entries` (cells without their child
/// pointer) filled in order, the entry after each range but the last going up a level. The last
/// page gets at least one entry: if the last entry would go up alone, the page before gives up
/// its own last one instead and that entry comes down into the last page.
fn index_groups(entries: &[Vec<u8>], room: usize) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut from, mut used, mut k) = (0, 0, 0);
    while k < entries.len() {
        let size = 2 + 4 + entries[k].len();
        if used + size <= room {
            used += size;
        } else {
            // A page holds at least four cells: an empty page never closes here.
            groups.push(from..k);
            from = k + 1;
            used = 0;
        }
        k += 1;
    }
    groups.push(from..entries.len());
    let n = groups.len();
    if n > 1 && groups[n - 1].is_empty() {
        #[cfg(test)]
        tests::FIXES.with(|f| f.set((f.get().0, f.get().1 + 1)));
        groups[n - 2].end -= 1;
        groups[n - 1].start -= 1;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::super::record::{compare, Record};
    use super::*;
    use rusqlite::Connection;

    thread_local! {
        /// Times this thread's trees ended on a held leaf, and on an interior level whose last
        /// entry would have gone up alone.
        pub static FIXES: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    }

    /// A database of one table and one index written by SQLite, then filled with these writers
    /// (after an abandoned index tree, given back): every page size, payloads from empty to
    /// overflowing many pages, entries whose index levels end on every case of
    /// [`index_groups`], checked by SQLite's own integrity check and read back row by row and
    /// entry by entry.
    fn write_and_check(page_size: usize, rows: &[(i64, Vec<u8>)]) {
        let path = std::env::temp_dir().join(format!("snapscope-btree-{}-{page_size}-{}.db", std::process::id(), rows.len()));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA page_size = {page_size}; PRAGMA journal_mode = OFF; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT); CREATE INDEX t_ab ON t(b, a);"
        ))
        .unwrap();
        let root =
            |name: &str| conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = ?1", [name], |r| r.get::<_, u32>(0)).unwrap();
        let (table_root, index_root) = (root("t"), root("t_ab"));
        drop(conn);
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        let header = super::super::Header::read(&mut file).unwrap();
        let mut out = PageOut::new(file, header.page_size, header.reserved, header.pages).unwrap();
        let mut table = TableTree::new(&out);
        let mut entries = Vec::new();
        let mut rec = Record::new(4);
        let mut buf = Vec::new();
        for (id, b) in rows {
            let a = id % 7 - 3;
            rec.clear();
            rec.null();
            rec.int(a);
            rec.text(b);
            buf.clear();
            rec.write(&mut buf);
            table.push(&mut out, *id, &buf).unwrap();
            rec.clear();
            rec.text(b);
            rec.int(a);
            rec.int(*id);
            buf.clear();
            rec.write(&mut buf);
            entries.push(buf.clone());
        }
        table.finish(&mut out, table_root).unwrap();
        entries.sort_by(|x, y| compare(x, y));
        // A tree abandoned half-way, as an index found out of order is: twice the entries'
        // pages written, then given back.
        let mark = out.mark();
        let mut abandoned = IndexTree::new(&out);
        for e in entries.iter().chain(&entries) {
            abandoned.push(&mut out, e).unwrap();
        }
        out.rewind(mark).unwrap();
        let mut index = IndexTree::new(&out);
        for e in &entries {
            index.push(&mut out, e).unwrap();
        }
        index.finish(&mut out, index_root).unwrap();
        let (mut file, pages) = out.finish().unwrap();
        assert_eq!(file.metadata().unwrap().len(), u64::from(pages) * page_size as u64, "no page of the abandoned tree is left");
        header.write(&mut file, pages).unwrap();
        drop(file);
        let conn = Connection::open(&path).unwrap();
        let check: Vec<String> =
            conn.prepare("PRAGMA integrity_check").unwrap().query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(check, ["ok"], "page size {page_size}, {} rows", rows.len());
        let back: Vec<(i64, i64, Vec<u8>)> = conn
            .prepare("SELECT id, a, CAST(b AS BLOB) FROM t ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let want: Vec<(i64, i64, Vec<u8>)> = rows.iter().map(|(id, b)| (*id, id % 7 - 3, b.clone())).collect();
        assert_eq!(back, want);
        let by_index: Vec<i64> = conn
            .prepare("SELECT id FROM t INDEXED BY t_ab WHERE b >= '' ORDER BY b, a")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(by_index.len(), rows.len());
        drop(conn);
        std::fs::remove_file(&path).unwrap();
    }

    /// Text of `len` bytes, varied by `seed` (and not in rowid order).
    fn text(seed: i64, len: usize) -> Vec<u8> {
        (0..len).map(|i| b'a' + ((seed as usize * 7919 + i * 31) % 26) as u8).collect()
    }

    #[test]
    fn small_rows_make_deep_trees() {
        for page_size in [512, 4096] {
            for n in [0usize, 1, 2, 5, 40, 41, 300, 5000, 20_000] {
                let rows: Vec<(i64, Vec<u8>)> = (0..n as i64).map(|i| (i * 3 + 1, text(i, (i % 13) as usize))).collect();
                write_and_check(page_size, &rows);
            }
        }
    }

    #[test]
    fn long_rows_overflow() {
        for page_size in [512, 1024, 16384, 65536] {
            let rows: Vec<(i64, Vec<u8>)> = (0..120i64)
                .map(|i| {
                    // Around every local-payload boundary, and up to many overflow pages.
                    let len = match i % 6 {
                        0 => page_size - 40 + (i as usize % 11),
                        1 => page_size * 64 / 255 - 30 + (i as usize % 17),
                        2 => page_size * 5 + i as usize,
                        3 => (page_size - 4) * 2 + 100 - (i as usize % 200),
                        4 => 3,
                        _ => page_size / 3,
                    };
                    (i, text(i, len))
                })
                .collect();
            write_and_check(page_size, &rows);
        }
    }

    /// Entries of one size, so that some counts end a leaf level, and others an interior level,
    /// on an entry that would go up alone (both cases written and checked).
    #[test]
    fn index_trees_end_on_every_case() {
        FIXES.with(|f| f.set((0, 0)));
        for n in (30..400).step_by(7).chain([1500, 1501, 1502, 1503, 1504, 1505]) {
            let rows: Vec<(i64, Vec<u8>)> = (0..n as i64).map(|i| (i, text(i, 20))).collect();
            write_and_check(512, &rows);
        }
        let (held, group) = FIXES.with(|f| f.get());
        assert!(held > 0 && group > 0, "held leaves {held}, interior levels {group}");
    }

    #[test]
    fn interior_index_levels_never_end_empty() {
        // Every count of equal-sized entries, some of which close a level with its last entry.
        let entries: Vec<Vec<u8>> = (0..50).map(|_| vec![0u8; 90]).collect();
        for n in 1..entries.len() {
            let groups = index_groups(&entries[..n], 500);
            assert!(groups.iter().all(|g| !g.is_empty()), "{n}: {groups:?}");
            let cells: usize = groups.iter().map(|g| g.len()).sum();
            assert_eq!(cells + groups.len() - 1, n, "{n}: every entry once");
        }
    }

    #[test]
    fn local_sizes_follow_the_spec() {
        // U = 4096: table leaves keep up to 4061 bytes, index cells up to 1002, at least 489.
        let u = 4096;
        assert_eq!(IndexTree::max_local(u), 1002);
        assert_eq!(min_local(u), 489);
        assert_eq!(local_size(4061, u - 35, 489, u), 4061);
        // Past the largest local payload: what the last overflow page would hold, when that
        // fits beside the smallest local payload, else the smallest.
        assert_eq!(local_size(4062, u - 35, 489, u), 489);
        assert_eq!(local_size(489 + 4092 + 10, u - 35, 489, u), 499);
        assert_eq!(local_size(1003, 1002, 489, u), 489);
        assert_eq!(local_size(489 + 4092 + 100, 1002, 489, u), 589);
        assert_eq!(local_size(489 + 4092 + 1500, 1002, 489, u), 489);
    }
}
