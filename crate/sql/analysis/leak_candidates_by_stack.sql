-- The leak candidates of device row ?1 by stack, the ?3 largest (?2 labels a block without one).
SELECT l.stack_id, COALESCE(cs.label, ?2), COUNT(*), SUM(l.size), MIN(l.alloc_event), MAX(l.alloc_event), cs.site, cs.caller, cs.text
FROM lifetimes l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
WHERE l.device_id = ?1 AND l.orphan = 0 AND l.alloc_event IS NOT NULL AND l.state_at_dump = 'active_allocated'
GROUP BY l.stack_id ORDER BY SUM(l.size) DESC, l.stack_id DESC LIMIT ?3
