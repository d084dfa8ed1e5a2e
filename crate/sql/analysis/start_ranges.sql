-- The reserved ranges of device row ?1 before its first event.
SELECT address, size, stream, segment_type, is_expandable FROM start_ranges WHERE device_id = ?1
