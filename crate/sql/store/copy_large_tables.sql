-- The large tables as rows: SQLite copies them from the replay's virtual tables (the same columns
-- and ids), one statement each, no row bound through the API.
CREATE VIRTUAL TABLE temp.replay_traces USING snapscope_traces;
CREATE VIRTUAL TABLE temp.replay_lifetimes USING snapscope_lifetimes;
-- The rows arrive in this index's order (ids run by device, then by event), so SQLite appends each
-- entry on the index's last page while copying: cheaper than reading the table back and sorting.
CREATE INDEX traces_by_event ON traces(device_id, trace_index);
-- `INSERT INTO main.traces (…) SELECT … FROM temp.replay_traces`, and the same for `lifetimes`
-- (tables.rs: `Table::copy_sql`, from the declared columns).
{copy};
DROP TABLE temp.replay_traces;
DROP TABLE temp.replay_lifetimes;
