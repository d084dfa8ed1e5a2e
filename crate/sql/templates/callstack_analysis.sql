SELECT COALESCE(NULLIF(cs.label, ''), cs.text, '[no stack recorded]') AS label, COALESCE(cs.text, '[no stack recorded]') AS callstack, COUNT(*) AS alloc_count, SUM(l.size) AS total_size, AVG(l.size) AS avg_size,
  MAX(l.size) AS max_size, SUM(l.requested_size) AS total_requested, t.stack_id
  FROM traces t JOIN lifetimes l ON l.id = t.lifetime_id LEFT JOIN call_stacks cs ON cs.id = t.stack_id
  WHERE t.device_id = {DEV} AND t.action = 'alloc'
  GROUP BY t.stack_id HAVING COUNT(*) >= :min_count AND SUM(l.size) >= :min_size
  ORDER BY total_size DESC, callstack ASC LIMIT :limit
