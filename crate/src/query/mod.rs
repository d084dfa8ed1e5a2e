//! Queries over the SnapshotDB: read-only custom SQL (and, built on it, the template catalogue).

pub mod sql;
