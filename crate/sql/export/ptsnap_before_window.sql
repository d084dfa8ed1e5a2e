-- The blocks of device row ?1 that existed before the trace window, with whether each was still
-- allocated (pt-snap's state 1) and when it was returned.
SELECT address, size, requested_size,
       free_requested_event IS NOT NULL OR (free_completed_event IS NULL AND state_at_dump = 'active_allocated'),
       free_completed_event
  FROM lifetimes WHERE device_id = ?1 AND orphan = 0 AND alloc_event IS NULL ORDER BY address
