-- The blocks live right after event ?2 on device index ?1 of at least ?3 bytes (those from before
-- the window only when ?4): size, requested size, stack, from before the window, stack from the free.
SELECT l.size, l.requested_size, l.stack_id, l.alloc_event IS NULL, l.stack_source = 'free'
FROM {LIVE} l WHERE l.size >= ?3 AND (?4 OR l.alloc_event IS NOT NULL)
