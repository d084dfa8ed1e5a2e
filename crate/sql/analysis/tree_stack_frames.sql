-- The frames of stack ?1, innermost first: filename, line, name, kind, as shown, and whether it is
-- the frame that names the stack.
SELECT f.filename, f.line, f.name, f.kind, f.display, f.id = cs.label_frame_id
FROM stack_frames sf
JOIN frames f ON f.id = sf.frame_id
JOIN call_stacks cs ON cs.id = sf.stack_id
WHERE sf.stack_id = ?1
ORDER BY sf.position
