SELECT peak_allocated, peak_allocated_event AS peak_allocated_event_id, peak_active, peak_active_event AS peak_active_event_id,
  peak_reserved, peak_reserved_event AS peak_reserved_event_id, peak_requested, peak_requested_event AS peak_requested_event_id
  FROM devices WHERE id = {DEV} AND :start_id IS NULL AND :end_id IS NULL
  UNION ALL
  SELECT * FROM (WITH pa AS (SELECT MAX(allocated) AS v, trace_index AS i FROM (SELECT allocated, trace_index FROM traces WHERE {PEAK_RANGE})),
  pc AS (SELECT MAX(active) AS v, trace_index AS i FROM (SELECT active, trace_index FROM traces WHERE {PEAK_RANGE})),
  pr AS (SELECT MAX(reserved) AS v, trace_index AS i FROM (SELECT reserved, trace_index FROM traces WHERE {PEAK_RANGE})),
  pq AS (SELECT MAX(requested) AS v, trace_index AS i FROM (SELECT requested, trace_index FROM traces WHERE {PEAK_RANGE}))
  SELECT pa.v, pa.i, pc.v, pc.i, pr.v, pr.i, pq.v, pq.i FROM pa, pc, pr, pq
  WHERE :start_id IS NOT NULL OR :end_id IS NOT NULL)
