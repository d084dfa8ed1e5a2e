-- The Timeline's markers: a device's OOM and snapshot events, in order.
SELECT t.trace_index, t.action
FROM traces t JOIN devices d ON t.device_id = d.id
WHERE d.device_index = :device AND t.action IN ('oom', 'snapshot')
ORDER BY 1
LIMIT 5000
