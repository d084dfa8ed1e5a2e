SELECT t.trace_index AS event_id, t.stack_id, sf.position, sf.frame_id, f.filename, f.line, f.name
  FROM traces t JOIN stack_frames sf ON sf.stack_id = t.stack_id JOIN frames f ON f.id = sf.frame_id
  WHERE t.device_id = {DEV} AND t.trace_index = :event_id
  ORDER BY CASE WHEN :frame_order = 'root_first' THEN -sf.position ELSE sf.position END
