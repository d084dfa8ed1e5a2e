//! A pickle virtual machine for untrusted input that never executes anything.
//!
//! It understands the opcodes that plain builtin data uses in protocols 0-5 and builds the
//! values into an [`Arena`]. Every import of a callable is refused, except
//! `torch.jit._pickle.restore_type_tag`, which TorchScript's pickler wraps around every dict and
//! list and which is unwrapped to its first argument. Lengths are checked against the bytes
//! actually present, memo references against the memo, and the stack against underflow, so a
//! hostile file yields an error with a byte offset, never a panic or an allocation bomb.

use super::arena::{Arena, Node, NodeId};
use crate::error::{Error, Result};
use std::borrow::Cow;

/// What the VM learned besides the value.
#[derive(Debug, Clone, Default)]
pub struct PickleInfo {
    pub protocol: u8,
    /// Offset just after the STOP opcode.
    pub end: usize,
    /// Bytes after STOP (old torch_npu re-dumps, base64 padding): ignored with a warning.
    pub trailing_bytes: usize,
}

const MAX_MEMO_GAP: usize = 1 << 20;

struct Vm<'a, 'b> {
    data: &'a [u8],
    pos: usize,
    arena: &'b mut Arena<'a>,
    stack: Vec<NodeId>,
    marks: Vec<usize>,
    memo: Vec<NodeId>,
    /// Offset of the opcode being executed, for error messages.
    op_at: usize,
}

const UNSET: NodeId = NodeId::MAX;

/// Parse one pickle from `data` into `arena`; returns the root node.
pub fn parse<'a>(data: &'a [u8], arena: &mut Arena<'a>) -> Result<(NodeId, PickleInfo)> {
    let mut vm = Vm { data, pos: 0, arena, stack: Vec::new(), marks: Vec::new(), memo: Vec::new(), op_at: 0 };
    let mut info = PickleInfo { protocol: 0, ..Default::default() };
    let root = vm.run(&mut info)?;
    info.end = vm.pos;
    info.trailing_bytes = data.len() - vm.pos;
    Ok((root, info))
}

