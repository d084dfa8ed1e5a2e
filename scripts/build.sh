#!/usr/bin/env bash
# Build everything: the release CLI, the wasm engine (+ wasm-bindgen glue) and the static page
# (www/dist/ and the single-file www/dist/snapscope.html). Cargo and esbuild skip what is current.
set -euo pipefail
cd "$(dirname "$0")/.."
# The CLI and the wasm engine build side by side: their profiles lock different folders of target/
# (release; wasm and wasm32-unknown-unknown/wasm), and each has single-threaded stretches (a C
# compile of SQLite, the wasm's fat-LTO link) the other can fill. A failure of either fails here.
cargo build -j 2 --release --bin snapscope &
cli=$!
trap 'kill "$cli" 2>/dev/null || true' EXIT
# The wasm profile (Cargo.toml): release code with fat LTO, for a smaller download.
cargo build -j 2 --profile wasm --target wasm32-unknown-unknown --lib
wait "$cli"
trap - EXIT
W=target/wasm32-unknown-unknown/wasm/snapscope.wasm
if [ ! -f www/pkg/snapscope_bg.wasm ] || [ "$W" -nt www/pkg/snapscope_bg.wasm ]; then
  # The reset function lets the worker replace an instance a panic trapped with a fresh one.
  wasm-bindgen --target web --experimental-reset-state-function --out-dir www/pkg "$W"
  # Binaryen's optimizer (www's npm package `binaryen`, as wasm-pack runs it): the page decodes
  # and replays 8-10% faster (scripts/bench_browser.mjs) and downloads 10% less. -O2: -O3 and -O4
  # took longer to run and measured no faster. The features are the ones rustc emits for wasm32.
  www/node_modules/.bin/wasm-opt -O2 --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    www/pkg/snapscope_bg.wasm -o www/pkg/snapscope_bg.wasm ||
    { rm -f www/pkg/snapscope_bg.wasm; exit 1; } # not left unoptimized for the next build to skip
fi
node www/build.mjs
