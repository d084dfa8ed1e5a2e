#!/usr/bin/env bash
# The page's and the npm package's answer types, generated from the engine's Rust types (their
# JSON Schemas, `snapscope capabilities --typescript`), formatted as the TypeScript is.
# usage: scripts/gen_types.sh [SNAPSCOPE_BINARY (default target/release/snapscope)] [OUT (default www/src/generated/answers.ts)]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/snapscope}
out=${2:-www/src/generated/answers.ts}
"$bin" capabilities --typescript | (cd www && npx prettier --stdin-filepath src/generated/answers.ts) > "$out.tmp"
mv "$out.tmp" "$out"
