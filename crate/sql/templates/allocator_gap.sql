WITH w AS (SELECT trace_index AS i, allocated AS al, active AS ac, reserved AS re FROM traces WHERE device_id = {DEV}
  AND (:start_id IS NULL OR trace_index >= :start_id) AND (:end_id IS NULL OR trace_index <= :end_id)),
  a AS (SELECT * FROM w ORDER BY al DESC, i LIMIT 1), c AS (SELECT * FROM w ORDER BY ac DESC, i LIMIT 1), r AS (SELECT * FROM w ORDER BY re DESC, i LIMIT 1)
  SELECT a.i AS peak_allocated_event_id, a.al AS peak_allocated, a.ac AS active_at_allocated_peak, a.re AS reserved_at_allocated_peak,
  a.re - a.ac AS reserved_active_gap_at_allocated_peak, a.re - a.al AS reserved_allocated_gap_at_allocated_peak,
  c.i AS peak_active_event_id, c.ac AS peak_active, c.al AS allocated_at_active_peak, c.re AS reserved_at_active_peak,
  c.re - c.ac AS reserved_active_gap_at_active_peak, c.re - c.al AS reserved_allocated_gap_at_active_peak,
  r.i AS peak_reserved_event_id, r.re AS peak_reserved, r.al AS allocated_at_reserved_peak, r.ac AS active_at_reserved_peak,
  r.re - r.ac AS reserved_active_gap_at_reserved_peak, r.re - r.al AS reserved_allocated_gap_at_reserved_peak,
  (a.i = c.i AND c.i = r.i) AS all_peaks_same_event, (a.i = c.i) AS allocated_active_same_event,
  (c.i = r.i) AS active_reserved_same_event, (a.i = r.i) AS allocated_reserved_same_event
  FROM a, c, r
