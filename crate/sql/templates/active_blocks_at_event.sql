SELECT l.id, l.address, l.size, l.requested_size AS requestedSize,
  CASE WHEN l.free_requested_event IS NOT NULL AND l.free_requested_event <= :event_id THEN 'active_pending_free'
  WHEN l.alloc_event IS NULL AND l.free_requested_event IS NULL AND l.free_completed_event IS NOT NULL THEN 'active_pending_free'
  ELSE 'active_allocated' END AS state,
  l.alloc_event AS allocEventId, l.free_completed_event AS freeEventId,
  CASE WHEN l.alloc_event IS NOT NULL THEN 'dynamic_live_at_event' WHEN l.free_completed_event IS NULL THEN 'static' ELSE 'preexisting_live_at_event' END AS category
  FROM {LIVE_LIFETIMES} l WHERE l.size >= :min_size AND (:include_static OR l.alloc_event IS NOT NULL)
  ORDER BY {order_by} {order_dir}, l.id ASC LIMIT :limit OFFSET :offset
