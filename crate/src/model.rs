//! The typed snapshot every reader produces and every later stage consumes. Bytes are integers
//! end to end; frames and stacks are interned once and referred to by id.

use crate::fasthash::FastMap;
use serde::{Deserialize, Serialize};

crate::codes::codes! {
    /// Allocator trace actions. The names are the strings PyTorch writes; one definition serves
    /// the reader, the replay, the database and the page.
    Action, "Trace actions" {
        Alloc = "alloc" => "a block handed out",
        FreeRequested = "free_requested" => "a block freed by the program (its stream uses may still be pending)",
        FreeCompleted = "free_completed" => "a freed block back in the allocator's cache",
        Free = "free" => "a legacy or re-encoded single free (request and completion in one)",
        SegmentAlloc = "segment_alloc" => "a segment reserved from the device (cudaMalloc)",
        SegmentFree = "segment_free" => "a segment given back to the device (cudaFree)",
        SegmentMap = "segment_map" => "pages mapped into an expandable segment",
        SegmentUnmap = "segment_unmap" => "pages unmapped from an expandable segment",
        Snapshot = "snapshot" => "the moment a snapshot was taken",
        Oom = "oom" => "an allocation that failed: out of memory",
        Annotate = "annotate" => "a user annotation (record_function / _record_memory_history annotations)",
        WorkspaceSnapshot = "workspace_snapshot" => "a workspace allocator snapshot marker",
        Unknown = "unknown" => "any other action string; the name is kept in the event's extras",
    }
}

impl Action {
    pub fn parse(s: &str) -> Action {
        Action::from_name(s).unwrap_or(Action::Unknown)
    }

    pub fn is_segment(self) -> bool {
        matches!(self, Action::SegmentAlloc | Action::SegmentFree | Action::SegmentMap | Action::SegmentUnmap)
    }
}

crate::codes::codes! {
    /// A block's state, as the dump and the replay write it.
    BlockState, "Block states" {
        ActiveAllocated = "active_allocated" => "held by a tensor",
        ActivePendingFree = "active_pending_free" => "freed by the program, waiting for its streams' uses to finish",
        Inactive = "inactive" => "free space cached inside a segment",
    }
}

impl BlockState {
    pub fn parse(s: &str) -> Option<BlockState> {
        // The `_snapshot` docstring names a state that is never emitted; accept it anyway.
        BlockState::from_name(s).or((s == "active_awaiting_free").then_some(BlockState::ActivePendingFree))
    }
}

crate::codes::codes! {
    /// The caching allocator's pool a segment belongs to.
    Pool, "Pools" {
        Small = "small" => "blocks of 1 MiB or less, in 2 MiB segments",
        Large = "large" => "blocks over 1 MiB",
    }
}

pub type FrameId = u32;
pub type StackId = u32;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Frame {
    /// The file name as shown (cut at [`SHOWN_TEXT_BYTES`]; whole in `whole` when longer).
    pub filename: String,
    pub line: i64,
    /// The function name as shown (cut like `filename`).
    pub name: String,
    /// The FX node a frame of generated code ran (`augment_with_fx_traces=True`), rare.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fx: Option<Box<FxNode>>,
    /// The whole names of a frame whose names are longer than shown (rare; never in an answer,
    /// kept for the SnapshotDB's `long_texts`).
    #[serde(skip)]
    #[cfg_attr(not(target_arch = "wasm32"), schemars(skip))]
    pub whole: Option<Box<WholeNames>>,
}

/// Bytes of a frame's file or function name, or an annotation's name, that answers show: a
/// longer text is shown cut there (at a character boundary, with `…`) and held whole once, as a
/// [`LongText`] shared by every frame that names it (400 frames sharing one 1 MB name once held
/// 400 copies).
pub const SHOWN_TEXT_BYTES: usize = 4096;

/// A text longer than shown, held whole: one allocation however many frames or annotations
/// name it (the reader hands over the pickle's own string), with its content hash computed once
/// (a frame is hashed by it, never by its megabytes).
#[derive(Debug, Clone)]
pub struct LongText {
    text: std::sync::Arc<str>,
    hash: u64,
}

