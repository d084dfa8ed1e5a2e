//! From the generic value arena to the typed [`Snapshot`]. Every snapshot shape PyTorch 2.0-2.15
//! and torch_npu write is accepted; missing optional keys get documented defaults, and an odd
//! entry becomes a warning that names it rather than a refusal of the whole file.

use super::arena::{Arena, Node};
use crate::codes::WarningCode;
use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::*;

const MIB: u64 = 1 << 20;

/// What decoding accumulates, also while the pickle is still being read: the snapshot being
/// built (interner, warnings), the frame and stack ids already resolved per arena slot, and the
/// trace entries folded into events as their lists grew.
#[derive(Default)]
pub struct DecodeState {
    pub snap: Snapshot,
    /// Per `Arena::maps` slot: the frame it decoded to (`UNRESOLVED` until asked).
    frame_of_dict: Vec<u32>,
    /// Per `Arena::seqs` slot: the stack it decoded to.
    stack_of_seq: Vec<u32>,
    bad_frames: u64,
    /// Per `Arena::seqs` slot of a trace list: the events folded out of it.
    folded: FastMap<u32, FoldedTrace>,
    /// Per interned string: which trace-entry field it names, so that an entry's keys are
    /// matched by id rather than compared as text.
    field_of_str: Vec<EntryField>,
    /// Per interned string: the action it names, once asked.
    action_of_str: Vec<Option<Action>>,
    /// Frame ids of the frames list being interned (reused).
    frames_scratch: Vec<FrameId>,
    /// Events of the entries read straight from the opcodes (`entry.rs`) whose batch is not
    /// folded yet: `Node::Entry(pending_first + k)` is `pending[k]`.
    pending: Vec<(Event, u64)>,
    pending_first: u32,
    /// Entries folded that had been read as frames too (odd files only): their memo slots now
    /// read as folded, so what was derived from them by slot number is stale.
    frames_folded: u64,
    /// Segments and blocks decoded so far, against the `dump_blocks` budget.
    dump_items: u64,
    /// Frame and annotation texts longer than shown, by arena string, cut for display once: the
    /// shown text and the whole text (the arena's own allocation, hashed once).
    shown_texts: FastMap<u32, (String, Option<LongText>)>,
    frame_texts_cut: u64,
    /// Bytes of the distinct frames' names and file names as shown, against `frame_text_bytes`.
    frame_text_bytes: u64,
    /// Bytes of the distinct texts held whole beside their shown cut, against `text_bytes`.
    long_text_bytes: u64,
}

/// The keys of a trace entry snapscope reads.
#[derive(Clone, Copy, PartialEq, Default)]
pub(super) enum EntryField {
    #[default]
    Unresolved,
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    Frames,
    DeviceFree,
    CompileContext,
    UserMetadata,
    InternalMetadata,
    Category,
    PoolId,
    ForwardFrames,
    Other,
}

impl EntryField {
    fn of(key: &str) -> EntryField {
        match key {
            "action" => EntryField::Action,
            "addr" => EntryField::Addr,
            "size" => EntryField::Size,
            "stream" => EntryField::Stream,
            "time_us" => EntryField::TimeUs,
            "frames" => EntryField::Frames,
            "device_free" => EntryField::DeviceFree,
            "compile_context" => EntryField::CompileContext,
            "user_metadata" => EntryField::UserMetadata,
            "internal_metadata" => EntryField::InternalMetadata,
            "category" => EntryField::Category,
            "pool_id" => EntryField::PoolId,
            "forward_frames" => EntryField::ForwardFrames,
            _ => EntryField::Other,
        }
    }
}

#[derive(Default)]
struct FoldedTrace {
    trace: DeviceTrace,
    /// Indices into `snap.warnings` raised by its events (their device is known only later).
    warnings: Vec<usize>,
}

const UNRESOLVED: u32 = u32::MAX;
const NO_ID: u32 = u32::MAX - 1;

fn cached(v: &[u32], i: u32) -> Option<Option<u32>> {
    match v.get(i as usize).copied() {
        None | Some(UNRESOLVED) => None,
        Some(NO_ID) => Some(None),
        Some(id) => Some(Some(id)),
    }
}

fn remember(v: &mut Vec<u32>, i: u32, id: Option<u32>) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, UNRESOLVED);
    }
    v[i] = id.unwrap_or(NO_ID);
}

impl DecodeState {
    /// Is `list` a trace list whose entries are being folded?
    pub fn is_folding(&self, list: u32) -> bool {
        self.folded.contains_key(&list)
    }

    /// Decode entries appended to trace list `list` into compact events. `folded` learns each
    /// entry and its frames list (arena slot and stack), so that the caller can recycle them.
    pub fn fold_events(
        &mut self,
        a: &Arena,
        list: u32,
        items: impl IntoIterator<Item = Node>,
        mut folded: impl FnMut(Node, Option<(u32, Option<StackId>)>),
    ) {
        let mut trace = self.folded.remove(&list).unwrap_or_default();
        for item in items {
            if let Some((ev, stream)) = self.pending_event(item) {
                trace.trace.push(ev, stream);
                continue;
            }
            let warnings_before = self.snap.warnings.len();
            let index = trace.trace.events.len();
            let (ev, stream, frames) = Decoder { a, st: self }.event_and_frames(item, PENDING_DEVICE, index, &mut trace.trace.extras);
            trace.trace.push(ev, stream);
            trace.warnings.extend(warnings_before..self.snap.warnings.len());
            let frames = match frames {
                Some(Node::List(j)) => Some((j, ev.stack())),
                _ => None,
            };
            if let Node::Dict(i) = item {
                self.frames_folded += cached(&self.frame_of_dict, i).is_some() as u64;
            }
            folded(item, frames);
        }
        self.folded.insert(list, trace);
        // A fold takes every waiting entry (one that went anywhere else reads as folded).
        self.pending_first = self.pending_first.saturating_add(self.pending.len() as u32);
        self.pending.clear();
    }

