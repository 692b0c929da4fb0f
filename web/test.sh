#!/usr/bin/env bash
# Tests the web page that web/build.sh wrote to target/web/, in headless Chromium: serves a
# copy of the folder from another directory on 127.0.0.1, then drives the page twice through web/test.mjs, once with WebGPU (the GPU
# engine computes) and once with WebGL2 only (the CPU engine computes). Installs Debian's
# Chromium and the npm package playwright-core (web/package-lock.json) when they are missing.
# Screenshots of the views it opens go to target/web-test/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f target/web/index.html ]; then
  echo "web/test.sh: target/web/ has no page: run web/build.sh first" >&2
  exit 1
fi
if ! command -v chromium >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if [ ! -d web/node_modules/playwright-core ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi

# The page is served from a copy of the folder elsewhere, as a static host would hold it: it
# must need nothing outside it.
served=$(mktemp -d)
cp -r target/web/. "$served"
# And a copy without worker.js, as a host that lost it would serve: jobs run on the page.
mkdir "$served/no-worker"
cp -r target/web/. "$served/no-worker"
rm "$served/no-worker/worker.js"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd / && exec python3 -m http.server --bind 127.0.0.1 --directory "$served" "$port" >/dev/null 2>&1) &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$served"' EXIT
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
  sleep 0.1
done

node web/test.mjs "http://127.0.0.1:$port/" target/web-test "$(command -v chromium)"
