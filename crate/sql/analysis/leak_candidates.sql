-- Blocks of device row ?1 allocated in the window and still allocated at the dump: count, bytes.
-- (?2, the device's event count, is bound by every leak count; unused here.)
SELECT COUNT(*), SUM(size) FROM lifetimes
WHERE device_id = ?1 AND ?2 >= 0 AND orphan = 0 AND alloc_event IS NOT NULL AND state_at_dump = 'active_allocated'
