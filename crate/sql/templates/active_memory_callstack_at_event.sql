WITH live AS (SELECT l.size, l.requested_size, l.stack_id,
  CASE WHEN l.alloc_event IS NOT NULL THEN 'dynamic_live_at_event' WHEN l.free_completed_event IS NULL THEN 'static' ELSE 'preexisting_live_at_event' END AS category
  FROM {LIVE_LIFETIMES} l WHERE l.size >= :min_size AND (:include_static OR l.alloc_event IS NOT NULL)),
  g AS (SELECT stack_id, category, COUNT(*) AS n, SUM(size) AS bytes, SUM(requested_size) AS req FROM live GROUP BY stack_id, category),
  ranked AS (SELECT *, ROW_NUMBER() OVER (ORDER BY bytes DESC, n DESC, stack_id, category) AS rk FROM g),
  total AS (SELECT SUM(bytes) AS t FROM g),
  rows AS (SELECT stack_id, category, n, bytes, req, rk FROM ranked WHERE :top_n < 0 OR rk <= :top_n
  UNION ALL SELECT NULL, 'other', SUM(n), SUM(bytes), SUM(req), 1e18 FROM ranked WHERE :top_n >= 0 AND rk > :top_n HAVING COUNT(*) > 0),
  named AS (SELECT r.*, CASE WHEN r.category = 'other' THEN '[other stacks]' WHEN r.category = 'dynamic_live_at_event' THEN '[no stack recorded]'
  ELSE '[allocated before the window, no stack]' END AS synthetic FROM rows r)
  SELECT COALESCE(NULLIF(cs.label, ''), cs.text, r.synthetic) AS label, COALESCE(cs.text, r.synthetic) AS callstack,
  r.category, r.n AS block_count, r.bytes AS size_bytes, ROUND(r.bytes / 1073741824.0, 6) AS size_gib, r.req AS requested_bytes,
  ROUND(r.req / 1073741824.0, 6) AS requested_gib, ROUND(r.bytes * 100.0 / NULLIF(total.t, 0), 4) AS percent_of_active_blocks, r.stack_id
  FROM named r LEFT JOIN call_stacks cs ON cs.id = r.stack_id, total ORDER BY r.rk
