#!/usr/bin/env bash
# Fuzz the reader and the replay with cargo-fuzz (nightly), seeded from fixtures/.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET=120] [TARGET...]   (targets: pickle_vm snapshot replay)
# Crashes land in crate/fuzz/artifacts/<target>/; turn each into a fixture in
# scripts/gen_bad_fixtures.py and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}; shift || true
TARGETS=${*:-pickle_vm snapshot replay}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
for t in $TARGETS; do
  mkdir -p "crate/fuzz/corpus/$t"
  cp fixtures/*.pickle fixtures/*.pkl fixtures/*.json fixtures/*.gz fixtures/bad/* "crate/fuzz/corpus/$t/" 2>/dev/null || true
  rm -f "crate/fuzz/corpus/$t/expected.json"
  (cd crate && cargo +nightly fuzz run "$t" -j 1 -- -max_total_time="$SECS" -max_len=262144 -rss_limit_mb=2048 -timeout=10 2>&1 | tail -n 4)
done
