#!/usr/bin/env bash
# Install what snapscope needs to build and test, skipping whatever is already there:
# clang (SQLite -> wasm32), Debian chromium + chromedriver (browser tests), sqlite3 (a test opens
# the page's exported database with it), the wasm32 Rust target,
# the wasm-bindgen CLI matching Cargo.lock, and the page's npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."
WB_VERSION=0.2.130   # must equal the wasm-bindgen version in Cargo.lock
export DEBIAN_FRONTEND=noninteractive
say() { echo "setup: $*"; }

need=()
command -v clang >/dev/null || need+=(clang)
command -v llvm-ar >/dev/null || command -v llvm-ar-14 >/dev/null || need+=(llvm)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v python3 >/dev/null || need+=(python3)
command -v sqlite3 >/dev/null || need+=(sqlite3)
# The interop test makes a virtualenv for pt-snap-cli; Debian's python3 needs python3-venv for it.
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if ((${#need[@]})); then
  say "apt-get install ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  for i in 1 2 3; do rustup target add wasm32-unknown-unknown && break; sleep 15; done
fi

if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ]; then
  say "cargo install wasm-bindgen-cli $WB_VERSION (about 10 minutes on 2 cores)"
  # Not --locked: its lockfile pins a crate version the registry does not serve.
  cargo install -j 2 wasm-bindgen-cli --version "$WB_VERSION"
fi

if [ ! -d www/node_modules ] || [ www/package-lock.json -nt www/node_modules/.package-lock.json ]; then
  say "npm ci (www)"
  (cd www && npm ci --no-audit --no-fund --silent)
fi
say "ready"
