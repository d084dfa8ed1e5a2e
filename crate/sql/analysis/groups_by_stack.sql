-- The blocks live right after event ?2 on device row ?1 grouped by stack: a stack known only from
-- the block's free is not where it was allocated, so it is its own group. Texts are joined to the
-- groups, not to the blocks: a stack's text can be long, and sorting it once per block was the
-- cost of a hostile snapshot.
SELECT g.k, g.before, g.freed, g.n, g.bytes, g.req, cs.label, cs.caller, cs.site, cs.text FROM (
  SELECT l.stack_id AS k, (l.alloc_event IS NULL) AS before, (l.stack_source = 'free') AS freed, COUNT(*) AS n,
         SUM(l.size) AS bytes, SUM(l.requested_size) AS req
  FROM {LIVE} l LEFT JOIN call_stacks cs ON cs.id = l.stack_id
  GROUP BY k, freed, CASE WHEN l.stack_id IS NULL OR l.stack_source = 'free' THEN (l.alloc_event IS NULL) ELSE 0 END) g
LEFT JOIN call_stacks cs ON cs.id = g.k
ORDER BY g.bytes DESC, g.k, g.freed
