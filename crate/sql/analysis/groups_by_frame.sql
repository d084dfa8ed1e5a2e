-- The blocks live right after event ?2 on device row ?1 grouped by the frame that names each
-- stack (never the unwinder's innermost frame); as groups_by_stack.sql otherwise.
SELECT g.k, g.before, g.freed, g.n, g.bytes, g.req, f.display, NULL, f.filename || ':' || f.line || ' ' || f.name, NULL FROM (
  SELECT cs.label_frame_id AS k, (l.alloc_event IS NULL) AS before, (l.stack_source = 'free') AS freed, COUNT(*) AS n,
         SUM(l.size) AS bytes, SUM(l.requested_size) AS req
  FROM {LIVE} l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
  GROUP BY k, freed, CASE WHEN cs.label_frame_id IS NULL OR l.stack_source = 'free' THEN (l.alloc_event IS NULL) ELSE 0 END) g
LEFT JOIN frames f ON f.id = g.k
ORDER BY g.bytes DESC, g.k, g.freed
