-- The three sites holding the most bytes of category ?3 live right after event ?2 on device row
-- ?1 (a block's stack known only from its free names no site): labelled ?4 for blocks from
-- before the window without a stack, ?5 for the others without one.
SELECT COALESCE(cs.label, CASE WHEN l.alloc_event IS NULL THEN ?4 ELSE ?5 END), COUNT(*), SUM(l.size)
FROM {LIVE} l LEFT JOIN call_stacks cs ON cs.id = l.stack_id AND l.stack_source != 'free'
WHERE l.category = ?3 GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT 3
