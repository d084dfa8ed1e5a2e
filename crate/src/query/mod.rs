//! Queries over the SnapshotDB: the template catalogue (single source of truth), the template
//! runner, and read-only custom SQL.

pub mod catalogue;
pub mod sql;
pub mod templates;
