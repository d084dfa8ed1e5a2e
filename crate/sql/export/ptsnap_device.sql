-- One device's tables: device ordinal {index}, device row {dev}, empty stack id {empty}. Actions
-- as pt-snap's codes; other actions are stored as their text. (The CREATE statements' spacing is
-- kept as earlier exports wrote it: SQLite stores their text verbatim.)
CREATE TABLE out.trace_entry_{index} (id INTEGER PRIMARY KEY, action INTEGER, address INTEGER, size INTEGER, stream INTEGER,
               allocated INTEGER, active INTEGER, reserved INTEGER, callstackId INTEGER);
CREATE TABLE out.block_{index} (id INTEGER PRIMARY KEY, address INTEGER, size INTEGER, requestedSize INTEGER,
               state INTEGER DEFAULT 99, allocEventId INTEGER, freeEventId INTEGER);
BEGIN;
INSERT INTO out.trace_entry_{index} SELECT t.trace_index,
    CASE t.action WHEN 'segment_map' THEN 0 WHEN 'segment_unmap' THEN 1 WHEN 'segment_alloc' THEN 2 WHEN 'segment_free' THEN 3
      WHEN 'alloc' THEN 4 WHEN 'free_requested' THEN 5 WHEN 'free_completed' THEN 6 WHEN 'workspace_snapshot' THEN 7
      WHEN 'oom' THEN 8 ELSE t.action END,
    t.addr, t.size, t.stream, t.allocated, t.active, t.reserved, COALESCE(t.stack_id, {empty})
  FROM traces t WHERE t.device_id = {dev};
INSERT INTO out.block_{index} SELECT l.alloc_event, l.address, l.size, l.requested_size, 1, l.alloc_event, COALESCE(l.free_completed_event, -1)
  FROM lifetimes l WHERE l.device_id = {dev} AND l.orphan = 0 AND l.alloc_event IS NOT NULL;
COMMIT;
