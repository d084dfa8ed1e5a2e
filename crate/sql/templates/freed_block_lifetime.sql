WITH b AS (SELECT size, free_completed_event - alloc_event AS n FROM lifetimes
  WHERE device_id = {DEV} AND orphan = 0 AND alloc_event IS NOT NULL AND free_completed_event IS NOT NULL),
  k AS (SELECT CASE WHEN n < 1000 THEN 0 WHEN n < 5000 THEN 1 WHEN n < 20000 THEN 2 WHEN n < 100000 THEN 3 ELSE 4 END AS bucket, size FROM b)
  SELECT CASE bucket WHEN 0 THEN '<1k' WHEN 1 THEN '1k-5k' WHEN 2 THEN '5k-20k' WHEN 3 THEN '20k-100k' ELSE '>=100k' END AS lifetime_events,
  COUNT(*) AS block_count, SUM(size) AS size_bytes FROM k GROUP BY bucket ORDER BY bucket
