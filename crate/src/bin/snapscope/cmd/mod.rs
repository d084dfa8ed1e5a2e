//! One module per subcommand: its arguments and a `run` that calls the engine and answers.

pub mod analyze;
pub mod capabilities;
pub mod diff;
pub mod export;
pub mod focus;
pub mod import;
pub mod mcp;
pub mod metadata;
pub mod overview;
pub mod query;
pub mod ranks;
pub mod report;
pub mod simulate;
pub mod skill;
pub mod slice;
pub mod sql;
