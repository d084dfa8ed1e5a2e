//! A panic on purpose, for the page's test of the worker's recovery: a panic in the engine (a
//! bug) traps the wasm instance, and the worker must start a fresh one and load its snapshots
//! again so that the next request and the next file still work. Nothing but that test calls it.

use crate::wasm::WasmEngine;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(js_class = Engine)]
impl WasmEngine {
    /// Panics (as a bug would, in the middle of a call on this engine).
    #[wasm_bindgen(js_name = panicForTest)]
    pub fn panic_for_test(&mut self) {
        panic!("a panic on purpose (the worker recovery test)");
    }
}