    fn pending_event(&self, item: Node) -> Option<(Event, u64)> {
        let Node::Entry(e) = item else {
            return None;
        };
        self.pending.get(e.checked_sub(self.pending_first)? as usize).copied()
    }

    /// Entries read straight into events so far (with the ones waiting).
    #[cfg(test)]
    pub fn entries_read_straight(&self) -> usize {
        self.pending_first as usize + self.pending.len()
    }

    /// See `frames_folded`.
    pub fn frames_folded(&self) -> u64 {
        self.frames_folded
    }

    /// Entries read straight into events and not folded yet.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Keep the event of an entry read straight from the opcodes until its batch is folded;
    /// the node stands for the entry meanwhile. None once the numbers run out.
    pub fn push_pending(&mut self, ev: Event, stream: u64) -> Option<Node> {
        let id = self.pending_first.checked_add(u32::try_from(self.pending.len()).ok()?).filter(|&id| id < u32::MAX)?;
        self.pending.push((ev, stream));
        Some(Node::Entry(id))
    }

    /// Which trace-entry field string `key` names (None if it is not a string).
    #[inline]
    pub(super) fn entry_field(&mut self, a: &Arena, key: Node) -> Option<EntryField> {
        // Resolved already, as nearly every key is: no call.
        match key {
            Node::Str(i) => match self.field_of_str.get(i as usize) {
                Some(&f) if f != EntryField::Unresolved => Some(f),
                _ => Decoder { a, st: self }.field(key),
            },
            _ => None,
        }
    }

    /// The action a string value names (None if it is not a string).
    #[inline]
    pub(super) fn action_of(&mut self, a: &Arena, v: Node) -> Option<Action> {
        match v {
            Node::Str(i) => match self.action_of_str.get(i as usize) {
                Some(&Some(action)) => Some(action),
                _ => Decoder { a, st: self }.action(v),
            },
            _ => None,
        }
    }

    /// The frame a frames-list item decodes to (None for a bad frame).
    pub(super) fn frame_of(&mut self, a: &Arena, f: Node) -> Option<FrameId> {
        Decoder { a, st: self }.frame(f)
    }

    /// The stack an entry's `frames` value decodes to.
    pub(super) fn stack_of(&mut self, a: &Arena, list: Node) -> Option<StackId> {
        Decoder { a, st: self }.stack(list)
    }

    /// Intern the stack of these frames (none when empty).
    pub(super) fn intern_stack(&mut self, frames: &[FrameId]) -> Option<StackId> {
        (!frames.is_empty()).then(|| self.snap.interner.stack(frames))
    }

    /// The arena recycled these slots: forget what they decoded to.
    pub fn forget(&mut self, dict: Option<u32>, seq: Option<u32>) {
        if let Some(v) = dict.and_then(|i| self.frame_of_dict.get_mut(i as usize)) {
            *v = UNRESOLVED;
        }
        if let Some(v) = seq.and_then(|i| self.stack_of_seq.get_mut(i as usize)) {
            *v = UNRESOLVED;
        }
    }
}

/// Device of warnings raised while folding, before the trace list is placed at its device.
const PENDING_DEVICE: i64 = i64::MIN;

pub fn decode(arena: &Arena, root: Node, mut st: DecodeState) -> Result<Snapshot> {
    let mut d = Decoder { a: arena, st: &mut st };
    match root {
        Node::Dict(_) => d.top_dict(root)?,
        Node::List(_) => {
            let items = arena.as_seq(root).unwrap_or(&[]);
            if !items.is_empty() && !items.iter().any(|&i| arena.as_dict(i).is_some()) {
                return Err(Error::snapshot(format!(
                    "the file holds a list of {}, not a list of segment dicts (torch.cuda.memory_snapshot())",
                    arena.type_name(items[0])
                )));
            }
            d.st.snap.format = Some(Format::List);
            d.segments(root)?;
        }
        _ => {
            return Err(Error::snapshot(format!(
                "the file holds a {}, not a memory snapshot (a dict with 'segments' and 'device_traces')",
                arena.type_name(root)
            )))
        }
    }
    // Trace lists never placed at a device (an odd file): their warnings name no device.
    for folded in std::mem::take(&mut d.st.folded).into_values() {
        for w in folded.warnings {
            d.st.snap.warnings[w].device = None;
        }
    }
    if d.st.long_text_bytes > crate::budget::TEXT_BYTES.limit() {
        return Err(long_texts_exceeded());
    }
    if d.st.frame_text_bytes > crate::budget::FRAME_TEXT_BYTES.limit() {
        let limit = crate::budget::FRAME_TEXT_BYTES.limit();
        return Err(crate::budget::FRAME_TEXT_BYTES.exceeded(
            limit,
            format_args!(
                "the stack frames' distinct file and function names pass {limit} bytes (as shown, at most {SHOWN_TEXT_BYTES} bytes each: a string shared by many frames counts per frame)"
            ),
        ));
    }
    if d.st.bad_frames > 0 {
        let n = d.st.bad_frames;
        d.warn(WarningCode::FrameInvalid, format!("{n} stack frames were not {{filename, line, name}} dicts and were skipped"), None, None);
    }
    Ok(st.snap)
}

