#!/usr/bin/env bash
# Build everything: the release CLI, the wasm engine (+ wasm-bindgen glue) and the static page
# (www/dist/ and the single-file www/dist/snapscope.html). Cargo and esbuild skip what is current.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -j 2 --release --bin snapscope
# The wasm profile (Cargo.toml): release code with fat LTO, for a smaller download.
cargo build -j 2 --profile wasm --target wasm32-unknown-unknown --lib
W=target/wasm32-unknown-unknown/wasm/snapscope.wasm
if [ ! -f www/pkg/snapscope_bg.wasm ] || [ "$W" -nt www/pkg/snapscope_bg.wasm ]; then
  # The reset function lets the worker replace an instance a panic trapped with a fresh one.
  wasm-bindgen --target web --experimental-reset-state-function --out-dir www/pkg "$W"
fi
node www/build.mjs
