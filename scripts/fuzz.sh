#!/usr/bin/env bash
# Fuzz the reader, the replay and the text renderers with cargo-fuzz (nightly), seeded from fixtures/.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET=120] [TARGET...]   (targets: pickle_vm snapshot replay render)
# Crashes land in crate/fuzz/artifacts/<target>/; turn each into a fixture in
# scripts/gen_bad_fixtures.py and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}; shift || true
TARGETS=${*:-pickle_vm snapshot replay render}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
for t in $TARGETS; do
  mkdir -p "crate/fuzz/corpus/$t"
  # Small seeds only: a 200 KB nesting or a gzip bomb per run would starve the fuzzer.
  find fixtures -type f ! -name expected.json -size -64k -exec cp {} "crate/fuzz/corpus/$t/" \;
  (cd crate && cargo +nightly fuzz run "$t" -j 1 -- -max_total_time="$SECS" -max_len=262144 -rss_limit_mb=2048 -timeout=10 2>&1 | grep -E "^#[0-9]+ +(DONE|pulse)|Done|ERROR|SUMMARY" | tail -n 3)
done