impl LongText {
    pub fn new(text: std::sync::Arc<str>) -> LongText {
        use std::hash::BuildHasher;
        let hash = std::hash::BuildHasherDefault::<crate::fasthash::FastHasher>::default().hash_one(&*text);
        LongText { text, hash }
    }

    pub fn text(&self) -> &std::sync::Arc<str> {
        &self.text
    }
}

impl PartialEq for LongText {
    fn eq(&self, other: &LongText) -> bool {
        std::sync::Arc::ptr_eq(&self.text, &other.text) || (self.hash == other.hash && self.text == other.text)
    }
}

impl Eq for LongText {}

impl std::hash::Hash for LongText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The whole file and function names of a frame shown cut (None: that name is shown whole).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct WholeNames {
    pub filename: Option<LongText>,
    pub name: Option<LongText>,
}

/// `text` as shown, and whole when it is longer than [`SHOWN_TEXT_BYTES`]: the one place a
/// stored text is cut for display.
pub fn shown_text(text: &std::sync::Arc<str>) -> (String, Option<LongText>) {
    match shown_cut(text) {
        Some(shown) => (shown, Some(LongText::new(text.clone()))),
        None => (text.to_string(), None),
    }
}

/// `text` cut at [`SHOWN_TEXT_BYTES`] (a character boundary at or below) with `…`, when longer.
pub fn shown_cut(text: &str) -> Option<String> {
    if text.len() <= SHOWN_TEXT_BYTES {
        return None;
    }
    let mut end = SHOWN_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!("{}…", &text[..end]))
}

/// `fx_node_op`, `fx_node_name`, `fx_node_target`, `fx_original_trace` of a frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FxNode {
    pub op: Option<String>,
    pub name: Option<String>,
    pub target: Option<String>,
    pub original_trace: Option<String>,
}

impl Frame {
    /// A frame from names already cut for display and their whole texts.
    pub fn from_shown(filename: String, line: i64, name: String, fx: Option<Box<FxNode>>, whole: WholeNames) -> Frame {
        let whole = (whole != WholeNames::default()).then(|| Box::new(whole));
        Frame { filename, line, name, fx, whole }
    }

    /// The whole file name (the shown one when it was not cut).
    pub fn whole_filename(&self) -> &str {
        self.whole.as_ref().and_then(|w| w.filename.as_ref()).map_or(&self.filename, |t| &**t.text())
    }

    /// The whole function name (the shown one when it was not cut).
    pub fn whole_name(&self) -> &str {
        self.whole.as_ref().and_then(|w| w.name.as_ref()).map_or(&self.name, |t| &**t.text())
    }

    pub fn label(&self) -> String {
        format!("{}:{} {}", self.filename, self.line, self.name)
    }
}

/// Frames and stacks, each stored once. Stacks are innermost-first, as in the pickle.
#[derive(Debug, Default)]
pub struct Interner {
    pub frames: Vec<Frame>,
    /// A frame's hash → its id: the frame itself is kept once, in `frames` (the map held a
    /// second copy of every name, issue 29.2). Frames whose hashes collide go to `collided`.
    frame_ids: FastMap<u64, FrameId>,
    collided: FastMap<Frame, FrameId>,
    pub stacks: Vec<Vec<FrameId>>,
    stack_ids: FastMap<Vec<FrameId>, StackId>,
}

impl Interner {
    pub fn frame(&mut self, f: Frame) -> FrameId {
        use std::hash::BuildHasher;
        let h = self.frame_ids.hasher().hash_one(&f);
        let id = self.frames.len() as FrameId;
        match self.frame_ids.get(&h) {
            Some(&known) if self.frames[known as usize] == f => return known,
            Some(_) => {
                if let Some(&known) = self.collided.get(&f) {
                    return known;
                }
                self.collided.insert(f.clone(), id);
            }
            None => {
                self.frame_ids.insert(h, id);
            }
        }
        self.frames.push(f);
        id
    }

