#!/usr/bin/env bash
# Fuzz the reader, the replay and the text renderers with cargo-fuzz (nightly), seeded from fixtures/.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET=120] [TARGET...]
#   (targets: pickle_vm snapshot replay render settings snapshot_db)
# Crashes land in crate/fuzz/artifacts/<target>/; turn each into a fixture in
# scripts/gen_bad_fixtures.py and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}; shift || true
TARGETS=${*:-pickle_vm snapshot replay render settings snapshot_db}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
for t in $TARGETS; do
  mkdir -p "crate/fuzz/corpus/$t"
  case $t in
    settings)
      # Seeds: the documented syntax and the shapes that once wrapped or divided by zero.
      i=0
      for s in "expandable_segments:True,max_split_size_mb:512" "roundup_power2_divisions:[256:1,512:2,>:4]" \
               "large_segment_size_mb:0" "max_split_size_mb:17592186044437" "garbage_collection_threshold:0.6" \
               "max_non_split_rounding_mb:18446744073709551615" "roundup_power2_divisions:9223372036854775808"; do
        printf '%s' "$s" > "crate/fuzz/corpus/$t/seed$i"; i=$((i + 1))
      done ;;
    snapshot_db)
      # Seeds: SnapshotDBs of the small fixtures (the CLI must be built: scripts/build.sh).
      for f in fixtures/cuda_training.pickle fixtures/multi_device_oom.pickle; do
        [ -x target/release/snapscope ] && target/release/snapscope import "$f" -o "crate/fuzz/corpus/$t/$(basename "$f").db" --no-focus >/dev/null || true
      done ;;
    *)
      # Small seeds only: a 200 KB nesting or a gzip bomb per run would starve the fuzzer.
      find fixtures -type f ! -name expected.json -size -64k -exec cp {} "crate/fuzz/corpus/$t/" \; ;;
  esac
  (cd crate && cargo +nightly fuzz run "$t" -j 1 -- -max_total_time="$SECS" -max_len=262144 -rss_limit_mb=2048 -timeout=10 2>&1 | grep -E "^#[0-9]+ +(DONE|pulse)|Done|ERROR|SUMMARY" | tail -n 3)
done
