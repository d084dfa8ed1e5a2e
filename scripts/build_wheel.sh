#!/usr/bin/env bash
# The Python wheel: `scripts/build_wheel.sh OUT_DIR` writes snapscope-VERSION-*.whl there.
# maturin (pinned, in a virtualenv of scripts/tool_venv.py, made once per machine) builds the CLI
# into the wheel's scripts beside the `snapscope` module of crate/python, with the single-file page
# from www/dist as its data (scripts/build.sh makes that page first).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build_wheel.sh OUT_DIR}
venv=$(python3 scripts/tool_venv.py maturin==1.16.0)
[ -f www/dist/snapscope.html ] || scripts/build.sh >/dev/null
cp www/dist/snapscope.html crate/python/snapscope/snapscope.html
# The same cargo profile as scripts/build.sh, so the CLI already built is reused, not rebuilt.
log=$(mktemp)
"$venv/bin/maturin" build --quiet --release -m crate/Cargo.toml --out "$out" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
ls "$out"/snapscope-*.whl
