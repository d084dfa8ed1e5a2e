#!/usr/bin/env bash
# Set up, build, and serve the page at http://127.0.0.1:${PORT:-8080}/ (static files only: any
# static host works the same; www/dist/snapscope.html also works opened straight from disk).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
PORT=${PORT:-8080}
echo "snapscope: http://127.0.0.1:$PORT/  (single file: www/dist/snapscope.html)"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory www/dist
