//! Writing what other tools read: pt-snap-cli's SnapshotDB layout, and snapshot slices.

#[cfg(not(target_arch = "wasm32"))]
pub mod ptsnap;
#[cfg(not(target_arch = "wasm32"))]
pub mod slice;
