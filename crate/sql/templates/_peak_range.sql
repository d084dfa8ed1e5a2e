device_id = {DEV} AND (:start_id IS NULL OR trace_index >= :start_id) AND (:end_id IS NULL OR trace_index <= :end_id) ORDER BY trace_index
