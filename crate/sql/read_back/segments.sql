-- Dump-time segments in the order they were written (per device, in the snapshot's order).
SELECT id, device_id, address, total_size, allocated_size, active_size, requested_size, stream,
       segment_type, pool_id_0, pool_id_1, is_expandable, stack_id
FROM segments
ORDER BY id
