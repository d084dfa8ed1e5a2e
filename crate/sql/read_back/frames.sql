-- The interner's frames, by id (ids are positions).
SELECT id, filename, line, name, fx_node_op, fx_node_name, fx_node_target, fx_original_trace
FROM frames
ORDER BY id
