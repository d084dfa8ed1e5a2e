-- The stacks, frames and code dictionary. {empty} is the id of the empty stack, which gets its
-- own callstack row ('' with 0 frames), as pt-snap writes it.
BEGIN;
INSERT INTO out.callstack SELECT id, text FROM call_stacks;
INSERT INTO out.callstack VALUES ({empty}, '');
INSERT INTO out.frame SELECT id, filename, line, name FROM frames;
INSERT INTO out.callstack_frame SELECT stack_id, position, frame_id FROM stack_frames;
INSERT INTO out.callstack_frame_manifest SELECT id, depth FROM call_stacks;
INSERT INTO out.callstack_frame_manifest VALUES ({empty}, 0);
INSERT INTO out.dictionary VALUES ('trace_entry','action','0','segment_map'), ('trace_entry','action','1','segment_unmap'),
  ('trace_entry','action','2','segment_alloc'), ('trace_entry','action','3','segment_free'), ('trace_entry','action','4','alloc'),
  ('trace_entry','action','5','free_requested'), ('trace_entry','action','6','free_completed'), ('trace_entry','action','7','workspace_snapshot'),
  ('trace_entry','action','8','oom'), ('block','state','1','active_allocated'), ('block','state','0','active_pending_free'), ('block','state','-1','inactive');
COMMIT;
