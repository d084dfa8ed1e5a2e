-- One event of device index ?1 (its trace index ?2): the row, its stack's label, lifetime and forward frames.
SELECT t.action, t.addr, t.size, t.stream, t.time_us, t.allocated, t.active, t.reserved, t.requested, t.device_free,
t.compile_context, t.user_metadata, cs.label, t.lifetime_id, t.stack_id,
json_extract(t.extra_json, '$.forward_frames'), t.phase
FROM traces t JOIN devices d ON t.device_id = d.id LEFT JOIN call_stacks cs ON cs.id = t.stack_id
WHERE d.device_index = ?1 AND t.trace_index = ?2
