-- Frames ?2..?2+?3 of stack ?1, innermost (position 0) first.
SELECT f.filename, f.line, f.name, f.kind, f.display, f.fx_node_op, f.fx_node_name, f.fx_node_target, f.fx_original_trace
FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id
WHERE sf.stack_id = ?1 ORDER BY sf.position LIMIT ?3 OFFSET ?2
