-- Live bytes of device row ?1 per stack, origin, category and side, of the lifetimes that touch
-- (A, B] = (?2, ?3]: allocated by B and not freed by A.
SELECT l.stack_id, (l.alloc_event IS NULL) AS before, (l.stack_source = 'free') AS freed_src,
       COALESCE(l.category, 'unknown'),
       (l.alloc_event IS NULL OR l.alloc_event <= ?2) AS at_a,
       (l.free_completed_event IS NULL OR l.free_completed_event > ?3) AS at_b,
       SUM(l.size)
FROM lifetimes l
WHERE l.device_id = ?1 AND l.orphan = 0 AND (l.alloc_event IS NULL OR l.alloc_event <= ?3)
  AND (l.free_completed_event IS NULL OR l.free_completed_event > ?2)
GROUP BY 1, 2, 3, 4, 5, 6
