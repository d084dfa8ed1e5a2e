-- Indexes of the large tables when they are rows (a .db file, an export); virtual tables narrow
-- their own scans. Lifetimes arrive in no order of these: built once, after the rows are in, by a
-- sort. (`traces_by_event` is built while the rows go in: traces_index.sql.) In a .db file the
-- page writer writes their entries (store/pages/): created here, they are empty.
-- No index on traces(device_id, action) (schema_version 2 files have one): the planner took it
-- only for `action = 'alloc'` (a third of the rows, read in rowid-lookup order: no faster than
-- the scan), never for the rare actions; it cost a sixth of an import.
CREATE INDEX lifetimes_by_alloc ON lifetimes(device_id, alloc_event);
CREATE INDEX lifetimes_by_free ON lifetimes(device_id, free_completed_event);
