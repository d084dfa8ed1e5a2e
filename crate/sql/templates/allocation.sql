SELECT trace_index AS id, allocated, active, reserved, requested FROM traces WHERE device_id = {DEV}
  AND (:min_id IS NULL OR trace_index >= :min_id) AND (:max_id IS NULL OR trace_index <= :max_id)
  AND (:min_allocated IS NULL OR allocated >= :min_allocated) AND (:min_active IS NULL OR active >= :min_active)
  AND (:min_reserved IS NULL OR reserved >= :min_reserved)
  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset
