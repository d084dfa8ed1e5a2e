#!/usr/bin/env bash
# Every test: set up, build (linted by clippy as it compiles), release artifacts (site, single
# file, CLI, wheel, npm package), the formatters and the type checker, native tests (unit,
# fixtures, the real corpus when ../shared/snapshots exists, CLI), the meaning evaluation, interop,
# the Python wheel, the MCP server, then the browser tests in Debian chromium.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
# Each step line says the wall time so far and the CPU time (user+sys) of every command its shell
# has waited for: CPU is the steadier figure on a loaded machine. Inside a group (below) the CPU is
# the group's own; the "done" line has the whole command's.
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

# Clippy lints every compile of the project's own crate (the CLI, the wasm engine, the lib and
# test targets `cargo test` builds) instead of checking each target once more: `cargo clippy`
# is this same driver over a metadata-only build. -D warnings fails the build on any lint.
# (The serve command builds without it, so it recompiles the crate once after a test run.)
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver)
CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
step "lint: the formatters (rustfmt, prettier)"
cargo fmt --all -- --check
(cd www && npx prettier --check "src/**/*.ts" build.mjs "../tests/browser/**/*.mjs" "../tests/python/*.mjs" "../tests/unit/**/*.{ts,mjs}" "../scripts/**/*.mjs" >/dev/null)
step "build, linted by clippy (-D warnings) for both targets"; scripts/build.sh
step "release artifacts (scripts/release.sh) and their checksums"
v=$(sed -n 's/^version = "\(.*\)"/\1/p' crate/Cargo.toml | head -1)
scripts/release.sh "$v" >/dev/null && (cd "dist/release/$v" && sha256sum -c --quiet SHA256SUMS)

# Two groups side by side. The native tests are mostly a compile that keeps both cores busy; the
# others are mostly waiting on a browser, a virtualenv or a pipe. The compile runs at a lower
# priority, so the browser tests get the CPU they ask for and the compile fills what they leave.
# Each group's lines carry its name; a failure of either ends the other and fails here.
group() {
  local name=$1
  shift
  (
    set -o pipefail
    tf=$(mktemp) # this group's own `times` file
    trap 'rm -f "$tf"' EXIT
    "$@" 2>&1 | sed -u "s/^/[$name] /"
  ) &
}
native_tests() {
  step "native tests (clippy lints the test targets as they compile)"
  # The profile scripts/build.sh built the CLI with: its dependencies are reused, not rebuilt.
  nice -n 10 cargo test -j 2 --release
  step "native tests done"
}
cli_and_page_tests() {
  step "lint: the type checker (tsc; it reads the wasm-bindgen types the build wrote)"
  (cd www && npx tsc --noEmit -p .)
  step "meaning: what the engine concludes about each corpus file against its stacks (tests/meaning)"
  python3 tests/meaning/evaluate.py target/release/snapscope
  step "interop: pt-snap-cli 0.4.1 reads snapscope's export"
  python3 tests/interop/test_ptsnap.py
  step "the Python wheel in a fresh virtualenv: the CLI, the module, show() in chromium"
  SNAPSCOPE_WHEEL=$(ls "$PWD/dist/release/$v"/snapscope-"$v"-*.whl) python3 tests/python/test_wheel.py
  step "the MCP server with the official MCP Python SDK (and the MCP Inspector CLI)"
  python3 tests/mcp/test_mcp.py
  step "unit tests: page layout, the generated answer types, imports"
  node tests/unit/run.mjs
  step "browser tests (chromium)"
  node --test --test-concurrency=1 tests/browser/
  step "cli and page tests done"
}
# Job control gives each group a process group of its own, so a failure can end all of the other.
set -m
group native native_tests
native=$!
group page cli_and_page_tests
page=$!
set +m
trap 'kill -- -"$native" -"$page" 2>/dev/null || true' EXIT
# Wait for whichever ends first; a failure there stops the other at once.
failed() {
  echo "::: FAILED: the $1 group (its lines start with [$1])"
  exit 1
}
wait -n -p first "$native" "$page" || failed "$([ "$first" = "$native" ] && echo native || echo page)"
if [ "$first" = "$native" ]; then wait "$page" || failed page; else wait "$native" || failed native; fi
trap - EXIT
step "done"
rm -f "$tf"
