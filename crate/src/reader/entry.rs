//! Trace entries read straight from the opcode bytes into events.
//!
//! Once a list is known to hold trace entries (it is being folded, see
//! [`DecodeState::fold_events`]), nearly every further entry of it is the same opcodes: an empty
//! dict, MEMOIZE, MARK, keys that are memo references to strings already read, values that are
//! small ints, memo references or a new frames list of memo references to frame dicts already
//! seen, SETITEMS. [`read`] decodes exactly that into an [`Event`] without building the dict and
//! its list in the arena (nor recycling them afterwards). On anything else it reads nothing and
//! the general VM builds the entry, which the fold then decodes: the same event either way.
//!
//! What it changes is only when entries and their new frames lists turn opaque: their memo slots
//! read as a folded entry and a stack at once, where the general path has them so only after the
//! batch's fold. A file that names one again from elsewhere within the batch (the snapshots
//! PyTorch writes do not) sees `null` there where it saw the value's JSON.

use super::arena::{Arena, Node};
use super::decode::{DecodeState, EntryField, MAX_BYTES};
use super::memo::Memo;
use super::stack_cache::{ListKey, StackCache};
use crate::model::{time_us_fits, Action, Event, FrameId, StackId};

/// What reading entries reuses from one to the next.
#[derive(Default)]
pub struct EntryReader {
    /// Frame ids of the frames list being read.
    frames: Vec<FrameId>,
    stacks: StackCache,
}

/// An entry [`read`] decoded.
pub struct ReadEntry {
    /// Bytes its opcodes take.
    pub len: usize,
    pub event: Event,
    /// Its stream (the event holds a slot in the list it goes to).
    pub stream: u64,
    /// Whether the dict is memoized (to the next memo slot).
    pub dict_memoized: bool,
    /// The memo value of its frames list when that is new and memoized (the slot after the dict's).
    pub list_memo: Option<Node>,
}

/// Why [`read`] read nothing.
#[derive(Debug, PartialEq)]
pub enum Unread {
    /// The entry goes on past the bytes given (it may read once more have come).
    Short,
    /// Some opcode is not one of those above.
    Other,
}

/// Decode the entry whose `EMPTY_DICT` opcode starts `bytes`, if it is made only of the opcodes
/// above and every byte of it is there. Interns its frames and stack as the fold would (the
/// caller takes it only while its batch holds no entry left to the fold, so the ids come out in
/// the same order); changes nothing else.
pub fn read(bytes: &[u8], memo: &Memo, arena: &Arena, st: &mut DecodeState, reader: &mut EntryReader) -> Result<ReadEntry, Unread> {
    let mut ops = Ops { b: bytes, at: 0, short: false };
    read_ops(&mut ops, memo, arena, st, reader).ok_or(if ops.short { Unread::Short } else { Unread::Other })
}

fn read_ops(ops: &mut Ops, memo: &Memo, arena: &Arena, st: &mut DecodeState, reader: &mut EntryReader) -> Option<ReadEntry> {
    if ops.op()? != b'}' {
        return None;
    }
    let mut next_slot = memo.len();
    let dict_memoized = ops.memoize(next_slot)?;
    next_slot += dict_memoized as usize;
    if ops.op()? != b'(' {
        return None;
    }
    let mut ev = Event::new(Action::Unknown, 0, 0);
    let mut stream = 0;
    let mut list_memo = None;
    loop {
        if ops.peek()? == b'u' {
            ops.at += 1;
            break;
        }
        let key = memo.get(ops.memo_ref()?)?;
        match st.entry_field(arena, key)? {
            EntryField::Action => match st.action_of(arena, memo.get(ops.memo_ref()?)?)? {
                // Its name goes to the event's extras: the general path keeps it.
                Action::Unknown => return None,
                action => ev.set_action(action),
            },
            EntryField::Addr => ev.addr = ops.int()? as u64,
            EntryField::Size => ev.size = u64::try_from(ops.int()?).ok().filter(|&s| s <= MAX_BYTES)?,
            EntryField::Stream => stream = ops.int()? as u64,
            EntryField::TimeUs => {
                let t = ops.int()?;
                // A time the event cannot hold: the general path warns.
                if !time_us_fits(t) {
                    return None;
                }
                ev.set_time_us(Some(t));
            }
            EntryField::Frames if ops.peek()? == b']' => {
                ops.at += 1;
                // Two new frames lists in one entry would need two memo slots: left to the VM.
                if list_memo.is_some() || !ops.memoize(next_slot)? {
                    return None;
                }
                let stack = read_frames(ops, memo, arena, st, reader)?;
                ev.set_stack(stack);
                list_memo = Some(Node::Stack(stack));
            }
            EntryField::Frames => {
                let list = memo.get(ops.memo_ref()?)?;
                ev.set_stack(st.stack_of(arena, list));
            }
            // Texts that mean "none" (PyTorch writes "N/A" outside compiled regions): no extras.
            EntryField::CompileContext => ops.no_text(memo, arena, &["", "N/A"])?,
            EntryField::UserMetadata | EntryField::InternalMetadata | EntryField::Category => ops.no_text(memo, arena, &[""])?,
            _ => return None,
        }
    }
    Some(ReadEntry { len: ops.at, event: ev, stream, dict_memoized, list_memo })
}

