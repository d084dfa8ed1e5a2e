SELECT l.id, l.address, l.size, l.alloc_event AS allocEventId, l.state_at_dump AS state, COALESCE(NULLIF(cs.label, ''), cs.text, '[no stack recorded]') AS label, COALESCE(cs.text, '[no stack recorded]') AS callstack, l.stack_id
  FROM lifetimes l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
  WHERE l.device_id = {DEV} AND l.orphan = 0 AND l.alloc_event IS NOT NULL AND l.state_at_dump IS NOT NULL AND l.size >= :min_size
  ORDER BY l.size DESC, l.id DESC LIMIT :limit
