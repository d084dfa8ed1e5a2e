-- Every trace event, device by device in trace order (ids run across devices in that order).
SELECT id, device_id, trace_index, action, addr, size, stream, time_us, stack_id, device_free,
       compile_context, user_metadata, extra_json
FROM traces
ORDER BY id
