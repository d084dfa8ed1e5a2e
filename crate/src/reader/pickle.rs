//! A pickle virtual machine for untrusted input that never executes anything.
//!
//! It understands the opcodes that plain builtin data uses in protocols 0-5 and builds the
//! values into an [`Arena`]. Every import of a callable is refused, except
//! `torch.jit._pickle.restore_type_tag`, which TorchScript's pickler wraps around every dict and
//! list and which is unwrapped to its first argument. Lengths are checked against the bytes
//! actually present, memo references against the memo, and the stack against underflow, so a
//! hostile file yields an error with a byte offset, never a panic or an allocation bomb.
//!
//! The VM streams: it takes the file in chunks and keeps only the bytes of an opcode not yet
//! complete. Trace entries are folded into compact events the moment they are appended to their
//! list (see [`DecodeState::fold_events`]), and the arena slots they used are recycled: a 1 GB
//! snapshot never exists as a generic object graph.

use super::arena::{Arena, Node};
use super::decode::DecodeState;
use super::entry;
use super::memo::Memo;
use super::memo::Replaced;
use super::recycle::Recycler;
use crate::codes::ErrorCode;
use crate::error::{Error, Result};

/// What the VM learned besides the value.
#[derive(Debug, Clone, Default)]
pub struct PickleInfo {
    pub protocol: u8,
    /// Offset just after the STOP opcode.
    pub end: usize,
    /// Bytes after STOP (old torch_npu re-dumps, base64 padding): ignored with a warning.
    pub trailing_bytes: usize,
    /// Whether every trailing byte is NUL.
    pub trailing_zeros: bool,
}

/// Why an opcode did not run: its bytes have not all arrived yet, or the input is bad.
enum Halt {
    More,
    Fail(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Fail(e)
    }
}

type Step<T> = std::result::Result<T, Halt>;

/// Bytes that must remain for [`StreamVm::run_fast`] to run an opcode: its longest fixed-size
/// argument (LONG1 of 8 bytes) fits, so it never checks lengths.
const FAST_WINDOW: usize = 16;

/// A trace entry cut by the end of the input so far is read once more has come if it started
/// this close to the end (a longer one is left to the general path: waiting for it would read
/// its start again with every chunk).
const ENTRY_WAIT: usize = 64 << 10;

/// A pickle read incrementally: [`StreamVm::feed`] chunks, then [`StreamVm::finish`].
pub struct StreamVm {
    /// Unconsumed input; `base` is the file offset of `buf[0]`.
    buf: Vec<u8>,
    pos: usize,
    base: usize,
    /// True once the caller said no more input comes.
    last: bool,
    arena: Arena,
    stack: Vec<Node>,
    marks: Vec<usize>,
    memo: Memo,
    /// File offset of the opcode being executed, for error messages.
    op_at: usize,
    info: PickleInfo,
    root: Option<Node>,
    state: DecodeState,
    recycler: Recycler,
    /// The interned "action" string once read: what marks a dict as a trace entry.
    action_key: Option<Node>,
    /// Buffers reused by every fold.
    fold_items: Vec<Node>,
    replaced: Replaced,
    /// The trace list folded last: the entries of its next batches are read straight into
    /// events when they can be ([`entry::read`]).
    folding_list: Option<u32>,
    /// What [`entry::read`] reuses.
    entry_reader: entry::EntryReader,
    /// Off only in tests, to compare with the general path.
    read_entries: bool,
}

/// Parse one complete pickle held in memory; returns the arena, the root and the decode state.
pub fn parse(data: &[u8]) -> Result<(Arena, Node, PickleInfo, DecodeState)> {
    let mut vm = StreamVm::new();
    vm.feed(data)?;
    vm.finish()
}

impl Default for StreamVm {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamVm {
    pub fn new() -> Self {
        StreamVm {
            buf: Vec::new(),
            pos: 0,
            base: 0,
            last: false,
            arena: Arena::default(),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Memo::default(),
            op_at: 0,
            info: PickleInfo { trailing_zeros: true, ..Default::default() },
            root: None,
            state: DecodeState::default(),
            recycler: Recycler::default(),
            action_key: None,
            fold_items: Vec::new(),
            replaced: Replaced::default(),
            folding_list: None,
            entry_reader: entry::EntryReader::default(),
            read_entries: true,
        }
    }

