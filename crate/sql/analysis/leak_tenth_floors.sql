-- The lowest allocated bytes in each tenth of device row ?1's ?2 events.
SELECT MIN(allocated) FROM traces WHERE device_id = ?1 GROUP BY (trace_index * 10) / ?2 ORDER BY (trace_index * 10) / ?2