    pub fn stack(&mut self, frames: &[FrameId]) -> StackId {
        if let Some(&id) = self.stack_ids.get(frames) {
            return id;
        }
        let id = self.stacks.len() as StackId;
        self.stacks.push(frames.to_vec());
        self.stack_ids.insert(frames.to_vec(), id);
        id
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Block {
    pub address: u64,
    pub size: u64,
    pub requested_size: u64,
    pub state: BlockState,
    pub stack: Option<StackId>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Segment {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub active_size: u64,
    pub requested_size: u64,
    pub stream: u64,
    pub pool: Pool,
    pub pool_id: Option<(i64, i64)>,
    pub is_expandable: bool,
    pub stack: Option<StackId>,
    pub blocks: Vec<Block>,
}

/// Rare per-event fields, stored beside the event only when present and non-empty.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct EventExtra {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_name: Option<String>,
    /// Shared texts (`compile_context`, `user_metadata`, `internal_metadata`): one copy for
    /// every event that names the same pickled string (3,000 events sharing a 1 MB context once
    /// held 3 GB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_context: Option<std::sync::Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_metadata: Option<std::sync::Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_frames: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_metadata: Option<std::sync::Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<(i64, i64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_free: Option<u64>,
    /// Keys this version of snapscope does not know, kept verbatim.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other: Vec<(String, serde_json::Value)>,
}

/// `Event::extra()` of an event without extras.
pub const NO_EXTRA: u32 = EXTRA_MASK;

const ACTION_SHIFT: u32 = 28;
const EXTRA_MASK: u32 = (1 << ACTION_SHIFT) - 1;
const NO_STACK: u32 = u32::MAX;

/// The time shares a word with the stream's slot: 56 bits of signed microseconds hold ±1,141
/// years around 1970 (PyTorch writes microseconds since 1970), the top 8 bits the slot.
const SLOT_SHIFT: u32 = 56;
const TIME_MASK: i64 = (1 << SLOT_SHIFT) - 1;
/// The lowest 56-bit value stands for "no time".
const NO_TIME: i64 = -(1 << (SLOT_SHIFT - 1));

/// Whether `t` is a time an [`Event`] holds (|t| < 2^55 µs); others are dropped.
pub const fn time_us_fits(t: i64) -> bool {
    t > NO_TIME && t < -NO_TIME
}

/// Slot of an event whose stream is beyond the table: it is kept by the event's extras index.
const SPILLED: u8 = u8::MAX;

/// An id stored as a `u32` with `u32::MAX` for "absent": half the size of an `Option<u32>` in
/// the records kept per event and per lifetime.
pub(crate) const fn packed_id(v: Option<u32>) -> u32 {
    match v {
        Some(v) => v,
        None => u32::MAX,
    }
}

pub(crate) const fn unpacked_id(v: u32) -> Option<u32> {
    if v == u32::MAX {
        None
    } else {
        Some(v)
    }
}

/// One trace entry, kept to 32 bytes: millions of these must fit in a browser tab. Absent
/// values are sentinels, the action shares a word with the extras index, and the stream (a
/// handful of distinct values per trace) is a slot in its [`DeviceTrace`]'s table, read with
/// [`DeviceTrace::stream`].
#[derive(Clone, Copy, PartialEq)]
pub struct Event {
    pub addr: u64,
    pub size: u64,
    /// Stream slot in the top 8 bits (see `Streams`), the time (or `NO_TIME`) below.
    slot_time: i64,
    stack: u32,
    /// Action (index in `Action::ALL`) in the top 4 bits; index into `DeviceTrace::extras`
    /// (or `NO_EXTRA`) below.
    action_extra: u32,
}

impl Event {
    /// An event on stream 0 (slot 0), without time, stack or extras.
    pub fn new(action: Action, addr: u64, size: u64) -> Event {
        let mut e = Event { addr, size, slot_time: NO_TIME & TIME_MASK, stack: NO_STACK, action_extra: NO_EXTRA };
        e.set_action(action);
        e
    }

    pub fn action(&self) -> Action {
        Action::ALL.get((self.action_extra >> ACTION_SHIFT) as usize).copied().unwrap_or(Action::Unknown)
    }
    pub fn set_action(&mut self, a: Action) {
        let i = Action::ALL.iter().position(|&x| x == a).unwrap_or(Action::ALL.len()) as u32;
        self.action_extra = (i << ACTION_SHIFT) | (self.action_extra & EXTRA_MASK);
    }

    pub fn time_us(&self) -> Option<i64> {
        // Shifting back sign-extends the 56-bit time.
        let t = (self.slot_time << (64 - SLOT_SHIFT)) >> (64 - SLOT_SHIFT);
        (t != NO_TIME).then_some(t)
    }
    /// Sets the time; one beyond [`time_us_fits`] is dropped (the reader warns first).
    pub fn set_time_us(&mut self, t: Option<i64>) {
        let t = t.filter(|&t| time_us_fits(t)).unwrap_or(NO_TIME);
        self.slot_time = (self.slot_time & !TIME_MASK) | (t & TIME_MASK);
    }

    /// The stream's slot in its trace's table (0: stream 0).
    fn slot(&self) -> u8 {
        (self.slot_time as u64 >> SLOT_SHIFT) as u8
    }
    fn set_slot(&mut self, slot: u8) {
        self.slot_time = (self.slot_time & TIME_MASK) | ((slot as i64) << SLOT_SHIFT);
    }

    pub fn stack(&self) -> Option<StackId> {
        unpacked_id(self.stack)
    }
    pub fn set_stack(&mut self, s: Option<StackId>) {
        self.stack = packed_id(s);
    }

    /// Index into `DeviceTrace::extras`, or `NO_EXTRA`.
    pub fn extra(&self) -> u32 {
        self.action_extra & EXTRA_MASK
    }
    /// Sets the extras index; an index beyond 2^28 - 2 is dropped (no trace has that many).
    pub fn set_extra(&mut self, i: u32) {
        self.action_extra = (self.action_extra & !EXTRA_MASK) | i.min(NO_EXTRA);
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("action", &self.action())
            .field("addr", &self.addr)
            .field("size", &self.size)
            .field("stream_slot", &self.slot())
            .field("time_us", &self.time_us())
            .field("stack", &self.stack())
            .field("extra", &self.extra())
            .finish()
    }
}

/// Events in chunks of fixed size: a list of millions grows without ever copying itself (a
/// doubling `Vec` briefly holds the old and the new buffer, and keeps up to half unused).
#[derive(Debug, Default, Clone)]
pub struct EventList {
    chunks: Vec<Vec<Event>>,
    len: usize,
    /// How many are `alloc`s (what the replay reserves lifetimes for, without a pass to count).
    allocs: usize,
}

const EVENT_CHUNK: usize = 1 << 16;

impl EventList {
    /// Append `e` as it is (on stream 0, or its slot already set by [`DeviceTrace::push`]).
    pub fn push(&mut self, e: Event) {
        self.allocs += (e.action() == Action::Alloc) as usize;
        match self.chunks.last_mut() {
            Some(c) if c.len() < EVENT_CHUNK => c.push(e),
            _ => {
                // Small traces stay small: a new chunk grows from a few events up to its size.
                let mut c = Vec::with_capacity(if self.chunks.is_empty() { 64 } else { EVENT_CHUNK });
                c.push(e);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of `alloc` events.
    pub fn allocs(&self) -> usize {
        self.allocs
    }

    pub fn get(&self, i: usize) -> Option<&Event> {
        self.chunks.get(i / EVENT_CHUNK)?.get(i % EVENT_CHUNK)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Event> + '_ {
        self.chunks.iter().flatten()
    }

    /// Return the last chunk's unused capacity once the list is complete.
    pub fn shrink_to_fit(&mut self) {
        if let Some(c) = self.chunks.last_mut() {
            c.shrink_to_fit();
        }
    }
}

impl std::ops::Index<usize> for EventList {
    type Output = Event;
    fn index(&self, i: usize) -> &Event {
        &self.chunks[i / EVENT_CHUNK][i % EVENT_CHUNK]
    }
}

impl FromIterator<Event> for EventList {
    fn from_iter<I: IntoIterator<Item = Event>>(items: I) -> Self {
        let mut list = EventList::default();
        for e in items {
            list.push(e);
        }
        list
    }
}

#[derive(Debug, Default)]
pub struct DeviceTrace {
    pub events: EventList,
    pub extras: Vec<EventExtra>,
    streams: Streams,
}

/// The streams a trace's events name: slot 0 is stream 0, slot k (1 to 254) `table[k - 1]`;
/// past that (a trace of hundreds of streams) an event's stream is kept by its extras index,
/// given an empty extras entry when it has none.
#[derive(Debug, Default)]
struct Streams {
    table: Vec<u64>,
    spilled: FastMap<u32, u64>,
}

impl DeviceTrace {
    /// Indices of the `oom` events (allocations that failed), ascending.
    pub fn oom_events(&self) -> Vec<u32> {
        self.events.iter().enumerate().filter(|(_, e)| e.action() == Action::Oom).map(|(i, _)| i as u32).collect()
    }

    pub fn extra(&self, e: &Event) -> Option<&EventExtra> {
        self.extras.get(e.extra() as usize)
    }

    /// Append `e` on `stream`.
    pub fn push(&mut self, mut e: Event, stream: u64) {
        let slot = self.slot_of(stream);
        if slot == SPILLED {
            if e.extra() == NO_EXTRA {
                e.set_extra(self.extras.len() as u32);
                self.extras.push(EventExtra::default());
            }
            self.streams.spilled.insert(e.extra(), stream);
        }
        e.set_slot(slot);
        self.events.push(e);
    }

    /// The slot of `stream`, added to the table when new (a linear scan: a trace names a
    /// handful, and the latest is checked first).
    fn slot_of(&mut self, stream: u64) -> u8 {
        let table = &mut self.streams.table;
        if stream == 0 {
            return 0;
        }
        if table.last() == Some(&stream) {
            return table.len() as u8;
        }
        if let Some(k) = table.iter().position(|&s| s == stream) {
            return k as u8 + 1;
        }
        if table.len() + 1 == SPILLED as usize {
            return SPILLED;
        }
        table.push(stream);
        table.len() as u8
    }

    /// The stream of an event of this trace.
    #[inline]
    pub fn stream(&self, e: &Event) -> u64 {
        match e.slot() {
            0 => 0,
            SPILLED => self.streams.spilled.get(&e.extra()).copied().unwrap_or(0),
            k => self.streams.table.get(k as usize - 1).copied().unwrap_or(0),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Annotation {
    pub device: Option<i64>,
    pub time_us: Option<i64>,
    /// As shown (cut at [`SHOWN_TEXT_BYTES`]).
    pub name: String,
    pub stage: String,
    /// The whole name when it is longer than shown.
    #[serde(skip)]
    #[cfg_attr(not(target_arch = "wasm32"), schemars(skip))]
    pub whole_name: Option<LongText>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `{"segments": ..., "device_traces": ...}` (PyTorch 1.13+ / torch_npu)
    Dict,
    /// A bare list of segments (`torch.cuda.memory_snapshot()`)
    List,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Warning {
    pub code: crate::codes::WarningCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<usize>,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    pub format: Option<Format>,
    pub encoding: String,
    pub segments: Vec<Segment>,
    /// Indexed by device ordinal, as `device_traces` is.
    pub traces: Vec<DeviceTrace>,
    pub allocator_settings: Option<serde_json::Value>,
    /// The ring buffer's size and whether it wrapped, where the file says so
    /// (`trace_alloc_max_entries`, `trace_alloc_overflowed`).
    pub trace_max_entries: Option<u64>,
    pub trace_overflowed: Option<bool>,
    /// The device entry that holds pinned host memory (`host_segments` / `host_traces`).
    pub host_device: Option<i64>,
    pub annotations: Vec<Annotation>,
    pub interner: Interner,
    pub warnings: Vec<Warning>,
    pub source_bytes: u64,
}

impl Snapshot {
    /// Devices with segments or a non-empty trace, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self.segments.iter().map(|s| s.device).collect();
        d.extend(self.traces.iter().enumerate().filter(|(_, t)| !t.events.is_empty()).map(|(i, _)| i as i64));
        d.sort_unstable();
        d.dedup();
        d
    }

    pub fn trace(&self, device: i64) -> Option<&DeviceTrace> {
        usize::try_from(device).ok().and_then(|i| self.traces.get(i))
    }

    /// Dump-time allocator figures of one device: the segments' own totals, which are what
    /// PyTorch's counters report (the reader fills them from the blocks when a file lacks them).
    pub fn dump_totals(&self, device: i64) -> DumpTotals {
        let mut t = DumpTotals::default();
        for s in self.segments.iter().filter(|s| s.device == device) {
            t.segments += 1;
            t.reserved += s.total_size;
            t.allocated += s.allocated_size;
            t.active += s.active_size;
            t.requested += s.requested_size;
        }
        t
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DumpTotals {
    pub segments: u64,
    pub reserved: u64,
    pub allocated: u64,
    pub active: u64,
    pub requested: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_packs_into_32_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<Event>(), 32);
        for &a in Action::ALL.iter() {
            let mut e = Event::new(a, 1, 2);
            assert_eq!((e.action(), e.extra(), e.stack(), e.time_us()), (a, NO_EXTRA, None, None));
            e.set_extra(7);
            e.set_stack(Some(0));
            e.set_time_us(Some(-5));
            assert_eq!((e.action(), e.extra(), e.stack(), e.time_us()), (a, 7, Some(0), Some(-5)));
            e.set_action(Action::Oom);
            assert_eq!((e.action(), e.extra()), (Action::Oom, 7));
        }
    }

    /// Times keep their sign and magnitude up to ±(2^55 - 1) µs beside any stream slot; those
    /// beyond read as absent.
    #[test]
    fn times_round_trip_beside_the_stream_slot() {
        let mut trace = DeviceTrace::default();
        let big = (1 << 55) - 1;
        let times = [Some(0), Some(1_757_253_257_271_411), Some(-1), Some(big), Some(-big), None];
        for (i, &t) in times.iter().enumerate() {
            let mut e = Event::new(Action::Alloc, 0, 0);
            e.set_time_us(t);
            trace.push(e, u64::MAX - i as u64);
        }
        for (i, &t) in times.iter().enumerate() {
            let e = &trace.events[i];
            assert_eq!((e.time_us(), trace.stream(e)), (t, u64::MAX - i as u64));
        }
        for t in [1 << 55, -(1 << 55), i64::MIN, i64::MAX] {
            assert!(!time_us_fits(t));
            let mut e = Event::new(Action::Alloc, 0, 0);
            e.set_time_us(Some(t));
            assert_eq!(e.time_us(), None, "{t}");
        }
    }

    /// Streams read back exactly: 0 without a slot, the first 254 others from the table in any
    /// order, and thousands more through the events' extras (their own extras kept).
    #[test]
    fn streams_read_back_past_the_table() {
        let mut trace = DeviceTrace::default();
        trace.events.push(Event::new(Action::Alloc, 0, 0));
        let streams: Vec<u64> = (1..=3000u64).map(|k| k * 0x1000 + 7).collect();
        let expected: Vec<u64> = [0].iter().chain(&streams).chain(streams.iter().rev()).chain([&0]).copied().collect();
        for (i, &s) in expected.iter().enumerate().skip(1) {
            let mut e = Event::new(Action::Alloc, i as u64, 0);
            if i % 7 == 0 {
                e.set_extra(trace.extras.len() as u32);
                trace.extras.push(EventExtra { device_free: Some(i as u64), ..Default::default() });
            }
            trace.push(e, s);
        }
        let read: Vec<u64> = trace.events.iter().map(|e| trace.stream(e)).collect();
        assert_eq!(read, expected);
        for (i, e) in trace.events.iter().enumerate() {
            let free = trace.extra(e).and_then(|x| x.device_free);
            assert_eq!(free, (i % 7 == 0 && i > 0).then_some(i as u64), "event {i}");
        }
    }

    #[test]
    fn event_list_across_chunks() {
        let ev = |i: usize| Event::new(Action::Alloc, i as u64, 0);
        let n = 3 * EVENT_CHUNK + 17;
        let mut list: EventList = (0..n).map(ev).collect();
        list.shrink_to_fit();
        assert_eq!(list.len(), n);
        for i in [0, 1, EVENT_CHUNK - 1, EVENT_CHUNK, 2 * EVENT_CHUNK + 5, n - 1] {
            assert_eq!(list[i].addr, i as u64);
            assert_eq!(list.get(i).map(|e| e.addr), Some(i as u64));
        }
        assert!(list.get(n).is_none());
        assert!(list.iter().enumerate().all(|(i, e)| e.addr == i as u64));
        assert_eq!(list.iter().next_back().map(|e| e.addr), Some(n as u64 - 1));
        assert!(EventList::default().is_empty());
    }
}