/// The items of a new frames list (after its EMPTY_LIST and MEMOIZE): batches of memo
/// references appended with APPENDS, or one with APPEND. Returns its stack.
fn read_frames(ops: &mut Ops, memo: &Memo, arena: &Arena, st: &mut DecodeState, reader: &mut EntryReader) -> Option<Option<StackId>> {
    let start = ops.at;
    let one_batch = one_batch(&ops.b[start..]);
    if let Some((len, key)) = one_batch {
        let changes = memo.dict_changes() + st.frames_folded();
        if let Some(stack) = reader.stacks.get(changes, key) {
            ops.at += len;
            return Some(stack);
        }
    }
    let frames = &mut reader.frames;
    frames.clear();
    let frame = |idx: usize, st: &mut DecodeState| match memo.get(idx)? {
        f @ Node::Dict(_) => st.frame_of(arena, f),
        _ => None,
    };
    loop {
        match ops.peek()? {
            b'(' => {
                ops.at += 1;
                while ops.peek()? != b'e' {
                    frames.push(frame(ops.memo_ref()?, st)?);
                }
                ops.at += 1;
            }
            b'h' | b'j' => {
                // One item and APPEND, or else the entry's next key: the list is complete.
                let at = ops.at;
                let idx = ops.memo_ref()?;
                if ops.peek()? != b'a' {
                    ops.at = at;
                    break;
                }
                ops.at += 1;
                frames.push(frame(idx, st)?);
            }
            _ => break,
        }
    }
    let stack = st.intern_stack(frames);
    if let Some((_, key)) = one_batch.filter(|&(len, _)| ops.at == start + len) {
        reader.stacks.insert(key, stack);
    }
    Some(stack)
}

/// `MARK (BINGET | LONG_BINGET)... APPENDS` at the start of `b` when no more items follow it
/// (another batch, an APPEND, or a FRAME that hides what follows): its length and the key of its
/// memo references' bytes. The same bytes name the same slots, so they key the list as the slots
/// would; the walk only steps from opcode to opcode, and the bytes are hashed eight at a time.
fn one_batch(b: &[u8]) -> Option<(usize, ListKey)> {
    if b.first() != Some(&b'(') {
        return None;
    }
    let mut at = 1;
    loop {
        match *b.get(at)? {
            b'h' => at += 2,
            b'j' => at += 5,
            b'e' => break,
            _ => return None,
        }
    }
    let end = at + 1;
    let appends_one = |arg: usize| b.get(end + 1 + arg) == Some(&b'a');
    match *b.get(end)? {
        b'(' | 0x95 => None,
        b'h' if appends_one(1) => None,
        b'j' if appends_one(4) => None,
        _ => Some((end, ListKey::of_bytes(&b[1..at]))),
    }
}

/// A cursor over opcodes; every read is bounds-checked and says None past the end.
struct Ops<'b> {
    b: &'b [u8],
    at: usize,
    /// Set by a read past the end.
    short: bool,
}

