//! The engine's integration tests, one binary (one link): fixture goldens, the real corpus in
//! ../shared/snapshots when it is there (each corpus test says how many files it read), the CLI,
//! hostile and broken inputs, the crate's layering, semantics, the simulator, ranks and the
//! import/focus workflow. Shared helpers are in `common`.

mod common;

mod analyses;
mod answers;
mod bad_inputs;
mod cli;
mod corpus;
mod diff;
mod fixtures;
mod hostile;
mod layers;
mod one_model;
mod peak_rows;
mod ranks;
mod semantics;
mod simulate;
mod workflow;
