#!/usr/bin/env bash
# Every test: set up, build, release artifacts (site, single file, CLI, wheel, npm package), lint
# (rustfmt, clippy, prettier, tsc), native tests (unit, fixtures, the real corpus when
# ../shared/snapshots exists, CLI), the Python wheel, then the browser tests in Debian
# chromium. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
# Each step line says the wall time so far and the CPU time (user+sys) of every command so far:
# CPU is the steadier figure on a loaded machine.
# (`times` runs in this shell, not in a pipe's subshell, which would count none of them.)
tf=$(mktemp)
step() {
  times >"$tf"
  echo "::: $* (t=$((SECONDS - t0))s, cpu=$(awk 'END { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s }' "$tf")s)"
}
step setup; scripts/setup.sh
step "fixtures are what scripts/gen_fixtures.py writes"
tmp=$(mktemp -d); python3 scripts/gen_fixtures.py "$tmp" >/dev/null
diff -r -q "$tmp" fixtures --exclude=bad >/dev/null || { echo "fixtures/ is stale: run scripts/gen_fixtures.py"; diff -r -q "$tmp" fixtures --exclude=bad; exit 1; }
python3 scripts/gen_bad_fixtures.py "$tmp/bad" >/dev/null
diff -r -q "$tmp/bad" fixtures/bad || { echo "fixtures/bad is stale: run scripts/gen_bad_fixtures.py"; exit 1; }
rm -rf "$tmp"
step build; scripts/build.sh
step "release artifacts (scripts/release.sh) and their checksums"
v=$(sed -n 's/^version = "\(.*\)"/\1/p' crate/Cargo.toml | head -1)
scripts/release.sh "$v" >/dev/null && (cd "dist/release/$v" && sha256sum -c --quiet SHA256SUMS)
step lint
cargo fmt --all -- --check
cargo clippy -j 2 --release --all-targets -- -D warnings
cargo clippy -j 2 --profile wasm --target wasm32-unknown-unknown --lib -- -D warnings
(cd www && npx prettier --check "src/**/*.ts" build.mjs "../tests/browser/**/*.mjs" "../tests/python/*.mjs" "../tests/unit/**/*.{ts,mjs}" "../scripts/**/*.mjs" >/dev/null && npx tsc --noEmit -p .)
step "native tests"
# The profile scripts/build.sh built the CLI with: its dependencies are reused, not rebuilt.
cargo test -j 2 --release
step "meaning: what the engine concludes about each corpus file against its stacks (tests/meaning)"
python3 tests/meaning/evaluate.py target/release/snapscope
step "interop: pt-snap-cli 0.4.1 reads snapscope's export"
python3 tests/interop/test_ptsnap.py
step "the Python wheel in a fresh virtualenv: the CLI, the module, show() in chromium"
SNAPSCOPE_WHEEL=$(ls "$PWD/dist/release/$v"/snapscope-"$v"-*.whl) python3 tests/python/test_wheel.py
step "the MCP server with the official MCP Python SDK (and the MCP Inspector CLI)"; python3 tests/mcp/test_mcp.py
step "unit tests: page layout, the generated answer types, imports"; node tests/unit/run.mjs
step "browser tests (chromium)"
node --test --test-concurrency=1 tests/browser/
step "done"
rm -f "$tf"
