-- `traces` by event, created before the large tables' rows go in, so it comes first of their
-- indexes in sqlite_schema however the rows are written. When SQLite copies them
-- (copy_large_tables.sql), they arrive in this index's order (ids run by device, then by event)
-- and SQLite appends each entry on the index's last page: cheaper than reading the table back
-- and sorting. When the page writer writes them (store/pages/), it streams the entries likewise.
CREATE INDEX traces_by_event ON traces(device_id, trace_index);