impl<'b> Ops<'b> {
    /// The next opcode, past any FRAME (protocol 4 puts one every 64 KiB, between any two
    /// opcodes: a length hint with no meaning here).
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        loop {
            let Some(&op) = self.b.get(self.at) else {
                self.short = true;
                return None;
            };
            if op != 0x95 {
                return Some(op);
            }
            self.at += 9;
        }
    }

    /// The next opcode, consumed.
    #[inline(always)]
    fn op(&mut self) -> Option<u8> {
        let v = self.peek()?;
        self.at += 1;
        Some(v)
    }

    /// A one-byte argument.
    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    /// The next `n` bytes, consumed.
    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let b = self.b;
        let Some(v) = b.get(self.at..self.at + n) else {
            self.short = true;
            return None;
        };
        self.at += n;
        Some(v)
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// BINGET or LONG_BINGET: the memo index.
    #[inline(always)]
    fn memo_ref(&mut self) -> Option<usize> {
        match self.peek()? {
            b'h' => {
                self.at += 1;
                Some(self.byte()? as usize)
            }
            b'j' => {
                self.at += 1;
                Some(u32::from_le_bytes(self.array()?) as usize)
            }
            _ => None,
        }
    }

    /// An optional MEMOIZE, or BINPUT / LONG_BINPUT to `next` (the next free slot): whether one
    /// is there. None when it names another slot.
    fn memoize(&mut self, next: usize) -> Option<bool> {
        let idx = match self.peek() {
            Some(0x94) => {
                self.at += 1;
                return Some(true);
            }
            Some(b'q') => {
                self.at += 1;
                self.byte()? as usize
            }
            Some(b'r') => {
                self.at += 1;
                u32::from_le_bytes(self.array()?) as usize
            }
            _ => return Some(false),
        };
        (idx == next).then_some(true)
    }

    /// BININT1, BININT2, BININT or a LONG1 of up to 8 bytes.
    #[inline(always)]
    fn int(&mut self) -> Option<i64> {
        match self.op()? {
            b'K' => Some(self.byte()? as i64),
            b'M' => Some(u16::from_le_bytes(self.array()?) as i64),
            b'J' => Some(i32::from_le_bytes(self.array()?) as i64),
            0x8a => {
                let n = self.byte()? as usize;
                if n > 8 {
                    return None;
                }
                let raw = self.take(n)?;
                // Little-endian two's complement of n bytes: read 8 when they are there (a
                // variable-length copy costs more than the rest), keep the low n, sign-extend.
                let word = match self.b.get(self.at - n..self.at - n + 8) {
                    Some(eight) => u64::from_le_bytes(eight.try_into().ok()?),
                    None => raw.iter().rev().fold(0, |w, &b| (w << 8) | b as u64),
                };
                let unused = 64 - 8 * n as u32;
                Some(if n == 0 { 0 } else { ((word << unused) as i64) >> unused })
            }
            _ => None,
        }
    }

    /// NONE, or a memo reference to one of these texts: a field that adds nothing to the event.
    fn no_text(&mut self, memo: &Memo, arena: &Arena, nothing: &[&str]) -> Option<()> {
        if self.peek()? == b'N' {
            self.at += 1;
            return Some(());
        }
        let text = arena.as_str(memo.get(self.memo_ref()?)?)?;
        nothing.contains(&text).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pickle::StreamVm;
    use crate::model::Snapshot;
    use std::collections::HashMap;

    /// The snapshot read in pieces of `piece` bytes, with or without the fast path, and how many
    /// entries the fast path read.
    fn read(bytes: &[u8], piece: usize, fast: bool) -> (Snapshot, usize) {
        let mut vm = if fast { StreamVm::new() } else { StreamVm::general_only() };
        for p in bytes.chunks(piece) {
            vm.feed(p).unwrap();
        }
        let (arena, root, _, state) = vm.finish().unwrap();
        let straight = state.entries_read_straight();
        (super::super::decode::decode(&arena, root, state).unwrap(), straight)
    }

    /// What must not differ between the two paths: events, frame and stack ids, warnings.
    fn summary(s: &Snapshot) -> String {
        format!("{:?}\n{:?}\n{:?}\n{:?}", s.traces, s.interner.frames, s.interner.stacks, s.warnings)
    }

    fn same_both_ways(bytes: &[u8]) -> usize {
        let (general, none) = read(bytes, bytes.len(), false);
        assert_eq!(none, 0);
        let mut straight = None;
        for piece in [bytes.len(), 4096, 1000, 37] {
            let (fast, n) = read(bytes, piece, true);
            let (want, got) = (summary(&general), summary(&fast));
            if let Some(at) = want.bytes().zip(got.bytes()).position(|(a, b)| a != b) {
                let around = |s: &str| s[at.saturating_sub(300)..(at + 100).min(s.len())].to_string();
                panic!("pieces of {piece} bytes: general …{}… fast …{}…", around(&want), around(&got));
            }
            assert_eq!(want, got, "pieces of {piece} bytes");
            // An entry cut by the end of a piece waits for the next one: pieces change nothing.
            assert_eq!(*straight.get_or_insert(n), n, "entries read straight in pieces of {piece} bytes");
        }
        straight.unwrap_or(0)
    }

    #[test]
    fn long1_is_sign_extended_with_or_without_bytes_after_it() {
        let cases: [(&[u8], i64); 6] = [
            (b"\x8a\x00", 0),
            (b"\x8a\x01\xff", -1),
            (b"\x8a\x02\x00\x80", -32768),
            (b"\x8a\x03\x00\x80\x00", 32768),
            (b"\x8a\x06\x00\x00\x00\x00\x00\xff", -(1 << 40)),
            (b"\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f", i64::MAX),
        ];
        for (bytes, want) in cases {
            for tail in [&b""[..], b"........"] {
                let b = [bytes, tail].concat();
                let mut ops = super::Ops { b: &b, at: 0, short: false };
                assert_eq!(ops.int(), Some(want), "{bytes:?} then {} bytes", tail.len());
                assert_eq!(ops.at, bytes.len());
            }
        }
    }

    /// Bytes changed at random: neither path panics, a file one refuses the other refuses too,
    /// and nearly all read the same.
    #[test]
    fn damaged_files_fail_alike_and_never_panic() {
        let good = crate::warmup::snapshot_pickle(3000);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut same, mut runs) = (0, 0);
        for _ in 0..300 {
            let mut bad = good.clone();
            for _ in 0..1 + next() % 3 {
                // Mostly in the trace, where the fast path reads.
                let at = good.len() / 3 + (next() as usize) % (good.len() * 2 / 3);
                bad[at] = next() as u8;
            }
            let parse = |fast: bool| {
                let mut vm = if fast { StreamVm::new() } else { StreamVm::general_only() };
                for p in bad.chunks(1000) {
                    vm.feed(p)?;
                }
                let (arena, root, _, state) = vm.finish()?;
                super::super::decode::decode(&arena, root, state)
            };
            match (parse(false), parse(true)) {
                (Ok(a), Ok(b)) => {
                    runs += 1;
                    same += (summary(&a) == summary(&b)) as usize;
                }
                (Err(a), Err(b)) => assert_eq!(a.code, b.code),
                (a, b) => panic!("one path failed: general {:?}, fast {:?}", a.err(), b.err()),
            }
        }
        // They differ only where a damaged key makes an entry's value name a frames list the
        // fast path made a stack of (see the module's doc): 93 of the 96 that read.
        assert!(same * 10 >= runs * 9, "{same} of {runs} damaged files read the same both ways");
    }

    #[test]
    fn warm_up_snapshot_reads_the_same() {
        let bytes = crate::warmup::snapshot_pickle(6000);
        assert!(same_both_ways(&bytes) > 3000);
    }

    /// A protocol-4 pickle written by hand, memoizing as Python does.
    #[derive(Default)]
    struct Pickle {
        out: Vec<u8>,
        memo: u32,
        strs: HashMap<&'static str, u32>,
    }

    impl Pickle {
        fn memoize(&mut self) -> u32 {
            self.out.push(0x94);
            self.memo += 1;
            self.memo - 1
        }
        fn get(&mut self, i: u32) {
            self.out.push(b'j');
            self.out.extend(i.to_le_bytes());
        }
        fn str(&mut self, s: &'static str) {
            match self.strs.get(s) {
                Some(&i) => self.get(i),
                None => {
                    self.out.extend([0x8c, s.len() as u8]);
                    self.out.extend(s.as_bytes());
                    let i = self.memoize();
                    self.strs.insert(s, i);
                }
            }
        }
        fn int(&mut self, v: u64) {
            self.out.extend([0x8a, 8]);
            self.out.extend(v.to_le_bytes());
        }
        fn frame_hint(&mut self) {
            self.out.push(0x95);
            self.out.extend(0u64.to_le_bytes());
        }
        /// A frame dict not memoized (the caller stores it).
        fn frame(&mut self, name: &'static str) {
            self.out.extend(b"}(");
            for (k, v) in [("filename", "a.py"), ("name", name)] {
                self.str(k);
                self.str(v);
            }
            self.str("line");
            self.int(7);
            self.out.push(b'u');
        }
        /// An entry; `frames` are memo slots of frame dicts. Returns the dict's memo slot.
        fn entry(&mut self, action: &'static str, i: u64, frames: &[u32], extra: &[(&'static str, &'static str)]) -> u32 {
            self.out.push(b'}');
            let at = self.memoize();
            self.out.push(b'(');
            self.str("action");
            self.str(action);
            for (k, v) in [("addr", 0x7f00_0000_0000 + (i % 4) * 512), ("size", 512), ("stream", 0), ("time_us", 1000 + i)] {
                self.str(k);
                if i.is_multiple_of(5) {
                    self.frame_hint();
                }
                self.int(v);
            }
            for &(k, v) in extra {
                self.str(k);
                self.str(v);
            }
            self.str("frames");
            self.out.push(b']');
            self.memoize();
            self.out.push(b'(');
            for (n, &f) in frames.iter().enumerate() {
                if n == 1 && i.is_multiple_of(7) {
                    self.frame_hint();
                }
                self.get(f);
            }
            self.out.extend(b"eu");
            at
        }
    }

    /// Odd but valid files: FRAME opcodes inside entries, a frame dict's memo slot overwritten
    /// between two lists of the same bytes, an entry listed twice, keys the fast path leaves to
    /// the general one, an action it does not know.
    #[test]
    fn odd_entries_read_the_same() {
        let mut p = Pickle::default();
        p.out.extend([0x80, 4, b'}']);
        p.memoize();
        p.out.push(b'(');
        p.str("device_traces");
        p.out.push(b']');
        p.memoize();
        p.out.extend(b"(]");
        p.memoize();
        let names = ["f0", "f1", "f2", "f3"];
        let mut frames = vec![];
        for name in names {
            p.frame(name);
            frames.push(p.memoize());
            p.out.push(b'0'); // POP: defined once, then only referenced
        }
        for i in 0..2600u64 {
            if i % 1000 == 0 {
                p.out.push(b'(');
            }
            let stack = [frames[(i % 4) as usize], frames[((i + 1) % 4) as usize], frames[((i / 3) % 4) as usize]];
            match i {
                1500 => {
                    // Slot frames[0] now holds another dict: lists naming it name another frame.
                    p.frame("g0");
                    p.out.push(b'r');
                    p.out.extend(frames[0].to_le_bytes());
                    p.out.push(b'0');
                    p.entry("alloc", i, &stack, &[]);
                }
                1200 | 2300 => {
                    let at = p.entry("alloc", i, &stack, &[]);
                    p.get(at); // the same entry object again
                }
                1700 => {
                    p.entry("alloc", i, &stack, &[("compile_context", "N/A"), ("user_metadata", "")]);
                }
                1800 => {
                    p.entry("alloc", i, &stack, &[("user_metadata", "step 3")]);
                }
                2100 => {
                    p.entry("made_up_action", i, &stack, &[]);
                }
                _ => {
                    p.entry(if i % 2 == 0 { "alloc" } else { "free_completed" }, i, &stack, &[]);
                }
            }
            if i % 1000 == 999 || i == 2599 {
                p.out.push(b'e');
            }
        }
        p.out.extend(b"eu.");
        // Batches go on in the general path after an entry it takes: 200 + 100 are read.
        assert!(same_both_ways(&p.out) >= 300);
    }
}
