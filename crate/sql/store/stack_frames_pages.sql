-- Whether the table ?1 can take the page writer's stack_frames B-tree (store/pages/mod.rs): a
-- WITHOUT ROWID table, no index but its key, no rows yet.
SELECT (SELECT sql LIKE '%WITHOUT ROWID' FROM sqlite_schema WHERE name = ?1),
       (SELECT count(*) FROM pragma_index_list(?1) WHERE origin != 'pk'),
       NOT EXISTS (SELECT 1 FROM stack_frames);
