-- pt-snap-cli's standalone SnapshotDB layout (import format 3): the tables shared by every device,
-- in the attached database `out`.
CREATE TABLE out.callstack (id INTEGER PRIMARY KEY, callstack TEXT);
CREATE TABLE out.frame (id INTEGER PRIMARY KEY, filename TEXT NOT NULL, line INTEGER NOT NULL, name TEXT NOT NULL);
CREATE TABLE out.callstack_frame (callstackId INTEGER NOT NULL, position INTEGER NOT NULL, frameId INTEGER NOT NULL);
CREATE TABLE out.callstack_frame_manifest (callstackId INTEGER PRIMARY KEY, frameCount INTEGER NOT NULL);
CREATE TABLE out.dictionary (`table` TEXT, `column` TEXT, `key` TEXT, `value` TEXT);
CREATE TABLE out.pt_snap_metadata (id INTEGER PRIMARY KEY CHECK (id = 1), metadata_schema_version INTEGER NOT NULL,
  import_format_version INTEGER NOT NULL, source_sha256 TEXT NOT NULL, source_size INTEGER NOT NULL,
  source_name TEXT NOT NULL, requested_device INTEGER, importer_name TEXT NOT NULL,
  importer_version TEXT NOT NULL, completed_at TEXT NOT NULL);
