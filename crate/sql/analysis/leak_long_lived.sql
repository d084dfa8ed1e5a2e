-- Blocks of device row ?1 alive for at least half of its ?2 events: never freed, or freed that
-- long after. The bounds on single columns follow from the condition (events are 0..n) and let
-- the virtual table skip most rows itself.
SELECT COUNT(*), SUM(size) FROM (
  SELECT size FROM lifetimes WHERE device_id = ?1 AND orphan = 0 AND free_completed_event IS NULL AND alloc_event <= ?2 - ?2 / 2
  UNION ALL SELECT size FROM lifetimes WHERE device_id = ?1 AND orphan = 0 AND alloc_event <= ?2 - ?2 / 2
    AND free_completed_event >= ?2 / 2 AND free_completed_event - alloc_event >= ?2 / 2)
