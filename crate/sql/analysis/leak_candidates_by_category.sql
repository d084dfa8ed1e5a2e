-- The leak candidates of device row ?1 by category.
SELECT category, COUNT(*), SUM(size) FROM lifetimes
WHERE device_id = ?1 AND orphan = 0 AND alloc_event IS NOT NULL AND state_at_dump = 'active_allocated'
GROUP BY category ORDER BY 3 DESC, 1
