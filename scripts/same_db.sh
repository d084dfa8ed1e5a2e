#!/usr/bin/env bash
# Show that two builds of snapscope give byte-identical answers on every corpus file: the
# `overview --json` and `analyze --mode all --json` outputs and the SnapshotDB `import` writes
# (every table's rows and the schema, as `sqlite3 .dump` prints them, but `imported_at`).
# A performance change's proof that behaviour did not change.
# usage: scripts/same_db.sh OLD_BINARY NEW_BINARY [SNAPSHOT_DIR (default ../shared/snapshots)]
set -euo pipefail
old=$1 new=$2
dir=${3:-"$(dirname "$0")/../../shared/snapshots"}
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (apt-get install sqlite3)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0
answers() { # BINARY FILE TAG: every answer of FILE into $tmp/TAG.*
  "$1" overview "$2" --json >"$tmp/$3.overview" 2>&1 || true
  "$1" analyze "$2" --mode all --json >"$tmp/$3.all" 2>&1 || true
  rm -f "$tmp/$3.db"
  if "$1" import "$2" -o "$tmp/$3.db" --force --no-focus >/dev/null 2>"$tmp/$3.import"; then
    sqlite3 "$tmp/$3.db" .dump | grep -v "'imported_at'" >"$tmp/$3.dump"
  fi
}
while IFS= read -r -d '' f; do
  answers "$old" "$f" old
  answers "$new" "$f" new
  for part in overview all import dump; do
    if cmp -s "$tmp/old.$part" "$tmp/new.$part" 2>/dev/null || { [ ! -e "$tmp/old.$part" ] && [ ! -e "$tmp/new.$part" ]; }; then
      same=$((same + 1))
    else
      differ=$((differ + 1)); echo "differs: $f ($part)"
      diff "$tmp/old.$part" "$tmp/new.$part" | head -10 || true
    fi
  done
  rm -f "$tmp"/old.* "$tmp"/new.*
done < <(find "$dir" -type f \( -name '*.pickle' -o -name '*.pkl' -o -name '*.pickle.gz' -o -name '*.pkl.gz' \) -print0 | sort -z)
echo "overview, analyze --mode all, import (.dump): $same identical, $differ different"
[ "$differ" = 0 ] && [ "$same" -gt 0 ]
