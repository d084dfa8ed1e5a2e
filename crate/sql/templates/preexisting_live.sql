SELECT COUNT(*) AS block_count, COALESCE(SUM(l.size), 0) AS size_bytes FROM lifetimes l
  WHERE l.device_id = {DEV} AND l.orphan = 0 AND l.alloc_event IS NULL AND l.free_completed_event > :event_id
