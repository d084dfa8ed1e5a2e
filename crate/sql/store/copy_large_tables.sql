-- The large tables as rows: SQLite copies them from the replay's virtual tables (the same columns
-- and ids), one statement each, no row bound through the API. (`traces_by_event` exists already:
-- traces_index.sql.)
CREATE VIRTUAL TABLE temp.replay_traces USING snapscope_traces;
CREATE VIRTUAL TABLE temp.replay_lifetimes USING snapscope_lifetimes;
-- `INSERT INTO main.traces (…) SELECT … FROM temp.replay_traces`, and the same for `lifetimes`
-- (tables.rs: `Table::copy_sql`, from the declared columns).
{copy};
DROP TABLE temp.replay_traces;
DROP TABLE temp.replay_lifetimes;