struct Decoder<'x> {
    a: &'x Arena,
    st: &'x mut DecodeState,
}

impl Decoder<'_> {
    fn warn(&mut self, code: WarningCode, message: String, device: Option<i64>, event: Option<usize>) {
        // Bounded: a file with millions of bad entries must not produce millions of warnings.
        if self.st.snap.warnings.len() < 1000 {
            self.st.snap.warnings.push(Warning { code, message, device, event });
        }
    }

    fn int(&self, dict: Node, key: &str) -> Option<i128> {
        self.a.get(dict, key).and_then(|v| self.a.as_int(v))
    }
    /// A 64-bit unsigned value (addresses, streams); beyond 64 bits is None, never wrapped.
    fn uint(&self, dict: Node, key: &str) -> Option<u64> {
        self.int(dict, key).and_then(to_u64)
    }
    /// A byte count: a non-negative integer no device could exceed (larger ones are damage, and
    /// would wrap the sums of every figure).
    fn bytes(&self, dict: Node, key: &str) -> Option<u64> {
        self.int(dict, key).filter(|v| (0..=MAX_BYTES as i128).contains(v)).map(|v| v as u64)
    }
    fn string(&self, dict: Node, key: &str) -> Option<String> {
        self.a.get(dict, key).and_then(|v| self.a.as_str(v)).map(str::to_string)
    }

    fn top_dict(&mut self, root: Node) -> Result<()> {
        self.st.snap.format = Some(Format::Dict);
        let segs = self.a.get(root, "segments");
        let traces = self.a.get(root, "device_traces");
        if segs.is_none() && traces.is_none() {
            let keys: Vec<String> = self
                .a
                .as_dict(root)
                .unwrap_or(&[])
                .iter()
                .take(8)
                .map(|&(k, _)| self.a.as_str(k).map(|s| format!("{s:?}")).unwrap_or_else(|| format!("<{}>", self.a.type_name(k))))
                .collect();
            return Err(Error::snapshot(format!(
                "the top-level dict has neither 'segments' nor 'device_traces' (its keys: {})",
                keys.join(", ")
            )));
        }
        if let Some(s) = segs {
            self.segments(s)?;
        }
        if let Some(t) = traces {
            self.device_traces(t)?;
        }
        if let Some(s) = self.a.get(root, "allocator_settings") {
            let settings = self.a.to_json(s, 0);
            self.check_recorded_settings(&settings);
            self.st.snap.allocator_settings = Some(settings);
        }
        // Where a file records its ring buffer: top level or among the allocator settings.
        let settings = self.a.get(root, "allocator_settings").filter(|&s| self.a.as_dict(s).is_some());
        for dict in std::iter::once(root).chain(settings) {
            if let Some(n) = self.uint(dict, "trace_alloc_max_entries") {
                self.st.snap.trace_max_entries = Some(n);
            }
            if let Some(b) = self.a.get(dict, "trace_alloc_overflowed").and_then(|v| self.a.as_bool(v)) {
                self.st.snap.trace_overflowed = Some(b);
            }
        }
        if let Some(ann) = self.a.get(root, "external_annotations") {
            self.annotations(ann)?;
        }
        self.host_memory(root)?;
        Ok(())
    }

    /// `host_segments` / `host_traces` (2.14+, `record_pinned_host_memory=True`): the pinned-host
    /// caching allocator's segments and trace, in the shapes of `segments` and of one device's
    /// trace (a list of lists is read as well, its lists one after the other). They become one
    /// more device entry, numbered after the last device, and marked as host memory.
    fn host_memory(&mut self, root: Node) -> Result<()> {
        // A trace list's entries were folded into events as it streamed in: its slot is empty.
        let non_empty = |n: Option<Node>| {
            n.filter(|&v| self.a.as_seq(v).is_some_and(|s| !s.is_empty()) || matches!(v, Node::List(l) if self.st.folded.contains_key(&l)))
        };
        let (segs, traces) = (non_empty(self.a.get(root, "host_segments")), non_empty(self.a.get(root, "host_traces")));
        if segs.is_none() && traces.is_none() {
            return Ok(());
        }
        let last_device = self.st.snap.segments.iter().map(|s| s.device + 1).max().unwrap_or(0);
        let host = last_device.max(self.st.snap.traces.len() as i64);
        self.st.snap.host_device = Some(host);
        if let Some(list) = segs {
            let before = self.st.snap.segments.len();
            self.segments(list)?;
            for s in &mut self.st.snap.segments[before..] {
                s.device = host;
            }
        }
        if let Some(list) = traces {
            let items = self.a.as_seq(list).unwrap_or(&[]).to_vec();
            let nested = items.first().is_some_and(|&f| self.a.as_seq(f).is_some());
            let lists = if nested { items } else { vec![list] };
            let mut merged = DeviceTrace::default();
            for l in lists {
                let mut one = self.trace_list(l, host as usize);
                let base = merged.extras.len() as u32;
                merged.extras.append(&mut one.extras);
                for e in one.events.iter() {
                    let stream = one.stream(e);
                    let mut e = *e;
                    if e.extra() != NO_EXTRA {
                        e.set_extra(e.extra() + base);
                    }
                    merged.push(e, stream);
                }
            }
            if self.st.snap.traces.len() <= host as usize {
                self.st.snap.traces.resize_with(host as usize + 1, DeviceTrace::default);
            }
            self.st.snap.traces[host as usize] = merged;
        }
        Ok(())
    }

    fn segments(&mut self, list: Node) -> Result<()> {
        let items = self
            .a
            .as_seq(list)
            .ok_or_else(|| Error::snapshot(format!("'segments' is a {}, expected a list", self.a.type_name(list))))?
            .to_vec();
        // A container shared through the pickle memo counts each time it is used: 20,000
        // references to one segment of 1,000 blocks are 20 million blocks (issue 29.2).
        let budget = crate::budget::DUMP_BLOCKS.limit();
        for &seg in &items {
            let blocks = self.a.get(seg, "blocks").and_then(|l| self.a.as_seq(l)).map_or(0, |b| b.len() as u64);
            self.st.dump_items = self.st.dump_items.saturating_add(1 + blocks);
            if self.st.dump_items > budget {
                return Err(crate::budget::DUMP_BLOCKS.exceeded(
                    budget,
                    format_args!("the dump holds more than {budget} segments and blocks (a segment shared through the pickle memo counts each time it is used)"),
                ));
            }
        }
        // Every byte figure of the dump summed: kept under MAX_DUMP_BYTES, so no sum over the
        // segments or their blocks can wrap (issue 29.13: 20,000 segments of 2^50 bytes did).
        let mut dump_bytes = 0u64;
        for (i, seg) in items.into_iter().enumerate() {
            if self.a.as_dict(seg).is_none() {
                self.warn(
                    WarningCode::SegmentInvalid,
                    format!("segments[{i}] is a {}, not a dict; skipped", self.a.type_name(seg)),
                    None,
                    None,
                );
                continue;
            }
            match self.segment(seg) {
                Some(s) if dump_bytes.saturating_add(figures_sum(&s)) > MAX_DUMP_BYTES => self.warn(
                    WarningCode::SegmentInvalid,
                    format!("segments[{i}]: the dump's byte figures would pass 2^58 in all (no device holds that much); skipped"),
                    Some(s.device),
                    None,
                ),
                Some(s) => {
                    dump_bytes += figures_sum(&s);
                    self.st.snap.segments.push(s)
                }
                None => self.warn(
                    WarningCode::SegmentInvalid,
                    format!("segments[{i}] has no 'address' (a 64-bit integer, the segment ending below 2^64), no 'total_size' between 0 and 2^50 bytes, or a 'device' outside -1..4095; skipped"),
                    None,
                    None,
                ),
            }
        }
        Ok(())
    }

    fn segment(&mut self, seg: Node) -> Option<Segment> {
        let address = self.uint(seg, "address")?;
        let total_size = self.bytes(seg, "total_size")?;
        // A segment must end within the address space.
        address.checked_add(total_size)?;
        // Devices are numbered as the traces are (below 4096): a larger number is damage, and
        // would size the per-device tables by it.
        let device = match self.int(seg, "device") {
            None => 0,
            Some(d) if (-1..MAX_DEVICES as i128).contains(&d) => d as i64,
            Some(_) => return None,
        };
        let pool = match self.string(seg, "segment_type").as_deref() {
            Some("small") => Pool::Small,
            Some("large") => Pool::Large,
            _ if total_size == 2 * MIB => Pool::Small,
            _ => Pool::Large,
        };
        let stack = self.a.get(seg, "frames").and_then(|f| self.stack(f));
        let mut blocks = Vec::new();
        let mut cursor = address;
        let mut block_bytes = 0u64;
        for (k, b) in self.a.get(seg, "blocks").and_then(|l| self.a.as_seq(l)).unwrap_or(&[]).to_vec().into_iter().enumerate() {
            let Some(block) = self.block(b, cursor) else { continue };
            // A block past the end of the address space, or one that would take the segment's
            // block bytes past MAX_DUMP_BYTES, is damage: named and left out, never wrapped.
            let end = block.address.checked_add(block.size);
            let bytes = block_bytes.saturating_add(block.size).saturating_add(block.requested_size);
            match end {
                Some(end) if bytes <= MAX_DUMP_BYTES => {
                    cursor = end;
                    block_bytes = bytes;
                    blocks.push(block);
                }
                _ => self.warn(
                    WarningCode::SegmentInvalid,
                    format!("segment 0x{address:x}: block {k} at 0x{:x} of {} bytes ends past 2^64 or takes the dump's byte figures past 2^58; skipped", block.address, block.size),
                    None,
                    None,
                ),
            }
        }
        let sum = |f: fn(&Block) -> bool| blocks.iter().filter(|b| f(b)).map(|b| b.size).sum::<u64>();
        let allocated = sum(|b| b.state == BlockState::ActiveAllocated);
        let active = sum(|b| b.state != BlockState::Inactive);
        let requested: u64 = blocks.iter().filter(|b| b.state != BlockState::Inactive).map(|b| b.requested_size).sum();
        let allocated_size = self.bytes(seg, "allocated_size").unwrap_or(allocated);
        let active_size = self.bytes(seg, "active_size").unwrap_or(active);
        if !blocks.is_empty() && (allocated_size != allocated || active_size != active) {
            self.warn(
                WarningCode::DumpInconsistent,
                format!("segment 0x{address:x}: allocated_size {allocated_size} / active_size {active_size} differ from its blocks' sums {allocated} / {active}; the segment figures are used"),
                Some(device),
                None,
            );
        }
        Some(Segment {
            device,
            address,
            total_size,
            allocated_size,
            active_size,
            requested_size: self.bytes(seg, "requested_size").unwrap_or(requested),
            stream: self.uint(seg, "stream").unwrap_or(0),
            pool,
            pool_id: self.a.get(seg, "segment_pool_id").and_then(|p| self.pair(p)),
            is_expandable: self.a.get(seg, "is_expandable").and_then(|v| self.a.as_bool(v)).unwrap_or(false),
            stack,
            blocks,
        })
    }

    /// A block; 2.0 snapshots have no `address` (it follows from the previous block) and keep
    /// the requested size and stack in `history[0]`.
    fn block(&mut self, b: Node, cursor: u64) -> Option<Block> {
        self.a.as_dict(b)?;
        let size = self.bytes(b, "size")?;
        let history0 = self.a.get(b, "history").and_then(|h| self.a.as_seq(h)).and_then(|h| h.first().copied());
        let state = self.string(b, "state").and_then(|s| BlockState::parse(&s)).unwrap_or(BlockState::Inactive);
        let requested_size = self
            .bytes(b, "requested_size")
            .or_else(|| history0.and_then(|h| self.bytes(h, "real_size")))
            .unwrap_or(if state == BlockState::Inactive { 0 } else { size });
        let frames = self.a.get(b, "frames").or_else(|| history0.and_then(|h| self.a.get(h, "frames")));
        let stack = frames.and_then(|f| self.stack(f));
        Some(Block { address: self.uint(b, "address").unwrap_or(cursor), size, requested_size, state, stack })
    }

    fn pair(&self, p: Node) -> Option<(i64, i64)> {
        let s = self.a.as_seq(p)?;
        Some((self.a.as_int(*s.first()?)? as i64, self.a.as_int(*s.get(1)?)? as i64))
    }

    /// Intern a frames list: by arena slot first (PyTorch shares lists and frame dicts), then
    /// by value. Empty lists are "no stack".
    fn stack(&mut self, list: Node) -> Option<StackId> {
        let slot = match list {
            Node::Stack(s) => return s,
            Node::List(i) | Node::Tuple(i) => Some(i),
            _ => None,
        };
        if let Some(s) = slot.and_then(|i| cached(&self.st.stack_of_seq, i)) {
            return s;
        }
        let items = self.a.as_seq(list).unwrap_or(&[]);
        let mut frames = std::mem::take(&mut self.st.frames_scratch);
        frames.clear();
        for &f in items {
            if let Some(id) = self.frame(f) {
                frames.push(id);
            }
        }
        let id = if frames.is_empty() { None } else { Some(self.st.snap.interner.stack(&frames)) };
        self.st.frames_scratch = frames;
        if let Some(i) = slot {
            remember(&mut self.st.stack_of_seq, i, id);
        }
        id
    }

    /// Over a budget of frame texts: decoding stops adding frames; `decode` refuses the file.
    fn over_frame_budgets(&self) -> bool {
        self.st.frame_text_bytes > crate::budget::FRAME_TEXT_BYTES.limit() || self.st.long_text_bytes > crate::budget::TEXT_BYTES.limit()
    }

    /// A frame's text field ("??" when absent) as shown, and whole when it is cut: worked out once
    /// per pickled string (distinct frames sharing one huge name share its one allocation).
    fn frame_field(&mut self, f: Node, key: &str) -> (String, Option<LongText>) {
        match self.a.get(f, key).filter(|&v| self.a.as_str(v).is_some()) {
            Some(v) => self.frame_text(v),
            None => ("??".into(), None),
        }
    }

    fn frame_text(&mut self, v: Node) -> (String, Option<LongText>) {
        let t = self.shown(v);
        if t.1.is_some() {
            if self.st.frame_texts_cut == 0 {
                self.warn(
                    WarningCode::FrameTextCut,
                    format!(
                        "frame names or file names longer than {SHOWN_TEXT_BYTES} bytes are shown cut there (`…`); the SnapshotDB keeps them whole (long_texts)"
                    ),
                    None,
                    None,
                );
            }
            self.st.frame_texts_cut += 1;
        }
        t
    }

    /// A pickled string as shown, and whole when it is cut: a long one worked out once per
    /// string, its whole text (the arena's own allocation) counted once against `text_bytes`.
    fn shown(&mut self, v: Node) -> (String, Option<LongText>) {
        let (Some(whole), Node::Str(i)) = (self.a.shared_str(v), v) else {
            return (String::new(), None);
        };
        if whole.len() <= SHOWN_TEXT_BYTES {
            return (whole.to_string(), None);
        }
        if let Some(t) = self.st.shown_texts.get(&i) {
            return t.clone();
        }
        let t = shown_text(whole);
        if let Some(long) = &t.1 {
            self.st.long_text_bytes = self.st.long_text_bytes.saturating_add(long.text().len() as u64);
        }
        self.st.shown_texts.insert(i, t.clone());
        t
    }

    fn frame(&mut self, f: Node) -> Option<FrameId> {
        if let Node::Dict(i) = f {
            if let Some(id) = cached(&self.st.frame_of_dict, i) {
                return id;
            }
        }
        let id = if self.a.as_dict(f).is_some() {
            if self.over_frame_budgets() {
                return None;
            }
            let fx = FxNode {
                op: self.string(f, "fx_node_op"),
                name: self.string(f, "fx_node_name"),
                target: self.string(f, "fx_node_target"),
                original_trace: self.string(f, "fx_original_trace"),
            };
            let ((filename, whole_filename), (name, whole_name)) = (self.frame_field(f, "filename"), self.frame_field(f, "name"));
            let line = self.int(f, "line").and_then(|l| i64::try_from(l).ok()).unwrap_or(0);
            let fx = (fx != FxNode::default()).then(|| Box::new(fx));
            let frame = Frame::from_shown(filename, line, name, fx, WholeNames { filename: whole_filename, name: whole_name });
            Some(self.intern_frame(frame))
        } else if self.a.as_str(f).is_some() {
            // Some re-encodings store preformatted "file:line:name" strings.
            if self.over_frame_budgets() {
                return None;
            }
            let (filename, whole_filename) = self.frame_text(f);
            let frame = Frame::from_shown(filename, 0, String::new(), None, WholeNames { filename: whole_filename, name: None });
            Some(self.intern_frame(frame))
        } else {
            self.st.bad_frames += 1;
            None
        };
        if let Node::Dict(i) = f {
            remember(&mut self.st.frame_of_dict, i, id);
        }
        id
    }

    /// Intern a frame, its shown texts counted against `frame_text_bytes` and its FX node's
    /// (held whole, per frame) against `text_bytes` when it is new.
    fn intern_frame(&mut self, frame: Frame) -> FrameId {
        let (before, bytes) = (self.st.snap.interner.frames.len(), (frame.filename.len() + frame.name.len()) as u64);
        let fx_bytes = frame.fx.as_deref().map_or(0, fx_bytes);
        let id = self.st.snap.interner.frame(frame);
        if self.st.snap.interner.frames.len() > before {
            self.st.frame_text_bytes += bytes;
            self.st.long_text_bytes = self.st.long_text_bytes.saturating_add(fx_bytes);
        }
        id
    }

    fn device_traces(&mut self, t: Node) -> Result<()> {
        let per_device: Vec<(usize, Node)> = if let Some(seq) = self.a.as_seq(t) {
            seq.iter().copied().enumerate().collect()
        } else if let Some(map) = self.a.as_dict(t) {
            // JSON re-encodings key devices by their ordinal as a string.
            map.iter()
                .filter_map(|&(k, v)| {
                    let d = self.a.as_int(k).or_else(|| self.a.as_str(k).and_then(|s| s.parse().ok()))?;
                    usize::try_from(d).ok().filter(|&d| d < MAX_DEVICES).map(|d| (d, v))
                })
                .collect()
        } else {
            return Err(Error::snapshot(format!("'device_traces' is a {}, expected a list", self.a.type_name(t))));
        };
        for (dev, list) in per_device {
            if self.st.snap.traces.len() <= dev {
                self.st.snap.traces.resize_with(dev + 1, DeviceTrace::default);
            }
            self.st.snap.traces[dev] = self.trace_list(list, dev);
        }
        Ok(())
    }

    /// One trace list (folded into events while it streamed in, or read now).
    fn trace_list(&mut self, list: Node, dev: usize) -> DeviceTrace {
        if let Some(folded) = match list {
            Node::List(l) => self.st.folded.remove(&l),
            _ => None,
        } {
            for w in folded.warnings {
                self.st.snap.warnings[w].device = Some(dev as i64);
            }
            let mut trace = folded.trace;
            // The list grew by doubling; millions of events leave up to half of it unused.
            trace.events.shrink_to_fit();
            return trace;
        }
        let Some(entries) = self.a.as_seq(list).map(<[Node]>::to_vec) else {
            self.warn(
                WarningCode::TraceInvalid,
                format!("device_traces[{dev}] is a {}, not a list; ignored", self.a.type_name(list)),
                Some(dev as i64),
                None,
            );
            return DeviceTrace::default();
        };
        let mut trace = DeviceTrace::default();
        for (i, &e) in entries.iter().enumerate() {
            let (ev, stream, _) = self.event_and_frames(e, dev as i64, i, &mut trace.extras);
            trace.push(ev, stream);
        }
        trace
    }

    /// Which trace-entry field string `k` names (resolved once per interned string).
    fn field(&mut self, k: Node) -> Option<EntryField> {
        let Node::Str(i) = k else {
            return None;
        };
        let i = i as usize;
        if self.st.field_of_str.len() <= i {
            self.st.field_of_str.resize(i + 1, EntryField::Unresolved);
        }
        if self.st.field_of_str[i] == EntryField::Unresolved {
            self.st.field_of_str[i] = EntryField::of(self.a.as_str(k)?);
        }
        Some(self.st.field_of_str[i])
    }

    /// The action a string value names (resolved once per interned string); None if not a string.
    fn action(&mut self, v: Node) -> Option<Action> {
        let Node::Str(i) = v else {
            return None;
        };
        let i = i as usize;
        if self.st.action_of_str.len() <= i {
            self.st.action_of_str.resize(i + 1, None);
        }
        if self.st.action_of_str[i].is_none() {
            self.st.action_of_str[i] = Some(Action::parse(self.a.as_str(v)?));
        }
        self.st.action_of_str[i]
    }

    /// An event, its stream, and the entry's `frames` value (for the caller to recycle).
    fn event_and_frames(&mut self, e: Node, device: i64, index: usize, extras: &mut Vec<EventExtra>) -> (Event, u64, Option<Node>) {
        let mut frames = None;
        let mut stream = 0;
        let mut ev = Event::new(Action::Unknown, 0, 0);
        // Most entries have no extras: build them only when a field asks.
        let mut extra: Option<EventExtra> = None;
        if matches!(e, Node::Folded | Node::Entry(_)) {
            self.warn(
                WarningCode::EventInvalid,
                "trace entry repeats an earlier entry object; kept as an unknown event".into(),
                Some(device),
                Some(index),
            );
            return (ev, 0, None);
        }
        let Some(pairs) = self.a.as_dict(e) else {
            self.warn(
                WarningCode::EventInvalid,
                format!("trace entry is a {}, not a dict; kept as an unknown event", self.a.type_name(e)),
                Some(device),
                Some(index),
            );
            return (ev, 0, None);
        };
        for &(k, v) in pairs {
            let Some(field) = self.field(k) else {
                continue;
            };
            match field {
                EntryField::Action => match self.action(v) {
                    Some(Action::Unknown) => {
                        ev.set_action(Action::Unknown);
                        extra_mut(&mut extra).action_name = self.a.as_str(v).map(str::to_string);
                    }
                    Some(action) => ev.set_action(action),
                    None => extra_mut(&mut extra).action_name = Some(self.a.to_json(v, 0).to_string()),
                },
                EntryField::Addr => match self.a.as_int(v).and_then(to_u64) {
                    Some(a) => ev.addr = a,
                    None => self.warn(
                        WarningCode::EventInvalid,
                        format!("addr {} is not a 64-bit address; 0 used", self.a.to_json(v, 0)),
                        Some(device),
                        Some(index),
                    ),
                },
                EntryField::Size => match self.a.as_int(v) {
                    Some(s) if (0..=MAX_BYTES as i128).contains(&s) => ev.size = s as u64,
                    _ => self.warn(
                        WarningCode::EventInvalid,
                        format!("size {} is not a byte count (0 to 2^50); 0 used", self.a.to_json(v, 0)),
                        Some(device),
                        Some(index),
                    ),
                },
                EntryField::Stream => stream = self.a.as_int(v).and_then(to_u64).unwrap_or(0),
                EntryField::TimeUs => match self.a.as_int(v).map(i64::try_from) {
                    Some(Ok(t)) if !time_us_fits(t) => self.warn(
                        WarningCode::EventInvalid,
                        format!("time_us {t} is beyond ±2^55 µs (±1,141 years around 1970); no time used"),
                        Some(device),
                        Some(index),
                    ),
                    t => ev.set_time_us(t.and_then(|t| t.ok())),
                },
                EntryField::Frames => {
                    let stack = self.stack(v);
                    ev.set_stack(stack);
                    frames = Some(v);
                }
                EntryField::DeviceFree => {
                    extra_mut(&mut extra).device_free = self.a.as_int(v).filter(|v| (0..=MAX_BYTES as i128).contains(v)).map(|v| v as u64)
                }
                // PyTorch writes "N/A" outside compiled regions.
                EntryField::CompileContext => extra_mut(&mut extra).compile_context = self.shared_text(v).filter(|c| &**c != "N/A"),
                EntryField::UserMetadata => extra_mut(&mut extra).user_metadata = self.shared_text(v),
                EntryField::InternalMetadata => extra_mut(&mut extra).internal_metadata = self.shared_text(v),
                EntryField::Category => extra_mut(&mut extra).category = self.nonempty_text(v),
                EntryField::PoolId => extra_mut(&mut extra).pool_id = self.pair(v),
                EntryField::ForwardFrames => {
                    let joined: String = self.a.as_seq(v).unwrap_or(&[]).iter().filter_map(|&s| self.a.as_str(s)).collect();
                    extra_mut(&mut extra).forward_frames = Some(joined).filter(|s| !s.is_empty());
                }
                EntryField::Other | EntryField::Unresolved => {
                    extra_mut(&mut extra).other.push((self.a.as_str(k).unwrap_or_default().to_string(), self.a.to_json(v, 0)))
                }
            }
        }
        if let Some(extra) = extra.filter(|x| !is_empty_extra(x)) {
            extras.push(extra);
            ev.set_extra((extras.len() - 1) as u32);
        }
        (ev, stream, frames)
    }

    /// `nonempty_text`, shared: the events naming one pickled string hold its one allocation.
    fn shared_text(&mut self, v: Node) -> Option<std::sync::Arc<str>> {
        match self.a.shared_str(v) {
            Some(t) if t.is_empty() => None,
            Some(t) => Some(t.clone()),
            None => self.nonempty_text(v).map(Into::into),
        }
    }

    fn nonempty_text(&self, v: Node) -> Option<String> {
        match self.a.as_str(v) {
            Some("") => None,
            Some(s) => Some(s.to_string()),
            None if matches!(v, Node::None) => None,
            None => Some(self.a.to_json(v, 0).to_string()),
        }
    }

    /// The recorded allocator settings through the one settings parser: a value PyTorch could not
    /// have run with (`large_segment_size_mb:0`, a size that wraps) is named in a warning, and the
    /// replay and the simulator use the default in its place.
    fn check_recorded_settings(&mut self, settings: &serde_json::Value) {
        let mut bad = Vec::new();
        if let Some(conf) = settings.get("PYTORCH_CUDA_ALLOC_CONF").and_then(|v| v.as_str()) {
            for (k, v) in crate::alloc_conf::split_pairs(conf) {
                if crate::alloc_conf::EFFECTIVE_KEYS.contains(&k.as_str()) {
                    if let Err(e) = crate::alloc_conf::parse(&k, &v) {
                        bad.push(format!("{} ({})", e.message, e.hint));
                    }
                }
            }
        }
        if let Some(Err(e)) =
            settings.get("garbage_collection_threshold").and_then(|v| v.as_f64()).map(crate::alloc_conf::recorded_gc_threshold)
        {
            bad.push(format!("{} ({})", e.message, e.hint));
        }
        for b in bad.into_iter().take(16) {
            self.warn(
                WarningCode::AllocConfInvalid,
                format!("the recorded allocator_settings: {b}; the default is used in its place"),
                None,
                None,
            );
        }
    }

    /// `external_annotations`: names shown cut at SHOWN_TEXT_BYTES (one warning) and held whole
    /// once, times and devices outside 64 bits dropped, never wrapped, and the whole list counted
    /// against the annotation_bytes budget as shown (an annotation dict shared through the memo
    /// counts per use; 3,000 annotations sharing a 1 MB name took 2.9 GB).
    fn annotations(&mut self, list: Node) -> Result<()> {
        let budget = crate::budget::ANNOTATION_BYTES.limit();
        let (mut bytes, mut cut) = (0u64, 0u64);
        for &item in self.a.as_seq(list).unwrap_or(&[]) {
            if self.a.as_dict(item).is_none() {
                continue;
            }
            // Cut once per pickled string (3,000 annotations may share one name).
            let (name, whole_name) = match self.a.get(item, "name") {
                Some(v) => self.shown(v),
                None => (String::new(), None),
            };
            if self.st.long_text_bytes > crate::budget::TEXT_BYTES.limit() {
                return Err(long_texts_exceeded());
            }
            cut += whole_name.is_some() as u64;
            let stage: String = self.a.get(item, "stage").and_then(|v| self.a.as_str(v)).unwrap_or("").chars().take(64).collect();
            bytes = bytes.saturating_add((name.len() + stage.len() + 32) as u64);
            if bytes > budget {
                return Err(crate::budget::ANNOTATION_BYTES.exceeded(
                    budget,
                    format_args!("external_annotations pass {budget} bytes (an annotation shared through the pickle memo counts each time it is used)"),
                ));
            }
            self.st.snap.annotations.push(Annotation {
                device: self.int(item, "device").and_then(|d| i64::try_from(d).ok()),
                time_us: self.int(item, "time_us").and_then(|t| i64::try_from(t).ok()),
                name,
                stage,
                whole_name,
            });
        }
        if cut > 0 {
            self.warn(
                WarningCode::AnnotationTextCut,
                format!("{cut} annotation names longer than {SHOWN_TEXT_BYTES} bytes are shown cut there (`…`); the SnapshotDB keeps them whole (long_texts)"),
                None,
                None,
            );
        }
        Ok(())
    }
}

