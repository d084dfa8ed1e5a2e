#!/usr/bin/env bash
# Show that two builds of snapscope give byte-identical analysis answers on every corpus file and
# fixture (a refactor's proof that behaviour did not change): `analyze --json` per mode and at
# chosen events, `overview --json`, the compare side, a slice (the allocator state it cuts at)
# and the HTML report, byte for byte. Errors are compared too (stderr).
# usage: scripts/same_answers.sh OLD_BINARY NEW_BINARY [MODE...]
#   MODEs default to: overview peak categories tree fragment leak oom all compare slice report
# Env: SNAPSHOTS (default ../shared/snapshots), FIXTURES (default fixtures), JOBS (default 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
old=$(realpath "$1") new=$(realpath "$2"); shift 2
modes=${*:-overview peak categories tree fragment leak oom all compare slice report}
snapshots=${SNAPSHOTS:-"$here/../../shared/snapshots"}
fixtures=${FIXTURES:-"$here/../fixtures"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The commands for one file, one a line: a mode at its default event, at event 0, and at the
# middle event of the first device (read from the file's overview). OUT stands for an output
# file, compared after the command's own output.
commands() {
  local f=$1 mid dev
  read -r mid dev < <("$old" overview "$f" --json 2>/dev/null | python3 -c 'import json,sys
try: d=json.load(sys.stdin)["devices"]; print(max(d[0]["events"]//2, 0), d[0]["device"]) if d else print(0, 0)
except Exception: print(0, 0)')
  for m in $modes; do
    case $m in
      overview) echo "overview --json" ;;
      compare) echo "analyze --mode compare --ref $f --json" ;;
      peak | categories | tree) for e in "" "--event 0" "--event $mid"; do echo "analyze --mode $m --json $e"; done ;;
      all) for e in "" "--event $mid"; do echo "analyze --mode all --json $e"; done ;;
      slice) echo "slice --events 0..$mid --device $dev -o OUT --json" ;;
      report) echo "report -o OUT --json" ;;
      *) echo "analyze --mode $m --json" ;;
    esac
  done
}

same=0 differ=0
while IFS= read -r -d '' f; do
  while IFS= read -r c; do
    for side in a b; do
      bin=$old; [ $side = b ] && bin=$new
      rm -f "$out/$side.out"
      # shellcheck disable=SC2086 # the command's words
      "$bin" ${c%% *} "$f" $(echo "${c#* }" | sed "s|OUT|$out/$side.out|") 2>&1 | sed "s|$out/$side.out|OUT|g" >"$out/$side" || true
      [ -f "$out/$side.out" ] && cat "$out/$side.out" >>"$out/$side"
    done
    if cmp -s "$out/a" "$out/b"; then
      same=$((same + 1))
    else
      differ=$((differ + 1)); echo "differs: $f: $c"
      diff "$out/a" "$out/b" | head -10 || true
    fi
  done < <(commands "$f")
done < <(find "$snapshots" "$fixtures" -type f \( -name '*.pickle' -o -name '*.pkl' -o -name '*.pickle.gz' -o -name '*.pkl.gz' \) -print0 | sort -z)
echo "answers: $same identical, $differ different (modes: $modes)"
[ "$differ" = 0 ] && [ "$same" -gt 0 ]
