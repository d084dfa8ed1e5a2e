-- Blocks of device row ?1 from before the window, never freed, without a stack: count, bytes.
SELECT COUNT(*), SUM(size) FROM lifetimes
WHERE device_id = ?1 AND ?2 >= 0 AND orphan = 0 AND alloc_event IS NULL AND free_completed_event IS NULL AND stack_id IS NULL
