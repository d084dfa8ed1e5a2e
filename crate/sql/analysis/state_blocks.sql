-- The blocks live right after event ?2 on device index ?1, each with its state then.
SELECT l.address, l.size, l.requested_size,
       CASE WHEN l.free_requested_event IS NOT NULL AND l.free_requested_event <= ?2 THEN 'active_pending_free'
            WHEN l.alloc_event IS NULL AND l.free_requested_event IS NULL AND l.free_completed_event IS NOT NULL THEN 'active_pending_free'
            WHEN l.alloc_event IS NULL AND l.free_completed_event IS NULL AND l.state_at_dump = 'active_pending_free'
                 AND l.free_requested_event IS NULL THEN 'active_pending_free'
            ELSE 'active_allocated' END,
       l.stack_id, l.id
FROM {LIVE} l ORDER BY l.address
