-- The segment events of device row ?1 up to event ?2, in order. One plain equality per action
-- (not IN): the virtual `traces` table answers each from its list of segment events instead of
-- reading every event.
SELECT action, addr, size, stream FROM (
  SELECT trace_index, action, addr, size, stream FROM traces WHERE device_id = ?1 AND trace_index <= ?2 AND action = 'segment_alloc'
  UNION ALL
  SELECT trace_index, action, addr, size, stream FROM traces WHERE device_id = ?1 AND trace_index <= ?2 AND action = 'segment_free'
  UNION ALL
  SELECT trace_index, action, addr, size, stream FROM traces WHERE device_id = ?1 AND trace_index <= ?2 AND action = 'segment_map'
  UNION ALL
  SELECT trace_index, action, addr, size, stream FROM traces WHERE device_id = ?1 AND trace_index <= ?2 AND action = 'segment_unmap'
) ORDER BY trace_index
