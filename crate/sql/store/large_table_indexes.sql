-- Indexes of the large tables when they are rows (a .db file, an export); virtual tables narrow
-- their own scans. Built once, after the rows are in.
CREATE INDEX traces_by_event ON traces(device_id, trace_index);
CREATE INDEX traces_by_action ON traces(device_id, action);
CREATE INDEX lifetimes_by_alloc ON lifetimes(device_id, alloc_event);
CREATE INDEX lifetimes_by_free ON lifetimes(device_id, free_completed_event);
