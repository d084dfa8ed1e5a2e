//! Analyses over a replayed snapshot. Each returns a typed, serializable result; the CLI prints
//! it and the page renders it, so nothing is computed twice.

pub mod bands;
pub mod compare;
pub mod event;
pub mod findings;
pub mod fragment;
pub mod leak;
pub mod oom;
pub mod overview;
pub mod peak;
pub mod state;
pub mod timeline;
pub mod tree;
