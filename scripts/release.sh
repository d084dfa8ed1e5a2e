#!/usr/bin/env bash
# Release artifacts for air-gapped sites, in dist/release/VERSION/: the static site as a tarball,
# the single-file page, this platform's CLI, the Python wheel (CLI + notebook module), the npm
# package of <snapscope-view>, INSTALL.txt and SHA256SUMS (`sha256sum -c SHA256SUMS`
# there checks them). VERSION must be crate/Cargo.toml's, which the CLI (`--version`), the
# page's engine and every exported database report.
set -euo pipefail
cd "$(dirname "$0")/.."
V=${1:?usage: scripts/release.sh VERSION}
crate=$(sed -n 's/^version = "\(.*\)"/\1/p' crate/Cargo.toml | head -1)
if [ "$V" != "$crate" ]; then
  echo "release.sh: VERSION $V is not crate/Cargo.toml's version $crate: set it there first" >&2
  exit 1
fi
scripts/build.sh >/dev/null
out=dist/release/$V
rm -rf "$out"
mkdir -p "$out"
tar -czf "$out/snapscope-www-$V.tar.gz" -C www/dist index.html app.js worker.js snapscope_bg.wasm style.css
cp www/dist/snapscope.html "$out/snapscope-$V.html"
platform="$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)"
cp target/release/snapscope "$out/snapscope-$V-$platform"
scripts/build_wheel.sh "$out" >/dev/null
(cd www/package && npm pack --silent --pack-destination "../../$out" >/dev/null)
wheel=$(cd "$out" && ls snapscope-"$V"-*.whl)
cat > "$out/INSTALL.txt" <<TXT
snapscope $V: where did my GPU memory go?

The page (any browser; the snapshot never leaves the machine):
  - snapscope-$V.html: one file. Open it from disk, or put it on any web server.
  - snapscope-www-$V.tar.gz: the same page as separate files, for a static host:
      mkdir snapscope && tar -xzf snapscope-www-$V.tar.gz -C snapscope
    then serve that folder (index.html is the entry; serve .wasm as application/wasm). The page
    carries its own Content-Security-Policy; a host that sends one must allow the page's own
    files, worker-src 'self' blob: and script-src 'self' 'wasm-unsafe-eval'.

The command line ($platform):
  install -m 755 snapscope-$V-$platform /usr/local/bin/snapscope
  snapscope overview snapshot.pickle

Python and Jupyter (the CLI on the PATH, and the snapscope module: overview/analyze/query as
Python objects, show() for the analyzer inline in a notebook; no Rust, no network):
  pip install $wheel

Docs portals (the <snapscope-view> web component; no build step):
  npm install snapscope-$V.tgz      (or unpack it and copy package/ to the site)
  <script type="module" src="/static/snapscope/snapscope-view.js"></script>
  <snapscope-view src="run.pickle" view="peak" height="600"></snapscope-view>
  A host CSP must allow script-src 'wasm-unsafe-eval', worker-src blob:, connect-src 'self'.

Check the files first: sha256sum -c SHA256SUMS
TXT
(cd "$out" && sha256sum -- * | grep -v ' SHA256SUMS$' > SHA256SUMS)
echo "$out: $(ls "$out" | tr '\n' ' ')"