impl<'a, 'b> Vm<'a, 'b> {
    fn err(&self, at: usize, msg: impl std::fmt::Display) -> Error {
        Error::pickle(at, msg)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let at = self.pos;
        let end = at.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| {
            self.err(self.op_at, format!("{what} declares {n} bytes but only {} remain (truncated file?)", self.data.len() - at))
        })?;
        self.pos = end;
        Ok(&self.data[at..end])
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1, "opcode argument")?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2, "2-byte argument")?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, "4-byte argument")?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, "8-byte argument")?.try_into().unwrap()))
    }
    fn line(&mut self) -> Result<&'a [u8]> {
        let at = self.pos;
        let rest = &self.data[at..];
        let n = rest.iter().position(|&b| b == b'\n').ok_or_else(|| self.err(at, "text argument without a newline (truncated file?)"))?;
        self.pos = at + n + 1;
        Ok(&rest[..n])
    }

    fn push(&mut self, n: Node) {
        let id = self.arena.push(n);
        self.stack.push(id);
    }
    fn pop(&mut self, at: usize) -> Result<NodeId> {
        self.stack.pop().ok_or_else(|| self.err(at, "stack underflow"))
    }
    fn top(&self, at: usize) -> Result<NodeId> {
        self.stack.last().copied().ok_or_else(|| self.err(at, "stack underflow"))
    }
    /// Items above the most recent MARK, removing the mark.
    fn pop_mark(&mut self, at: usize) -> Result<Vec<NodeId>> {
        let m = self.marks.pop().ok_or_else(|| self.err(at, "MARK expected but none is open"))?;
        if m > self.stack.len() {
            return Err(self.err(at, "MARK lies above the stack top"));
        }
        Ok(self.stack.split_off(m))
    }

    fn memo_put(&mut self, at: usize, idx: usize) -> Result<()> {
        let v = self.top(at)?;
        if idx >= self.memo.len() {
            if idx > self.memo.len() + MAX_MEMO_GAP {
                return Err(self.err(at, format!("memo index {idx} is far beyond the memo size {}", self.memo.len())));
            }
            self.memo.resize(idx + 1, UNSET);
        }
        self.memo[idx] = v;
        Ok(())
    }
    fn memo_get(&mut self, at: usize, idx: usize) -> Result<()> {
        match self.memo.get(idx).copied() {
            Some(v) if v != UNSET => {
                self.stack.push(v);
                Ok(())
            }
            _ => Err(self.err(at, format!("memo reference {idx} was never stored"))),
        }
    }

    fn string(&mut self, raw: &'a [u8]) -> NodeId {
        let s = match std::str::from_utf8(raw) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(String::from_utf8_lossy(raw).into_owned()),
        };
        self.arena.new_str(s)
    }

    fn push_bytes(&mut self, raw: &'a [u8]) {
        self.arena.bytes.push(raw);
        let i = (self.arena.bytes.len() - 1) as u32;
        self.push(Node::Bytes(i));
    }

    fn append(&mut self, at: usize, target: NodeId, items: Vec<NodeId>) -> Result<()> {
        match self.arena.node(target) {
            Node::List(i) | Node::Set(i) => {
                self.arena.seqs[i as usize].extend(items);
                Ok(())
            }
            _ => Err(self.err(at, format!("APPEND to a {}", self.arena.type_name(target)))),
        }
    }

    fn set_items(&mut self, at: usize, target: NodeId, items: Vec<NodeId>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err(at, "SETITEMS with an odd number of items"));
        }
        match self.arena.node(target) {
            Node::Dict(i) => {
                self.arena.maps[i as usize].extend(items.chunks_exact(2).map(|kv| (kv[0], kv[1])));
                Ok(())
            }
            _ => Err(self.err(at, format!("SETITEM on a {}", self.arena.type_name(target)))),
        }
    }

    fn global(&mut self, at: usize, module: &str, name: &str) -> Result<()> {
        if module == "torch.jit._pickle" && name == "restore_type_tag" {
            self.push(Node::TypeTagFn);
            return Ok(());
        }
        Err(Error::new(
            "PICKLE_UNSAFE",
            format!("byte {at}: the pickle imports {module}.{name}; snapshot pickles contain plain data only, and snapscope never runs code from a file"),
            "this file is not a memory snapshot or was tampered with; do not open it with pickle.load either",
        ))
    }

    fn parse_text_int(&self, at: usize, raw: &[u8]) -> Result<i128> {
        let s = std::str::from_utf8(raw).map_err(|_| self.err(at, "INT/LONG argument is not text"))?;
        let s = s.trim().trim_end_matches('L');
        match s {
            "00" => Ok(0),
            "01" => Ok(1),
            _ => s.parse::<i128>().map_err(|_| self.err(at, format!("bad integer literal {s:?}"))),
        }
    }

    fn long(&mut self, at: usize, raw: &[u8]) -> Result<NodeId> {
        if raw.len() > 16 {
            return Err(self.err(at, format!("{}-byte integer is too large for any snapshot field", raw.len())));
        }
        if raw.is_empty() {
            return Ok(self.arena.new_int(0));
        }
        let neg = raw[raw.len() - 1] & 0x80 != 0;
        let mut buf = [if neg { 0xff } else { 0 }; 16];
        buf[..raw.len()].copy_from_slice(raw);
        Ok(self.arena.new_int(i128::from_le_bytes(buf)))
    }

    fn run(&mut self, info: &mut PickleInfo) -> Result<NodeId> {
        loop {
            let at = self.pos;
            self.op_at = at;
            let op = match self.data.get(at) {
                Some(&b) => b,
                None if at == 0 => return Err(Error::snapshot("the file is empty")),
                None => return Err(self.err(at, "the pickle ends before its STOP opcode (truncated file?)")),
            };
            self.pos += 1;
            match op {
                0x80 => {
                    let p = self.u8()?;
                    if p > 5 {
                        return Err(Error::new(
                            "PICKLE_UNSUPPORTED",
                            format!("byte {at}: pickle protocol {p} is not supported (protocols 0-5 are)"),
                            "re-dump the snapshot with pickle protocol 4 or 5",
                        ));
                    }
                    info.protocol = p;
                }
                0x95 => {
                    self.u64()?; // FRAME: a length hint for buffered readers, no structure
                }
                b'.' => {
                    let root = self.pop(at)?;
                    return Ok(root);
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop(at)?;
                }
                b'1' => {
                    self.pop_mark(at)?;
                }
                b'2' => {
                    let t = self.top(at)?;
                    self.stack.push(t);
                }
                b'N' => self.push(Node::None),
                0x88 => self.push(Node::Bool(true)),
                0x89 => self.push(Node::Bool(false)),
                b'I' | b'L' => {
                    let raw = self.line()?;
                    let v = self.parse_text_int(at, raw)?;
                    let id = if op == b'I' && raw == b"01" {
                        self.arena.push(Node::Bool(true))
                    } else if op == b'I' && raw == b"00" {
                        self.arena.push(Node::Bool(false))
                    } else {
                        self.arena.new_int(v)
                    };
                    self.stack.push(id);
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.push(Node::Int(v as i64));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push(Node::Int(v as i64));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.push(Node::Int(v as i64));
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
                    let v = std::str::from_utf8(raw)
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .ok_or_else(|| self.err(at, "bad FLOAT literal"))?;
                    self.push(Node::Float(v));
                }
                b'G' => {
                    let raw = self.take(8, "BINFLOAT")?;
                    self.push(Node::Float(f64::from_be_bytes(raw.try_into().unwrap())));
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
                    self.push_bytes(raw);
                }
                b']' => {
                    let id = self.arena.new_seq(Node::List, Vec::new());
                    self.stack.push(id);
                }
                b')' => {
                    let id = self.arena.new_seq(Node::Tuple, Vec::new());
                    self.stack.push(id);
                }
                0x8f => {
                    let id = self.arena.new_seq(Node::Set, Vec::new());
                    self.stack.push(id);
                }
                b'}' => {
                    let id = self.arena.new_dict(Vec::new());
                    self.stack.push(id);
                }
                b'l' | b't' | 0x91 => {
                    let items = self.pop_mark(at)?;
                    let kind: fn(u32) -> Node = match op {
                        b'l' => Node::List,
                        b't' => Node::Tuple,
                        _ => Node::Set,
                    };
                    let id = self.arena.new_seq(kind, items);
                    self.stack.push(id);
                }
                b'd' => {
                    let items = self.pop_mark(at)?;
                    if !items.len().is_multiple_of(2) {
                        return Err(self.err(at, "DICT with an odd number of items"));
                    }
                    let pairs = items.chunks_exact(2).map(|kv| (kv[0], kv[1])).collect();
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
                    let v = self.pop(at)?;
                    let target = self.top(at)?;
                    self.append(at, target, vec![v])?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark(at)?;
                    let target = self.top(at)?;
                    self.append(at, target, items)?;
                }
                b's' => {
                    let v = self.pop(at)?;
                    let k = self.pop(at)?;
                    let target = self.top(at)?;
                    self.set_items(at, target, vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark(at)?;
                    let target = self.top(at)?;
                    self.set_items(at, target, items)?;
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
                    let module = String::from_utf8_lossy(self.line()?).into_owned();
                    let name = String::from_utf8_lossy(self.line()?).into_owned();
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
                    match (self.arena.node(func), first) {
                        (Node::TypeTagFn, Some(v)) => self.stack.push(v),
                        _ => return Err(self.err(at, "REDUCE of something other than a TorchScript type tag")),
                    }
                }
                b'b' | 0x81 | 0x92 | b'i' | b'o' | b'P' | b'Q' | 0x82 | 0x83 | 0x84 | 0x97 | 0x98 => {
                    return Err(Error::new(
                        "PICKLE_UNSAFE",
                        format!(
                            "byte {at}: opcode 0x{op:02x} builds objects or external references; snapshot pickles contain plain data only"
                        ),
                        "this file is not a memory snapshot or was tampered with; snapscope never runs code from a file",
                    ));
                }
                b'S' | b'V' => {
                    return Err(Error::new(
                        "PICKLE_UNSUPPORTED",
                        format!("byte {at}: protocol-0 text strings are not supported"),
                        "re-dump the snapshot with pickle protocol 2 or newer (the default of every PyTorch release)",
                    ));
                }
                _ => return Err(self.err(at, format!("unknown opcode 0x{op:02x} (not a pickle, or a corrupted one)"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(b: &[u8]) -> (Arena<'_>, NodeId) {
        let mut a = Arena::default();
        let (root, _) = parse(b, &mut a).expect("parses");
        (a, root)
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
        let mut a = Arena::default();
        let e = parse(b, &mut a).unwrap_err();
        assert_eq!(e.code, "PICKLE_UNSAFE");
        assert!(e.message.contains("os.system"), "{}", e.message);
    }

    #[test]
    fn truncated_reports_offset() {
        let b = b"\x80\x04\x8c\x10abc";
        let mut a = Arena::default();
        let e = parse(b, &mut a).unwrap_err();
        assert!(e.message.starts_with("byte 2:"), "{}", e.message);
    }

    #[test]
    fn bad_memo_reference() {
        let b = b"\x80\x04j\x00\x00\x01\x00.";
        let mut a = Arena::default();
        assert!(parse(b, &mut a).unwrap_err().message.contains("memo reference"));
    }
}
