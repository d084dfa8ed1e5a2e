//! wasm-bindgen facade (filled in with the browser build).
