WITH live AS (SELECT l.*, t.phase AS alloc_phase, t.compile_context AS ctx, t.user_metadata AS meta
  FROM {LIVE_LIFETIMES} l LEFT JOIN traces t ON t.device_id = l.device_id AND t.trace_index = l.alloc_event),
  g AS (SELECT CASE :group_by WHEN 'category' THEN category WHEN 'rule' THEN category_rule
  WHEN 'phase' THEN COALESCE(alloc_phase, '[before the window]') WHEN 'stream' THEN CAST(stream AS TEXT)
  WHEN 'compile_context' THEN COALESCE(ctx, '[none]') ELSE COALESCE(meta, '[none]') END AS group_value,
  COUNT(*) AS blocks, SUM(size) AS bytes FROM live GROUP BY 1)
  SELECT group_value, blocks, bytes, ROUND(100.0 * bytes / MAX(1, (SELECT SUM(bytes) FROM g)), 2) AS percent_of_live
  FROM g ORDER BY bytes DESC, group_value