/// The `text_bytes` budget's error.
fn long_texts_exceeded() -> Error {
    let limit = crate::budget::TEXT_BYTES.limit();
    crate::budget::TEXT_BYTES.exceeded(
        limit,
        format_args!(
            "the distinct texts longer than {SHOWN_TEXT_BYTES} bytes (frames' file and function names, annotations' names) and the distinct frames' FX node fields pass {limit} bytes"
        ),
    )
}

/// Bytes of a frame's FX node fields (op, name, target, original trace), each held whole.
fn fx_bytes(fx: &FxNode) -> u64 {
    [&fx.op, &fx.name, &fx.target, &fx.original_trace].iter().map(|t| t.as_ref().map_or(0, |t| t.len() as u64)).sum()
}

/// The event's extras, created on first use.
fn extra_mut(extra: &mut Option<EventExtra>) -> &mut EventExtra {
    extra.get_or_insert_with(EventExtra::default)
}

fn is_empty_extra(x: &EventExtra) -> bool {
    x.action_name.is_none()
        && x.compile_context.is_none()
        && x.user_metadata.is_none()
        && x.forward_frames.is_none()
        && x.internal_metadata.is_none()
        && x.pool_id.is_none()
        && x.category.is_none()
        && x.device_free.is_none()
        && x.other.is_empty()
}

/// The largest byte count a snapshot field may hold (1 PiB): beyond any device, and far enough
/// below 2^63 that sums over millions of them cannot wrap.
pub(super) const MAX_BYTES: u64 = 1 << 50;

/// Every byte figure of a segment and its blocks, summed (saturating).
fn figures_sum(s: &Segment) -> u64 {
    let own = [s.total_size, s.allocated_size, s.active_size, s.requested_size];
    let blocks = s.blocks.iter().flat_map(|b| [b.size, b.requested_size]);
    own.into_iter().chain(blocks).fold(0u64, u64::saturating_add)
}

/// Device numbers a snapshot may use (traces and segments).
const MAX_DEVICES: usize = 4096;

/// The most all the byte figures of a dump may sum to (2^58): far beyond any machine, far below
/// where a sum of them could wrap.
pub(super) const MAX_DUMP_BYTES: u64 = 1 << 58;

/// Pickled addresses are unsigned 64-bit; a negative value (down to -2^63) is a C++ `-1`
/// reinterpreted, so it wraps; anything outside 64 bits is None (it was taken mod 2^64).
fn to_u64(v: i128) -> Option<u64> {
    (i64::MIN as i128..=u64::MAX as i128).contains(&v).then_some(v as u64)
}