    /// Run every opcode the input so far completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        if self.root.is_some() {
            self.info.trailing_bytes += chunk.len();
            self.info.trailing_zeros &= chunk.iter().all(|&b| b == 0);
            return Ok(());
        }
        self.buf.extend_from_slice(chunk);
        self.run_fed()
    }

    /// The input buffer with room for `n` more bytes: the caller writes the next `n` bytes of
    /// input from its start, then calls [`StreamVm::filled`] (the page copies each chunk of the
    /// file from JavaScript straight into it, not first into a buffer of its own).
    pub fn room(&mut self, n: usize) -> &mut Vec<u8> {
        self.buf.reserve(n);
        &mut self.buf
    }

    /// The `n` bytes written after the buffer's end (into [`StreamVm::room`]) are input: run
    /// every opcode they complete.
    ///
    /// # Safety
    /// The `n` bytes after the buffer's length, within the capacity `room(n)` made, must have
    /// been written since.
    pub unsafe fn filled(&mut self, n: usize) -> Result<()> {
        let len = self.buf.len();
        assert!(n <= self.buf.capacity() - len, "more bytes than the room made");
        // SAFETY: the caller wrote these n bytes (the function's contract), within capacity.
        unsafe { self.buf.set_len(len + n) };
        if self.root.is_some() {
            let rest = self.buf.split_off(len);
            return self.feed(&rest);
        }
        self.run_fed()
    }

    /// Run the opcodes the buffer completes, then keep only the incomplete opcode's bytes.
    fn run_fed(&mut self) -> Result<()> {
        self.pump()?;
        self.buf.drain(..self.pos);
        self.base += self.pos;
        self.pos = 0;
        Ok(())
    }

    /// A VM that leaves every trace entry to the general path (to check the fast one against).
    #[cfg(test)]
    pub fn general_only() -> Self {
        StreamVm { read_entries: false, ..Self::new() }
    }

    /// No more input: the pickle must be complete.
    pub fn finish(mut self) -> Result<(Arena, Node, PickleInfo, DecodeState)> {
        self.last = true;
        if self.root.is_none() {
            self.pump()?;
        }
        let root = self.root.ok_or_else(|| Error::snapshot("the file is empty"))?;
        Ok((self.arena, root, self.info, self.state))
    }

    fn pump(&mut self) -> Result<()> {
        match self.run() {
            Ok(()) => {
                let rest = &self.buf[self.pos..];
                self.info.trailing_bytes += rest.len();
                self.info.trailing_zeros &= rest.iter().all(|&b| b == 0);
                self.pos = self.buf.len();
                Ok(())
            }
            Err(Halt::More) => {
                self.pos = self.op_at - self.base;
                Ok(())
            }
            Err(Halt::Fail(e)) => Err(e),
        }
    }

    fn err(&self, at: usize, msg: impl std::fmt::Display) -> Halt {
        Halt::Fail(Error::pickle(at, msg))
    }

    #[inline(always)]
    fn take(&mut self, n: usize, what: &str) -> Step<std::ops::Range<usize>> {
        let at = self.pos;
        match at.checked_add(n).filter(|&e| e <= self.buf.len()) {
            Some(end) => {
                self.pos = end;
                Ok(at..end)
            }
            None if !self.last => Err(Halt::More),
            None => {
                Err(self.err(self.op_at, format!("{what} declares {n} bytes but only {} remain (truncated file?)", self.buf.len() - at)))
            }
        }
    }

    #[inline(always)]
    fn u8(&mut self) -> Step<u8> {
        let r = self.take(1, "opcode argument")?;
        Ok(self.buf[r.start])
    }
    #[inline(always)]
    fn u16(&mut self) -> Step<u16> {
        let r = self.take(2, "2-byte argument")?;
        Ok(u16::from_le_bytes(self.buf[r].try_into().unwrap()))
    }
    #[inline(always)]
    fn u32(&mut self) -> Step<u32> {
        let r = self.take(4, "4-byte argument")?;
        Ok(u32::from_le_bytes(self.buf[r].try_into().unwrap()))
    }
    #[inline(always)]
    fn u64(&mut self) -> Step<u64> {
        let r = self.take(8, "8-byte argument")?;
        Ok(u64::from_le_bytes(self.buf[r].try_into().unwrap()))
    }
    fn line(&mut self) -> Step<std::ops::Range<usize>> {
        let at = self.pos;
        match self.buf[at..].iter().position(|&b| b == b'\n') {
            Some(n) => {
                self.pos = at + n + 1;
                Ok(at..at + n)
            }
            None if !self.last => Err(Halt::More),
            None => Err(self.err(self.base + at, "text argument without a newline (truncated file?)")),
        }
    }

    fn pop(&mut self, at: usize) -> Step<Node> {
        self.stack.pop().ok_or_else(|| self.err(at, "stack underflow"))
    }
    #[inline(always)]
    fn top(&self, at: usize) -> Step<Node> {
        self.stack.last().copied().ok_or_else(|| self.err(at, "stack underflow"))
    }
    /// Removes the most recent MARK and returns where its items start on the stack.
    fn pop_mark(&mut self, at: usize) -> Step<usize> {
        let m = self.marks.pop().ok_or_else(|| self.err(at, "MARK expected but none is open"))?;
        if m > self.stack.len() {
            return Err(self.err(at, "MARK lies above the stack top"));
        }
        Ok(m)
    }

    /// The last `n` stack items' start, for the one-item APPEND and SETITEM.
    fn last_items(&self, at: usize, n: usize) -> Step<usize> {
        self.stack.len().checked_sub(n).ok_or_else(|| self.err(at, "stack underflow"))
    }

    /// The container below the items starting at `m`: the target of APPENDS and SETITEMS.
    fn target_below(&self, at: usize, m: usize) -> Step<Node> {
        m.checked_sub(1).map(|t| self.stack[t]).ok_or_else(|| self.err(at, "stack underflow"))
    }

    fn memo_put(&mut self, at: usize, idx: usize) -> Step<()> {
        let v = self.top(at)?;
        if idx < self.recycler.memo_mark {
            // An older slot overwritten: its new value is reachable from before the mark.
            self.recycler.extra_roots.push(v);
        }
        self.memo.put(idx, v).map_err(|m| self.err(at, m))
    }
    #[inline(always)]
    fn memo_get(&mut self, at: usize, idx: usize) -> Step<()> {
        match self.memo.get(idx) {
            Some(v) => {
                self.stack.push(v);
                Ok(())
            }
            None => Err(self.err(at, format!("memo reference {idx} was never stored"))),
        }
    }

    fn string(&mut self, r: std::ops::Range<usize>) -> Node {
        match std::str::from_utf8(&self.buf[r.clone()]) {
            Ok(s) => self.arena.new_str(s),
            Err(_) => self.arena.new_str(&String::from_utf8_lossy(&self.buf[r])),
        }
    }

    /// APPEND(S): the stack items from `m` on go to the list below them.
    fn append(&mut self, at: usize, m: usize) -> Step<()> {
        let target = self.target_below(at, m)?;
        match target {
            Node::List(i) if self.state.is_folding(i) || self.starts_or_ends_with_entry(m) => {
                self.fold(i, m);
                Ok(())
            }
            Node::List(i) | Node::Set(i) => {
                if (i as usize) < self.recycler.seqs_mark {
                    self.recycler.extra_roots.push(target);
                }
                if let Some(seq) = self.arena.seqs.get_mut(i as usize) {
                    seq.extend_from_slice(&self.stack[m..]);
                }
                self.stack.truncate(m);
                Ok(())
            }
            _ => Err(self.err(at, format!("APPEND to a {}", self.arena.type_name(target)))),
        }
    }

    /// Turn the trace entries from stack slot `m` on, appended to list `list`, into events,
    /// then recycle what they used.
    fn fold(&mut self, list: u32, m: usize) {
        let mut items = std::mem::take(&mut self.fold_items);
        items.clear();
        // Entries appended before the first recognisable one are earlier events too.
        if !self.state.is_folding(list) {
            items.extend(self.arena.seqs.get_mut(list as usize).map(std::mem::take).unwrap_or_default());
        }
        items.extend(self.stack.drain(m..));
        // Memo slots that name a folded entry or its frames list, and what they now hold.
        let mut replaced = std::mem::take(&mut self.replaced);
        replaced.reset(self.recycler.maps_mark, self.recycler.seqs_mark);
        self.state.fold_events(&self.arena, list, items.iter().copied(), |item, frames| {
            replaced.set(item, Node::Folded);
            if let Some((seq, stack)) = frames {
                replaced.set(Node::List(seq), Node::Stack(stack));
            }
        });
        self.recycler.collect(&mut self.arena, &mut self.memo, &self.stack, &mut self.state, &replaced);
        self.replaced = replaced;
        self.fold_items = items;
        self.folding_list = Some(list);
    }

    /// Whether a trace entry starts too close to the end of the input so far for the fast path
    /// to look at it: it waits for more input as a cut one does.
    fn entry_at_end(&self) -> bool {
        self.buf.len() - self.pos <= FAST_WINDOW && self.buf.get(self.pos) == Some(&b'}') && self.in_entry_batch()
    }

    /// Whether the next value pushed is an item of a trace list's batch whose items so far were
    /// all read by [`entry::read`]: only then may the next entry be, for its frame and stack ids
    /// to come out in the order the fold would give them.
    #[inline(always)]
    fn in_entry_batch(&self) -> bool {
        let (Some(&m), Some(list), true) = (self.marks.last(), self.folding_list, self.read_entries) else {
            return false;
        };
        m.checked_sub(1).and_then(|t| self.stack.get(t)) == Some(&Node::List(list))
            && self.stack.len().checked_sub(m) == Some(self.state.pending_len())
    }

    /// SETITEM(S): the stack items from `m` on are key/value pairs for the dict below them.
    fn set_items(&mut self, at: usize, m: usize) -> Step<()> {
        let target = self.target_below(at, m)?;
        if !(self.stack.len() - m).is_multiple_of(2) {
            return Err(self.err(at, "SETITEMS with an odd number of items"));
        }
        match target {
            Node::Dict(i) => {
                if (i as usize) < self.recycler.maps_mark {
                    self.recycler.extra_roots.push(target);
                }
                if let Some(map) = self.arena.maps.get_mut(i as usize) {
                    map.extend(self.stack[m..].chunks_exact(2).map(|kv| (kv[0], kv[1])));
                }
                self.stack.truncate(m);
                Ok(())
            }
            _ => Err(self.err(at, format!("SETITEM on a {}", self.arena.type_name(target)))),
        }
    }

    /// Whether the batch from stack slot `m` on, appended to a list, holds trace entries. Only
    /// its ends are looked at: the batches of a frames list (30 frame dicts per event) must stay
    /// cheap, and a trace list's batch is all entries.
    fn starts_or_ends_with_entry(&mut self, m: usize) -> bool {
        if self.action_key.is_none() {
            // Strings are interned: once "action" has been read, keys compare by id.
            self.action_key = self.arena.find_str("action");
        }
        let Some(action) = self.action_key else {
            return false;
        };
        // A dict whose last `action` key holds a string: an allocator trace entry.
        let is_entry = |v: &Node| {
            let pairs = self.arena.as_dict(*v).unwrap_or(&[]);
            pairs.iter().rev().find(|(k, _)| *k == action).is_some_and(|(_, v)| matches!(v, Node::Str(_)))
        };
        let items = &self.stack[m..];
        items.first().is_some_and(is_entry) || items.last().is_some_and(is_entry)
    }

    fn global(&mut self, at: usize, module: &str, name: &str) -> Step<()> {
        if module == "torch.jit._pickle" && name == "restore_type_tag" {
            self.stack.push(Node::TypeTagFn);
            return Ok(());
        }
        Err(Halt::Fail(Error::new(
            ErrorCode::PickleUnsafe,
            format!("byte {at}: the pickle imports {module}.{name}; snapshot pickles contain plain data only, and snapscope never runs code from a file"),
            "this file is not a memory snapshot or was tampered with; do not open it with pickle.load either",
        )))
    }

    fn parse_text_int(&self, at: usize, r: std::ops::Range<usize>) -> Step<i128> {
        let s = std::str::from_utf8(&self.buf[r]).map_err(|_| self.err(at, "INT/LONG argument is not text"))?;
        let s = s.trim().trim_end_matches('L');
        match s {
            "00" => Ok(0),
            "01" => Ok(1),
            _ => s.parse::<i128>().map_err(|_| self.err(at, format!("bad integer literal {s:?}"))),
        }
    }

    fn long(&mut self, at: usize, r: std::ops::Range<usize>) -> Step<Node> {
        let raw = &self.buf[r];
        if raw.len() > 16 {
            return Err(self.err(at, format!("{}-byte integer is too large for any snapshot field", raw.len())));
        }
        if raw.is_empty() {
            return Ok(Node::Int(0));
        }
        let neg = raw[raw.len() - 1] & 0x80 != 0;
        let mut bytes = [if neg { 0xff } else { 0 }; 16];
        // A byte loop: a 1-16 byte memcpy call costs more than the copy.
        for (b, &r) in bytes.iter_mut().zip(raw) {
            *b = r;
        }
        Ok(self.arena.new_int(i128::from_le_bytes(bytes)))
    }

    /// The opcodes that make up trace entries and frames (memo fetches and stores, marks, small
    /// ints, empty containers, short strings), run while at least `FAST_WINDOW` bytes remain
    /// without the general loop's per-opcode bookkeeping. It stops at any other opcode and at
    /// anything that could fail, leaving it to [`StreamVm::run`], which reports errors.
    /// True when it stopped at a trace entry that may read once more input has come.
    fn run_fast(&mut self) -> bool {
        let buf = &self.buf[..];
        let mut pos = self.pos;
        let end = buf.len().saturating_sub(FAST_WINDOW);
        while pos < end {
            let (op, arg) = (buf[pos], &buf[pos + 1..pos + FAST_WINDOW]);
            let u32_arg = || u32::from_le_bytes([arg[0], arg[1], arg[2], arg[3]]);
            pos += match op {
                b'h' | b'j' => {
                    let (idx, len) = if op == b'h' { (arg[0] as usize, 2) } else { (u32_arg() as usize, 5) };
                    let Some(v) = self.memo.get(idx) else { break };
                    self.stack.push(v);
                    len
                }
                0x94 | b'q' | b'r' => {
                    let (idx, len) = match op {
                        0x94 => (self.memo.len(), 1),
                        b'q' => (arg[0] as usize, 2),
                        _ => (u32_arg() as usize, 5),
                    };
                    let Some(&v) = self.stack.last() else { break };
                    if idx < self.recycler.memo_mark {
                        self.recycler.extra_roots.push(v);
                    }
                    if self.memo.put(idx, v).is_err() {
                        break;
                    }
                    len
                }
                b'(' => {
                    self.marks.push(self.stack.len());
                    1
                }
                b'K' => {
                    self.stack.push(Node::Int(arg[0] as i64));
                    2
                }
                b'M' => {
                    self.stack.push(Node::Int(u16::from_le_bytes([arg[0], arg[1]]) as i64));
                    3
                }
                b'J' => {
                    self.stack.push(Node::Int(u32_arg() as i32 as i64));
                    5
                }
                0x8a if arg[0] <= 8 => {
                    // LONG1 of up to 8 bytes: a two's-complement i64.
                    // Read 8 bytes (the window has them) and keep the low n, sign-extended.
                    let n = arg[0] as usize;
                    let word = u64::from_le_bytes(arg[1..9].try_into().unwrap());
                    let v = if n == 0 { 0 } else { ((word << (64 - 8 * n)) as i64) >> (64 - 8 * n) };
                    self.stack.push(Node::Int(v));
                    2 + n
                }
                0x8c => {
                    let n = arg[0] as usize;
                    let Some(text) = buf.get(pos + 2..pos + 2 + n).and_then(|b| std::str::from_utf8(b).ok()) else { break };
                    let v = self.arena.new_str(text);
                    self.stack.push(v);
                    2 + n
                }
                b'}' if self.in_entry_batch() => {
                    let read = match entry::read(&buf[pos..], &self.memo, &self.arena, &mut self.state, &mut self.entry_reader) {
                        Ok(read) => read,
                        Err(why) => {
                            self.pos = pos;
                            return why == entry::Unread::Short && buf.len() - pos < ENTRY_WAIT;
                        }
                    };
                    let Some(v) = self.state.push_pending(read.event, read.stream) else { break };
                    self.stack.push(v);
                    // The slots are the next free ones (checked by the read): the puts cannot fail.
                    if read.dict_memoized {
                        let _ = self.memo.put(self.memo.len(), v);
                    }
                    if let Some(list) = read.list_memo {
                        let _ = self.memo.put(self.memo.len(), list);
                    }
                    read.len
                }
                b'}' | b']' => {
                    let v = if op == b'}' { self.arena.new_empty_dict() } else { self.arena.new_empty_seq(Node::List) };
                    self.stack.push(v);
                    // Every container is memoized right after it is made: do it from the value
                    // at hand, because reading back the stack slot just written (as MEMOIZE
                    // does) stalls the CPU on a store it cannot forward.
                    if arg[0] != 0x94 {
                        1
                    } else {
                        let idx = self.memo.len();
                        if idx < self.recycler.memo_mark {
                            self.recycler.extra_roots.push(v);
                        }
                        if self.memo.put(idx, v).is_err() {
                            pos += 1; // the general path runs the MEMOIZE and reports the error
                            break;
                        }
                        2
                    }
                }
                b'N' => {
                    self.stack.push(Node::None);
                    1
                }
                _ => break,
            };
        }
        self.pos = pos;
        false
    }

    fn run(&mut self) -> Step<()> {
        loop {
            let waits = (self.buf.len() - self.pos > FAST_WINDOW && self.run_fast()) || self.entry_at_end();
            let at = self.base + self.pos;
            self.op_at = at;
            if waits && !self.last {
                return Err(Halt::More);
            }
            let op = match self.buf.get(self.pos) {
                Some(&b) => b,
                None if !self.last => return Err(Halt::More),
                None if at == 0 => return Err(Error::snapshot("the file is empty").into()),
                None => return Err(self.err(at, "the pickle ends before its STOP opcode (truncated file?)")),
            };
            self.pos += 1;
            match op {
                0x80 => {
                    let p = self.u8()?;
                    if p > 5 {
                        return Err(Error::new(
                            ErrorCode::PickleUnsupported,
                            format!("byte {at}: pickle protocol {p} is not supported (protocols 0-5 are)"),
                            "re-dump the snapshot with pickle protocol 4 or 5",
                        )
                        .into());
                    }
                    self.info.protocol = p;
                }
                0x95 => {
                    self.u64()?; // FRAME: a length hint for buffered readers, no structure
                }
                b'.' => {
                    let root = self.pop(at)?;
                    self.root = Some(root);
                    self.info.end = self.base + self.pos;
                    return Ok(());
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop(at)?;
                }
                b'1' => {
                    let m = self.pop_mark(at)?;
                    self.stack.truncate(m);
                }
                b'2' => {
                    let t = self.top(at)?;
                    self.stack.push(t);
                }
                b'N' => self.stack.push(Node::None),
                0x88 => self.stack.push(Node::Bool(true)),
                0x89 => self.stack.push(Node::Bool(false)),
                b'I' | b'L' => {
                    let raw = self.line()?;
                    let text = &self.buf[raw.clone()];
                    let (one, zero) = (text == b"01", text == b"00");
                    let v = self.parse_text_int(at, raw)?;
                    let id = if op == b'I' && one {
                        Node::Bool(true)
                    } else if op == b'I' && zero {
                        Node::Bool(false)
                    } else {
                        self.arena.new_int(v)
                    };
                    self.stack.push(id);
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.stack.push(Node::Int(v as i64));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.stack.push(Node::Int(v as i64));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.stack.push(Node::Int(v as i64));
                }
                0x8a => {
                    let n = self.u8()? as usize;
                    let raw = self.take(n, "LONG1")?;
                    let id = self.long(at, raw)?;
                    self.stack.push(id);
                }
                0x8b => {
                    let n = self.u32()? as i32;
                    if n < 0 {
                        return Err(self.err(at, "LONG4 with a negative length"));
                    }
                    let raw = self.take(n as usize, "LONG4")?;
                    let id = self.long(at, raw)?;
                    self.stack.push(id);
                }
                b'F' => {
                    let raw = self.line()?;
                    let v = std::str::from_utf8(&self.buf[raw])
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .ok_or_else(|| self.err(at, "bad FLOAT literal"))?;
                    self.stack.push(Node::Float(v));
                }
                b'G' => {
                    let raw = self.take(8, "BINFLOAT")?;
                    self.stack.push(Node::Float(f64::from_be_bytes(self.buf[raw].try_into().unwrap())));
                }
                b'X' | 0x8c | 0x8d | b'T' | b'U' => {
                    let n = match op {
                        0x8c | b'U' => self.u8()? as u64,
                        b'X' | b'T' => self.u32()? as u64,
                        _ => self.u64()?,
                    };
                    let n = usize::try_from(n).map_err(|_| self.err(at, format!("string length {n} exceeds the address space")))?;
                    let raw = self.take(n, "string")?;
                    let id = self.string(raw);
                    self.stack.push(id);
                }
                b'C' | b'B' | 0x8e | 0x96 => {
                    let n = match op {
                        b'C' => self.u8()? as u64,
                        b'B' => self.u32()? as u64,
                        _ => self.u64()?,
                    };
                    let n = usize::try_from(n).map_err(|_| self.err(at, format!("bytes length {n} exceeds the address space")))?;
                    let raw = self.take(n, "bytes")?;
                    let v = self.arena.new_bytes(raw.len());
                    self.stack.push(v);
                }
                b']' => {
                    let id = self.arena.new_empty_seq(Node::List);
                    self.stack.push(id);
                }
                b')' => {
                    let id = self.arena.new_empty_seq(Node::Tuple);
                    self.stack.push(id);
                }
                0x8f => {
                    let id = self.arena.new_empty_seq(Node::Set);
                    self.stack.push(id);
                }
                b'}' => {
                    let id = self.arena.new_empty_dict();
                    self.stack.push(id);
                }
                b'l' | b't' | 0x91 => {
                    let m = self.pop_mark(at)?;
                    let items = self.stack.split_off(m);
                    let kind: fn(u32) -> Node = match op {
                        b'l' => Node::List,
                        b't' => Node::Tuple,
                        _ => Node::Set,
                    };
                    let id = self.arena.new_seq(kind, items);
                    self.stack.push(id);
                }
                b'd' => {
                    let m = self.pop_mark(at)?;
                    if !(self.stack.len() - m).is_multiple_of(2) {
                        return Err(self.err(at, "DICT with an odd number of items"));
                    }
                    let pairs = self.stack[m..].chunks_exact(2).map(|kv| (kv[0], kv[1])).collect();
                    self.stack.truncate(m);
                    let id = self.arena.new_dict(pairs);
                    self.stack.push(id);
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    if self.stack.len() < n {
                        return Err(self.err(at, "stack underflow"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    let id = self.arena.new_seq(Node::Tuple, items);
                    self.stack.push(id);
                }
                b'a' => {
                    let m = self.last_items(at, 1)?;
                    self.append(at, m)?;
                }
                b'e' | 0x90 => {
                    let m = self.pop_mark(at)?;
                    self.append(at, m)?;
                }
                b's' => {
                    let m = self.last_items(at, 2)?;
                    self.set_items(at, m)?;
                }
                b'u' => {
                    let m = self.pop_mark(at)?;
                    self.set_items(at, m)?;
                }
                b'p' => {
                    let raw = self.line()?;
                    let idx = self.parse_text_int(at, raw)?;
                    self.memo_put(at, usize::try_from(idx).map_err(|_| self.err(at, "negative memo index"))?)?;
                }
                b'q' => {
                    let i = self.u8()? as usize;
                    self.memo_put(at, i)?;
                }
                b'r' => {
                    let i = self.u32()? as usize;
                    self.memo_put(at, i)?;
                }
                0x94 => {
                    let i = self.memo.len();
                    self.memo_put(at, i)?;
                }
                b'g' => {
                    let raw = self.line()?;
                    let idx = self.parse_text_int(at, raw)?;
                    self.memo_get(at, usize::try_from(idx).map_err(|_| self.err(at, "negative memo index"))?)?;
                }
                b'h' => {
                    let i = self.u8()? as usize;
                    self.memo_get(at, i)?;
                }
                b'j' => {
                    let i = self.u32()? as usize;
                    self.memo_get(at, i)?;
                }
                b'c' => {
                    let r = self.line()?;
                    let module = String::from_utf8_lossy(&self.buf[r]).into_owned();
                    let r = self.line()?;
                    let name = String::from_utf8_lossy(&self.buf[r]).into_owned();
                    self.global(at, &module, &name)?;
                }
                0x93 => {
                    let name = self.pop(at)?;
                    let module = self.pop(at)?;
                    let (m, n) = (self.arena.as_str(module).unwrap_or("?").to_string(), self.arena.as_str(name).unwrap_or("?").to_string());
                    self.global(at, &m, &n)?;
                }
                b'R' => {
                    let args = self.pop(at)?;
                    let func = self.pop(at)?;
                    let first = self.arena.as_seq(args).and_then(|s| s.first().copied());
                    match (func, first) {
                        (Node::TypeTagFn, Some(v)) => self.stack.push(v),
                        _ => return Err(self.err(at, "REDUCE of something other than a TorchScript type tag")),
                    }
                }
                b'b' | 0x81 | 0x92 | b'i' | b'o' | b'P' | b'Q' | 0x82 | 0x83 | 0x84 | 0x97 | 0x98 => {
                    return Err(Error::new(
                        ErrorCode::PickleUnsafe,
                        format!(
                            "byte {at}: opcode 0x{op:02x} builds objects or external references; snapshot pickles contain plain data only"
                        ),
                        "this file is not a memory snapshot or was tampered with; snapscope never runs code from a file",
                    )
                    .into());
                }
                b'S' | b'V' => {
                    return Err(Error::new(
                        ErrorCode::PickleUnsupported,
                        format!("byte {at}: protocol-0 text strings are not supported"),
                        "re-dump the snapshot with pickle protocol 2 or newer (the default of every PyTorch release)",
                    )
                    .into());
                }
                _ => return Err(self.err(at, format!("unknown opcode 0x{op:02x} (not a pickle, or a corrupted one)"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(b: &[u8]) -> (Arena, Node) {
        let (a, root, _, _) = parse(b).expect("parses");
        (a, root)
    }

    fn parse_err(b: &[u8]) -> Error {
        parse(b).err().expect("fails")
    }

    #[test]
    fn shared_dict_is_one_node() {
        // pickle.dumps([d, d], 4) with d = {'a': 'xyz'}
        let b = b"\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94\x8c\x01a\x94\x8c\x03xyz\x94sh\x01e.";
        let (a, root) = parse_ok(b);
        let items = a.as_seq(root).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], items[1]);
        assert_eq!(a.as_str(a.get(items[0], "a").unwrap()), Some("xyz"));
    }

    #[test]
    fn nine_byte_long_is_exact() {
        // pickle.dumps(2**64 - 1, 4)
        let b = b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00\x8a\t\xff\xff\xff\xff\xff\xff\xff\xff\x00.";
        let (a, root) = parse_ok(b);
        assert_eq!(a.as_int(root), Some(u64::MAX as i128));
    }

    #[test]
    fn refuses_code() {
        // pickle of os.system('true') via GLOBAL + REDUCE (protocol 0 GLOBAL)
        let b = b"cos\nsystem\n(S'true'\ntR.";
        let e = parse_err(b);
        assert_eq!(e.code, ErrorCode::PickleUnsafe);
        assert!(e.message.contains("os.system"), "{}", e.message);
    }

    #[test]
    fn truncated_reports_offset() {
        let b = b"\x80\x04\x8c\x10abc";
        let e = parse_err(b);
        assert!(e.message.starts_with("byte 2:"), "{}", e.message);
    }

    #[test]
    fn bad_memo_reference() {
        let b = b"\x80\x04j\x00\x00\x01\x00.";
        assert!(parse_err(b).message.contains("memo reference"));
    }
}
