SELECT id, address, size, requested_size AS requestedSize, COALESCE(state_at_dump, 'freed') AS state, alloc_event AS allocEventId, free_completed_event AS freeEventId
  FROM lifetimes WHERE device_id = {DEV} AND orphan = 0
  AND (:id IS NULL OR id = :id) AND (:address IS NULL OR address = :address) AND (:size IS NULL OR size = :size)
  AND (:requestedSize IS NULL OR requested_size = :requestedSize) AND (:allocEventId IS NULL OR alloc_event = :allocEventId)
  AND (:freeEventId IS NULL OR free_completed_event = :freeEventId) AND (:min_size IS NULL OR size >= :min_size) AND (:max_size IS NULL OR size <= :max_size)
  AND (:min_allocEventId IS NULL OR alloc_event >= :min_allocEventId) AND (:max_allocEventId IS NULL OR alloc_event <= :max_allocEventId)
  AND (:min_freeEventId IS NULL OR free_completed_event >= :min_freeEventId) AND (:max_freeEventId IS NULL OR free_completed_event <= :max_freeEventId)
  ORDER BY {order_by} {order_dir}, id {order_dir} LIMIT :limit OFFSET :offset
