#!/usr/bin/env bash
# Show that two builds of snapscope print byte-identical `overview --json` on every corpus file
# (a refactor's proof that behaviour did not change).
# usage: scripts/same_overview.sh OLD_BINARY NEW_BINARY [SNAPSHOT_DIR (default ../shared/snapshots)]
# Build OLD_BINARY from an earlier commit, e.g.:
#   git worktree add /tmp/old <commit> && cargo build --release --manifest-path /tmp/old/Cargo.toml
set -euo pipefail
old=$1 new=$2
dir=${3:-"$(dirname "$0")/../../shared/snapshots"}
same=0 differ=0
while IFS= read -r -d '' f; do
  if cmp -s <("$old" overview "$f" --json 2>&1) <("$new" overview "$f" --json 2>&1); then
    same=$((same + 1))
  else
    differ=$((differ + 1)); echo "differs: $f"
    diff <("$old" overview "$f" --json 2>&1) <("$new" overview "$f" --json 2>&1) | head -20 || true
  fi
done < <(find "$dir" -type f \( -name '*.pickle' -o -name '*.pkl' -o -name '*.pickle.gz' -o -name '*.pkl.gz' \) -print0 | sort -z)
echo "overview --json: $same identical, $differ different"
[ "$differ" = 0 ] && [ "$same" -gt 0 ]
