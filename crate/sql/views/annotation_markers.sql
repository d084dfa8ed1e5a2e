-- The Timeline's annotation markers: external annotations (framework-internal ranges left out:
-- they are in the phase bands) summarised into at most :buckets time buckets, the first of each
-- named with its count, placed at the first event at or after its time. A snapshot may carry
-- 10^6 annotations. Times are real numbers in the bucketing, so that int64 extremes cannot
-- overflow.
WITH a AS (SELECT time_us, name, stage FROM annotations
           WHERE time_us IS NOT NULL AND (device_index IS NULL OR device_index = :device)
             AND name NOT IN (SELECT name FROM phases WHERE kind = 'range' AND grp = 'framework')),
     r AS (SELECT MIN(time_us) AS lo, MAX(time_us) * 1.0 - MIN(time_us) AS span FROM a),
     g AS (SELECT MIN(a.time_us) AS t, a.name AS name, a.stage AS stage, COUNT(*) AS n FROM a, r
           GROUP BY CAST((a.time_us - r.lo * 1.0) * :buckets / MAX(1, r.span) AS INTEGER))
SELECT (SELECT MIN(t.trace_index) FROM traces t JOIN devices d ON t.device_id = d.id
        WHERE d.device_index = :device AND t.time_us >= g.t), g.name, g.stage, g.n
FROM g ORDER BY 1
LIMIT :buckets + 1
