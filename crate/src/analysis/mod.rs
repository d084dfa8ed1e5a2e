//! Analyses over a replayed snapshot. Each returns a typed, serializable result; the CLI prints
//! it and the page renders it, so nothing is computed twice.

pub mod event;
pub mod overview;
pub mod state;
pub mod timeline;
pub mod tree;
