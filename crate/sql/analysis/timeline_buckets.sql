-- The counters of device row ?1 in ?2 buckets over its ?3 events: min/max per bucket, in order.
SELECT MIN(trace_index), MIN(allocated), MAX(allocated), MAX(active), MAX(reserved), MAX(requested), MIN(time_us) FROM traces
WHERE device_id = ?1 GROUP BY (trace_index * ?2) / MAX(?3, 1) ORDER BY 1
