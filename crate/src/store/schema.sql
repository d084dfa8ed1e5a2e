-- snapscope SnapshotDB, schema_version 1. Documented in docs/schema.md.
-- Units: bytes for sizes and counters; event index = position in device_traces[d] (trace_index).
-- "None" is NULL, never a -1 sentinel. Addresses are 64-bit; values >= 2^63 read as negative.

CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT);

CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  device_index INTEGER NOT NULL UNIQUE,
  events INTEGER NOT NULL,
  allocator_rules TEXT,
  consistent INTEGER NOT NULL,          -- 1 when the replay reproduces the dump exactly
  ambiguous_bytes INTEGER NOT NULL,     -- bound on bytes the counters may be low by
  start_allocated INTEGER, start_active INTEGER, start_reserved INTEGER, start_requested INTEGER,
  -- Largest counter value right after an event of the trace, and the first event holding it
  -- (what memory_peak answers without a range; NULL without events).
  peak_allocated INTEGER, peak_allocated_event INTEGER, peak_active INTEGER, peak_active_event INTEGER,
  peak_reserved INTEGER, peak_reserved_event INTEGER, peak_requested INTEGER, peak_requested_event INTEGER
);

CREATE TABLE frames (id INTEGER PRIMARY KEY, filename TEXT NOT NULL, line INTEGER NOT NULL, name TEXT NOT NULL);

-- One row per distinct stack; frames_json is innermost-first [{"filename","line","name"}, ...];
-- text is outermost-first, one "filename:line name" per line (pt-snap-cli's callstack text).
-- site: the innermost frame that is not allocator/interpreter plumbing, preferring Python code.
CREATE TABLE call_stacks (id INTEGER PRIMARY KEY, depth INTEGER NOT NULL, top_frame_id INTEGER, frames_json TEXT NOT NULL, text TEXT NOT NULL, site TEXT NOT NULL);
CREATE TABLE stack_frames (stack_id INTEGER NOT NULL, position INTEGER NOT NULL, frame_id INTEGER NOT NULL,
  PRIMARY KEY (stack_id, position)) WITHOUT ROWID;   -- position 0 = innermost (allocation site)

-- Dump-time state.
CREATE TABLE segments (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id),
  address INTEGER NOT NULL, total_size INTEGER NOT NULL, allocated_size INTEGER NOT NULL,
  active_size INTEGER NOT NULL, requested_size INTEGER NOT NULL, stream INTEGER NOT NULL,
  segment_type TEXT NOT NULL, pool_id_0 INTEGER, pool_id_1 INTEGER,
  is_expandable INTEGER NOT NULL, stack_id INTEGER
);
CREATE TABLE blocks (
  id INTEGER PRIMARY KEY, segment_id INTEGER NOT NULL REFERENCES segments(id),
  address INTEGER NOT NULL, size INTEGER NOT NULL, requested_size INTEGER NOT NULL,
  state TEXT NOT NULL, stack_id INTEGER, lifetime_id INTEGER
);

-- Trace events, with the device counters right after each event.
CREATE TABLE traces (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id), trace_index INTEGER NOT NULL,
  action TEXT NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL, stream INTEGER NOT NULL,
  time_us INTEGER, stack_id INTEGER, lifetime_id INTEGER,
  allocated INTEGER NOT NULL, active INTEGER NOT NULL, reserved INTEGER NOT NULL, requested INTEGER NOT NULL,
  device_free INTEGER, compile_context TEXT, user_metadata TEXT, extra_json TEXT
);

-- Block lifetimes: from alloc (or the window start) to free_completed (or the dump).
CREATE TABLE lifetimes (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id),
  address INTEGER NOT NULL, size INTEGER NOT NULL, requested_size INTEGER NOT NULL, stream INTEGER NOT NULL,
  alloc_event INTEGER, free_requested_event INTEGER, free_completed_event INTEGER,
  origin TEXT NOT NULL,                 -- 'in_window' | 'before_window'
  state_at_dump TEXT,                   -- NULL when freed inside the window
  stack_id INTEGER, stack_source TEXT NOT NULL,   -- 'alloc' | 'dump_block' | 'free' | 'none'
  size_exact INTEGER NOT NULL, size_uncertainty INTEGER NOT NULL, orphan INTEGER NOT NULL
);

-- Reserved ranges right before the first event (as the backward replay found them).
CREATE TABLE start_ranges (device_id INTEGER NOT NULL REFERENCES devices(id), address INTEGER NOT NULL, size INTEGER NOT NULL,
  stream INTEGER NOT NULL, segment_type TEXT NOT NULL, is_expandable INTEGER NOT NULL);

-- Reserved ranges: cudaMalloc segments and expandable mappings over the window.
CREATE TABLE segment_lives (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL REFERENCES devices(id),
  address INTEGER NOT NULL, size INTEGER NOT NULL, stream INTEGER NOT NULL, segment_type TEXT NOT NULL,
  is_expandable INTEGER NOT NULL, alloc_event INTEGER, free_event INTEGER, at_dump INTEGER NOT NULL
);

CREATE TABLE annotations (id INTEGER PRIMARY KEY, device_index INTEGER, time_us INTEGER, name TEXT NOT NULL, stage TEXT NOT NULL);

-- Replay consistency issues (per device) and reader warnings.
CREATE TABLE issues (id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, event INTEGER, code TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE warnings (id INTEGER PRIMARY KEY, device_index INTEGER, event INTEGER, code TEXT NOT NULL, message TEXT NOT NULL);
