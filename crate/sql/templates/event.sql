SELECT t.trace_index AS id, t.action, t.addr AS address, t.size, t.stream, t.allocated, t.active, t.reserved, COALESCE(NULLIF(cs.label, ''), cs.text, '[no stack recorded]') AS label, COALESCE(cs.text, '[no stack recorded]') AS callstack, t.stack_id
  FROM traces t LEFT JOIN call_stacks cs ON cs.id = t.stack_id WHERE t.device_id = {DEV}
  AND (:id IS NULL OR t.trace_index = :id) AND (:action IS NULL OR t.action = :action) AND (:address IS NULL OR t.addr = :address)
  AND (:size IS NULL OR t.size = :size) AND (:stream IS NULL OR t.stream = :stream)
  AND (:min_id IS NULL OR t.trace_index >= :min_id) AND (:max_id IS NULL OR t.trace_index <= :max_id)
  AND (:min_allocated IS NULL OR t.allocated >= :min_allocated) AND (:min_active IS NULL OR t.active >= :min_active)
  AND (:min_reserved IS NULL OR t.reserved >= :min_reserved)
  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset
