-- An open session's large tables: the replay in memory read as tables, no copy of its rows.
DROP TABLE traces;
CREATE VIRTUAL TABLE traces USING snapscope_traces;
DROP TABLE lifetimes;
CREATE VIRTUAL TABLE lifetimes USING snapscope_lifetimes;
